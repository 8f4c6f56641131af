package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/spf13/pflag"
)

// Exit codes: 0 success, 1 the run failed (bad input, failed write), 2 the
// command line was wrong.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"sim", "replay a trace on a cluster under one or more policies and compare them", runSim},
		{"run", "run scenario files: a cluster, a workload, faults and the setups to compare, declared in YAML; the worked examples are examples/*.yaml (docs/scenarios.md)", runRun},
		{"bench", "measure the engine's speed in events per second", runBench},
		{"fill", "the FGD paper's experiment: fill a cluster with sampled pods under placement policies", runFill},
		{"pollux", "the Pollux artifact's Tiresias runs (8 workloads × 4 loads), job by job beside the published JCTs (docs/pollux.md)", runPollux},
		{"report", "write a results folder's self-contained report.html (plots, tables, metadata)", runReport},
		{"compare", "put two results folders side by side: which metrics moved and by how much", runCompare},
		{"sweep", "run a grid of workloads × clusters × loads × seeds × policies, resumable and shardable; mean, 95% CI and paired tests across seeds (docs/sweeps.md)", runSweep},
		{"plan", "find the smallest (or cheapest) cluster that meets targets such as wait_s.p99<=1800 on a workload (docs/capacity-planning.md)", runPlan},
		{"live", "run a job file's real processes on this machine's GPUs under a policy, crash-safe (docs/live.md)", runLive},
		{"gpus", "list this machine's NVIDIA GPUs, memory, utilisation and MIG instances as NVML reports them (read-only)", runGPUs},
		{"fidelity", "how far two runs of the same jobs differ (a live run and its replay): start order, start-time and JCT error, utilisation (docs/replay.md)", runFidelity},
		{"serve", "inference services beside batch jobs on one cluster: request classes, routing, ejection, autoscaling; golden signals and SLOs per variant (docs/serving.md)", runServe},
		{"version", "print Brigade's version, the commit it was built from and the Go version", runVersion},
	}
}

// usageError marks errors that come from the command line itself.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func main() {
	os.Exit(mainWithArgs(os.Args[1:], os.Stdout, os.Stderr))
}

func mainWithArgs(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		topUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "help" {
		// brigade help CMD is brigade CMD --help.
		if len(args) == 1 {
			topUsage(stdout)
			return exitOK
		}
		args = []string{args[1], "--help"}
	}
	if args[0] == "--version" {
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return exitOK
			case errors.Is(err, pflag.ErrHelp):
				return exitOK
			case errors.As(err, new(usageError)) || errors.As(err, new(*runner.RequestError)):
				fmt.Fprintf(stderr, "brigade %s: %v\nRun 'brigade %s --help' for the flags.\n", c.name, err, c.name)
				return exitUsage
			default:
				fmt.Fprintf(stderr, "brigade %s: %v\n", c.name, err)
				return exitError
			}
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := nearest(args[0], names); s != "" {
		fmt.Fprintf(stderr, "brigade: unknown command %q; did you mean %q?\nRun 'brigade help' for the commands.\n", args[0], s)
		return exitUsage
	}
	fmt.Fprintf(stderr, "brigade: unknown command %q\n\n", args[0])
	topUsage(stderr)
	return exitUsage
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `Brigade: a deterministic simulator and policy benchmark for GPU clusters.

Usage:
  brigade <command> [flags]

Commands:
`)
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'brigade help <command>' or 'brigade <command> --help' for a command's flags and examples.
`)
}

const versionUsage = `Usage: brigade version

Prints Brigade's version (the module version it was built as), the VCS
commit it was built from ("+dirty" when the work tree had changes) and the
Go version. run.json records the same version and commit.`

const versionExamples = `  brigade version
`

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", versionUsage, versionExamples)
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	rev := results.Revision
	if rev == "" {
		rev = "unknown (built without VCS information)"
	}
	fmt.Fprintf(stdout, "brigade %s\ncommit %s\n%s %s/%s\n", results.Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
