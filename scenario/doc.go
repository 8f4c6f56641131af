// Package scenario runs experiment files: one declarative YAML file names
// a cluster, a workload (a trace, a generator, explicit jobs, or explicit
// jobs followed by generated ones), the faults it runs under, the setups
// to compare and the table and plot to report (docs/scenarios.md); or,
// with a plan section, the targets a cluster must meet, which the one
// capacity planner (package plan) sizes; or a serving experiment file,
// run as brigade serve runs it, for its page.
// brigade run is its command; the worked examples in examples/ are such
// files, and their docs pages are what Result.WritePage writes.
//
// # Invariants
//
//   - A file is read by the one config decoder (config.Decode): unknown
//     fields, wrong types and what File.Check finds are reported at once,
//     each with file, line and field. A file that loads runs: every value,
//     format and series a column or chart names is checked when it loads.
//   - Every setup runs the same jobs: the workload is built once from the
//     file's seed, explicit jobs first (in file order), then generated
//     ones; a setup only changes its cluster, policy, the faults it sees,
//     the explicit jobs' checkpoints or MIG requests served whole.
//     Setups with faults face the same failures (runner draws them from
//     their own stream of the seed).
//   - The same file and Options give byte-identical results, tables,
//     pages and plots.
//   - Relative paths in a file (trace, cluster spec files, page, plot)
//     resolve against the file's folder. A results folder is written
//     whole (results.WriteFolder); a page and a plot are each replaced
//     atomically.
//
// # Files
//
//   - file.go: File and its parts, Load and Parse, and the Check methods
//     that say what a valid file is.
//   - workload.go: the workload a file describes: explicit jobs, the
//     generator, MIG phases.
//   - run.go: Options (the command line's overrides), Run, Result and its
//     table.
//   - plan.go: the plan section, its run through plan.Cluster and its
//     part of the page.
//   - serving.go: the serving field, its run through
//     serving.RunExperiment and its part of the page.
//   - values.go: the grammar of the values columns and charts name, and
//     their formats.
//   - page.go: the Markdown page and the PNG of charts.
//   - write.go: the results folder, writing the page and plot, and
//     checking that committed pages are current.
package scenario
