// Package sweep runs a grid of simulations — workloads (traces or synthetic
// generator settings) × clusters × loads × seeds, every policy of the grid
// compared on the same arrivals in each run — and summarises them across
// seeds: the mean and a 95% confidence interval (Student t) per metric, and
// for each pair of policies a paired t-test across seeds.
//
// Each finished run is recorded durably as DIR/runs.d/<key>.json (written
// atomically), so an interrupted sweep resumes by skipping recorded runs, and
// the tables (runs.csv, runs.parquet, summary.csv, pairs.csv) are rebuilt from
// the records in the canonical run order only. That makes them independent of
// completion order, resumption and sharding: shards (index mod n) merged give
// the same bytes as one machine. Only per-run summaries are kept in memory.
// See docs/sweeps.md.
//
// # Files
//
//   - grid.go: Grid, the grid file (read by package config's strict
//     decoder; Grid.Check and Policy.Check say what a valid one is) and
//     its expansion into runs.
//   - run.go: Sweep and RunOne, shards, the durable per-run records.
//   - tables.go: WriteTables, runs.csv and runs.parquet from the records.
//   - summary.go: Summarise, summary.csv and pairs.csv across seeds.
//   - stats.go: MeanCI and PairedT, Student's t from gonum.
package sweep
