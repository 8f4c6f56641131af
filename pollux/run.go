package pollux

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

//go:embed data
var data embed.FS

// Loads are the artifact's job loads (results-jobload/tiresias-<load>);
// Workloads how many workloads each has (workload-1 .. workload-8).
var Loads = []string{"0.5", "1.0", "1.5", "2.0"}

const Workloads = 8

// The artifact's setting: 16 nodes of 4 GPUs, a decision every 60 s, 30 s
// of restart on every (re)allocation, no work lost to a preemption.
const (
	Nodes       = 16
	GPUsPerNode = 4
	Interval    = 60 * hwmodel.Second
	Restart     = 30 * hwmodel.Second
)

// Policy is the spec under which Brigade runs the artifact's Tiresias:
// two queues split at 16 GPU-hours (the tiresias order's default), FIFO
// within a queue, no promotion, the artifact's placement.
const Policy = "tiresias/mostfree"

// OptimusPolicy is the spec under which Brigade runs the artifact's
// Optimus: the optimus order, which sizes and places jobs itself, every
// 60 s (its default round, the artifact's interval).
const OptimusPolicy = "optimus"

// Baseline is one of the artifact's published baseline runs: the policy
// it ran (the name in results-jobload/<name>-<load>), the spec Brigade
// runs it under, and the loads whose JCTs are published and embedded.
type Baseline struct {
	Name  string
	Spec  string
	Loads []string
}

// Baselines are the published runs Brigade reproduces: Tiresias and
// Optimus, each at every load.
var Baselines = []Baseline{
	{Name: "tiresias", Spec: Policy, Loads: Loads},
	{Name: "optimus", Spec: OptimusPolicy, Loads: Loads},
}

// LookupBaseline returns the baseline called name.
func LookupBaseline(name string) (Baseline, bool) {
	for _, b := range Baselines {
		if b.Name == name {
			return b, true
		}
	}
	return Baseline{}, false
}

// Apps is the artifact's application model as the package embeds it
// (data/apps: the traces the artifact ships, and the throughputs it
// interpolates for the placements its Tiresias runs used over five
// nodes or more).
func Apps() (*hwmodel.AppModel, error) {
	return hwmodel.LoadApps(data, "data/apps")
}

// Workload reads workload n (1..Workloads) of load.
func Workload(load string, n int) (*workloads.Workload, error) {
	if !slices.Contains(Loads, load) || n < 1 || n > Workloads {
		return nil, fmt.Errorf("pollux: no workload %d at load %s (loads %v, workloads 1..%d)", n, load, Loads, Workloads)
	}
	file := path.Join("data/workloads", load, "workload-"+strconv.Itoa(n)+".csv")
	f, err := data.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workloads.ReadPollux(f, file)
}

// Cluster is the artifact's cluster: Nodes nodes of GPUsPerNode GPUs (the
// GPU model does not matter: the application model times the jobs).
func Cluster() (*hwmodel.Cluster, error) {
	m, _ := hwmodel.LookupModel("V100-16GB")
	nodes := make([]hwmodel.Node, Nodes)
	for i := range nodes {
		nodes[i] = hwmodel.Node{Name: fmt.Sprintf("node-%d", i), Model: m.ID, GPUs: GPUsPerNode}
	}
	return hwmodel.NewCluster(nodes)
}

// Config is the engine configuration of one artifact run, less the policy:
// the decision grid, the application model, the restart cost through the
// start-up delay, and preemption that keeps all progress.
func Config(w *workloads.Workload, apps *hwmodel.AppModel) (sim.Config, error) {
	c, err := Cluster()
	if err != nil {
		return sim.Config{}, err
	}
	return sim.Config{Cluster: c, Workload: w, Apps: apps, Interval: Interval, StartupDelay: Restart, SaveOnPreempt: true}, nil
}

// JCTs runs w under the policy spec and returns each job's completion
// time less its submission, in seconds, by job name.
func JCTs(w *workloads.Workload, apps *hwmodel.AppModel, spec string) (map[string]float64, error) {
	s, err := policies.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	p, err := s.New()
	if err != nil {
		return nil, err
	}
	cfg, err := Config(w, apps)
	if err != nil {
		return nil, err
	}
	cfg.Policy = p
	e, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	res, err := e.Run()
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(w.Jobs))
	for i, o := range res.Jobs {
		if o.State != sim.Succeeded {
			return nil, fmt.Errorf("pollux: job %s ended %s: %s", w.Jobs[i].Name, o.State, o.Reason)
		}
		out[w.Jobs[i].Name] = (o.End - o.Submit).Seconds()
	}
	return out, nil
}

// Published are the artifact's published Tiresias JCTs at load
// (results-jobload/tiresias-<load>/summary.json), by workload name
// ("workload-1") and job name, in seconds.
func Published(load string) (map[string]map[string]float64, error) {
	return PublishedOf("tiresias", load)
}

// PublishedOf are the artifact's published JCTs of the baseline called
// name at load (results-jobload/<name>-<load>/summary.json), by workload
// name and job name, in seconds.
func PublishedOf(name, load string) (map[string]map[string]float64, error) {
	bl, ok := LookupBaseline(name)
	if !ok {
		return nil, fmt.Errorf("pollux: no published baseline %q", name)
	}
	if !slices.Contains(bl.Loads, load) {
		return nil, fmt.Errorf("pollux: no published %s results at load %s (loads %v)", name, load, bl.Loads)
	}
	file := path.Join("data/published", name+"-"+load+".json")
	b, err := fs.ReadFile(data, file)
	if err != nil {
		return nil, err
	}
	var s struct {
		JCTs map[string]map[string]float64 `json:"jcts"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return s.JCTs, nil
}
