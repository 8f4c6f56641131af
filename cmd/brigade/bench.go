package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

const benchUsage = `Usage: brigade bench [flags]

Measures the engine: events per second, CPU time and heap allocations per
event, and peak memory, for each combination of policy, job count and cluster size on a seeded synthetic
workload (Poisson arrivals, lognormal durations, Philly-like GPU counts) on
an all-H100 cluster. --load sets the offered GPU demand as a multiple of the
cluster's capacity; --load 20 builds a queue of tens of thousands of jobs.
With --trace it instead replays that trace on --cluster. With --node-mtbf
or --gpu-mtbf each synthetic case runs twice, without and with failures
(heartbeats every 5 s, dead after 30 s, fixed retries), to measure what the
fault machinery costs per event.

Only the event loop is timed, not reading or generating the workload: its
wall time and events per wall second, and the process's CPU time over it
(getrusage: user and system, the garbage collector's threads included) and
CPU time per event. Peak RSS is the process's peak resident set after the
run (getrusage's maxrss), which includes the workload and every earlier
case of the same command, so it only grows down the table; RSS/job divides
it by the case's jobs: for the memory a job costs, run one case per
command. Times on a shared machine are noisy: compare ratios, repeat runs.`

const benchExamples = `  brigade bench
  brigade bench --jobs 10000,100000,1000000 --gpus 1000,10000 --policy fcfs,fair
  brigade bench --jobs 100000 --gpus 1000 --load 20
  brigade bench --trace philly.csv --format philly --cluster philly-like --policy fcfs
  brigade bench --jobs 100000 --gpus 80000 --policy fcfs --node-mtbf 30d --gpu-mtbf 90d --checkpoint-every 5m --checkpoint-cost 10s
`

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", benchUsage, benchExamples)
	jobs := fs.IntSlice("jobs", []int{10000, 100000}, "synthetic job counts")
	gpus := fs.IntSlice("gpus", []int{1000}, "cluster sizes in GPUs (rounded up to a multiple of 8)")
	names := fs.StringSlice("policy", []string{"fcfs", "fair"}, "policy `specs` to measure")
	fs.grammar = policyHelp()
	load := fs.Float64("load", 0.9, "offered GPU demand as a multiple of cluster capacity")
	seed := fs.Uint64("seed", 1, "workload seed")
	trace := fs.String("trace", "", "replay this trace `file` instead of synthetic workloads")
	format := fs.String("format", workloads.AutoFormat, "trace format: "+strings.Join(workloads.FormatNames(), ", ")+", or auto to tell by the header")
	clusterArg := fs.String("cluster", "philly-like", "cluster preset or spec file, with --trace")
	// With failures: heartbeats every 5 s, dead after 30 s, at most 10
	// fixed retries, each restarting for 2 minutes.
	ff := runner.Faults{HeartbeatInterval: 5 * hwmodel.Second, HeartbeatTimeout: 30 * hwmodel.Second,
		Retry: "fixed", MaxRetries: 10, BackoffFactor: 2, RestartTime: 2 * hwmodel.Minute}
	ff.Model = hwmodel.FailureModel{NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: 2 * hwmodel.Hour, Sigma: 1},
		GPURepair: hwmodel.RepairModel{Kind: "fixed", Mean: 4 * hwmodel.Hour, Sigma: 1}, Distribution: "exponential", WeibullShape: 0.7}
	fs.duration(&ff.Model.NodeMTBF, "node-mtbf", "", positive, "also measure each synthetic case with random node failures of this mean time between failures per node")
	fs.duration(&ff.Model.GPUMTBF, "gpu-mtbf", "", positive, "also measure with random GPU failures of this mean time between failures per GPU")
	fs.duration(&ff.CheckpointEvery, "checkpoint-every", "0", nonNegative, "with failures: jobs checkpoint every this much progress")
	fs.duration(&ff.CheckpointCost, "checkpoint-cost", "0", nonNegative, "with failures: time each checkpoint takes")
	data := fs.Bool("data", false, "also measure each synthetic case with data locality: 8 datasets of 25 GB to 2 TB with replicas on every 64th node, 500 GB of cache per node, storage read at 2 GB/s, jobs reading them evenly (give +local to a policy for locality-aware placement)")
	speeds := fs.Bool("speeds", false, "also measure each synthetic case with GPU-model speeds: the default speed table, jobs given classes evenly over its classes, durations measured on A100-80GB")
	quiet := fs.Bool("quiet", false, "print nothing but errors and the table (no progress bar either; the bar shows only when stderr is a terminal)")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	for _, n := range *jobs {
		if err := runner.CheckJobCount(n, 1); err != nil {
			return usageError{fmt.Errorf("--jobs: %w", err)}
		}
	}
	for _, n := range *names {
		s, err := policies.ParseSpec(n)
		if err == nil {
			err = s.Check()
		}
		if err != nil {
			return usageError{fmt.Errorf("--policy: %w", err)}
		}
	}
	var faults *runner.Faults
	if ff.Model.Enabled() {
		if ff.CheckpointCost > 0 && ff.CheckpointEvery == 0 {
			return usageError{fmt.Errorf("--checkpoint-cost needs --checkpoint-every")}
		}
		faults = &ff
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tjobs\tgpus\tload\tevents\tmax queued\twall s\tevents/s\tcpu s\tcpu ns/event\tallocs/event\tpeak RSS MiB\tRSS/job B\t"
	if faults != nil {
		head += "faults\t"
	}
	fmt.Fprintln(tw, head)
	row := func(policy string, nJobs, nGPUs int, loadCol string, r runner.BenchResult) {
		cpu, perEvent, rss, perJob := "-", "-", "-", "-"
		if r.HasUsage {
			cpu = fmt.Sprintf("%.3f", r.CPU.Seconds())
			perEvent = fmt.Sprintf("%d", r.CPUPerEvent().Nanoseconds())
			rss = fmt.Sprintf("%.0f", float64(r.PeakRSS)/(1<<20))
			perJob = fmt.Sprintf("%.0f", r.PeakRSSPerJob())
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%.3f\t%.0f\t%s\t%s\t%.2f\t%s\t%s\t", policy, nJobs, nGPUs, loadCol, r.Events, r.MaxQueued,
			r.Wall.Seconds(), r.EventsPerSec, cpu, perEvent, r.AllocsPerEvent, rss, perJob)
		if faults != nil {
			fmt.Fprintf(tw, "%d\t", r.Faults)
		}
		fmt.Fprintln(tw)
	}
	if *trace != "" {
		w, err := workloads.ReadFile(*trace, *format)
		if err != nil {
			return err
		}
		w.FillEstimates()
		spec, err := hwmodel.ResolveCluster(*clusterArg)
		if err != nil {
			return err
		}
		for _, n := range *names {
			c, err := spec.Build()
			if err != nil {
				return err
			}
			s := policies.MustParseSpec(n)
			if s.NeedsTarget() {
				s.Placer = policies.PlacerConfig{Seed: *seed, Target: runner.TargetOf(w)}
			}
			p, err := s.New()
			if err != nil {
				return err
			}
			prep, err := runner.Prepare(c, w, p, runner.Options{}.ForPolicy(s))
			if err != nil {
				return err
			}
			r, err := measure(prep, stderr, *quiet, fmt.Sprintf("brigade bench %s %s", n, filepath.Base(*trace)), len(w.Jobs))
			if err != nil {
				return err
			}
			row(n+" "+filepath.Base(*trace), len(w.Jobs), c.TotalGPUs(), "trace", r)
		}
		return tw.Flush()
	}
	for _, n := range *names {
		for _, g := range *gpus {
			g = (g + 7) / 8 * 8
			for _, j := range *jobs {
				c := runner.BenchCase{Jobs: j, GPUs: g, Policy: n, Load: *load, Seed: *seed}
				if !*quiet {
					// Generating millions of jobs takes seconds: say so.
					fmt.Fprintf(stderr, "brigade bench: generating %s for %s\n", hwmodel.Plural(j, "job", "jobs"), c)
				}
				w, err := c.BenchWorkload()
				if err != nil {
					return err
				}
				type variant struct {
					faults       *runner.Faults
					speeds, data bool
				}
				variants := []variant{{}}
				if faults != nil {
					variants = append(variants, variant{faults: faults})
				}
				if *speeds {
					runner.BenchClasses(w, *seed)
					variants = append(variants, variant{speeds: true})
				}
				if *data {
					variants = append(variants, variant{data: true})
				}
				for _, v := range variants {
					c.Faults, c.Speeds, c.Data = v.faults, v.speeds, v.data
					wv := w
					if v.data {
						// Only this run's cluster has the datasets its jobs read.
						wv = &workloads.Workload{Jobs: slices.Clone(w.Jobs), Tenants: w.Tenants, Classes: w.Classes}
						runner.BenchDatasets(wv, *seed)
					}
					prep, err := c.Prepare(wv)
					if err != nil {
						return err
					}
					r, err := measure(prep, stderr, *quiet, "brigade bench "+c.String(), len(wv.Jobs))
					if err != nil {
						return fmt.Errorf("%s: %w", c, err)
					}
					label := n
					switch {
					case v.faults != nil:
						label += "+faults"
					case v.speeds:
						label += "+speeds"
					case v.data:
						label += "+data"
					}
					row(label, j, g, fmt.Sprintf("%g", *load), r)
				}
			}
		}
	}
	if !*quiet {
		fmt.Fprintln(stderr, "brigade bench: engine only; workload generation not timed")
	}
	return tw.Flush()
}

// measure is runner.Measure with a progress bar over the run's jobs on a
// terminal. The bar's callback is called a few hundred times per run, so
// it does not change what is measured.
func measure(prep *runner.Prepared, stderr io.Writer, quiet bool, label string, jobs int) (runner.BenchResult, error) {
	bar := newProgress(stderr, quiet, label, "jobs", jobs)
	prep.Progress = bar.Set
	defer bar.Done()
	return runner.Measure(prep)
}
