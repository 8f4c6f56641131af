package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Config is one run: services beside an optional batch workload on one
// shared cluster.
type Config struct {
	Spec *Spec
	// Cluster is shared by the batch jobs and the replicas; it must be
	// idle. The engine takes ownership.
	Cluster *hwmodel.Cluster
	// Batch is the batch workload (nil: none). Policy schedules it (nil:
	// fcfs).
	Batch  *workloads.Workload
	Policy policies.Policy
	// Seed drives the request streams (one per service and class, so a
	// change to one service does not change another's traffic).
	Seed uint64
	// Sim, when set, adjusts the batch engine's configuration (an Observe
	// callback for the batch timeline, invariant checks, ...) before the
	// run. It must not set Cluster, Workload, Policy or Coupled.
	Sim func(*sim.Config)
}

// Run simulates the services of cfg.Spec beside the batch workload until
// the spec's horizon (and the batch workload's end, if later).
func Run(cfg Config) (*Result, error) {
	if cfg.Spec == nil || cfg.Cluster == nil {
		return nil, errorf("Config needs Spec and Cluster")
	}
	m, err := newModel(cfg.Spec, cfg.Seed)
	if err != nil {
		return nil, err
	}
	for _, s := range m.svcs {
		// A replica is whole GPUs of one node (never MIG instances, never a
		// gang across nodes).
		if n := maxWholeGPUs(cfg.Cluster, s.models); n < s.spec.GPUsPerReplica {
			return nil, errorf("service %s: a replica needs %d whole GPUs (not in MIG mode) on one node; the cluster's best node of an accepted model has %d",
				s.spec.Name, s.spec.GPUsPerReplica, n)
		}
	}
	w := cfg.Batch
	if w == nil {
		w = &workloads.Workload{}
	}
	pol := cfg.Policy
	if pol == nil {
		if pol, err = policies.New("fcfs", policies.Options{}); err != nil {
			return nil, err
		}
	}
	sc := sim.Config{Cluster: cfg.Cluster, Workload: w, Policy: pol}
	if cfg.Sim != nil {
		cfg.Sim(&sc)
		sc.Cluster, sc.Workload, sc.Policy = cfg.Cluster, w, pol
	}
	sc.Coupled = m
	eng, err := sim.New(sc)
	if err != nil {
		return nil, err
	}
	batch, err := eng.Run()
	if err != nil {
		return nil, err
	}
	if !m.done {
		return nil, errorf("the run ended before the serving horizon")
	}
	return &Result{Horizon: m.horizon, Services: m.result(), Batch: batch, Requests: m.requests, Events: m.events,
		Alerts: m.alertLog, AlertStats: m.alertStats()}, nil
}

// maxWholeGPUs is the most GPUs out of MIG mode that one node of an
// accepted model has.
func maxWholeGPUs(c *hwmodel.Cluster, models hwmodel.ModelSet) int {
	best := 0
	for n := 0; n < c.NumNodes(); n++ {
		if !models.Accepts(c.NodeModel(n)) {
			continue
		}
		k := 0
		for g := 0; g < c.NodeGPUs(n); g++ {
			if !c.IsMIG(n, g) {
				k++
			}
		}
		best = max(best, k)
	}
	return best
}
