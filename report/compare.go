package report

import (
	"bytes"
	"fmt"
	"github.com/brigadesim/brigade/hwmodel"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/results"
)

// Metric is one summary number compare looks at.
type Metric struct {
	Name string
	// Better is +1 when higher is better, −1 when lower is better, 0 when
	// neither.
	Better int
	Get    func(results.Summary) float64
	// Differs, when set, says why the metric of two runs cannot be
	// compared ("" when it can): it counts against a yardstick that the
	// runs set differently.
	Differs func(a, b results.Summary) string
}

// starvationDiffers: a starved job is one whose wait passed the run's
// starvation threshold, so counts against two thresholds do not compare.
// The default threshold follows each run's median wait (10 × it, at least
// 1 h), so two runs often differ here without anyone having chosen to.
func starvationDiffers(a, b results.Summary) string {
	x, y := a.Starvation.ThresholdS, b.Starvation.ThresholdS
	if x == y {
		return ""
	}
	return fmt.Sprintf("starvation thresholds differ (A %s s, B %s s)", fmtNum(x), fmtNum(y))
}

// Metrics is what compare reports, in order.
var Metrics = []Metric{
	{"jobs_succeeded", +1, func(s results.Summary) float64 { return float64(s.JobsSucceeded) }, nil},
	{"jobs_failed", -1, func(s results.Summary) float64 { return float64(s.JobsFailed) }, nil},
	{"makespan_s", -1, func(s results.Summary) float64 { return s.MakespanS }, nil},
	{"wait_s.mean", -1, func(s results.Summary) float64 { return s.WaitS.Mean }, nil},
	{"wait_s.p50", -1, func(s results.Summary) float64 { return s.WaitS.P50 }, nil},
	{"wait_s.p95", -1, func(s results.Summary) float64 { return s.WaitS.P95 }, nil},
	{"wait_s.p99", -1, func(s results.Summary) float64 { return s.WaitS.P99 }, nil},
	{"jct_s.mean", -1, func(s results.Summary) float64 { return s.JCTS.Mean }, nil},
	{"jct_s.p99", -1, func(s results.Summary) float64 { return s.JCTS.P99 }, nil},
	{"bounded_slowdown.mean", -1, func(s results.Summary) float64 { return s.BoundedSlowdown.Mean }, nil},
	{"throughput_jobs_per_h", +1, func(s results.Summary) float64 { return s.ThroughputJobsPerH }, nil},
	{"gpu_utilisation", +1, func(s results.Summary) float64 { return s.GPUUtilisation }, nil},
	{"gpu_utilisation_arrivals", +1, func(s results.Summary) float64 { return s.GPUUtilisationArrivals }, nil},
	{"goodput", +1, func(s results.Summary) float64 { return s.Goodput }, nil},
	{"queue_length.mean", -1, func(s results.Summary) float64 { return s.QueueLength.Mean }, nil},
	{"starvation.threshold_s", 0, func(s results.Summary) float64 { return s.Starvation.ThresholdS }, nil},
	{"starvation.starved_jobs", -1, func(s results.Summary) float64 { return float64(s.Starvation.StarvedJobs) }, starvationDiffers},
	{"starvation.longest_wait_s", -1, func(s results.Summary) float64 { return s.Starvation.LongestWaitS }, nil},
	{"jain_index", +1, func(s results.Summary) float64 { return s.JainIndex }, nil},
	{"jain_index_slowdown", +1, func(s results.Summary) float64 { return s.JainIndexSlowdown }, nil},
}

// Change is one metric of one policy in two runs.
type Change struct {
	Policy, Metric string
	A, B           float64
	// Rel is (B − A) / |A|; ±Inf when A is 0 and B is not, 0 when both are.
	Rel float64
	// Large is |Rel| >= the threshold, for a metric with a better
	// direction; Verdict says "better", "worse" or "" (no change, or a
	// metric with no better direction).
	Large   bool
	Verdict string
	// NotCompared, when set, says why A and B do not compare (Metric.Differs);
	// Rel is 0, Large false and Verdict "" then.
	NotCompared string
}

// Comparison is two runs side by side.
type Comparison struct {
	DirA, DirB string
	// OnlyA and OnlyB are the policies present in one run only.
	OnlyA, OnlyB []string
	// Paired is set when the runs had no policy in common and as many
	// policies each, so policies were paired in order ("fcfs→fcfs+bf").
	Paired    bool
	Changes   []Change
	Threshold float64
}

// Compare compares the summaries of run A and run B for every policy present
// in both (in A's order); a relative change of at least threshold (e.g.
// 0.1) is flagged as large. When no policy is in both and each run has as
// many, it pairs them in order instead (Paired).
func Compare(dirA string, a []results.Summary, dirB string, b []results.Summary, threshold float64) Comparison {
	c := Comparison{DirA: dirA, DirB: dirB, Threshold: threshold}
	inB := map[string]int{}
	for i, s := range b {
		inB[s.Policy] = i
	}
	inA := map[string]bool{}
	type pair struct {
		label  string
		sa, sb results.Summary
	}
	var pairs []pair
	for _, sa := range a {
		inA[sa.Policy] = true
		if i, ok := inB[sa.Policy]; ok {
			pairs = append(pairs, pair{sa.Policy, sa, b[i]})
		} else {
			c.OnlyA = append(c.OnlyA, sa.Policy)
		}
	}
	for _, sb := range b {
		if !inA[sb.Policy] {
			c.OnlyB = append(c.OnlyB, sb.Policy)
		}
	}
	// No policy in common but as many policies on each side (say, the same
	// policies without and with --backfill, "fcfs" and "fcfs+bf"): pair
	// them in order.
	if len(pairs) == 0 && len(a) == len(b) {
		for i := range a {
			pairs = append(pairs, pair{a[i].Policy + "→" + b[i].Policy, a[i], b[i]})
		}
		c.Paired, c.OnlyA, c.OnlyB = true, nil, nil
	}
	for _, p := range pairs {
		for _, m := range Metrics {
			x, y := m.Get(p.sa), m.Get(p.sb)
			ch := Change{Policy: p.label, Metric: m.Name, A: x, B: y}
			if m.Differs != nil {
				if ch.NotCompared = m.Differs(p.sa, p.sb); ch.NotCompared != "" {
					c.Changes = append(c.Changes, ch)
					continue
				}
			}
			switch {
			case x == y:
			case x == 0:
				ch.Rel = math.Copysign(math.Inf(1), y)
			default:
				ch.Rel = (y - x) / math.Abs(x)
			}
			// A metric with no better direction (the starvation
			// threshold) is context for the others, never a move.
			ch.Large = math.Abs(ch.Rel) >= threshold && x != y && m.Better != 0
			if x != y && m.Better != 0 {
				if (y > x) == (m.Better > 0) {
					ch.Verdict = "better"
				} else {
					ch.Verdict = "worse"
				}
			}
			c.Changes = append(c.Changes, ch)
		}
	}
	return c
}

// Notes are the reasons some metrics were not compared, one line per
// reason and the policies it holds for, in order of first appearance.
func (c Comparison) Notes() []string {
	var reasons []string
	policies := map[string][]string{}
	for _, ch := range c.Changes {
		if ch.NotCompared == "" {
			continue
		}
		key := ch.Metric + "\x00" + ch.NotCompared
		if _, ok := policies[key]; !ok {
			reasons = append(reasons, key)
		}
		if ps := policies[key]; len(ps) == 0 || ps[len(ps)-1] != ch.Policy {
			policies[key] = append(ps, ch.Policy)
		}
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		metric, why, _ := strings.Cut(r, "\x00")
		out[i] = fmt.Sprintf("%s not compared for %s: %s", metric, strings.Join(policies[r], ", "), why)
	}
	return out
}

func fmtNum(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.4g", x)
}

func fmtRel(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "+inf"
	case math.IsInf(r, -1):
		return "-inf"
	case r == 0:
		return "0"
	}
	return fmt.Sprintf("%+.1f%%", 100*r)
}

// WriteText writes the comparison as a plain-text table: one row per policy
// and metric, large moves marked "<<" with their verdict.
func (c Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "A: %s\nB: %s\nlarge move: |B − A| / |A| >= %.0f%%\n", c.DirA, c.DirB, 100*c.Threshold)
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(w, "only in A: %s\n", strings.Join(c.OnlyA, ", "))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(w, "only in B: %s\n", strings.Join(c.OnlyB, ", "))
	}
	if c.Paired {
		fmt.Fprintln(w, "no policy in both runs: policies paired in the order each run lists them")
	}
	for _, n := range c.Notes() {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w)
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tmetric\tA\tB\tchange\t")
	large, compared := 0, 0
	for _, ch := range c.Changes {
		flag, rel := "", fmtRel(ch.Rel)
		switch {
		case ch.NotCompared != "":
			flag, rel = "not compared: "+ch.NotCompared, "n/a"
		case ch.Large:
			large++
			flag = "<< " + ch.Verdict
		}
		if ch.NotCompared == "" {
			compared++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", ch.Policy, ch.Metric, fmtNum(ch.A), fmtNum(ch.B), rel, strings.TrimSpace(flag))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+map[bool]string{true: "\n"}[strings.HasSuffix(line, "\n")]); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n%s over %s", hwmodel.Plural(large, "large move", "large moves"), hwmodel.Plural(compared, "policy metric", "policy metrics"))
	if n := len(c.Changes) - compared; n > 0 {
		fmt.Fprintf(w, " (%d not compared)", n)
	}
	_, err := fmt.Fprintln(w)
	return err
}

var compareTemplate = template.Must(template.New("compare").Funcs(template.FuncMap{"num": fmtNum, "rel": fmtRel, "mul100": func(x float64) float64 { return 100 * x }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Brigade compare</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
tr.better td { background: #e3f6e3; } tr.worse td { background: #fbe3e3; } tr.large td { font-weight: bold; }
</style></head><body>
<h1>Brigade compare</h1>
<p>A: {{.DirA}}<br>B: {{.DirB}}<br>Large move: relative change of at least {{printf "%.0f" (mul100 .Threshold)}}% (bold; green better, red worse).</p>
{{if .OnlyA}}<p>Only in A: {{range .OnlyA}}{{.}} {{end}}</p>{{end}}
{{if .OnlyB}}<p>Only in B: {{range .OnlyB}}{{.}} {{end}}</p>{{end}}
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}
<table><thead><tr><th>policy</th><th>metric</th><th>A</th><th>B</th><th>change</th></tr></thead><tbody>
{{range .Changes}}<tr class="{{if .Large}}large {{.Verdict}}{{end}}"><td>{{.Policy}}</td><td>{{.Metric}}</td><td>{{num .A}}</td><td>{{num .B}}</td><td>{{if .NotCompared}}n/a: {{.NotCompared}}{{else}}{{rel .Rel}}{{end}}</td></tr>
{{end}}</tbody></table></body></html>
`))

// WriteHTML writes the comparison as a self-contained HTML page.
func (c Comparison) WriteHTML(w io.Writer) error { return compareTemplate.Execute(w, c) }
