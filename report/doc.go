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
//
// # Files
//
//   - data.go: Data, what a report shows, from records (FromRecords) or
//     from a results folder's files (Load, ReadSummaries).
//   - plots.go: the figures (Figures, WritePlots) and the plot helpers that
//     plan and serving share (NewPlot, StyleLine, RenderPNG, RenderSVG).
//   - html.go: the self-contained HTML page (WriteHTML, WriteReport) and
//     its summary table, one unit per column.
//   - meta.go: run.json as the page shows it, a definition list in the
//     file's key order, whatever its schema.
//   - compare.go: Compare, two results folders metric by metric.
package report
