// Package runner runs one workload on one cluster under several policies
// and turns the engine's outcomes into results: the glue that brigade sim
// and bench, sweeps and serving experiments share.
//
// It is a package of its own because sim must not import results (the
// engine stays free of report concerns) while every command needs both;
// in cmd/brigade the glue would be copied by sweep and serving, which
// cannot import a command.
//
// Invariants:
//   - Each policy gets its own freshly built cluster and its own copy of the
//     per-job state, so policies cannot influence each other; runs may go in
//     parallel and their results are returned in the order the policies were
//     named, so output never depends on scheduling of goroutines.
//   - Nothing is written until every run has succeeded, and Simulate
//     writes a results folder whole (results.WriteFolder): a failed or
//     killed command leaves the earlier folder, never a mix of two runs.
//   - Options is the one struct an engine setting travels in, from the
//     flags to sim.Config (engineConfig); progress callbacks see the runs
//     but cannot change them.
//
// # Files
//
//   - simulate.go: Comparison and Simulate, brigade sim in one call:
//     the workload and cluster read, jobs that can never fit refused, the
//     runs, the results folder written whole.
//   - runner.go: Options (the engine settings every command fills), Spec
//     and Run, Prepare (an engine wired to a timeline), Records and the
//     failure vocabulary's mapping, Write.
//   - memory.go: CheckJobCount, the memory bound a job count must fit.
//   - speeds.go: a comparison's speed table (LoadSpeeds, the default or a
//     file, with the cluster spec's custom models) and its reference
//     model (SpeedReference).
//   - faults.go: Faults, the failure model and named faults of a run, and
//     the schedule drawn once from the seed's failure stream.
//   - bench.go: the benchmark cases of brigade bench and Measure;
//     rusage_unix.go and rusage_other.go: the process CPU time and peak
//     RSS Measure reads (getrusage; nothing where it is missing).
package runner
