package serving

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
)

// Figure sizes; PNGs are rendered at plotDPI.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 4.5 * vg.Inch
	plotDPI    = 120
)

// PlotNames lists the figures WritePlots draws per service, in order:
// E2E p99 latency over time per variant; ready replicas over time per
// variant above the offered request rate; error rate over time per
// variant.
var PlotNames = []string{"e2e-p99", "replicas", "error-rate"}

// figure draws itself on a canvas of the given height.
type figure struct {
	name   string
	height vg.Length
	draw   func(draw.Canvas)
}

// WritePlots draws the run set's figures into dir (created if missing)
// as NAME.png and NAME.svg, each written atomically; with several
// services, one set per service named NAME-SERVICE. Equal run sets give
// byte-identical files. It returns the file names written.
func WritePlots(dir string, rs *RunSet) ([]string, error) {
	if len(rs.Variants) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var figs []figure
	first := rs.Variants[0].Result
	for si, s := range first.Services {
		suffix := ""
		if len(first.Services) > 1 {
			// A pool is SERVICE/POOL: one file name, not a folder.
			suffix = "-" + strings.ReplaceAll(s.Name, "/", "-")
		}
		fs, err := serviceFigures(rs, si, suffix)
		if err != nil {
			return nil, err
		}
		figs = append(figs, fs...)
	}
	var names []string
	for _, f := range figs {
		for _, kind := range []struct {
			ext    string
			render func(figure) ([]byte, error)
		}{{"png", renderPNG}, {"svg", renderSVG}} {
			b, err := kind.render(f)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", f.name, err)
			}
			name := f.name + "." + kind.ext
			if err := results.AtomicWriteFile(filepath.Join(dir, name), func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			}); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}

func renderPNG(f figure) ([]byte, error) {
	return report.RenderPNG(plotWidth, f.height, plotDPI, f.draw)
}

func renderSVG(f figure) ([]byte, error) { return report.RenderSVG(plotWidth, f.height, f.draw) }

func newServingPlot(title, x, y string) *plot.Plot {
	p := report.NewPlot(title, x, y)
	p.Legend.Top = true
	return p
}

// bucketWidth is the series' bucket width in seconds.
func bucketWidth(r *Result, si int) float64 {
	s := r.Services[si].Series
	if len(s) > 1 {
		return (s[1].Start - s[0].Start).Seconds()
	}
	return r.Horizon.Seconds()
}

// seriesLines draws one line per variant of value(bucket) against
// minutes (at the bucket's middle); skip drops a bucket.
func seriesLines(p *plot.Plot, rs *RunSet, si int, value func(Bucket, float64) float64, skip func(Bucket) bool, steps bool) error {
	for vi, v := range rs.Variants {
		if si >= len(v.Result.Services) {
			continue
		}
		w := bucketWidth(v.Result, si)
		var xy plotter.XYs
		for _, b := range v.Result.Services[si].Series {
			if skip != nil && skip(b) {
				continue
			}
			x := b.Start.Seconds() / 60
			y := value(b, w)
			if steps {
				xy = append(xy, plotter.XY{X: x, Y: y}, plotter.XY{X: x + w/60, Y: y})
			} else {
				xy = append(xy, plotter.XY{X: x + w/120, Y: y})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		report.StyleLine(l, vi)
		p.Add(l)
		p.Legend.Add(v.Name, l)
	}
	return nil
}

func serviceFigures(rs *RunSet, si int, suffix string) ([]figure, error) {
	svc := rs.Variants[0].Result.Services[si].Name
	minutes := "minutes since start"

	lat := newServingPlot(fmt.Sprintf("%s: end-to-end p99 latency per bucket (completed requests; log scale)", svc), minutes, "E2E p99 (s)")
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = latencyTicks{}
	if err := seriesLines(lat, rs, si, func(b Bucket, _ float64) float64 { return b.E2EP99 }, func(b Bucket) bool { return b.Completed == 0 || !(b.E2EP99 > 0) }, false); err != nil {
		return nil, err
	}

	if !(lat.Y.Min > 0) || lat.Y.Max < lat.Y.Min {
		lat.Y.Min, lat.Y.Max = 1, 10 // no completed request: an empty log axis
	}

	rep := newServingPlot(fmt.Sprintf("%s: ready replicas", svc), "", "replicas ready")
	rep.Y.Min = 0
	if err := seriesLines(rep, rs, si, func(b Bucket, _ float64) float64 { return float64(b.ReplicasReady) }, nil, true); err != nil {
		return nil, err
	}
	rate := newServingPlot("offered request rate", minutes, "requests / s")
	rate.Y.Min = 0
	{
		r := rs.Variants[0].Result
		w := bucketWidth(r, si)
		var xy plotter.XYs
		for _, b := range r.Services[si].Series {
			x := b.Start.Seconds() / 60
			y := float64(b.Arrivals) / w
			xy = append(xy, plotter.XY{X: x, Y: y}, plotter.XY{X: x + w/60, Y: y})
		}
		if len(xy) > 0 {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = color.Gray{Y: 0x50}, vg.Points(1.4)
			rate.Add(l)
			rate.Legend.Add("arrivals (all variants)", l)
		}
	}
	// Both panels share the x range.
	rate.X.Min, rate.X.Max = min(rate.X.Min, rep.X.Min), max(rate.X.Max, rep.X.Max)
	rep.X.Min, rep.X.Max = rate.X.Min, rate.X.Max

	errs := newServingPlot(fmt.Sprintf("%s: error rate per bucket (errors and timeouts over finished requests)", svc), minutes, "error rate (%)")
	errs.Y.Min = 0
	if err := seriesLines(errs, rs, si, func(b Bucket, _ float64) float64 {
		return 100 * float64(b.Errors) / float64(b.Errors+b.Completed)
	}, func(b Bucket) bool { return b.Errors+b.Completed == 0 }, false); err != nil {
		return nil, err
	}

	if m := newFaultMarks(rs); m != nil {
		for _, p := range []*plot.Plot{lat, rep, errs} {
			p.Add(m)
			p.Legend.Add("hardware failure", m)
		}
	}

	one := func(p *plot.Plot) func(draw.Canvas) { return func(c draw.Canvas) { p.Draw(c) } }
	tall := plotHeight * 3 / 2
	return []figure{
		{name: "e2e-p99" + suffix, height: plotHeight, draw: one(lat)},
		{name: "replicas" + suffix, height: tall, draw: func(c draw.Canvas) {
			// Aligned tiles, so that both panels' x axes line up.
			tiles := plot.Align([][]*plot.Plot{{rep}, {rate}}, draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(6)}, c)
			rep.Draw(tiles[0][0])
			rate.Draw(tiles[1][0])
		}},
		{name: "error-rate" + suffix, height: plotHeight, draw: one(errs)},
	}, nil
}

// faultMarks draws a dashed vertical line across the data area at each
// hardware failure (minutes) within the horizon.
type faultMarks struct {
	at    []float64
	style draw.LineStyle
}

// newFaultMarks marks the run set's failures when some variant ran with
// them; nil otherwise.
func newFaultMarks(rs *RunSet) *faultMarks {
	if rs.Faults == nil || !rs.hasFaults() {
		return nil
	}
	horizon := rs.Variants[0].Result.Horizon
	m := &faultMarks{style: draw.LineStyle{Color: color.Gray{Y: 0x20}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
	for _, f := range rs.Faults.Schedule {
		if f.At <= horizon {
			m.at = append(m.at, f.At.Seconds()/60)
		}
	}
	if len(m.at) == 0 {
		return nil
	}
	return m
}

// Plot implements plot.Plotter; it has no data range, so it does not
// move the axes.
func (m *faultMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range m.at {
		if x < p.X.Min || x > p.X.Max {
			continue
		}
		X := trX(x)
		c.StrokeLine2(m.style, X, c.Min.Y, X, c.Max.Y)
	}
}

// Thumbnail implements plot.Thumbnailer for the legend.
func (m *faultMarks) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(m.style, c.Min.X, y, c.Max.X, y)
}

// latencyTicks labels a log-scale seconds axis at 1, 2, 5 × powers of ten.
type latencyTicks struct{}

func (latencyTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for p := 1e-3; p <= hi*10; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v < lo || v > hi {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	return ticks
}
