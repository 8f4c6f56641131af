package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/plan"
	"github.com/brigadesim/brigade/policies"
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
at that size. Mixes of models are not searched, and models differ only in
price (the simulator does not scale durations by model).
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
how much, and exits 1. See docs/capacity-planning.md.`

const planExamples = `  brigade plan --target "wait_s.p99<=3600" --gpu-models p100,v100 --policy fair
  brigade plan --trace philly.csv --target "wait_s.p99<=1800,gpu_utilisation_arrivals>=0.5" --gpu-models h100,a100 --prices h100=2.5,a100=1.2 --seeds 1-3 --out runs/plan
  brigade plan --target "wait_s.p99<=3600,starvation.starved_jobs<=10" --gpu-models p100 --policy fair --markdown docs/capacity-planning.md`

type planFlags struct {
	trace, format, targets, prices, seeds, out, markdown, starvation string
	models                                                           []string
	pol                                                              policyFlags
	spec                                                             policies.Spec // resolved from pol
	gpusPerNode, minGPUs, maxGPUs                                    int
	load                                                             float64
	quiet                                                            bool
	args                                                             []string
}

func runPlan(args []string, stdout, stderr io.Writer) error {
	var f planFlags
	fs := newFlagSet("plan", planUsage, planExamples)
	fs.StringVar(&f.trace, "trace", "", "workload trace `file`; default: the embedded Philly sample")
	fs.StringVar(&f.format, "format", "auto", "trace format: philly, openb, brigade, or auto to tell by the header")
	fs.StringVar(&f.targets, "target", "", "comma-separated targets, e.g. \"wait_s.p99<=1800,gpu_utilisation_arrivals>=0.7\"")
	fs.StringSliceVar(&f.models, "gpu-models", []string{"h100"}, "GPU models to size clusters of (catalogue names or aliases)")
	fs.StringVar(&f.prices, "prices", "", "price per GPU-hour by model, e.g. h100=2.5,a100=1.2; given, the cheapest cluster wins")
	fs.IntVar(&f.gpusPerNode, "gpus-per-node", 8, "GPUs per node")
	fs.IntVar(&f.minGPUs, "min-gpus", 8, "smallest cluster to consider, in GPUs")
	fs.IntVar(&f.maxGPUs, "max-gpus", 4096, "largest cluster to consider, in GPUs")
	addPolicyFlags(fs, &f.pol, "the one policy `spec` to plan for (grammar below)", []string{"fair"})
	fs.StringVar(&f.seeds, "seeds", "1", "seeds, e.g. 1-3 or 1,5,9; a target must hold on every one")
	fs.Float64Var(&f.load, "load", 0, "arrival-rate multiplier: 2 packs the same jobs into half the time (0 or 1: as recorded)")
	fs.StringVar(&f.starvation, "starvation-threshold", "1h", "`wait` above which a job counts as starved (fixed, so sizes compare)")
	fs.StringVar(&f.out, "out", "brigade-plan", "output `directory` (created if missing)")
	fs.StringVar(&f.markdown, "markdown", "", "also write a Markdown report to this `file`, its plot beside it (same name, .png)")
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
	starvation, err := hwmodel.ParseDuration(f.starvation)
	if err != nil || starvation <= 0 {
		return usageError{fmt.Errorf("--starvation-threshold: %v", orPositive(err))}
	}
	var (
		w    *workloads.Workload
		name string
	)
	if f.trace == "" {
		w, err = workloads.Default()
		name = workloads.DefaultName
	} else {
		format := f.format
		if format == "auto" {
			if format, err = detectFormat(f.trace); err != nil {
				return err
			}
		}
		w, err = workloads.ReadFile(f.trace, format)
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
		StarvationThreshold: starvation, Targets: targets, Models: models, Prices: prices, GPUsPerNode: f.gpusPerNode,
		MinNodes: lo, MaxNodes: hi, Seeds: seeds}
	if !f.quiet {
		cfg.Progress = func(p plan.Point) {
			fmt.Fprintf(stderr, "brigade: %d × %s (%d GPUs): %s\n", p.Size, p.Model, p.GPUs, passFail(p.OK()))
		}
	}
	res, err := plan.Cluster(cfg)
	if err != nil {
		return err
	}
	if _, err := res.WriteFiles(f.out, "png", "svg"); err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.Answer())
	fmt.Fprintf(stdout, "%d sizes simulated (of %d per model in range), each on %d seed(s):\n", len(res.Points), hi-lo+1, len(seeds))
	if err := res.WriteTable(stdout); err != nil {
		return err
	}
	if f.markdown != "" {
		png := strings.TrimSuffix(f.markdown, filepath.Ext(f.markdown)) + ".png"
		if err := res.WritePlots(png, ""); err != nil {
			return err
		}
		if err := writePlanMarkdown(f, res, name, filepath.Base(png)); err != nil {
			return err
		}
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

// writePlanMarkdown writes the worked example's page: the command that
// made it, the answer, the evidence table and the plot.
func writePlanMarkdown(f planFlags, res *plan.Result, workload, png string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capacity planning: how many GPUs does a workload need?\n\n")
	fmt.Fprintf(&b, "<!-- Generated by brigade plan; do not edit by hand. Regenerate with the command below. -->\n\n")
	fmt.Fprintf(&b, "`brigade plan` finds the smallest cluster (by GPU count, or by cost when prices per GPU-hour are given) on which a workload meets every target, searching node counts with an exponential then a binary search instead of simulating every size, and shows its evidence. A target is a numeric field of summary.json (docs/metrics.md), a comparison and a bound; it must hold on every seed. Mixes of GPU models are not searched: each model is sized on its own and the best single-model answer wins.\n\n")
	fmt.Fprintf(&b, "This page and its plot were generated by one command, run in the repository root (a test checks that the page is up to date):\n\n```sh\ngo run ./cmd/brigade plan %s\n```\n\n", shellJoin(f.args))
	fmt.Fprintf(&b, "Workload: %s, under policy %s, seeds %s.\n\n", workload, f.spec, f.seeds)
	fmt.Fprintf(&b, "## Answer\n\n**%s.**\n\n", res.Answer())
	for mi, m := range res.Models {
		if i := res.PerModel[mi]; i >= 0 {
			p := res.Points[i]
			fmt.Fprintf(&b, "- %s: %d nodes × %d GPUs = %d GPUs", m, p.Size, f.gpusPerNode, p.GPUs)
			if res.Prices != nil {
				fmt.Fprintf(&b, ", %.2f per hour", p.Cost)
			}
			fmt.Fprintln(&b)
		} else {
			fmt.Fprintf(&b, "- %s: no size in range meets every target\n", m)
		}
	}
	fmt.Fprintf(&b, "\n%d sizes were simulated; the range held %d sizes per model.\n\n", len(res.Points), res.Hi-res.Lo+1)
	fmt.Fprintf(&b, "## Evidence\n\nEvery size tried, with each target's metric (the worst value over the seeds) and whether it passed; `*` marks the answer. The same table is in plan.csv.\n\n")
	var t strings.Builder
	res.WriteMarkdownTable(&t)
	b.WriteString(t.String())
	fmt.Fprintf(&b, "\n![each target metric against cluster size, with the target line and the chosen size ringed](%s)\n\n", png)
	fmt.Fprintf(&b, "## Reading it\n\nWaits fall as the cluster grows, so a wait ceiling is met from some size on. The search simulates the largest size first; the targets met there are the ones growing meets, and it finds the smallest size meeting them by doubling the step from the smallest size, then bisecting the last bracket. The other targets are checked at that size. A utilisation floor works the other way (a bigger cluster is idler), so a utilisation target caps the size from above; with both, the passing sizes form a window, and the evidence table shows where it lies. A size on which some job could never fit a node (a job wider than the whole cluster) fails whatever its metrics.\n\nMetrics are only roughly monotone in size: one more node can change which gang starts first, and a p99 wait can rise by a little before it falls again. The bisection assumes monotony within its last bracket, so read the rows around the answer: a passing size just below the answer that the search skipped would show as a failing neighbour above a passing one.\n\nThe simulator does not scale job durations by GPU model, so two models meet the targets at the same size and differ only in price; give the cheaper model's price and the answer follows it.\n")
	if f.spec.Placement != "random" {
		fmt.Fprintf(&b, "\nSeeds matter only where something draws randomness (a random placement, a synthetic workload); with a trace, policy %s and placement %s every seed gives the same run, so the worst over seeds is that run.\n", f.spec, f.spec.Placement)
	}
	return os.WriteFile(f.markdown, []byte(b.String()), 0o644)
}

func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " <>=,*\"'$") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
