package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestCompareStarvationThresholds: starved-job counts of two runs compare
// only when the runs used the same starvation threshold; otherwise compare
// says so, rather than "+inf worse" for 0 against 3 starved jobs over
// different waits.
func TestCompareStarvationThresholds(t *testing.T) {
	cases := []struct {
		name         string
		thresholdB   float64 // A's is 3600 s
		wantNote     string  // "" when the counts compare
		wantLarge    bool
		wantRel      float64
		wantInOutput []string
		notInOutput  []string
	}{
		{
			name: "same threshold", thresholdB: 3600,
			wantLarge: true, wantRel: math.Inf(1),
			wantInOutput: []string{"+inf    << worse", "1 large move over 40 policy metrics\n"},
			notInOutput:  []string{"not compared"},
		},
		{
			name: "different thresholds", thresholdB: 9000,
			wantNote: "starvation thresholds differ (A 3600 s, B 9000 s)",
			wantInOutput: []string{
				"starvation.starved_jobs not compared for fcfs, sjf: starvation thresholds differ (A 3600 s, B 9000 s)\n",
				"n/a      not compared: starvation thresholds differ (A 3600 s, B 9000 s)\n",
				"0 large moves over 38 policy metrics (2 not compared)\n",
			},
			notInOutput: []string{"+inf"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := fixture().Summaries, fixture().Summaries
			for i := range b {
				a[i].Starvation.ThresholdS, b[i].Starvation.ThresholdS = 3600, c.thresholdB
			}
			b[1].Starvation.StarvedJobs = 3 // sjf: none starved in A
			cmp := Compare("runs/a", a, "runs/b", b, 0.10)
			for _, ch := range cmp.Changes {
				if ch.Metric != "starvation.starved_jobs" || ch.Policy != "sjf" {
					continue
				}
				if ch.NotCompared != c.wantNote || ch.Large != c.wantLarge || ch.Rel != c.wantRel {
					t.Errorf("sjf starved_jobs: %+v, want NotCompared %q, Large %v, Rel %v", ch, c.wantNote, c.wantLarge, c.wantRel)
				}
				if c.wantNote != "" && ch.Verdict != "" {
					t.Errorf("a metric not compared has verdict %q", ch.Verdict)
				}
			}
			var buf bytes.Buffer
			if err := cmp.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, want := range c.wantInOutput {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range c.notInOutput {
				if strings.Contains(out, bad) {
					t.Errorf("output has %q:\n%s", bad, out)
				}
			}
			if c.wantNote != "" {
				golden(t, "compare-thresholds.golden.txt", buf.Bytes())
				buf.Reset()
				if err := cmp.WriteHTML(&buf); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(buf.String(), "n/a: "+c.wantNote) {
					t.Error("the HTML comparison does not say why starved_jobs is not compared")
				}
			}
		})
	}
}
