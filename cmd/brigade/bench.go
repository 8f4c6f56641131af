package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

const benchUsage = `Usage: brigade bench [flags]

Measures the engine: events per second and heap allocations per event, for
each combination of policy, job count and cluster size on a seeded synthetic
workload (Poisson arrivals, lognormal durations, Philly-like GPU counts) on
an all-H100 cluster. --load sets the offered GPU demand as a multiple of the
cluster's capacity; --load 20 builds a queue of tens of thousands of jobs.
With --trace it instead replays that trace on --cluster. With --node-mtbf
or --gpu-mtbf each synthetic case runs twice, without and with failures
(heartbeats every 5 s, dead after 30 s, fixed retries), to measure what the
fault machinery costs per event.

Only the event loop is timed, not reading or generating the workload. Wall
times on a shared machine are noisy: compare ratios, repeat runs.`

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
	format := fs.String("format", "auto", "trace format (philly, openb, brigade, auto)")
	clusterArg := fs.String("cluster", "philly-like", "cluster preset or spec file, with --trace")
	nodeMTBF := fs.String("node-mtbf", "", "also measure each synthetic case with random node failures of this mean `time` between failures per node")
	gpuMTBF := fs.String("gpu-mtbf", "", "also measure with random GPU failures of this mean `time` between failures per GPU")
	ckptEvery := fs.String("checkpoint-every", "0", "with failures: jobs checkpoint every this much `progress`")
	ckptCost := fs.String("checkpoint-cost", "0", "with failures: `time` each checkpoint takes")
	if err := fs.parse(args, stdout); err != nil {
		return err
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
	if *nodeMTBF != "" || *gpuMTBF != "" {
		ff := faultFlags{nodeMTBF: *nodeMTBF, gpuMTBF: *gpuMTBF, nodeRepair: "2h", gpuRepair: "4h", repairDist: "fixed", repairSigma: 1,
			dist: "exponential", weibullShape: 0.7, hbInterval: "5s", hbTimeout: "30s", retry: "fixed", maxRetries: 10,
			backoff: "0", backoffFactor: 2, restart: "2m", ckptEvery: *ckptEvery, ckptCost: *ckptCost}
		var err error
		if faults, err = faultsFromFlags(ff, nil); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tjobs\tgpus\tload\tevents\tmax queued\twall s\tevents/s\tallocs/event\t"
	if faults != nil {
		head += "faults\t"
	}
	fmt.Fprintln(tw, head)
	row := func(policy string, nJobs, nGPUs int, loadCol string, r runner.BenchResult) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%d\t%.3f\t%.0f\t%.2f\t", policy, nJobs, nGPUs, loadCol, r.Events, r.MaxQueued, r.Wall.Seconds(), r.EventsPerSec, r.AllocsPerEvent)
		if faults != nil {
			fmt.Fprintf(tw, "%d\t", r.Faults)
		}
		fmt.Fprintln(tw)
	}
	if *trace != "" {
		f := *format
		if f == "auto" {
			var err error
			if f, err = detectFormat(*trace); err != nil {
				return err
			}
		}
		w, err := workloads.ReadFile(*trace, f)
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
			p, err := s.New()
			if err != nil {
				return err
			}
			prep, err := runner.Prepare(c, w, p, runner.PrepareOptions{RevealOracle: s.UseOracle, MIGReconfigure: s.MIGReconfigure, MIGConvertWhole: s.MIGConvertWhole})
			if err != nil {
				return err
			}
			r, err := runner.Measure(prep)
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
				w, err := c.BenchWorkload()
				if err != nil {
					return err
				}
				variants := []*runner.Faults{nil}
				if faults != nil {
					variants = append(variants, faults)
				}
				for _, fv := range variants {
					c.Faults = fv
					prep, err := c.Prepare(w)
					if err != nil {
						return err
					}
					r, err := runner.Measure(prep)
					if err != nil {
						return fmt.Errorf("%s: %w", c, err)
					}
					label := n
					if fv != nil {
						label += "+faults"
					}
					row(label, j, g, fmt.Sprintf("%g", *load), r)
				}
			}
		}
	}
	fmt.Fprintln(stderr, strings.TrimSpace("engine only; workload generation not timed"))
	return tw.Flush()
}
