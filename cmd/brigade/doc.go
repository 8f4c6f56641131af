// Command brigade is Brigade's command line: flags, wiring, progress and
// exit codes around the packages that do the work.
//
// Invariants:
//   - Exit status 0 on success, 1 on a failed run, 2 on a usage error
//     (main.go); every usage error names the flag and what it expected.
//   - Every policy-taking command reads policy specs through policyFlags
//     (policyflags.go): --policy takes specs, the older flags are
//     shorthand applied on top, --help prints the grammar.
//   - Nothing is written before a run has succeeded; live results go
//     through a temporary folder that replaces --out only when it is
//     missing, empty or an earlier Brigade results folder.
//
// Files, one per command (sim.go, live.go, serve.go, plan.go, sweep.go,
// fill.go, bench.go, fidelity.go, report.go, gpus.go, and the live
// subcommands liveexport.go, livehealth.go, livemetrics.go), with
// replay.go (sim --replay), the two worked examples (migexample.go,
// faultsexample.go), progress.go (the progress bar) and policyflags.go.
package main
