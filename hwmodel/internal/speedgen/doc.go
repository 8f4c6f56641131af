// Command speedgen derives Brigade's default GPU speed table
// (hwmodel/speeds.csv) from the measured throughputs kept under
// shared/throughputs: Gavel's per-job throughputs on K80, P100 and V100,
// and MLPerf Training scores for A100 and newer accelerators.
//
//	go run ./hwmodel/internal/speedgen -shared ../shared -out hwmodel/speeds.csv
//
// The output is deterministic: fixed row order, speeds written with four
// significant digits. docs/speeds.md explains every step; the constants
// below are the choices it names.
//
// # Invariants
//
// The output is a function of the input files alone: rows in a fixed
// order, numbers printed with four significant digits, no clock, no map
// order. A test of package hwmodel regenerates the table from the shared
// data when it is present and requires it byte for byte.
//
// # Files
//
//   - main.go: the files read, main, generate (the table in its order,
//     written and read back) and the helpers every source uses.
//   - gavel.go: Gavel's per-class rows, its across-nodes factors and its
//     co-location pairs.
//   - pollux.go: Pollux's across-nodes factors by application.
//   - mlperf.go: MLPerf's measured links between accelerators and its
//     per-class rows.
//   - generic.go: the generic rows, the bridge and the estimates.
package main
