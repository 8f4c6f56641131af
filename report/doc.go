// Package report draws a run's plots (gonum/plot, PNG and SVG with embedded
// fonts), writes the self-contained HTML report of a results folder, and
// compares two results folders. It reads results either in memory
// (FromRecords, as brigade sim does) or from the files a run wrote (Load:
// summary.json, jobs.csv, timeseries.csv, run.json when present).
//
// It is a package of its own rather than part of results because it is
// presentation: it depends on gonum/plot and html/template, which the
// results package and its writers have no need of. docs/report.md says
// what each plot shows.
package report
