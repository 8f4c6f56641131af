package fill

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/results"
)

// CSVHeader is the header of fill.csv.
var CSVHeader = []string{"trace", "policy", "seed", "arrived_pct", "gpu_alloc_pct", "frag_pct"}

// WriteCSV writes every curve of every result to path, atomically: the
// header, then per result, per curve (policy order, then seed order), one
// row per whole arrived percent from 0 to the load. Percentages have two
// decimals.
func WriteCSV(path string, all ...*Results) error {
	return results.AtomicWriteFile(path, func(w io.Writer) error { return writeCSV(w, all) })
}

func writeCSV(w io.Writer, all []*Results) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	row := make([]string, len(CSVHeader))
	for _, res := range all {
		for _, c := range res.Curves {
			for _, p := range c.Points {
				row = append(row[:0], res.Trace, c.Policy, strconv.FormatUint(c.Seed, 10), strconv.Itoa(p.ArrivedPct),
					strconv.FormatFloat(p.GPUAllocPct, 'f', 2, 64), strconv.FormatFloat(p.FragPct, 'f', 2, 64))
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// Mean is a policy's curve averaged over its seeds: Alloc[k] and Frag[k]
// are the means at arrived percent k.
type Mean struct {
	Policy      string
	Alloc, Frag []float64
	Pods        float64 // mean number of arrived pods
	FailedPct   float64 // mean share of arrived pods that failed, in %
}

// Means averages each policy's curves over the seeds, in policy order.
func (r *Results) Means() []Mean {
	out := make([]Mean, len(r.Policies))
	n := MaxPct(r.Load) + 1
	for i, name := range r.Policies {
		m := Mean{Policy: name, Alloc: make([]float64, n), Frag: make([]float64, n)}
		curves := r.Curves[i*len(r.Seeds) : (i+1)*len(r.Seeds)]
		for _, c := range curves {
			for k, p := range c.Points {
				m.Alloc[k] += p.GPUAllocPct
				m.Frag[k] += p.FragPct
			}
			m.Pods += float64(c.Pods)
			m.FailedPct += 100 * float64(c.Pods-c.Placed) / float64(max(c.Pods, 1))
		}
		s := float64(len(curves))
		for k := range n {
			m.Alloc[k] /= s
			m.Frag[k] /= s
		}
		m.Pods /= s
		m.FailedPct /= s
		out[i] = m
	}
	return out
}

// WriteSummary prints, per policy, the mean over seeds of the GPU
// allocation ratio and the fragmentation ratio at 100% arrived load and at
// the final load, with the published means beside them when pub has them
// (pub may be nil).
func (r *Results) WriteSummary(w io.Writer, pub *Published) error {
	final := MaxPct(r.Load)
	means := r.Means()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := []string{"policy", "alloc@100%", fmt.Sprintf("alloc@%d%%", final), "frag@100%", fmt.Sprintf("frag@%d%%", final), "failed"}
	havePub := false
	if pub != nil {
		for _, m := range means {
			if _, ok := pub.Mean(r.Trace, m.Policy, r.Load, 100, r.Seeds); ok {
				havePub = true
			}
		}
	}
	if havePub {
		cols = []string{"policy", "alloc@100%", "published", "diff", fmt.Sprintf("alloc@%d%%", final), "published", "diff",
			"frag@100%", "published", fmt.Sprintf("frag@%d%%", final), "published", "failed"}
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	at := func(v []float64, k int) float64 {
		if k < len(v) {
			return v[k]
		}
		return math.NaN()
	}
	for _, m := range means {
		f := fmt.Sprintf
		if !havePub {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f%%\n", m.Policy, at(m.Alloc, 100), at(m.Alloc, final), at(m.Frag, 100), at(m.Frag, final), m.FailedPct)
			continue
		}
		pa := func(k int) (string, string) {
			v, ok := pub.Mean(r.Trace, m.Policy, r.Load, k, r.Seeds)
			if !ok || k >= len(m.Alloc) {
				return "-", "-"
			}
			return f("%.2f", v), signed(m.Alloc[k] - v)
		}
		pf := func(k int) string {
			v, ok := pub.FragMean(r.Trace, m.Policy, r.Load, k, r.Seeds)
			if !ok {
				return "-"
			}
			return f("%.2f", v)
		}
		p100, d100 := pa(100)
		pF, dF := pa(final)
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%.2f\t%s\t%s\t%.2f\t%s\t%.2f\t%s\t%.1f%%\n", m.Policy,
			at(m.Alloc, 100), p100, d100, at(m.Alloc, final), pF, dF, at(m.Frag, 100), pf(100), at(m.Frag, final), pf(final), m.FailedPct)
	}
	return tw.Flush()
}

// seedRange writes seeds compactly: "42-51", "1,3,5-7".
func seedRange(seeds []uint64) string {
	s := slices.Clone(seeds)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.FormatUint(s[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Describe is a one-line account of the experiment.
func (r *Results) Describe() string {
	return fmt.Sprintf("%s on %s (%d nodes, %d GPUs): load %g, seeds %s, policies %s",
		r.Trace, r.Cluster, r.Nodes, r.TotalGPUs, r.Load, seedRange(r.Seeds), strings.Join(r.Policies, ","))
}
