package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// SummaryColumns are summary.csv's columns: one row per (workload,
// cluster, load, policy, metric), over the seeds recorded.
var SummaryColumns = []string{"workload", "cluster", "load", "policy", "metric", "n", "mean", "sd", "ci95_half", "ci95_low", "ci95_high"}

// PairColumns are pairs.csv's columns: one row per (workload, cluster,
// load, metric, pair of policies in grid order), paired across the seeds
// both recorded; p_value and significant are "n/a" with fewer than 2 seeds.
var PairColumns = []string{"workload", "cluster", "load", "metric", "policy_a", "policy_b", "n", "mean_diff", "t", "p_value", "significant"}

type cell struct {
	workload, cluster string
	load              float64
}

// groups returns the records grouped by (workload, cluster, load) in
// canonical order.
func groups(recs []Record) ([]cell, map[cell][]Record) {
	var order []cell
	by := map[cell][]Record{}
	for _, r := range recs {
		c := cell{r.Workload, r.Cluster, r.Load}
		if _, ok := by[c]; !ok {
			order = append(order, c)
		}
		by[c] = append(by[c], r)
	}
	return order, by
}

// values returns policy p's metric m over rs' seeds (nil values skipped)
// with the seeds.
func values(rs []Record, p, m int) (xs []float64, seeds []uint64) {
	for _, r := range rs {
		if v := r.Policies[p].Metrics[m]; v != nil {
			xs = append(xs, *v)
			seeds = append(seeds, r.Seed)
		}
	}
	return xs, seeds
}

// Summarise computes summary.csv's and pairs.csv's rows (with headers).
func Summarise(g *Grid, recs []Record) (summary, pairs [][]string) {
	summary = [][]string{SummaryColumns}
	pairs = [][]string{PairColumns}
	order, by := groups(recs)
	for _, c := range order {
		rs := by[c]
		for p := range g.Policies {
			for m, name := range g.Metrics {
				xs, _ := values(rs, p, m)
				mean, half := MeanCI(xs)
				sd := math.NaN()
				if len(xs) >= 2 {
					sd = stddev(xs, mean)
				}
				summary = append(summary, []string{c.workload, c.cluster, num(c.load), g.Label(p), name,
					strconv.Itoa(len(xs)), num(mean), num(sd), num(half), num(mean - half), num(mean + half)})
			}
		}
		for m, name := range g.Metrics {
			for a := range g.Policies {
				for b := a + 1; b < len(g.Policies); b++ {
					var xa, xb []float64
					for _, r := range rs {
						va, vb := r.Policies[a].Metrics[m], r.Policies[b].Metrics[m]
						if va != nil && vb != nil {
							xa, xb = append(xa, *va), append(xb, *vb)
						}
					}
					d, t, p := PairedT(xa, xb)
					sig, ps, ts := "n/a", "n/a", "n/a"
					if len(xa) >= 2 {
						ps, ts = num(p), num(t)
						sig = strconv.FormatBool(p < 0.05)
					}
					pairs = append(pairs, []string{c.workload, c.cluster, num(c.load), name, g.Label(a), g.Label(b),
						strconv.Itoa(len(xa)), num(d), ts, ps, sig})
				}
			}
		}
	}
	return summary, pairs
}

// PrintSummary prints, per (workload, cluster, load), each policy's mean ±
// 95% CI half-width per metric, then the pairs whose difference is
// significant at 5% (paired t-test across seeds).
func PrintSummary(w io.Writer, g *Grid, recs []Record) error {
	order, by := groups(recs)
	_, pairs := Summarise(g, recs)
	for i, c := range order {
		rs := by[c]
		load := "as recorded"
		if c.load > 0 {
			load = num(c.load)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s on %s, load %s: %d seeds (mean ± 95%% CI)\n", c.workload, c.cluster, load, len(rs))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "policy\t%s\t\n", strings.Join(g.Metrics, "\t"))
		for p := range g.Policies {
			cells := []string{g.Label(p)}
			for m := range g.Metrics {
				xs, _ := values(rs, p, m)
				mean, half := MeanCI(xs)
				if math.IsNaN(half) {
					cells = append(cells, short(mean))
				} else {
					cells = append(cells, short(mean)+" ± "+short(half))
				}
			}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		var sig []string
		na := false
		for _, row := range pairs[1:] {
			if row[0] != c.workload || row[1] != c.cluster || row[2] != num(c.load) {
				continue
			}
			switch row[10] {
			case "n/a":
				na = true
			case "true":
				sig = append(sig, fmt.Sprintf("%s: %s vs %s (p=%s)", row[3], row[4], row[5], shortP(row[9])))
			}
		}
		switch {
		case na:
			fmt.Fprintln(w, "significance: n/a (fewer than 2 seeds)")
		case len(sig) == 0:
			fmt.Fprintln(w, "significant differences (paired t-test, p < 0.05): none")
		default:
			fmt.Fprintf(w, "significant differences (paired t-test, p < 0.05): %s\n", strings.Join(sig, "; "))
		}
	}
	return nil
}

func short(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

func shortP(s string) string {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}
