package serving

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

func (r *PlanResult) header() []string {
	h := []string{"replicas", "gpus", "gpu_h_per_h", "requests"}
	for _, t := range r.Targets {
		h = append(h, t.Key(), t.String())
	}
	return append(h, "all_pass", "chosen")
}

func (r *PlanResult) row(i int, seconds bool) []string {
	p := r.Points[i]
	row := []string{strconv.Itoa(p.Replicas), strconv.Itoa(p.GPUs), fmtPlanNum(p.GPUHoursPerHour), strconv.FormatInt(p.Requests, 10)}
	for k, t := range r.Targets {
		v := fmtPlanNum(p.Values[k])
		if !seconds && isLatencyMetric(t.Metric) {
			v = fmtPlanSeconds(p.Values[k])
		}
		row = append(row, v, planPassFail(p.Pass[k]))
	}
	chosen := ""
	if i == r.Best {
		chosen = "*"
	}
	return append(row, planPassFail(p.OK()), chosen)
}

func planPassFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

// fmtPlanSeconds prints a latency for the table: ms below a second.
func fmtPlanSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1:
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + "ms"
	case s < 100:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + "s"
}

// WriteTable prints the evidence table: one row per replica count tried,
// each target's metric (the worst over seeds) and pass or fail; * marks
// the answer.
func (r *PlanResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(r.header(), "\t")+"\t")
	for i := range r.Points {
		fmt.Fprintln(tw, strings.Join(r.row(i, false), "\t")+"\t")
	}
	return tw.Flush()
}

// WriteCSV writes the evidence table as CSV (latencies in seconds),
// atomically.
func (r *PlanResult) WriteCSV(path string) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(r.header()); err != nil {
			return err
		}
		for i := range r.Points {
			if err := cw.Write(r.row(i, true)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
}

// planPanelHeight is the height of one target's panel in WritePlot's
// figure.
const planPanelHeight = 3 * vg.Inch

// WritePlot draws each target's metric against the replica count (one
// panel per target, stacked), with the bound as a dashed line and the
// answer ringed, to path as PNG, atomically.
func (r *PlanResult) WritePlot(path string) error {
	h := planPanelHeight * vg.Length(len(r.Targets))
	var perr error
	png, err := report.RenderPNG(plotWidth, h, plotDPI, func(c draw.Canvas) {
		for k := range r.Targets {
			p, err := r.planPanel(k)
			if err != nil {
				perr = err
				return
			}
			top := h - planPanelHeight*vg.Length(k)
			p.Draw(draw.Crop(c, 0, 0, top-planPanelHeight, top-h))
		}
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	return results.AtomicWriteFile(path, func(w io.Writer) error { _, err := w.Write(png); return err })
}

func (r *PlanResult) planPanel(k int) (*plot.Plot, error) {
	t := r.Targets[k]
	unit := ""
	if isLatencyMetric(t.Metric) {
		unit = " (s)"
	}
	p := newServingPlot("target "+t.String(), "replicas", t.Key()+unit+", worst over seeds")
	var xy plotter.XYs
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, pt := range r.Points {
		xy = append(xy, plotter.XY{X: float64(pt.Replicas), Y: pt.Values[k]})
		minX, maxX = math.Min(minX, float64(pt.Replicas)), math.Max(maxX, float64(pt.Replicas))
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, err
	}
	report.StyleLine(l, 0)
	s.Color = l.Color
	p.Add(l, s)
	p.Legend.Add("simulated", l, s)
	if err := report.AddTargetLine(p, minX, maxX, t.Value, "target "+t.Op+" "+fmtPlanNum(t.Value)); err != nil {
		return nil, err
	}
	if r.Best >= 0 {
		b := r.Points[r.Best]
		if err := report.AddChosenRing(p, float64(b.Replicas), b.Values[k], fmt.Sprintf("chosen: %d replicas", b.Replicas)); err != nil {
			return nil, err
		}
	}
	if t.upper() && t.Value > 0 {
		// Too few replicas miss a ceiling by orders of magnitude; show the
		// region around the bound.
		top := 3 * t.Value
		if r.Best >= 0 {
			top = math.Max(top, 1.2*r.Points[r.Best].Values[k])
		}
		p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0), math.Min(p.Y.Max, top)
	}
	return p, nil
}

// WritePlanFiles writes plan.csv and, unless noPlot, plan.png into dir
// (created if missing). It returns the names written.
func WritePlanFiles(dir string, r *PlanResult, noPlot bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := r.WriteCSV(filepath.Join(dir, "plan.csv")); err != nil {
		return nil, err
	}
	if noPlot {
		return []string{"plan.csv"}, nil
	}
	if err := r.WritePlot(filepath.Join(dir, "plan.png")); err != nil {
		return nil, err
	}
	return []string{"plan.csv", "plan.png"}, nil
}
