package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/brigadesim/brigade/hwmodel"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/brigadesim/brigade/results"
	"github.com/spf13/pflag"
)

const fidelityUsage = `Usage: brigade fidelity [flags] LIVE_DIR SIM_DIR

How far two runs of the same jobs differ, typically a live run and its
replay in the simulator (brigade sim --replay LIVE_DIR --out SIM_DIR). For
each policy present in both folders: start order agreement (Kendall tau
over job pairs, the fraction of jobs at the same position, and whether the
start order is the same), per-job |sim - live| of start time and of JCT
(median and p95), the median relative JCT error |sim - live| / live, and
the difference of GPU utilisation (summary.json; empty without it). Prints
a table and writes fidelity.csv (--out, default SIM_DIR). Jobs are matched
by id and name; differing job sets are an error. See docs/replay.md.`

const fidelityExamples = `  brigade fidelity live-out replay-out
`

// fidelityRow is one policy's line of fidelity.csv.
type fidelityRow struct {
	Policy                          string
	Jobs                            int
	KendallTau, SamePosition        float64
	SameOrder                       bool
	StartErrP50, StartErrP95        float64
	JCTErrP50, JCTErrP95, JCTRelP50 float64
	UtilLive, UtilSim               float64 // NaN without summary.json
}

func runFidelity(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fidelity", fidelityUsage, fidelityExamples)
	out := fs.String("out", "", "`directory` for fidelity.csv (default: SIM_DIR)")
	if err := fs.FlagSet.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n\nFlags:\n%s\nExamples:\n%s", fs.usage, fs.FlagUsages(), fs.examples)
			return err
		}
		return usageError{err}
	}
	if fs.NArg() != 2 {
		return usageError{fmt.Errorf("want two results folders, LIVE_DIR and SIM_DIR; got %d arguments", fs.NArg())}
	}
	liveDir, simDir := fs.Arg(0), fs.Arg(1)
	if *out == "" {
		*out = simDir
	}
	rows, err := fidelity(liveDir, simDir)
	if err != nil {
		return err
	}
	if err := writeFidelityCSV(filepath.Join(*out, "fidelity.csv"), rows); err != nil {
		return err
	}
	return formatFidelity(stdout, rows)
}

// fidelity compares the jobs of two results folders, policy by policy.
func fidelity(liveDir, simDir string) ([]fidelityRow, error) {
	live, err := readResultJobs(liveDir)
	if err != nil {
		return nil, err
	}
	simRows, err := readResultJobs(simDir)
	if err != nil {
		return nil, err
	}
	lu, su := readUtilisation(liveDir), readUtilisation(simDir)
	simPols := policiesOf(simRows)
	var out []fidelityRow
	for _, p := range policiesOf(live) {
		if !contains(simPols, p) {
			continue
		}
		r, err := comparePolicy(p, byPolicy(live, p), byPolicy(simRows, p))
		if err != nil {
			return nil, fmt.Errorf("policy %s: %s vs %s: %w", p, liveDir, simDir, err)
		}
		r.UtilLive, r.UtilSim = math.NaN(), math.NaN()
		if u, ok := lu[p]; ok {
			r.UtilLive = u
		}
		if u, ok := su[p]; ok {
			r.UtilSim = u
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy is in both folders: %s has %v, %s has %v", liveDir, policiesOf(live), simDir, simPols)
	}
	return out, nil
}

func byPolicy(rows []results.JobRow, p string) []results.JobRow {
	var out []results.JobRow
	for _, r := range rows {
		if r.Policy == p {
			out = append(out, r)
		}
	}
	return out
}

// comparePolicy compares one policy's jobs. Jobs that never ran in either
// run (attempts 0) take no part in the start order and the errors; a job
// that never ran in the first (live) run may be missing from the second,
// since a replay leaves such jobs out.
func comparePolicy(p string, live, sim []results.JobRow) (fidelityRow, error) {
	key := func(r results.JobRow) string { return r.Name }
	lm := map[string]results.JobRow{}
	for _, r := range live {
		if _, dup := lm[key(r)]; dup {
			return fidelityRow{}, fmt.Errorf("job name %q appears twice in the live run", r.Name)
		}
		lm[key(r)] = r
	}
	sm := map[string]results.JobRow{}
	for _, r := range sim {
		if _, ok := lm[key(r)]; !ok {
			return fidelityRow{}, fmt.Errorf("the job sets differ: job %q is only in the second folder (%s there, %d in the first)", r.Name, hwmodel.Plural(len(sim), "job", "jobs"), len(live))
		}
		sm[key(r)] = r
	}
	for _, r := range live {
		if _, ok := sm[key(r)]; !ok && r.Attempts > 0 {
			return fidelityRow{}, fmt.Errorf("the job sets differ: job %q is only in the first folder (%s there, %d in the second)", r.Name, hwmodel.Plural(len(live), "job", "jobs"), len(sim))
		}
	}
	type pair struct{ l, s results.JobRow }
	var ps []pair
	for _, r := range live {
		s := sm[key(r)]
		if r.Attempts > 0 && s.Attempts > 0 {
			ps = append(ps, pair{r, s})
		}
	}
	row := fidelityRow{Policy: p, Jobs: len(ps)}
	if len(ps) == 0 {
		row.KendallTau, row.SamePosition, row.SameOrder = math.NaN(), math.NaN(), true
		return row, nil
	}
	var se, je, jr []float64
	for _, x := range ps {
		se = append(se, math.Abs(x.s.StartS-x.l.StartS))
		d := math.Abs(x.s.JCTS - x.l.JCTS)
		je = append(je, d)
		if x.l.JCTS > 0 {
			jr = append(jr, d/x.l.JCTS)
		}
	}
	row.StartErrP50, row.StartErrP95 = quantile(se, 0.5), quantile(se, 0.95)
	row.JCTErrP50, row.JCTErrP95, row.JCTRelP50 = quantile(je, 0.5), quantile(je, 0.95), quantile(jr, 0.5)
	// Start order: each run's jobs sorted by start (ties by id).
	order := func(get func(pair) results.JobRow) []int {
		idx := make([]int, len(ps))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			x, y := get(ps[idx[a]]), get(ps[idx[b]])
			if x.StartS != y.StartS {
				return x.StartS < y.StartS
			}
			return x.ID < y.ID
		})
		return idx
	}
	lo := order(func(x pair) results.JobRow { return x.l })
	so := order(func(x pair) results.JobRow { return x.s })
	same := 0
	for i := range lo {
		if lo[i] == so[i] {
			same++
		}
	}
	row.SamePosition = float64(same) / float64(len(lo))
	row.SameOrder = same == len(lo)
	row.KendallTau = kendallTau(lo, so)
	return row, nil
}

// kendallTau is Kendall's tau-a between two orderings of the same items
// 0..n-1 (1: the same order, -1: reversed; 1 for fewer than two items).
func kendallTau(a, b []int) float64 {
	n := len(a)
	if n < 2 {
		return 1
	}
	pos := make([]int, n)
	for i, x := range b {
		pos[x] = i
	}
	conc, disc := 0, 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if pos[a[i]] < pos[a[j]] {
				conc++
			} else {
				disc++
			}
		}
	}
	return float64(conc-disc) / float64(conc+disc)
}

// quantile is the q-quantile of xs by linear interpolation (NaN when empty).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}

// readUtilisation reads each policy's gpu_utilisation from a folder's
// summary.json; empty when it has none.
func readUtilisation(dir string) map[string]float64 {
	out := map[string]float64{}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return out
	}
	var sums []struct {
		Policy         string  `json:"policy"`
		GPUUtilisation float64 `json:"gpu_utilisation"`
	}
	if json.Unmarshal(data, &sums) != nil {
		return out
	}
	for _, s := range sums {
		out[s.Policy] = s.GPUUtilisation
	}
	return out
}

func fnum(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 6, 64)
}

func writeFidelityCSV(path string, rows []fidelityRow) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	w.Write([]string{"policy", "jobs", "kendall_tau", "same_position_fraction", "same_start_order",
		"start_err_p50_s", "start_err_p95_s", "jct_err_p50_s", "jct_err_p95_s", "jct_rel_err_p50",
		"util_live", "util_sim", "util_diff"})
	for _, r := range rows {
		w.Write([]string{r.Policy, strconv.Itoa(r.Jobs), fnum(r.KendallTau), fnum(r.SamePosition), map[bool]string{true: "yes", false: "no"}[r.SameOrder],
			fnum(r.StartErrP50), fnum(r.StartErrP95), fnum(r.JCTErrP50), fnum(r.JCTErrP95), fnum(r.JCTRelP50),
			fnum(r.UtilLive), fnum(r.UtilSim), fnum(r.UtilSim - r.UtilLive)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func formatFidelity(w io.Writer, rows []fidelityRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tjobs\tsame order\tkendall tau\tsame pos\tstart err p50\tstart err p95\tJCT err p50\tJCT err p95\tJCT rel err p50\tutil sim-live")
	pct := func(x float64) string {
		if math.IsNaN(x) {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	sec := func(x float64) string {
		if math.IsNaN(x) {
			return "n/a"
		}
		return fmt.Sprintf("%.2fs", x)
	}
	for _, r := range rows {
		tau := "n/a"
		if !math.IsNaN(r.KendallTau) {
			tau = fmt.Sprintf("%.3f", r.KendallTau)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Policy, r.Jobs, map[bool]string{true: "yes", false: "no"}[r.SameOrder],
			tau, pct(r.SamePosition), sec(r.StartErrP50), sec(r.StartErrP95), sec(r.JCTErrP50), sec(r.JCTErrP95), pct(r.JCTRelP50), pct(r.UtilSim-r.UtilLive))
	}
	return tw.Flush()
}
