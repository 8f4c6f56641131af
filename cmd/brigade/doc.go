// Command brigade simulates GPU-cluster scheduling policies on real and
// synthetic workload traces, runs them on this machine's GPUs, and
// compares what users care about: waits, completion times, utilisation,
// starvation and fairness. It is flags, wiring, progress and exit codes
// around the packages that do the work.
//
// Invariants:
//   - Exit status 0 on success, 1 on a failed run, 2 on a usage error
//     (main.go); every usage error names the flag and what it expected.
//   - Every policy-taking command reads policy specs through policyFlags
//     (policyflags.go): --policy takes specs, the older flags are
//     shorthand applied on top, --help prints the grammar.
//   - Nothing is written before a run has succeeded; a results folder
//     (sim, serve, live) is written whole into a temporary folder that
//     replaces --out only when complete, and only when --out is missing,
//     empty or an earlier Brigade results folder, which is checked before
//     the run starts.
//
// # Files
//
// One file per command: sim.go, run.go (scenario files), live.go, serve.go (with serveplan.go,
// serve --plan, and servecalibrate.go, serve --calibrate), plan.go, sweep.go, fill.go, pollux.go, bench.go, fidelity.go,
// report.go (report and compare), gpus.go; liveexport.go is brigade live
// export, livehealth.go and livemetrics.go live's health source and
// --metrics endpoint; replay.go is sim --replay. main.go holds the
// command table and exit codes, flags.go the flag sets with their help
// texts and did-you-mean, policyflags.go the policy flags, progress.go
// the progress bar.
package main
