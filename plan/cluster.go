package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Metrics flattens a summary into its numeric summary.json fields, keyed by
// dotted path. Lists (per-tenant rows) and strings are left out.
func Metrics(s results.Summary) (map[string]float64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, c)
			}
		case float64:
			out[prefix] = x
		}
	}
	walk("", tree)
	return out, nil
}

// SummaryMetrics is the vocabulary of a cluster plan: every numeric
// summary.json field but the seed, sorted, each a plain number. Their
// trends are left unknown (a wait falls as the cluster grows, a
// utilisation falls too, a makespan may not move), so a cluster plan
// simulates the largest size first to see which targets growing meets.
func SummaryMetrics() Catalogue {
	// A zero Summary always marshals: its fields are numbers, strings and
	// slices.
	m, _ := Metrics(results.Summary{})
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "seed" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	c := Catalogue{Example: "wait_s.p99<=1800"}
	for _, k := range keys {
		c.Metrics = append(c.Metrics, Metric{Name: k, Unit: Number})
	}
	return c
}

// ClusterConfig is a cluster plan for a batch workload under one policy.
type ClusterConfig struct {
	Workload     *workloads.Workload
	WorkloadName string
	Policy       policies.Spec
	// Target is the workload the placements that need one (fgd) aim at;
	// every seed's placer gets it.
	Target              policies.TargetWorkload
	StarvationThreshold hwmodel.Time
	Targets             []Target
	// Models are canonical GPU model names, each sized on its own.
	Models []string
	// Prices per GPU-hour by model (nil: the fewest GPUs win).
	Prices      map[string]float64
	GPUsPerNode int
	// MinNodes and MaxNodes bound the node counts searched.
	MinNodes, MaxNodes int
	Seeds              []uint64
	Workers            int
	Progress           func(Point)
}

// Cluster finds, for each model, the smallest cluster of identical nodes
// (GPUsPerNode GPUs each) on which the workload meets every target on
// every seed, and the best of them (Run). A size on which some job can
// never fit a node fails whatever its metrics.
func Cluster(cfg ClusterConfig) (*Result, error) {
	if cfg.Workload == nil {
		return nil, fmt.Errorf("plan: ClusterConfig needs a Workload")
	}
	if cfg.GPUsPerNode < 1 || cfg.GPUsPerNode > hwmodel.MaxGPUsPerNode {
		return nil, fmt.Errorf("plan: GPUs per node must be 1..%d, got %d", hwmodel.MaxGPUsPerNode, cfg.GPUsPerNode)
	}
	eval := func(model string, nodes int, seed uint64) (Sample, error) {
		spec := &hwmodel.ClusterSpec{
			Name:       fmt.Sprintf("%s-%dx%d", strings.ToLower(model), nodes, cfg.GPUsPerNode),
			NodeGroups: []hwmodel.NodeGroupSpec{{NamePrefix: "node", Count: nodes, GPUModel: model, GPUsPerNode: cfg.GPUsPerNode}},
		}
		runs, err := runner.Run(runner.Spec{
			Workload: cfg.Workload, WorkloadName: cfg.WorkloadName, NewCluster: spec.Build, ClusterName: spec.Name,
			Policies: []policies.Spec{cfg.Policy}, Placer: policies.PlacerConfig{Seed: seed, Target: cfg.Target},
			Seed: seed, StarvationThreshold: cfg.StarvationThreshold,
		})
		if err != nil {
			return Sample{}, err
		}
		m, err := Metrics(runs[0].Summary)
		if err != nil {
			return Sample{}, err
		}
		s := Sample{Metrics: m}
		for _, j := range runs[0].Engine.Jobs {
			if strings.HasPrefix(j.Reason, sim.ReasonUnsatisfiable) {
				s.Unfit++
			}
		}
		return s, nil
	}
	return Run(Config{Axis: AxisNodes, Targets: cfg.Targets, Models: cfg.Models, Prices: cfg.Prices, GPUsPer: cfg.GPUsPerNode,
		Lo: cfg.MinNodes, Hi: cfg.MaxNodes, Seeds: cfg.Seeds, Workers: cfg.Workers, Eval: eval, Progress: cfg.Progress})
}
