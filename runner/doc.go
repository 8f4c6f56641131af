// Package runner runs one workload on one cluster under several policies
// and turns the engine's outcomes into results: the glue every command
// (sim, bench, and later sweeps and capacity planning) shares.
//
// It is a package of its own, beside the layout in DESIGN.md, because sim
// must not import results (the engine stays free of report concerns) while
// every command needs both; putting the glue in cmd/brigade would make later
// commands copy it.
//
// Invariants:
//   - Each policy gets its own freshly built cluster and its own copy of the
//     per-job state, so policies cannot influence each other; runs may go in
//     parallel and their results are returned in the order the policies were
//     named, so output never depends on scheduling of goroutines.
//   - Nothing is written until every run has succeeded, and every file is
//     written atomically, so a failed command leaves no partial results.
package runner
