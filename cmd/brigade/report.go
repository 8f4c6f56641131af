package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
)

const reportUsage = `Usage: brigade report [flags] DIR

Writes DIR/report.html, one self-contained page that opens from disk with no
network: the run's metadata (DIR/run.json, when the run wrote one), the
summary tables (DIR/summary.json) and every plot inline as SVG with its fonts
embedded, drawn from DIR/jobs.csv and DIR/timeseries.csv (see docs/report.md).`

const reportExamples = `  brigade report runs/default    (after brigade sim --out runs/default)
  brigade report --out /tmp/r.html runs/default
`

func runReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", reportUsage, reportExamples)
	out := fs.String("out", "", "write the page to this `file` instead of DIR/report.html")
	quiet := fs.Bool("quiet", false, "print nothing but errors")
	dir, err := parseOneDir(fs, args, stdout, 1)
	if err != nil {
		return err
	}
	path := ""
	if *out == "" {
		if path, err = report.WriteReport(dir[0]); err != nil {
			return err
		}
	} else {
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, dir[0]); err != nil {
			return err
		}
		path = *out
		if err := results.AtomicWriteFile(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
			return err
		}
	}
	if !*quiet {
		fmt.Fprintf(stderr, "brigade: wrote %s\n", path)
	}
	return nil
}

const compareUsage = `Usage: brigade compare [flags] DIR_A DIR_B

Puts two runs' summaries (DIR_A/summary.json, DIR_B/summary.json) side by
side: for every policy present in both, each headline metric in A and in B
and its relative change (B − A) / |A|. Moves of at least --threshold are
flagged "<<" with whether they are better or worse.`

const compareExamples = `  brigade compare runs/a runs/b    (after brigade sim --out runs/a; brigade sim --backfill --out runs/b)
  brigade compare --threshold 0.05 --html diff.html runs/a runs/b
`

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", compareUsage, compareExamples)
	threshold := fs.Float64("threshold", 0.10, "relative change flagged as large (0.10 = 10%)")
	html := fs.String("html", "", "also write the comparison as an HTML page to this `file`")
	dirs, err := parseOneDir(fs, args, stdout, 2)
	if err != nil {
		return err
	}
	if !(*threshold >= 0) {
		return usageError{fmt.Errorf("--threshold must be >= 0, got %g", *threshold)}
	}
	a, err := report.ReadSummaries(dirs[0])
	if err != nil {
		return err
	}
	b, err := report.ReadSummaries(dirs[1])
	if err != nil {
		return err
	}
	c := report.Compare(dirs[0], a, dirs[1], b, *threshold)
	if err := c.WriteText(stdout); err != nil {
		return err
	}
	if *html != "" {
		var buf bytes.Buffer
		if err := c.WriteHTML(&buf); err != nil {
			return err
		}
		return results.AtomicWriteFile(*html, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
	}
	return nil
}

// parseOneDir parses flags and wants exactly n positional arguments.
func parseOneDir(fs *flagSet, args []string, stdout io.Writer, n int) ([]string, error) {
	if err := fs.FlagSet.Parse(args); err != nil {
		// reuse parse's help and error handling
		return nil, fs.parse(args, stdout)
	}
	if fs.NArg() != n {
		return nil, usageError{fmt.Errorf("want %d folder argument(s), got %d", n, fs.NArg())}
	}
	return fs.Args(), nil
}

// simPlots draws the runs' plots into dir/plots/ (report.WritePlots).
func simPlots(dir string, runs []runner.PolicyRun) error {
	sums := make([]results.Summary, len(runs))
	recs := make([][]results.JobRecord, len(runs))
	stats := make([][]results.JobStats, len(runs))
	timelines := make([]*results.Timeline, len(runs))
	held := false // the runs kept their records rather than streaming them
	for i, r := range runs {
		sums[i], recs[i], stats[i], timelines[i] = r.Summary, r.Jobs, r.Stats, r.Timeline
		held = held || r.Jobs != nil
	}
	if held {
		return report.WritePlots(filepath.Join(dir, "plots"), report.FromRecords(sums, recs, timelines))
	}
	return report.WritePlots(filepath.Join(dir, "plots"), report.FromStats(sums, stats, timelines))
}
