package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// drainData is one policy whose jobs arrive at 0, 1, ..., arrivals−1 hours
// and whose time series, in one-hour buckets, runs to end hours; with
// jobs false it has the series only (a results folder without jobs.csv).
func drainData(arrivals, end int, jobs bool) *Data {
	pol := Policy{Name: "fcfs"}
	if jobs {
		for i := range arrivals {
			pol.Jobs = append(pol.Jobs, Job{Ran: true, SubmitS: float64(i) * 3600})
		}
	}
	for h := range end {
		q := 0.0
		if h < arrivals {
			q = float64(h)
		}
		pol.Series = append(pol.Series, Point{StartS: float64(h) * 3600, Utilisation: 0.5, QueueLength: q})
	}
	return &Data{Policies: []Policy{pol}}
}

// TestSeriesArrivalWindow: the utilisation and queue plots of a run whose
// drain is longer than its arrivals end a quarter of the arrival window
// after the last arrival and say where the run ended; a dashed line marks
// the last arrival whenever the jobs are known.
func TestSeriesArrivalWindow(t *testing.T) {
	cases := []struct {
		name       string
		d          *Data
		wantMax    float64 // the x axis's end, in hours
		axisHours  float64 // hours per unit of the x axis
		wantLabel  []string
		noLabel    []string
		wantLegend string // "" for no last-arrival line
	}{
		{
			// Arrivals over 0..9 h, the run ends at 200 h (8.3 days): the
			// axis ends at 9 + 0.25 × 9 = 11.25 h.
			name: "long drain", d: drainData(10, 200, true), wantMax: 11.25, axisHours: 1,
			wantLabel:  []string{"(hours)", "the drain runs on to 8.29 days"},
			wantLegend: "last arrival (9 hours)",
		},
		{
			// A drain shorter than the arrivals: the whole run.
			name: "short drain", d: drainData(10, 15, true), wantMax: 14, axisHours: 1,
			noLabel:    []string{"drain"},
			wantLegend: "last arrival (9 hours)",
		},
		{
			// Without job data the arrivals are unknown: the whole run
			// (over four days, so in days), no marker.
			name: "no jobs", d: drainData(10, 200, false), wantMax: 199, axisHours: 24,
			noLabel: []string{"drain"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			figs, err := Figures(c.d)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range figs {
				if f.Name != "utilisation" && f.Name != "queue-length" {
					continue
				}
				if got := f.plot.X.Max * c.axisHours; math.Abs(got-c.wantMax) > 1e-9 {
					t.Errorf("%s: x axis ends at %g hours, want %g", f.Name, got, c.wantMax)
				}
				for _, want := range c.wantLabel {
					if !strings.Contains(f.plot.X.Label.Text, want) {
						t.Errorf("%s: x label %q lacks %q", f.Name, f.plot.X.Label.Text, want)
					}
				}
				for _, bad := range c.noLabel {
					if strings.Contains(f.plot.X.Label.Text, bad) {
						t.Errorf("%s: x label %q has %q", f.Name, f.plot.X.Label.Text, bad)
					}
				}
				svg, err := f.SVG()
				if err != nil {
					t.Fatal(err)
				}
				has := bytes.Contains(svg, []byte("last arrival"))
				if c.wantLegend != "" && !bytes.Contains(svg, []byte(c.wantLegend)) || c.wantLegend == "" && has {
					t.Errorf("%s: last-arrival legend %v, want %q", f.Name, has, c.wantLegend)
				}
				if f.plot.Y.Min != 0 || !(f.plot.Y.Max > 0) {
					t.Errorf("%s: y axis %g..%g, want from 0 up", f.Name, f.plot.Y.Min, f.plot.Y.Max)
				}
			}
		})
	}
}

func TestAmount(t *testing.T) {
	for _, c := range []struct {
		x    float64
		unit string
		want string
	}{
		{1, "hours", "1 hour"}, {1, "days", "1 day"}, {1, "minutes", "1 minute"}, {1, "seconds", "1 second"},
		{2, "hours", "2 hours"}, {0, "hours", "0 hours"}, {1.5, "hours", "1.5 hours"}, {31.8431, "days", "31.8 days"},
		{0.99999, "hours", "1 hour"},
	} {
		if got := amount(c.x, c.unit); got != c.want {
			t.Errorf("amount(%g, %q) = %q, want %q", c.x, c.unit, got, c.want)
		}
	}
}

// TestStarvationThresholdLegend: the default threshold's floor, one hour,
// reads "1 hour" in the legend.
func TestStarvationThresholdLegend(t *testing.T) {
	d := fixture()
	for i := range d.Summaries {
		d.Summaries[i].Starvation.ThresholdS = 3600
		d.Summaries[i].Starvation.LongestWaitS = 3 * 3600
	}
	figs, err := Figures(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != "starvation-tenant" {
			continue
		}
		svg, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg, []byte("starvation threshold (1 hour)")) {
			t.Errorf("the legend does not read \"starvation threshold (1 hour)\"")
		}
	}
}
