package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// tableGroups and tableColumns are FormatTable's two header rows, groups
// then columns, before the optional groups (tableHeader).
var (
	tableGroups  = []string{"policy", "jobs", "wait", "", "", "jct", "", "", "", "", "", ""}
	tableColumns = []string{"", "done", "mean", "p50", "p99", "mean", "p99", "bsld", "util", "starved", "jain", "little"}
)

// tableHeader is the two header rows with the optional groups asked for.
// The first row ends at its last label, so no line has trailing spaces.
func tableHeader(mig, faults, preempt bool) string {
	groups, cols := slices.Clone(tableGroups), slices.Clone(tableColumns)
	if mig {
		groups, cols = append(groups, "mig", "", ""), append(cols, "util", "frag", "reconf")
	}
	if faults {
		groups, cols = append(groups, "faults", ""), append(cols, "lost", "goodput")
	}
	if preempt {
		groups, cols = append(groups, "preempt", ""), append(cols, "count", "lost")
	}
	last := len(groups) - 1
	for groups[last] == "" {
		last--
	}
	return strings.Join(groups[:last+1], "\t") + "\n" + strings.Join(cols, "\t") + "\n"
}

// FormatTable writes the terminal comparison table: two header rows and one
// row per run, in the order given. Columns:
//
//	policy   the policy name
//	jobs     done: jobs succeeded / jobs submitted
//	wait     mean, p50 and p99 wait
//	jct      mean and p99 job completion time
//	bsld     mean bounded slowdown
//	util     GPU utilisation while jobs were arriving, % (the
//	         contended period; GPUUtilisationArrivals), or over the
//	         makespan when no arrival window was given
//	starved  jobs over the starvation threshold
//	jain     Jain's index over tenants' mean bounded slowdown
//	         (JainIndexSlowdown; "-" when undefined): 1 = every tenant
//	         slowed alike
//	little   Little's-law relative error, %
//	mig      only when some run used MIG (a MIG slice was busy or a
//	         reconfiguration happened): util is MIG slice utilisation
//	         (%), frag MIG fragmentation (%), reconf the number of
//	         reconfigurations
//	faults   only when some run injected hardware failures: lost is
//	         LostGPUHours (GPU-h), goodput is Goodput (%)
//	preempt  only when some run preempted a job: count is the attempts
//	         preempted, lost the GPU-hours they cost (Preemption)
//
// Durations use one human unit (see HumanDuration). A row fits in 100
// columns for policy names of up to 12 characters and fewer than 100,000
// jobs; longer names or counts widen the table rather than being cut.
func FormatTable(w io.Writer, runs []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	mig := false
	for i := range runs {
		mig = mig || runs[i].MIGSliceUtilisation > 0 || runs[i].MIGReconfigurations > 0
	}
	faults, preempt := false, false
	for i := range runs {
		faults = faults || runs[i].Faults.Count > 0
		preempt = preempt || runs[i].Preemption != nil
	}
	io.WriteString(tw, tableHeader(mig, faults, preempt))
	for i := range runs {
		s := &runs[i]
		jain := "-"
		if s.JainIndexSlowdown > 0 {
			jain = strconv.FormatFloat(s.JainIndexSlowdown, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%d\t%s\t%s",
			s.Policy,
			s.JobsSucceeded, s.JobsSubmitted,
			HumanDuration(s.WaitS.Mean), HumanDuration(s.WaitS.P50), HumanDuration(s.WaitS.P99),
			HumanDuration(s.JCTS.Mean), HumanDuration(s.JCTS.P99),
			compact(s.BoundedSlowdown.Mean, 2),
			100*tableUtilisation(s),
			s.Starvation.StarvedJobs,
			jain,
			compact(100*s.LittlesLaw.RelError, 2)+"%",
		)
		if mig {
			fmt.Fprintf(tw, "\t%.1f%%\t%.1f%%\t%d", 100*s.MIGSliceUtilisation, 100*s.MIGFragmentation, s.MIGReconfigurations)
		}
		if faults {
			fmt.Fprintf(tw, "\t%s\t%.1f%%", compact(s.LostGPUHours, 2), 100*s.Goodput)
		}
		if preempt {
			var p PreemptionSummary
			if s.Preemption != nil {
				p = *s.Preemption
			}
			fmt.Fprintf(tw, "\t%d\t%s", p.Count, compact(p.LostGPUHours, 2))
		}
		io.WriteString(tw, "\n")
	}
	return tw.Flush()
}

// compact prints v with prec decimals below 10, one decimal below 100 and
// none above, so that a column stays narrow whatever the magnitude.
func compact(v float64, prec int) string {
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = min(prec, 1)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// HumanDuration formats seconds in the largest fitting unit of s, m, h or d,
// with one decimal below 10 of that unit and none above: 0 → "0s",
// 0.25 → "0.25s", 4.5 → "4.5s", 12 → "12s", 90 → "1.5m", 2100 → "35m",
// 4320 → "1.2h", 172800 → "2.0d". Non-finite input gives "-".
func HumanDuration(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "-"
	}
	sign := ""
	if sec < 0 {
		sign, sec = "-", -sec
	}
	switch {
	case sec == 0:
		return "0s"
	case sec < 1:
		return sign + strconv.FormatFloat(sec, 'f', 2, 64) + "s"
	case sec < 60:
		return sign + oneUnit(sec, "s")
	case sec < 3600:
		return sign + oneUnit(sec/60, "m")
	case sec < 86400:
		return sign + oneUnit(sec/3600, "h")
	}
	return sign + oneUnit(sec/86400, "d")
}

// oneUnit prints v with one decimal below 9.95 (so that it never prints
// "10.0") and none above.
func oneUnit(v float64, unit string) string {
	if v < 9.95 {
		return strconv.FormatFloat(v, 'f', 1, 64) + unit
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + unit
}

func tableUtilisation(s *Summary) float64 {
	if s.GPUUtilisationArrivals > 0 {
		return s.GPUUtilisationArrivals
	}
	return s.GPUUtilisation
}
