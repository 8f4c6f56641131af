package fill

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
)

// Plot sizes: the PNG is rendered at 150 dpi.
const (
	plotWidth  = 11 * vg.Inch
	plotHeight = 4.5 * vg.Inch
	plotDPI    = 150
)

// newPlot draws the shape of the FGD paper's Figure 9(a): the GPU
// allocation ratio against the arrived workload, one line per policy (the
// mean over seeds), with the y = x line that a cluster placing every pod
// would follow. The legend lists policies by their allocation at the final
// load, best first, with that value.
//
// zoom draws the same lines on the high-load corner where the policies
// part (x and y from a little below the lowest final allocation), without
// a legend.
func (r *Results) newPlot(zoom bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = "Arrived workload (% of cluster GPU capacity requested)"
	p.Y.Label.Text = "GPU allocation ratio (% of cluster GPUs)"
	final := MaxPct(r.Load)
	means := r.Means()
	lo, xstep, ystep := 0, 10, 10
	if zoom {
		low := 100.0
		for _, m := range means {
			low = min(low, m.Alloc[final])
		}
		lo = max(0, min(int(math.Floor(low/5))*5-5, final-10))
		xstep, ystep = 5, 5
		if final-lo > 40 {
			xstep = 10
		}
		if 100-lo <= 15 {
			ystep = 2
		}
		p.Title.Text = "the same, zoomed in"
	} else {
		p.Title.Text = fmt.Sprintf("%s on %s, mean over %d seeds", r.Trace, r.Cluster, len(r.Seeds))
	}
	defer func() { // after the lines, which would widen the ranges
		p.X.Min, p.X.Max = float64(lo), float64(final)
		p.Y.Min, p.Y.Max = float64(lo), 100
	}()
	p.X.Tick.Marker = plot.ConstantTicks(ticks(lo, final, xstep))
	p.Y.Tick.Marker = plot.ConstantTicks(ticks(lo, 100, ystep))
	p.Add(plotter.NewGrid())

	diag := plotter.XYs{{X: float64(lo), Y: float64(lo)}, {X: 100, Y: 100}, {X: float64(final), Y: 100}}
	if final < 100 {
		diag = plotter.XYs{{X: float64(lo), Y: float64(lo)}, {X: float64(final), Y: float64(final)}}
	}
	ideal, err := plotter.NewLine(diag)
	if err != nil {
		return nil, err
	}
	ideal.Color = color.Gray{Y: 0x90}
	ideal.Width = vg.Points(1)
	ideal.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(ideal)

	order := make([]int, len(means))
	for i := range order {
		order[i] = i
	}
	// Legend: best final allocation first (ties in the given order).
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && means[order[j]].Alloc[final] > means[order[j-1]].Alloc[final]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for rank, i := range order {
		m := means[i]
		xy := make(plotter.XYs, 0, len(m.Alloc))
		for k, v := range m.Alloc {
			if k >= lo {
				xy = append(xy, plotter.XY{X: float64(k), Y: v})
			}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		report.StyleLine(l, i)
		p.Add(l)
		if !zoom {
			p.Legend.Add(fmt.Sprintf("%d. %s: %.2f%% at %d%%", rank+1, m.Policy, m.Alloc[final], final), l)
		}
	}
	if !zoom {
		p.Legend.Add("every arrived pod placed", ideal)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(6)
	p.Legend.Padding = vg.Points(1)
	return p, nil
}

func ticks(lo, hi, step int) []plot.Tick {
	var out []plot.Tick
	for v := (lo + step - 1) / step * step; v <= hi; v += step {
		out = append(out, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	return out
}

// WritePlots draws the curves to pngPath and svgPath (either may be ""),
// atomically.
func (r *Results) WritePlots(pngPath, svgPath string) error {
	for _, out := range []struct{ path, format string }{{pngPath, "png"}, {svgPath, "svg"}} {
		if out.path == "" {
			continue
		}
		full, err := r.newPlot(false)
		if err != nil {
			return err
		}
		zoom, err := r.newPlot(true)
		if err != nil {
			return err
		}
		var c vg.CanvasWriterTo
		var buf bytes.Buffer
		if out.format == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(plotDPI))}
		} else {
			c = vgsvg.New(plotWidth, plotHeight)
		}
		dc := draw.New(c)
		split := plotWidth * 0.62
		full.Draw(draw.Crop(dc, 0, split-plotWidth, 0, 0))
		zoom.Draw(draw.Crop(dc, split, 0, 0, 0))
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		if err := results.AtomicWriteFile(out.path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return err
		}
	}
	return nil
}
