package plan

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
)

// Answer is one line saying what was found.
func (r *Result) Answer() string {
	if r.Best < 0 {
		return r.Unreachable()
	}
	p := r.Points[r.Best]
	s := fmt.Sprintf("smallest cluster meeting every target: %d GPUs of %s (%d nodes)", p.GPUs, p.Model, p.Nodes)
	if r.Prices != nil {
		s = fmt.Sprintf("cheapest cluster meeting every target: %d GPUs of %s (%d nodes), %.2f per hour at the given prices", p.GPUs, p.Model, p.Nodes, p.Cost)
	}
	return s
}

func (r *Result) header() []string {
	h := []string{"model", "nodes", "gpus", "cost_per_h", "unfit_jobs"}
	for _, t := range r.Targets {
		h = append(h, t.Key, t.String())
	}
	return append(h, "all_pass", "chosen")
}

func (r *Result) row(i int) []string {
	p := r.Points[i]
	row := []string{p.Model, strconv.Itoa(p.Nodes), strconv.Itoa(p.GPUs), strconv.FormatFloat(p.Cost, 'f', 2, 64), strconv.Itoa(p.Unfit)}
	for k := range r.Targets {
		row = append(row, fmtNum(p.Values[k]), passFail(p.Pass[k]))
	}
	chosen := ""
	if i == r.Best {
		chosen = "*"
	}
	return append(row, passFail(p.OK()), chosen)
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

// WriteTable prints the evidence table, one row per size tried.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(r.header(), "\t")+"\t")
	for i := range r.Points {
		fmt.Fprintln(tw, strings.Join(r.row(i), "\t")+"\t")
	}
	return tw.Flush()
}

// WriteCSV writes the evidence table as CSV, atomically.
func (r *Result) WriteCSV(path string) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(r.header()); err != nil {
			return err
		}
		for i := range r.Points {
			if err := cw.Write(r.row(i)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// WriteMarkdownTable writes the evidence table as a Markdown table.
func (r *Result) WriteMarkdownTable(w io.Writer) {
	h := r.header()
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat(" --- |", len(h)))
	for i := range r.Points {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r.row(i), " | "))
	}
}

var modelColours = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

const (
	panelWidth  = 5 * vg.Inch
	panelHeight = 4 * vg.Inch
	plotDPI     = 150
)

func (r *Result) panel(k int) (*plot.Plot, error) {
	t := r.Targets[k]
	p := plot.New()
	p.Title.Text = "target " + t.String()
	p.X.Label.Text = "cluster size (GPUs, log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Label.Text = t.Key + " (worst over seeds)"
	p.Legend.Top = true
	minX, maxX := 0.0, 1.0
	for i, pt := range r.Points {
		if i == 0 || float64(pt.GPUs) < minX {
			minX = float64(pt.GPUs)
		}
		if i == 0 || float64(pt.GPUs) > maxX {
			maxX = float64(pt.GPUs)
		}
	}
	for mi, m := range r.Models {
		var xy plotter.XYs
		for _, pt := range r.Points {
			if pt.Model == m {
				xy = append(xy, plotter.XY{X: float64(pt.GPUs), Y: pt.Values[k]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		c := modelColours[mi%len(modelColours)]
		l.Color, s.Color = c, c
		l.Dashes = modelDashes[mi%len(modelDashes)]
		s.Shape = modelGlyphs[mi%len(modelGlyphs)]
		s.Radius = vg.Points(3 + float64(len(r.Models)-1-mi))
		p.Add(l, s)
		p.Legend.Add(m, l, s)
	}
	if err := report.AddTargetLine(p, minX, maxX, t.Value, "target "+t.Op+" "+fmtNum(t.Value)); err != nil {
		return nil, err
	}
	if r.Best >= 0 {
		b := r.Points[r.Best]
		if err := report.AddChosenRing(p, float64(b.GPUs), b.Values[k], fmt.Sprintf("chosen: %d × %s", b.Nodes, b.Model)); err != nil {
			return nil, err
		}
	}
	if t.Upper() && t.Value > 0 {
		// Small clusters miss a ceiling by orders of magnitude; show the
		// region around the target and let the rest run off the top.
		top := 3 * t.Value
		if r.Best >= 0 {
			top = math.Max(top, 1.2*r.Points[r.Best].Values[k])
		}
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0), math.Min(p.Y.Max, top)
		p.Y.Label.Text += ", clipped at " + fmtNum(p.Y.Max)
	}
	return p, nil
}

var modelDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

var modelGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// WritePlots draws one panel per target, side by side, to pngPath and
// svgPath (either may be ""), atomically.
func (r *Result) WritePlots(pngPath, svgPath string) error {
	width := panelWidth * vg.Length(len(r.Targets))
	for _, out := range []struct{ path, format string }{{pngPath, "png"}, {svgPath, "svg"}} {
		if out.path == "" {
			continue
		}
		var c vg.CanvasWriterTo
		if out.format == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, panelHeight), vgimg.UseDPI(plotDPI))}
		} else {
			c = vgsvg.New(width, panelHeight)
		}
		dc := draw.New(c)
		for k := range r.Targets {
			p, err := r.panel(k)
			if err != nil {
				return err
			}
			left := panelWidth * vg.Length(k)
			p.Draw(draw.Crop(dc, left, left+panelWidth-width, 0, 0))
		}
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		if err := results.AtomicWriteFile(out.path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return err
		}
	}
	return nil
}
