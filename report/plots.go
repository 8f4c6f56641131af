package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/brigadesim/brigade/results"
)

// Figure sizes; PNGs are rendered at plotDPI.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 4.5 * vg.Inch
	plotDPI    = 120
	// minLogS is the floor of the log-scale CDFs: waits and JCTs below it
	// (a wait of 0 included) are drawn at it.
	minLogS = 1.0
)

// palette gives each policy a colour and dash pattern that stay apart in
// greyscale print; fill's plots use it too, through StyleLine.
var palette = []struct {
	c    color.Color
	dash []vg.Length
}{
	{color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, nil},
	{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, []vg.Length{vg.Points(6), vg.Points(2)}},
	{color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, []vg.Length{vg.Points(2), vg.Points(2)}},
	{color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, []vg.Length{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}},
	{color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(4)}},
	{color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, []vg.Length{vg.Points(1), vg.Points(3)}},
	{color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, []vg.Length{vg.Points(10), vg.Points(4)}},
	{color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, []vg.Length{vg.Points(3), vg.Points(1)}},
}

var grey = color.Gray{Y: 0x90}

// Figure is one plot of a run.
type Figure struct {
	// Name is the file stem, e.g. "wait-cdf".
	Name  string
	Title string
	plot  *plot.Plot
}

// FigureNames lists the figures Figures draws, in order.
var FigureNames = []string{
	"wait-cdf", "jct-cdf", "utilisation", "queue-length",
	"tenant-share", "wait-percentiles", "starvation-tenant", "starvation-priority",
}

// Figures draws every plot of d, in FigureNames order.
func Figures(d *Data) ([]Figure, error) {
	out := make([]Figure, 0, len(FigureNames))
	for _, m := range figureMakers {
		f, err := m(d)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// figureMakers draw the figures of FigureNames, in its order.
var figureMakers = []func(*Data) (Figure, error){
	func(d *Data) (Figure, error) {
		return cdf(d, "wait-cdf", "Wait", func(j Job) float64 { return j.WaitS })
	},
	func(d *Data) (Figure, error) {
		return cdf(d, "jct-cdf", "Job completion time", func(j Job) float64 { return j.JCT })
	},
	func(d *Data) (Figure, error) {
		return series(d, "utilisation", "GPU utilisation over time", "GPU utilisation (% of cluster GPUs allocated)",
			func(p Point) float64 { return 100 * p.Utilisation }, true)
	},
	func(d *Data) (Figure, error) {
		return series(d, "queue-length", "Queue length over time", "queued jobs (bucket mean)",
			func(p Point) float64 { return p.QueueLength }, false)
	},
	tenantShare,
	waitPercentiles,
	func(d *Data) (Figure, error) {
		return starvation(d, "starvation-tenant", "tenant", func(j Job) string { return j.Tenant }, tenantOrder(d))
	},
	func(d *Data) (Figure, error) {
		return starvation(d, "starvation-priority", "priority", func(j Job) string { return strconv.Itoa(j.Priority) }, priorityOrder(d))
	},
}

// NewPlot is a plot with Brigade's title, label and legend sizes and a
// grid, as every figure of the project draws them.
func NewPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// Colour is the i-th policy's colour, StyleLine's, for bars and marks.
func Colour(i int) color.Color { return palette[i%len(palette)].c }

// StyleLine gives the i-th policy's line its colour, dash pattern and
// width, so every Brigade figure (these, fill's and scenario pages') draws
// a policy alike.
func StyleLine(l *plotter.Line, i int) {
	s := palette[i%len(palette)]
	l.Color, l.Dashes, l.Width = s.c, s.dash, vg.Points(1.6)
}

// cdf draws the empirical CDF of value over the jobs that ran, log-scale x.
func cdf(d *Data, name, what string, value func(Job) float64) (Figure, error) {
	p := NewPlot(what+" CDF (jobs that ran; log scale, values below 1 s drawn at 1 s)",
		what+" (seconds, log scale)", "fraction of jobs ≤ x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = durationLogTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	lines, top := 0, 0.0
	for i, pol := range d.Policies {
		ran := 0
		for _, j := range pol.Jobs {
			if j.Ran {
				ran++
			}
		}
		v := make([]float64, 0, ran)
		for _, j := range pol.Jobs {
			if j.Ran {
				v = append(v, max(value(j), minLogS))
			}
		}
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		top = max(top, v[len(v)-1])
		xy := make(plotter.XYs, 0, 2*len(v))
		n := float64(len(v))
		for k := 0; k < len(v); k++ {
			// one step per distinct value: (x, F(x−)) then (x, F(x))
			if k+1 < len(v) && v[k+1] == v[k] {
				continue
			}
			if len(xy) == 0 {
				xy = append(xy, plotter.XY{X: v[k], Y: 0})
			} else {
				xy = append(xy, plotter.XY{X: v[k], Y: xy[len(xy)-1].Y})
			}
			xy = append(xy, plotter.XY{X: v[k], Y: float64(k+1) / n})
		}
		l, err := ownedLine(xy)
		if err != nil {
			return Figure{}, err
		}
		StyleLine(l, i)
		p.Add(newPaddedLine(l))
		p.Legend.Add(pol.Name, l)
		lines++
	}
	// A fixed range from 1 s: gonum widens an empty range around its
	// value, which on a log axis would reach 0.
	p.X.Min, p.X.Max = minLogS, max(top, 10*minLogS)
	if lines == 0 {
		p.X.Min, p.X.Max = 0, 1
		p.X.Scale = plot.LinearScale{}
		p.X.Tick.Marker = plot.DefaultTicks{}
		p.Title.Text += " — no job data"
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	return Figure{Name: name, Title: what + " CDF", plot: p}, nil
}

// durationLogTicks labels a log seconds axis with 1s, 10s, 1m, 10m, 1h,
// 10h, 1d, 10d... (major) and powers of ten (minor, unlabelled).
type durationLogTicks struct{}

func (durationLogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo >= minLogS) || math.IsInf(lo, 0) || math.IsNaN(hi) {
		lo = minLogS
	}
	if !(hi >= lo) || math.IsInf(hi, 0) {
		hi = max(lo*10, 10)
	}
	marks := []struct {
		v float64
		s string
	}{
		{1, "1 s"}, {10, "10 s"}, {60, "1 min"}, {600, "10 min"}, {3600, "1 h"}, {36000, "10 h"},
		{86400, "1 d"}, {864000, "10 d"}, {8640000, "100 d"}, {86400000, "1000 d"},
	}
	var out []plot.Tick
	for _, m := range marks {
		if m.v >= lo && m.v <= hi {
			out = append(out, plot.Tick{Value: m.v, Label: m.s})
		}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for k := 1.0; k < 10; k++ {
			v := k * math.Pow(10, e)
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v})
			}
		}
	}
	if len(out) == 0 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	return out
}

// timeUnit picks hours or days for a time axis spanning span seconds.
func timeUnit(span float64) (div float64, unit string) {
	if span > 4*86400 {
		return 86400, "days"
	}
	return 3600, "hours"
}

// arrivalWindow is the first and last submission over the jobs of every
// policy (they ran the same workload); ok is false without job data.
func arrivalWindow(d *Data) (first, last float64, ok bool) {
	first, last = math.Inf(1), math.Inf(-1)
	for _, pol := range d.Policies {
		for _, j := range pol.Jobs {
			first, last = min(first, j.SubmitS), max(last, j.SubmitS)
		}
	}
	return first, last, last >= first
}

// drainMargin is how far past the last arrival, as a share of the arrival
// window, a time-series plot whose drain it cuts still goes: enough to see
// the queue empty and utilisation fall.
const drainMargin = 0.25

// series draws value over time, one line per policy. After the last
// arrival a run only drains its queue, and with heavy-tailed durations the
// drain can be ten times as long as the arrivals (the default run's
// arrivals take 2 days, its last job ends after 31): drawn whole, the part
// where policies differ would be a sliver at the left. So when the drain
// is longer than the arrival window the x axis ends drainMargin of the
// window past the last arrival, and the axis label says where the run
// ended; a dashed line marks the last arrival either way.
func series(d *Data, name, title, ylabel string, value func(Point) float64, percent bool) (Figure, error) {
	end := 0.0
	for _, pol := range d.Policies {
		if n := len(pol.Series); n > 0 {
			end = max(end, pol.Series[n-1].StartS)
		}
	}
	first, last, arrivals := arrivalWindow(d)
	xmax, cut := end, false
	if arrivals && last > first && end-last > last-first {
		xmax, cut = last+drainMargin*(last-first), true
	}
	div, unit := timeUnit(xmax)
	xlabel := "time since the first submission (" + unit + ")"
	if cut {
		ediv, eunit := timeUnit(end)
		xlabel += fmt.Sprintf("; cut %.0f%% of the arrival window after the last arrival: the drain runs on to %s", 100*drainMargin, amount(end/ediv, eunit))
	}
	p := NewPlot(title+" (mean over each time bucket)", xlabel, ylabel)
	p.Y.Min = 0
	top := 0.0
	for i, pol := range d.Policies {
		if len(pol.Series) == 0 {
			continue
		}
		xy := make(plotter.XYs, 0, len(pol.Series))
		for _, pt := range pol.Series {
			xy = append(xy, plotter.XY{X: pt.StartS / div, Y: value(pt)})
			if pt.StartS > xmax {
				// One point past the cut, so that the line runs to the
				// edge (gonum clips it there).
				break
			}
			top = max(top, value(pt))
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return Figure{}, err
		}
		StyleLine(l, i)
		l.Width = vg.Points(1.2)
		p.Add(newPaddedLine(l))
		p.Legend.Add(pol.Name, l)
	}
	if percent {
		top = max(top, 100)
	}
	if top <= 0 {
		// All zero (no job ever queued): gonum would centre the empty
		// range on 0 and draw negative queue lengths.
		top = 1
	}
	entries := len(d.Policies)
	if arrivals {
		l, err := plotter.NewLine(plotter.XYs{{X: last / div, Y: 0}, {X: last / div, Y: top}})
		if err != nil {
			return Figure{}, err
		}
		l.Color, l.Width, l.Dashes = color.Gray{Y: 0x40}, vg.Points(1), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("last arrival ("+amount(last/div, unit)+")", l)
		entries++
	}
	p.X.Min = 0
	if cut {
		p.X.Max = xmax / div
	}
	p.X.Tick.Marker = shortTicks{}
	headroom(p, top, entries)
	if percent {
		// A share of capacity: label 0 to 100 only, whatever the headroom.
		var ticks plot.ConstantTicks
		for v := 0; v <= 100; v += 10 {
			t := plot.Tick{Value: float64(v)}
			if v%20 == 0 {
				t.Label = strconv.Itoa(v)
			}
			ticks = append(ticks, t)
		}
		p.Y.Tick.Marker = ticks
	} else {
		p.Y.Tick.Marker = shortTicks{}
	}
	p.Legend.Top = true
	return Figure{Name: name, Title: title, plot: p}, nil
}

// amount writes x, to three significant digits, and its unit, a plural
// noun ("hours"), singular when x reads 1: "1 hour", not "1 hours".
func amount(x float64, unit string) string {
	v := strconv.FormatFloat(x, 'g', 3, 64)
	if v == "1" {
		unit = strings.TrimSuffix(unit, "s")
	}
	return v + " " + unit
}

// shortTicks are gonum's default ticks labelled with as few digits as
// they need ("25", not "25.00").
type shortTicks struct{}

func (shortTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// headroom raises the y axis above top so that a top legend of n entries
// clears the data.
func headroom(p *plot.Plot, top float64, n int) {
	if top <= 0 {
		return
	}
	p.Y.Max = top / (1 - min(0.55, 0.065*float64(n+1)))
}

// groupedBars draws one group per category and one bar per series within
// it; series[i] has one value per category. Colours follow the palette
// unless colours is given.
func groupedBars(p *plot.Plot, categories []string, names []string, values [][]float64, colours []color.Color) error {
	if len(categories) == 0 || len(names) == 0 {
		return nil
	}
	avail := plotWidth * 0.8
	width := avail / vg.Length(len(categories)*(len(names)+1))
	width = min(width, vg.Points(28))
	for i, name := range names {
		b, err := plotter.NewBarChart(plotter.Values(values[i]), width)
		if err != nil {
			return err
		}
		b.LineStyle.Width = vg.Points(0.3)
		if colours != nil && colours[i] != nil {
			b.Color = colours[i]
		} else {
			b.Color = palette[i%len(palette)].c
		}
		b.Offset = width * (vg.Length(i) - vg.Length(len(names)-1)/2)
		p.Add(b)
		p.Legend.Add(name, b)
	}
	top := 0.0
	for _, v := range values {
		for _, x := range v {
			top = max(top, x)
		}
	}
	headroom(p, top, len(names)+1)
	p.NominalX(categories...)
	if len(categories) > 6 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.Legend.Top = true
	return nil
}

func tenantShare(d *Data) (Figure, error) {
	p := NewPlot("Per-tenant GPU share against fair share", "tenant", "share of all GPU-hours used (%)")
	tenants := tenantOrder(d)
	names := []string{"fair share (by weight)"}
	colours := []color.Color{grey}
	fair := make([]float64, len(tenants))
	var values [][]float64
	if len(d.Summaries) > 0 {
		for k, t := range tenants {
			for _, ts := range d.Summaries[0].Tenants {
				if ts.Tenant == t {
					fair[k] = 100 * ts.FairShare
				}
			}
		}
	}
	values = append(values, fair)
	for i, s := range d.Summaries {
		v := make([]float64, len(tenants))
		for k, t := range tenants {
			for _, ts := range s.Tenants {
				if ts.Tenant == t {
					v[k] = 100 * ts.Share
				}
			}
		}
		names = append(names, s.Policy)
		colours = append(colours, palette[i%len(palette)].c)
		values = append(values, v)
	}
	if err := groupedBars(p, tenants, names, values, colours); err != nil {
		return Figure{}, err
	}
	p.Y.Min = 0
	return Figure{Name: "tenant-share", Title: "Per-tenant GPU share", plot: p}, nil
}

// waitUnit picks seconds, minutes or hours for waits up to maxS.
func waitUnit(maxS float64) (float64, string) {
	switch {
	case maxS >= 2*3600:
		return 3600, "hours"
	case maxS >= 120:
		return 60, "minutes"
	}
	return 1, "seconds"
}

func waitPercentiles(d *Data) (Figure, error) {
	top := 0.0
	for _, s := range d.Summaries {
		top = max(top, s.WaitS.P99)
	}
	div, unit := waitUnit(top)
	p := NewPlot("Wait percentiles per policy (jobs that ran)", "policy", "wait ("+unit+")")
	var pols []string
	vals := [][]float64{nil, nil, nil}
	for _, s := range d.Summaries {
		pols = append(pols, s.Policy)
		vals[0] = append(vals[0], s.WaitS.P50/div)
		vals[1] = append(vals[1], s.WaitS.P95/div)
		vals[2] = append(vals[2], s.WaitS.P99/div)
	}
	colours := []color.Color{
		color.RGBA{R: 0x9e, G: 0xc9, B: 0xe2, A: 0xff},
		color.RGBA{R: 0x3c, G: 0x8d, B: 0xc4, A: 0xff},
		color.RGBA{R: 0x08, G: 0x3d, B: 0x77, A: 0xff},
	}
	if err := groupedBars(p, pols, []string{"p50", "p95", "p99"}, vals, colours); err != nil {
		return Figure{}, err
	}
	p.Y.Min = 0
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	return Figure{Name: "wait-percentiles", Title: "Wait percentiles", plot: p}, nil
}

// starvation draws the longest wait of each group (tenant or priority)
// under each policy, with the starvation threshold as a dashed line.
func starvation(d *Data, name, by string, key func(Job) string, groups []string) (Figure, error) {
	top, threshold := 0.0, 0.0
	for _, s := range d.Summaries {
		top = max(top, s.Starvation.LongestWaitS)
		threshold = max(threshold, s.Starvation.ThresholdS)
	}
	div, unit := waitUnit(max(top, threshold))
	p := NewPlot("Starvation: longest wait per "+by+" (dashed: starvation threshold)", by, "longest wait ("+unit+")")
	var names []string
	var values [][]float64
	for _, pol := range d.Policies {
		longest := map[string]float64{}
		for _, j := range pol.Jobs {
			k := key(j)
			longest[k] = max(longest[k], j.WaitS)
		}
		v := make([]float64, len(groups))
		for k, g := range groups {
			v[k] = longest[g] / div
		}
		names = append(names, pol.Name)
		values = append(values, v)
	}
	if err := groupedBars(p, groups, names, values, nil); err != nil {
		return Figure{}, err
	}
	if threshold > 0 && len(groups) > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: threshold / div}, {X: float64(len(groups)) - 0.5, Y: threshold / div}})
		if err != nil {
			return Figure{}, err
		}
		l.Color, l.Width, l.Dashes = color.Black, vg.Points(1), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("starvation threshold ("+amount(threshold/div, unit)+")", l)
		headroom(p, max(top, threshold)/div, len(names)+1)
	}
	p.Y.Min = 0
	return Figure{Name: name, Title: "Longest wait per " + by, plot: p}, nil
}

// tenantOrder is the tenants in the first summary's order, then any others
// the jobs name, in order of first appearance.
func tenantOrder(d *Data) []string {
	var out []string
	if len(d.Summaries) > 0 {
		for _, t := range d.Summaries[0].Tenants {
			out = append(out, t.Tenant)
		}
	}
	for _, p := range d.Policies {
		for _, j := range p.Jobs {
			if !slices.Contains(out, j.Tenant) {
				out = append(out, j.Tenant)
			}
		}
	}
	return out
}

func priorityOrder(d *Data) []string {
	var ps []int
	for _, p := range d.Policies {
		for _, j := range p.Jobs {
			if !slices.Contains(ps, j.Priority) {
				ps = append(ps, j.Priority)
			}
		}
	}
	slices.Sort(ps)
	out := make([]string, len(ps))
	for i, v := range ps {
		out[i] = strconv.Itoa(v)
	}
	return out
}

// SVG renders f as an SVG document with its fonts embedded.
func (f Figure) SVG() ([]byte, error) { return RenderSVG(plotWidth, plotHeight, f.plot.Draw) }

// PNG renders f as a PNG image.
func (f Figure) PNG() ([]byte, error) { return RenderPNG(plotWidth, plotHeight, plotDPI, f.plot.Draw) }

// AddTargetLine draws a capacity plan's bound: a dashed grey line at y
// from minX to maxX, in the legend as label.
func AddTargetLine(p *plot.Plot, minX, maxX, y float64, label string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: y}, {X: maxX, Y: y}})
	if err != nil {
		return err
	}
	l.Color = color.Gray{Y: 0x40}
	l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// AddChosenRing circles a capacity plan's answer at (x, y), in the legend
// as label.
func AddChosenRing(p *plot.Plot, x, y float64, label string) error {
	s, err := plotter.NewScatter(plotter.XYs{{X: x, Y: y}})
	if err != nil {
		return err
	}
	s.Shape, s.Radius, s.Color = draw.RingGlyph{}, vg.Points(9), color.Black
	p.Add(s)
	p.Legend.Add(label, s)
	return nil
}

// RenderSVG draws with fn on a w × h SVG canvas, fonts embedded (so the
// file looks the same everywhere), and returns the document.
func RenderSVG(w, h vg.Length, fn func(draw.Canvas)) ([]byte, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	fn(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RenderPNG draws with fn on a w × h canvas at dpi and returns the PNG.
func RenderPNG(w, h vg.Length, dpi int, fn func(draw.Canvas)) ([]byte, error) {
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
	fn(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WritePlots draws every figure of d into dir (created if missing) as
// NAME.png and NAME.svg, each written atomically. Equal Data give
// byte-identical files.
func WritePlots(dir string, d *Data) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// One figure at a time, each drawn from d just before it is written:
	// a CDF holds two points per job, and holding every figure's while
	// the others render would add them all to the peak.
	for _, m := range figureMakers {
		f, err := m(d)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		for _, kind := range []struct {
			ext    string
			render func() ([]byte, error)
		}{{"png", f.PNG}, {"svg", f.SVG}} {
			b, err := kind.render()
			if err != nil {
				return fmt.Errorf("plot %s: %w", f.Name, err)
			}
			if err := results.AtomicWriteFile(filepath.Join(dir, f.Name+"."+kind.ext), func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
