package plan

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
)

// label names a point for messages: "8 × P100 (64 GPUs)", "4 replicas
// (8 GPUs)".
func (r *Result) label(p Point) string {
	return fmt.Sprintf("%s (%d GPUs)", r.short(p), p.GPUs)
}

func (r *Result) short(p Point) string {
	if r.Axis == AxisReplicas {
		return fmt.Sprintf("%d replicas", p.Size)
	}
	return fmt.Sprintf("%d × %s", p.Size, p.Model)
}

// Answer is one line saying what was found, or, without an answer, why
// not (Unreachable).
func (r *Result) Answer() string {
	if r.Best < 0 {
		return r.Unreachable()
	}
	p := r.Points[r.Best]
	if r.Axis == AxisReplicas {
		s := fmt.Sprintf("smallest replica count meeting every target: %d replicas of %s = %d GPUs of %s (%g GPU-hours per hour)",
			p.Size, r.Service, p.GPUs, p.Model, p.GPUHoursPerHour)
		if p.Size > 1 && r.NeighbourFails {
			s += fmt.Sprintf("; %d replicas fail", p.Size-1)
		}
		return s
	}
	nodes := fmt.Sprintf("%d nodes", p.Size)
	if p.Fleet != "" {
		nodes = p.Fleet
	}
	if r.Prices != nil {
		return fmt.Sprintf("cheapest cluster meeting every target: %d GPUs of %s (%s), %.2f per hour at the given prices", p.GPUs, p.Model, nodes, p.Cost)
	}
	return fmt.Sprintf("smallest cluster meeting every target: %d GPUs of %s (%s)", p.GPUs, p.Model, nodes)
}

// Unreachable explains, when no size met every target, which targets
// failed at the largest size of each model tried and by how much, and
// which failed at the smallest size meeting the targets that growing
// helps (those that growing only moves further away). "" when there is
// an answer.
func (r *Result) Unreachable() string {
	if r.Best >= 0 {
		return ""
	}
	s := "no cluster in the allowed range meets every target"
	if r.Axis == AxisReplicas {
		s = fmt.Sprintf("no replica count in %d..%d meets every target", r.Lo, r.Hi)
	}
	largest := map[string]int{}
	for _, m := range r.Models {
		last := -1
		for i, p := range r.Points {
			if p.Model == m && (last < 0 || p.Size > r.Points[last].Size) {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		largest[m] = last
		p := r.Points[last]
		if r.Axis == AxisReplicas {
			s += fmt.Sprintf("; at %s:", r.label(p))
		} else {
			s += fmt.Sprintf("; at the largest size, %s:", r.label(p))
		}
		for k, t := range r.Targets {
			if p.Pass[k] {
				continue
			}
			s += r.fails(t, p.Values[k])
			// The best value any size tried reached, when another size
			// came closer.
			best := last
			for i, q := range r.Points {
				if q.Model == m && t.Worse(q.Values[k], r.Points[best].Values[k]) == r.Points[best].Values[k] && q.Values[k] != r.Points[best].Values[k] {
					best = i
				}
			}
			if best != last {
				s += fmt.Sprintf(" (the closest of the sizes tried was %s: %s)", r.short(r.Points[best]), t.Format(r.Points[best].Values[k]))
			}
			s += ";"
		}
		if p.Unfit > 0 {
			s += fmt.Sprintf(" %d jobs can never fit it;", p.Unfit)
		}
		s = s[:len(s)-1]
	}
	for _, i := range r.searched {
		p := r.Points[i]
		if p.OK() || largest[p.Model] == i {
			continue
		}
		if r.Axis == AxisReplicas {
			s += fmt.Sprintf("; at %s, the fewest meeting the targets that more replicas help:", r.label(p))
		} else {
			s += fmt.Sprintf("; at %s, the smallest size at which every job fits and the targets met at the largest size hold:", r.label(p))
		}
		for k, t := range r.Targets {
			if !p.Pass[k] {
				s += r.fails(t, p.Values[k])
				if r.Axis == AxisReplicas {
					s += " (more replicas only move it further)"
				}
				s += ";"
			}
		}
		s = s[:len(s)-1]
	}
	return s
}

func (r *Result) fails(t Target, v float64) string {
	if r.Axis == AxisReplicas {
		return fmt.Sprintf(" %s fails with %s", t, t.Miss(v))
	}
	return fmt.Sprintf(" target %s fails: %s", t, t.Miss(v))
}

func (r *Result) header() []string {
	h := []string{"replicas", "gpus", "gpu_h_per_h", "requests"}
	if r.Axis == AxisNodes {
		h = []string{"model", "nodes", "gpus", "cost_per_h", "unfit_jobs"}
	}
	for _, t := range r.Targets {
		h = append(h, t.Key(), t.String())
	}
	return append(h, "all_pass", "chosen")
}

// row is Points[i] as table cells; human prints latencies in ms or s,
// otherwise they are plain seconds.
func (r *Result) row(i int, human bool) []string {
	p := r.Points[i]
	row := []string{strconv.Itoa(p.Size), strconv.Itoa(p.GPUs), fmtNum(p.GPUHoursPerHour), strconv.FormatInt(p.Requests, 10)}
	if r.Axis == AxisNodes {
		row = []string{p.Model, strconv.Itoa(p.Size), strconv.Itoa(p.GPUs), strconv.FormatFloat(p.Cost, 'f', 2, 64), strconv.Itoa(p.Unfit)}
	}
	for k, t := range r.Targets {
		v := fmtNum(p.Values[k])
		if human && t.Unit == Seconds {
			v = fmtSeconds(p.Values[k])
		}
		row = append(row, v, passFail(p.Pass[k]))
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

// WriteTable prints the evidence table: one row per size used, each
// target's metric (the worst over seeds) and pass or fail; * marks the
// answer.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(r.header(), "\t")+"\t")
	for i := range r.Points {
		fmt.Fprintln(tw, strings.Join(r.row(i, true), "\t")+"\t")
	}
	return tw.Flush()
}

// WriteReport writes what a terminal shows of a plan: the answer, how
// many sizes were simulated, and the evidence table.
func (r *Result) WriteReport(w io.Writer) error {
	fmt.Fprintln(w, r.Answer())
	fmt.Fprintf(w, "%d sizes simulated (of %d per model in range), each on %d seed(s):\n", len(r.Points), r.Hi-r.Lo+1, len(r.Seeds))
	return r.WriteTable(w)
}

// WriteMarkdownTable writes the evidence table as a Markdown table.
func (r *Result) WriteMarkdownTable(w io.Writer) {
	h := r.header()
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat(" --- |", len(h)))
	for i := range r.Points {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r.row(i, true), " | "))
	}
}

// WriteCSV writes the evidence table as CSV (latencies in seconds),
// atomically.
func (r *Result) WriteCSV(path string) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(r.header()); err != nil {
			return err
		}
		for i := range r.Points {
			if err := cw.Write(r.row(i, false)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// WriteFiles writes plan.csv and, for each of formats ("png", "svg"),
// plan.FORMAT into dir (created if missing). It returns the names
// written.
func (r *Result) WriteFiles(dir string, formats ...string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := r.WriteCSV(filepath.Join(dir, "plan.csv")); err != nil {
		return nil, err
	}
	names := []string{"plan.csv"}
	var png, svg string
	for _, f := range formats {
		switch f {
		case "png":
			png = filepath.Join(dir, "plan.png")
		case "svg":
			svg = filepath.Join(dir, "plan.svg")
		default:
			return nil, fmt.Errorf("plan: unknown plot format %q (want png or svg)", f)
		}
		names = append(names, "plan."+f)
	}
	if err := r.WritePlots(png, svg); err != nil {
		return nil, err
	}
	return names, nil
}

// The figure: one panel per target, stacked.
const (
	plotWidth   = 9 * vg.Inch
	panelHeight = 3 * vg.Inch
	plotDPI     = 120
)

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// x is where a point sits on the plots' size axis: GPUs for a cluster
// (models with different node sizes compare), replicas for a service.
func (r *Result) x(p Point) float64 {
	if r.Axis == AxisReplicas {
		return float64(p.Size)
	}
	return float64(p.GPUs)
}

func (r *Result) panel(k int) (*plot.Plot, error) {
	t := r.Targets[k]
	xLabel := "cluster size (GPUs, log scale)"
	if r.Axis == AxisReplicas {
		xLabel = "replicas"
	}
	unit := ""
	if t.Unit == Seconds {
		unit = " (s)"
	}
	// The Y label stays short: gonum pads the data area to fit a label
	// longer than the panel is high.
	p := report.NewPlot("target "+t.String()+", worst value over seeds", xLabel, t.Key()+unit)
	p.Legend.Top = true
	if r.Axis == AxisNodes {
		// Node counts span orders of magnitude (models of different node
		// sizes share the GPU axis): a log scale shows each decade. A
		// service's counts that matter sit near the answer, where a
		// linear scale spreads them.
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, pt := range r.Points {
		minX, maxX = math.Min(minX, r.x(pt)), math.Max(maxX, r.x(pt))
	}
	for mi, m := range r.Models {
		var xy plotter.XYs
		for _, pt := range r.Points {
			if pt.Model == m {
				xy = append(xy, plotter.XY{X: r.x(pt), Y: pt.Values[k]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		report.StyleLine(l, mi)
		s.Color = l.Color
		s.Shape = glyphs[mi%len(glyphs)]
		// Models that meet at one value stay visible: earlier ones are
		// drawn bigger.
		s.Radius = vg.Points(3 + float64(len(r.Models)-1-mi))
		p.Add(l, s)
		name := m
		if r.Axis == AxisReplicas {
			name = "service " + r.Service
		}
		p.Legend.Add(name, l, s)
	}
	if err := report.AddTargetLine(p, minX, maxX, t.Value, "target "+t.Op+" "+t.Format(t.Value)); err != nil {
		return nil, err
	}
	if r.Best >= 0 {
		b := r.Points[r.Best]
		if err := report.AddChosenRing(p, r.x(b), b.Values[k], "chosen: "+r.short(b)); err != nil {
			return nil, err
		}
	}
	if t.Upper() && t.Value > 0 {
		// Too small a size misses a ceiling by orders of magnitude; show
		// the region around the bound and let the rest run off the top.
		top := 3 * t.Value
		if r.Best >= 0 {
			top = math.Max(top, 1.2*r.Points[r.Best].Values[k])
		}
		p.Y.Min = math.Min(p.Y.Min, 0)
		if p.Y.Max > top {
			p.Y.Max = top
			p.Title.Text += "; clipped at " + fmtNum(top)
		}
	}
	return p, nil
}

// WritePlots draws each target's metric against the size (one panel per
// target, stacked; one line per model), with the bound as a dashed line
// and the answer ringed, to pngPath and svgPath (either may be ""),
// atomically.
func (r *Result) WritePlots(pngPath, svgPath string) error {
	h := panelHeight * vg.Length(len(r.Targets))
	var perr error
	drawAll := func(c draw.Canvas) {
		for k := range r.Targets {
			p, err := r.panel(k)
			if err != nil {
				perr = err
				return
			}
			top := h - panelHeight*vg.Length(k)
			p.Draw(draw.Crop(c, 0, 0, top-panelHeight, top-h))
		}
	}
	for _, out := range []struct {
		path   string
		render func() ([]byte, error)
	}{
		{pngPath, func() ([]byte, error) { return report.RenderPNG(plotWidth, h, plotDPI, drawAll) }},
		{svgPath, func() ([]byte, error) { return report.RenderSVG(plotWidth, h, drawAll) }},
	} {
		if out.path == "" {
			continue
		}
		b, err := out.render()
		if err == nil {
			err = perr
		}
		if err != nil {
			return err
		}
		if err := results.AtomicWriteFile(out.path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	return nil
}
