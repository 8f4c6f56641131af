package plan

import (
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

// Metrics is a summary's numeric summary.json fields, keyed by dotted
// path (results.Summary.Fields without its text).
func Metrics(s results.Summary) (map[string]float64, error) {
	out := map[string]float64{}
	for k, v := range s.Fields() {
		if x, ok := v.(float64); ok {
			out[k] = x
		}
	}
	return out, nil
}

// SummaryMetrics is the vocabulary of a cluster plan: every numeric
// summary.json field but the seed, sorted, each a plain number. Their
// trends are left unknown (a wait falls as the cluster grows, a
// utilisation falls too, a makespan may not move), so a cluster plan
// simulates the largest size first to see which targets growing meets.
func SummaryMetrics() Catalogue {
	// A zero Summary always marshals: its fields are numbers, strings and
	// slices; its optional parts are given so that their fields count.
	m, _ := Metrics(results.Summary{Data: &results.DataSummary{}})
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
	// Models are canonical GPU model names, each sized on its own, and
	// Mixes are fleets of several of them in fixed node shares, each sized
	// as one.
	Models []string
	Mixes  []Mix
	// Speeds, when set, runs the jobs at their speed on each model
	// (runner.Options.Speeds), their durations measured on SpeedReference.
	Speeds         *hwmodel.SpeedTable
	SpeedReference hwmodel.ModelID
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
	models := slices.Clone(cfg.Models)
	for _, m := range cfg.Mixes {
		models = append(models, m.Label())
	}
	eval := func(model string, nodes int, seed uint64) (Sample, error) {
		spec := cfg.clusterSpec(model, nodes)
		runs, err := runner.Run(runner.Spec{
			Workload: cfg.Workload, WorkloadName: cfg.WorkloadName, NewCluster: spec.Build, ClusterName: spec.Name,
			Policies: []policies.Spec{cfg.Policy}, Placer: policies.PlacerConfig{Seed: seed, Target: cfg.Target},
			Seed: seed, StarvationThreshold: cfg.StarvationThreshold,
			Options: runner.Options{Speeds: cfg.Speeds, SpeedReference: cfg.SpeedReference},
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
	return Run(Config{Axis: AxisNodes, Targets: cfg.Targets, Models: models, Mixes: cfg.Mixes, Prices: cfg.Prices, GPUsPer: cfg.GPUsPerNode,
		Lo: cfg.MinNodes, Hi: cfg.MaxNodes, Seeds: cfg.Seeds, Workers: cfg.Workers, Eval: eval, Progress: cfg.Progress})
}

// clusterSpec is the cluster of nodes nodes that model (a model or a
// mix's label) names: one node group per model with nodes.
func (cfg *ClusterConfig) clusterSpec(model string, nodes int) *hwmodel.ClusterSpec {
	name := fmt.Sprintf("%s-%dx%d", strings.ToLower(model), nodes, cfg.GPUsPerNode)
	groups := []hwmodel.NodeGroupSpec{{NamePrefix: "node", Count: nodes, GPUModel: model, GPUsPerNode: cfg.GPUsPerNode}}
	for _, m := range cfg.Mixes {
		if m.Label() != model {
			continue
		}
		name, groups = fmt.Sprintf("mix-%dx%d", nodes, cfg.GPUsPerNode), nil
		for i, k := range m.Split(nodes) {
			if k > 0 {
				groups = append(groups, hwmodel.NodeGroupSpec{NamePrefix: strings.ToLower(m.Models[i]), Count: k, GPUModel: m.Models[i], GPUsPerNode: cfg.GPUsPerNode})
			}
		}
	}
	return &hwmodel.ClusterSpec{Name: name, NodeGroups: groups}
}
