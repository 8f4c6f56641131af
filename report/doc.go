// Package report draws a run's plots (gonum/plot, PNG and SVG with embedded
// fonts), writes the self-contained HTML report of a results folder, and
// compares two results folders. It reads results either in memory
// (FromRecords or FromStats, as brigade sim does) or from the files a run
// wrote (Load: summary.json, jobs.csv, timeseries.csv, run.json when
// present).
//
// It is a package of its own rather than part of results because it is
// presentation: it depends on gonum/plot and html/template, which the
// results package and its writers have no need of. docs/report.md says
// what each plot shows.
//
// A CDF line of more than two million points (a run of more than a
// million jobs) is drawn through its envelope: per column a fiftieth of a
// point wide, the line's first point there, the corner (last x, first y)
// and its last point; it has the full line's length, so its dashes, and
// lies within a column's width of it, and it costs gonum a hundred
// thousand points however many jobs ran. Every smaller line is drawn
// point for point, so those plots' bytes do not depend on the rule.
//
// # Files
//
//   - data.go: Data, what a report shows, from records (FromRecords) or
//     from a results folder's files (Load, ReadSummaries).
//   - plots.go: the figures (Figures, WritePlots), the plot helpers that
//     plan and serving share (NewPlot, StyleLine, RenderPNG, RenderSVG).
//   - line.go: the figures' line (paddedLine): the glyph boxes that set
//     its padding, what it keeps between a figure's renders, and a long
//     CDF line's envelope.
//   - html.go: the self-contained HTML page (WriteHTML, WriteReport) and
//     its summary table, one unit per column.
//   - meta.go: run.json as the page shows it, a definition list in the
//     file's key order, whatever its schema.
//   - compare.go: Compare, two results folders metric by metric.
package report
