package results

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// tableHeader names FormatTable's columns.
const tableHeader = "policy\tdone\twait\twait50\twait99\tjct\tjct99\tbsld\tutil\tstarved\tjain\tlittle"

// FormatTable writes the terminal comparison table: a header and one row
// per run, in the order given. Columns:
//
//	policy   the policy name
//	done     jobs succeeded / jobs submitted
//	wait     mean wait; wait50 and wait99 its p50 and p99
//	jct      mean job completion time; jct99 its p99
//	bsld     mean bounded slowdown
//	util     GPU utilisation, %
//	starved  jobs over the starvation threshold
//	jain     Jain's fairness index ("-" when undefined)
//	little   Little's-law relative error, %
//
// Durations use one human unit (see HumanDuration). With policy names of up
// to 14 characters a row fits in 100 columns.
func FormatTable(w io.Writer, runs []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, tableHeader)
	for i := range runs {
		s := &runs[i]
		jain := "-"
		if s.JainIndex > 0 {
			jain = strconv.FormatFloat(s.JainIndex, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f%%\t%d\t%s\t%.2f%%\n",
			s.Policy,
			s.JobsSucceeded, s.JobsSubmitted,
			HumanDuration(s.WaitS.Mean), HumanDuration(s.WaitS.P50), HumanDuration(s.WaitS.P99),
			HumanDuration(s.JCTS.Mean), HumanDuration(s.JCTS.P99),
			s.BoundedSlowdown.Mean,
			100*s.GPUUtilisation,
			s.Starvation.StarvedJobs,
			jain,
			100*s.LittlesLaw.RelError,
		)
	}
	return tw.Flush()
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
