package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/plan"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

const planUsage = `Usage: brigade plan --target TARGETS [flags]

Finds the smallest cluster (by GPU count, or by cost when --prices are
given) that meets every target on a workload, and prints the answer with
its evidence: every size tried, each target's metric and pass or fail.

A target is a numeric summary.json field (a dotted path such as wait_s.p99
or starvation.starved_jobs; docs/metrics.md), one of <=, >=, <, >, and a
number. A size meets a target when it holds on every seed (--seeds): the
worst value across seeds is compared and reported.

For each --gpu-models model it searches clusters of identical nodes of
--gpus-per-node GPUs: it simulates the largest size, then finds the smallest
node count meeting the targets that hold there (waits, starvation: met by
growing) with an exponential then a binary search, O(log n) sizes, not every
one; targets that fail at the largest size (a utilisation floor) are checked
at that size. With --mix-steps K it also sizes, as one, every mix of two
--gpu-models in node shares k:(K-k) (K 4: 1:3, 1:1, 3:1). Without --speeds
the simulator runs every job at its measured pace on any model, so models
differ only in price; with --speeds (a speed table, or default) a job runs
on each model at its class's speed there, its trace duration measured on
--speed-reference, and a faster model needs fewer GPUs.
A size at which some job can never fit a node fails. Starvation counts use
a fixed threshold (--starvation-threshold) so that sizes compare. Runs go
in parallel (the seeds of a size, and the sizes the search may need next);
the evidence holds only the sizes the search used, the same on any number
of cores. brigade serve --plan sizes a service's replicas with the same
planner.

Writes --out/plan.csv (the evidence table) and --out/plan.png and plan.svg
(each target's metric against cluster size, one panel per target, with the
target line and the chosen size ringed). When no size in the allowed range
meets every target it says which target failed at the largest size and by
how much, and exits 1. A scenario file with a plan section runs the same
planner and writes its Markdown page (brigade run; examples/
capacity-planning.yaml writes docs/capacity-planning.md).`

const planExamples = `  brigade plan --target "wait_s.p99<=3600" --gpu-models p100,v100 --policy fair
  brigade plan --trace philly.csv --target "wait_s.p99<=1800,gpu_utilisation_arrivals>=0.5" --gpu-models h100,a100 --prices h100=2.5,a100=1.2 --seeds 1-3 --out runs/plan
  brigade run examples/capacity-planning.yaml   # the same planner, from a scenario file`

type planFlags struct {
	trace, format, targets, prices, seeds, out string
	starvation                                 hwmodel.Time
	models                                     []string
	speeds, speedReference                     string
	mixSteps                                   int
	classes                                    string
	pol                                        policyFlags
	spec                                       policies.Spec // resolved from pol
	gpusPerNode, minGPUs, maxGPUs              int
	load                                       float64
	args                                       []string // the command line after "plan", for run.json
	quiet                                      bool
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	var f planFlags
	fs := newFlagSet("plan", planUsage, planExamples)
	fs.StringVar(&f.trace, "trace", "", "workload trace `file`; default: the embedded Philly sample")
	fs.StringVar(&f.format, "format", workloads.AutoFormat, "trace format: "+strings.Join(workloads.FormatNames(), ", ")+", or auto to tell by the header")
	fs.StringVar(&f.targets, "target", "", "comma-separated targets, e.g. \"wait_s.p99<=1800,gpu_utilisation_arrivals>=0.7\"")
	fs.StringSliceVar(&f.models, "gpu-models", []string{"h100"}, "GPU models to size clusters of (catalogue names or aliases)")
	fs.StringVar(&f.prices, "prices", "", "price per GPU-hour by model, e.g. h100=2.5,a100=1.2; given, the cheapest cluster wins")
	fs.StringVar(&f.speeds, "speeds", "", "GPU-model speeds: a speed table `file` or default (docs/speeds.md); without, every model runs every job at its measured pace")
	fs.StringVar(&f.speedReference, "speed-reference", "", "with --speeds: the GPU `model` the trace's durations were measured on (required with --speeds: the answer depends on it)")
	fs.StringVar(&f.classes, "classes", "", "give each job of a trace without a class column a class for --speeds, drawn (from the first seed) from `list` CLASS[=WEIGHT],...")
	fs.IntVar(&f.mixSteps, "mix-steps", 0, "also size mixes of every two --gpu-models in node shares k:(K-k), k = 1..K-1 (0: single models only)")
	fs.IntVar(&f.gpusPerNode, "gpus-per-node", 8, "GPUs per node")
	fs.IntVar(&f.minGPUs, "min-gpus", 8, "smallest cluster to consider, in GPUs")
	fs.IntVar(&f.maxGPUs, "max-gpus", 4096, "largest cluster to consider, in GPUs")
	addPolicyFlags(fs, &f.pol, "the one policy `spec` to plan for (grammar below)", []string{"fair"})
	fs.StringVar(&f.seeds, "seeds", "1", "seeds, e.g. 1-3 or 1,5,9; a target must hold on every one")
	fs.Float64Var(&f.load, "load", 0, "arrival-rate multiplier: 2 packs the same jobs into half the time (0 or 1: as recorded)")
	fs.duration(&f.starvation, "starvation-threshold", "1h", positive, "wait above which a job counts as starved (fixed, so sizes compare)")
	fs.StringVar(&f.out, "out", "brigade-plan", "results `directory`, written whole: a new one, an empty one or an earlier Brigade results folder, replaced only once the plan has finished")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors, the answer and the table")
	f.args = args
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	return capacityPlan(f, stdout, stderr)
}

func parsePrices(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		m, known := hwmodel.LookupModel(strings.TrimSpace(k))
		if !ok || !known {
			return nil, fmt.Errorf("--prices: want MODEL=PRICE with a known model (%s), got %q", hwmodel.ModelNames(), kv)
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(p >= 0) {
			return nil, fmt.Errorf("--prices: %q is not a price >= 0", v)
		}
		out[m.Name] = p
	}
	return out, nil
}

func capacityPlan(f planFlags, stdout, stderr io.Writer) error {
	targets, err := plan.ParseTargets(f.targets, plan.SummaryMetrics())
	if err != nil {
		return usageError{fmt.Errorf("--target: %w", err)}
	}
	if len(f.pol.specs) != 1 {
		return usageError{fmt.Errorf("--policy: plan for one policy, got %d", len(f.pol.specs))}
	}
	specs, err := f.pol.resolve(nil)
	if err != nil {
		return err
	}
	f.spec = specs[0]
	var models []string
	for _, m := range f.models {
		g, ok := hwmodel.LookupModel(strings.TrimSpace(m))
		if !ok {
			return usageError{fmt.Errorf("--gpu-models: unknown model %q (known: %s)", m, hwmodel.ModelNames())}
		}
		if !slices.Contains(models, g.Name) {
			models = append(models, g.Name)
		}
	}
	if len(models) == 0 {
		return usageError{fmt.Errorf("--gpu-models: name at least one model")}
	}
	if f.mixSteps < 0 || f.mixSteps == 1 || f.mixSteps > 16 {
		return usageError{fmt.Errorf("--mix-steps must be 0 (none) or 2..16, got %d", f.mixSteps)}
	}
	if f.mixSteps > 0 && len(models) < 2 {
		return usageError{fmt.Errorf("--mix-steps mixes two or more --gpu-models; got %d", len(models))}
	}
	var mixes []plan.Mix
	if f.mixSteps > 0 {
		mixes = plan.Mixes(models, f.mixSteps)
	}
	speeds, err := runner.LoadSpeeds(f.speeds)
	if err != nil {
		return err
	}
	var ref hwmodel.ModelID
	switch {
	case speeds != nil && f.speedReference == "":
		return usageError{fmt.Errorf("--speeds needs --speed-reference: the GPU model the trace's durations were measured on")}
	case speeds == nil && f.speedReference != "":
		return usageError{fmt.Errorf("--speed-reference needs --speeds")}
	case speeds != nil:
		m, ok := hwmodel.LookupModel(f.speedReference)
		if !ok {
			return usageError{fmt.Errorf("--speed-reference: unknown model %q (known: %s)", f.speedReference, hwmodel.ModelNames())}
		}
		ref = m.ID
		var present hwmodel.ModelSet
		for _, name := range models {
			g, _ := hwmodel.LookupModel(name)
			present |= hwmodel.Of(g.ID)
		}
		if err := speeds.Check(present | hwmodel.Of(ref)); err != nil {
			return err
		}
	}
	prices, err := parsePrices(f.prices)
	if err != nil {
		return usageError{err}
	}
	for _, m := range models {
		if _, ok := prices[m]; prices != nil && !ok {
			return usageError{fmt.Errorf("--prices gives no price for %s", m)}
		}
	}
	if f.gpusPerNode < 1 || f.gpusPerNode > hwmodel.MaxGPUsPerNode {
		return usageError{fmt.Errorf("--gpus-per-node must be 1..%d, got %d", hwmodel.MaxGPUsPerNode, f.gpusPerNode)}
	}
	lo := max(1, (f.minGPUs+f.gpusPerNode-1)/f.gpusPerNode)
	hi := f.maxGPUs / f.gpusPerNode
	if f.minGPUs < 1 || hi < lo {
		return usageError{fmt.Errorf("--min-gpus %d and --max-gpus %d leave no cluster of whole %d-GPU nodes", f.minGPUs, f.maxGPUs, f.gpusPerNode)}
	}
	seeds, err := parseSeeds(f.seeds)
	if err != nil {
		return usageError{fmt.Errorf("--seeds: %w", err)}
	}
	speedsFile := f.speeds
	if speedsFile == runner.DefaultSpeeds {
		speedsFile = ""
	}
	if err := results.CheckOut(f.out, f.trace, speedsFile); err != nil {
		return err
	}
	var (
		w    *workloads.Workload
		name string
	)
	if f.trace == "" {
		w, err = workloads.Default()
		name = workloads.DefaultName
	} else {
		w, err = workloads.ReadFile(f.trace, f.format)
		name = filepath.Base(f.trace)
	}
	if err != nil {
		return err
	}
	if f.load < 0 {
		return usageError{fmt.Errorf("--load must be >= 0, got %g", f.load)}
	}
	if f.load != 0 && f.load != 1 {
		const ref = 1000
		if err := w.ScaleToLoad(ref, w.OfferedLoad(ref)*f.load); err != nil {
			return usageError{fmt.Errorf("--load: %w", err)}
		}
		name += fmt.Sprintf(", arrivals %gx as fast", f.load)
	}
	if f.classes != "" {
		names, weights, err := workloads.ParseClassList(f.classes)
		if err != nil {
			return usageError{fmt.Errorf("--classes: %w", err)}
		}
		if len(w.Classes) > 0 {
			return usageError{fmt.Errorf("--classes: the trace names its jobs' classes already")}
		}
		workloads.DrawClasses(w, names, weights, seeds[0])
		name += fmt.Sprintf(", classes %s", f.classes)
	}
	w.FillEstimates()
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade: planning for %d jobs from %s under %s, %s, %d-%d nodes of %d GPUs, seeds %s\n",
			len(w.Jobs), name, f.spec, strings.Join(models, ","), lo, hi, f.gpusPerNode, f.seeds)
	}
	cfg := plan.ClusterConfig{Workload: w, WorkloadName: name, Policy: f.spec, Target: policies.TargetFromRequests(reqs),
		StarvationThreshold: f.starvation, Targets: targets, Models: models, Mixes: mixes, Prices: prices, GPUsPerNode: f.gpusPerNode,
		MinNodes: lo, MaxNodes: hi, Seeds: seeds, Speeds: speeds, SpeedReference: ref}
	if !f.quiet {
		cfg.Progress = func(p plan.Point) {
			fmt.Fprintf(stderr, "brigade: %d × %s (%d GPUs): %s\n", p.Size, p.Model, p.GPUs, passFail(p.OK()))
		}
	}
	res, err := plan.Cluster(cfg)
	if err != nil {
		return err
	}
	err = results.WriteFolder(f.out, func(dir string) error {
		files, err := res.WriteFiles(dir, "png", "svg")
		if err != nil {
			return err
		}
		return results.WriteRunJSON(filepath.Join(dir, "run.json"), results.RunInfo{
			Seed: seeds[0], Command: append([]string{"brigade", "plan"}, f.args...), Files: files,
		})
	})
	if err != nil {
		return err
	}
	if err := res.WriteReport(stdout); err != nil {
		return err
	}
	if res.Best < 0 {
		return fmt.Errorf("%s", res.Unreachable())
	}
	return nil
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}
