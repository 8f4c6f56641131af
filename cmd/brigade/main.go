package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
		{"bench", "measure the engine's speed in events per second", runBench},
		{"fill", "the FGD paper's experiment: fill a cluster with sampled pods under placement policies", runFill},
		{"mig-example", "the MIG worked example: one inference workload on 8 H200s, whole, static MIG and dynamic MIG (docs/mig.md)", runMIGExample},
		{"report", "write a results folder's self-contained report.html (plots, tables, metadata)", runReport},
		{"compare", "put two results folders side by side: which metrics moved and by how much", runCompare},
		{"sweep", "run a grid of workloads × clusters × loads × seeds × policies, resumable and shardable; mean, 95% CI and paired tests across seeds (docs/sweeps.md)", runSweep},
		{"plan", "find the smallest (or cheapest) cluster that meets targets such as wait_s.p99<=1800 on a workload (docs/capacity-planning.md)", runPlan},
		{"live", "run a job file's real processes on this machine's GPUs under a policy, crash-safe (docs/live.md)", runLive},
		{"gpus", "list this machine's NVIDIA GPUs, memory, utilisation and MIG instances as NVML reports them (read-only)", runGPUs},
		{"fidelity", "how far two runs of the same jobs differ (a live run and its replay): start order, start-time and JCT error, utilisation (docs/replay.md)", runFidelity},
		{"serve", "inference services beside batch jobs on one cluster: request classes, routing, ejection, autoscaling; golden signals and SLOs per variant (docs/serving.md)", runServe},
		{"faults-example", "the failures worked example: a 21-day training job beside batch jobs on 512 H100s, with and without checkpoints and backfill (docs/faults.md)", runFaultsExample},
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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		topUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return exitOK
			case errors.Is(err, pflag.ErrHelp):
				return exitOK
			case errors.As(err, new(usageError)):
				fmt.Fprintf(stderr, "brigade %s: %v\nRun 'brigade %s --help' for the flags.\n", c.name, err, c.name)
				return exitUsage
			default:
				fmt.Fprintf(stderr, "brigade %s: %v\n", c.name, err)
				return exitError
			}
		}
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
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'brigade <command> --help' for a command's flags and examples.
`)
}

// flagSet is a command's flags plus the text its --help prints.
type flagSet struct {
	*pflag.FlagSet
	usage, examples string
	// grammar, when set, is printed after the flags (the policy spec
	// grammar of commands that take specs).
	grammar string
}

func newFlagSet(name, usage, examples string) *flagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by mainWithArgs
	fs.Usage = func() {}
	fs.SortFlags = false
	return &flagSet{FlagSet: fs, usage: usage, examples: examples}
}

// parse reads args; on --help it prints the usage to stdout and returns
// pflag.ErrHelp.
func (fs *flagSet) parse(args []string, stdout io.Writer) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n\nFlags:\n%s\n", fs.usage, fs.FlagUsages())
			if fs.grammar != "" {
				fmt.Fprintf(stdout, "%s\n", fs.grammar)
			}
			fmt.Fprintf(stdout, "Examples:\n%s", fs.examples)
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}
