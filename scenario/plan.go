package scenario

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/plan"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// Plan is a capacity plan: the smallest (or, with prices, cheapest)
// cluster of identical nodes of one of GPUModels on which the file's
// workload, under its policy, meets every target on every seed
// (plan.Cluster, docs/capacity-planning.md).
type Plan struct {
	// Targets are summary.json fields with a bound, e.g. wait_s.p99<=3600.
	Targets   []string `json:"targets" config:"required,max=32"`
	GPUModels []string `json:"gpu_models" config:"required,max=16"`
	// Prices per GPU-hour by model; given, the cheapest cluster wins.
	Prices      map[string]float64 `json:"prices"`
	GPUsPerNode int                `json:"gpus_per_node"` // default 8
	MinGPUs     int                `json:"min_gpus"`      // default 8
	MaxGPUs     int                `json:"max_gpus"`      // default 4096
	// Seeds: a target must hold on every one (default: the file's seed).
	Seeds []uint64 `json:"seeds" config:"max=1000"`
	// StarvationThreshold is fixed, so that sizes compare (default 1h).
	StarvationThreshold string `json:"starvation_threshold"`
	// Speeds names a speed table (a file, relative to the scenario file,
	// or default); with it jobs run on each model at their class's speed,
	// their durations measured on SpeedReference, and the page also gives
	// the speed-blind plan's answer beside the speed-aware one.
	Speeds         string `json:"speeds"`
	SpeedReference string `json:"speed_reference"`
	// Classes gives the jobs of a workload without classes a class each,
	// drawn from the file's seed: CLASS or CLASS=WEIGHT entries.
	Classes []string `json:"classes" config:"max=1000"`
	// MixSteps also sizes every two-model mix in node shares k:(steps−k)
	// (plan.Mixes); 0 sizes single models only.
	MixSteps int `json:"mix_steps"`
}

const (
	defaultGPUsPerNode = 8
	defaultMinGPUs     = 8
	defaultMaxGPUs     = 4096
	defaultStarvation  = "1h"
)

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Check reports what is wrong with the plan section.
func (p *Plan) Check(e *config.Errors) {
	for i, t := range p.Targets {
		if _, err := plan.ParseTargets(t, plan.SummaryMetrics()); err != nil {
			e.Add(fmt.Sprintf("targets[%d]", i), "%v", err)
		}
	}
	var models []string
	for i, m := range p.GPUModels {
		g, ok := hwmodel.LookupModel(m)
		if !ok {
			e.Add(fmt.Sprintf("gpu_models[%d]", i), "unknown model %q (known: %s)", m, hwmodel.ModelNames())
			continue
		}
		models = append(models, g.Name)
	}
	if p.Prices != nil {
		for _, k := range slices.Sorted(maps.Keys(p.Prices)) {
			g, ok := hwmodel.LookupModel(k)
			switch {
			case !ok:
				e.Add("prices."+k, "unknown model %q (known: %s)", k, hwmodel.ModelNames())
			case !(p.Prices[k] >= 0):
				e.Add("prices."+k, "want a price >= 0, got %g", p.Prices[k])
			case !slices.Contains(models, g.Name):
				e.Add("prices."+k, "%s is not among gpu_models", k)
			}
		}
		for i, m := range models {
			if _, ok := p.price(m); !ok {
				e.Add(fmt.Sprintf("gpu_models[%d]", i), "prices gives no price for %s", m)
			}
		}
	}
	per := orInt(p.GPUsPerNode, defaultGPUsPerNode)
	if per < 1 || per > hwmodel.MaxGPUsPerNode {
		e.Add("gpus_per_node", "want 1 to %d, got %d", hwmodel.MaxGPUsPerNode, per)
	} else if lo, hi := p.nodes(); lo > hi || orInt(p.MinGPUs, defaultMinGPUs) < 1 {
		e.Add("max_gpus", "min_gpus %d and max_gpus %d leave no cluster of whole %d-GPU nodes",
			orInt(p.MinGPUs, defaultMinGPUs), orInt(p.MaxGPUs, defaultMaxGPUs), per)
	}
	checkSpeeds(e, p.Speeds, p.SpeedReference)
	if len(p.Classes) > 0 {
		if _, _, err := workloads.ParseClassList(strings.Join(p.Classes, ",")); err != nil {
			e.Add("classes", "%v", err)
		}
	}
	if p.MixSteps < 0 || p.MixSteps == 1 || p.MixSteps > 16 {
		e.Add("mix_steps", "want 0 (single models) or 2..16, got %d", p.MixSteps)
	} else if p.MixSteps > 0 && len(models) < 2 {
		e.Add("mix_steps", "mixes need two or more gpu_models, got %d", len(models))
	}
	if t := duration(e, "starvation_threshold", p.StarvationThreshold); p.StarvationThreshold != "" && t <= 0 && e.Count() == 0 {
		e.Add("starvation_threshold", "want a positive duration")
	}
}

// price is model's price, given under any of its names.
func (p *Plan) price(model string) (float64, bool) {
	for k, v := range p.Prices {
		if g, ok := hwmodel.LookupModel(k); ok && g.Name == model {
			return v, true
		}
	}
	return 0, false
}

// nodes is the range of node counts searched.
func (p *Plan) nodes() (lo, hi int) {
	per := orInt(p.GPUsPerNode, defaultGPUsPerNode)
	lo = max(1, (orInt(p.MinGPUs, defaultMinGPUs)+per-1)/per)
	return lo, orInt(p.MaxGPUs, defaultMaxGPUs) / per
}

// runPlan runs the file's capacity plan.
func (f *File) runPlan(opt Options, res *Result) error {
	p := f.Plan
	w, desc, err := f.buildWorkload()
	if err != nil {
		return err
	}
	res.Workload = desc
	targets, err := plan.ParseTargets(strings.Join(p.Targets, ","), plan.SummaryMetrics())
	if err != nil {
		return err
	}
	var models []string
	var prices map[string]float64
	for _, m := range p.GPUModels {
		g, _ := hwmodel.LookupModel(m)
		if !slices.Contains(models, g.Name) {
			models = append(models, g.Name)
		}
		if p.Prices != nil {
			if prices == nil {
				prices = map[string]float64{}
			}
			prices[g.Name], _ = p.price(g.Name)
		}
	}
	seeds := p.Seeds
	if len(seeds) == 0 || opt.Seed != nil {
		seeds = []uint64{f.Seed}
	}
	pol, err := policies.ParseSpec(f.Policy)
	if err != nil {
		return err
	}
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	lo, hi := p.nodes()
	starvation := duration(nil, "", p.StarvationThreshold)
	if starvation <= 0 {
		starvation, _ = hwmodel.ParseDuration(defaultStarvation)
	}
	cfg := plan.ClusterConfig{Workload: w, WorkloadName: desc, Policy: pol, Target: policies.TargetFromRequests(reqs),
		StarvationThreshold: starvation, Targets: targets, Models: models, Prices: prices,
		GPUsPerNode: orInt(p.GPUsPerNode, defaultGPUsPerNode), MinNodes: lo, MaxNodes: hi, Seeds: seeds}
	if p.MixSteps > 0 {
		cfg.Mixes = plan.Mixes(models, p.MixSteps)
	}
	if len(p.Classes) > 0 {
		names, weights, err := workloads.ParseClassList(strings.Join(p.Classes, ","))
		if err != nil {
			return err
		}
		if len(w.Classes) > 0 {
			return fmt.Errorf("%s: plan.classes: the workload names its jobs' classes already", f.path)
		}
		workloads.DrawClasses(w, names, weights, f.Seed)
	}
	if opt.Progress != nil {
		cfg.Progress = func(pt plan.Point) { opt.Progress(fmt.Sprintf("%d × %s", pt.Size, pt.Model), 0, 0) }
	}
	res.PlanSeeds = seeds
	if p.Speeds != "" {
		// The speed-blind plan first, for the page's comparison.
		if res.BlindPlan, err = plan.Cluster(cfg); err != nil {
			return err
		}
		speeds := p.Speeds
		if speeds != runner.DefaultSpeeds {
			speeds = f.resolve(speeds)
		}
		if cfg.Speeds, err = runner.LoadSpeeds(speeds); err != nil {
			return err
		}
		ref, _ := hwmodel.LookupModel(p.SpeedReference)
		cfg.SpeedReference = ref.ID
	}
	res.Plan, err = plan.Cluster(cfg)
	return err
}

// planMarkdown writes the results part of a plan's page: the answer, the
// evidence table and the plot.
func (r *Result) planMarkdown(b io.Writer, plotLink string) {
	res := r.Plan
	seeds := make([]string, len(r.PlanSeeds))
	for i, s := range r.PlanSeeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(b, "Workload: %s, under policy %s, seeds %s.\n\n", r.Workload, r.File.Policy, strings.Join(seeds, ", "))
	fmt.Fprintf(b, "## Answer\n\n**%s.**\n\n", res.Answer())
	if blind := r.BlindPlan; blind != nil {
		fmt.Fprintf(b, "With the speed table, every job runs on each model at its class's speed there, its trace duration measured on %s. The same plan without it (every model runs every job at its measured pace) answers: %s, from %d sizes simulated.\n\n",
			r.File.Plan.SpeedReference, blind.Answer(), len(blind.Points))
	}
	for mi, m := range res.Models {
		if i := res.PerModel[mi]; i >= 0 {
			p := res.Points[i]
			fmt.Fprintf(b, "- %s: %d nodes × %d GPUs = %d GPUs", m, p.Size, res.GPUsPer, p.GPUs)
			if res.Prices != nil {
				fmt.Fprintf(b, ", %.2f per hour", p.Cost)
			}
			fmt.Fprintln(b)
		} else {
			fmt.Fprintf(b, "- %s: no size in range meets every target\n", m)
		}
	}
	fmt.Fprintf(b, "\n%d sizes were simulated; the range held %d sizes per model.\n\n", len(res.Points), res.Hi-res.Lo+1)
	fmt.Fprintf(b, "## Evidence\n\nEvery size tried, with each target's metric (the worst value over the seeds) and whether it passed; `*` marks the answer. The same table is in plan.csv.\n\n")
	res.WriteMarkdownTable(b)
	if plotLink != "" {
		fmt.Fprintf(b, "\n![each target metric against cluster size, with the target line and the chosen size ringed](%s)\n", plotLink)
	}
	fmt.Fprintln(b)
}

// planPNG is the plan's plot, drawn through a temporary file.
func (r *Result) planPNG() ([]byte, error) {
	dir, err := os.MkdirTemp("", "brigade-plan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "plan.png")
	if err := r.Plan.WritePlots(path, ""); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
