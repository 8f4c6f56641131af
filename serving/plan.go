package serving

import (
	"fmt"
	"math"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Fixed is one service of a spec set up to run alone at a fixed replica
// count: what a capacity plan (package plan) simulates at each count.
// Each run is the service alone with autoscaling off, Initial = Min =
// Max = N, no load time (the replicas are warm at time 0), no incidents
// (they name replicas by id, and a plan is for the steady state) and no
// batch jobs, on a dedicated cluster just big enough: ceil(N / per-node)
// nodes of max(8, GPUsPerReplica) GPUs of the service's model (H100-80GB
// when it accepts any), per-node = floor(node GPUs / GPUsPerReplica).
type Fixed struct {
	Service        string
	GPUModel       string // canonical name
	GPUsPerReplica int
	// Classes are the service's request classes, in the spec's order.
	Classes []string

	spec              *Spec // the service alone, as run
	nodeGPUs, perNode int
}

// NewFixed sets up the named service of spec ("" when it has one) to run
// alone; rate, when > 0, replaces its arrivals (rate schedule or trace)
// with a constant Poisson rate in requests per second, to plan for a
// sustained peak. spec is not modified.
func NewFixed(spec *Spec, service string, rate float64) (*Fixed, error) {
	if spec == nil {
		return nil, errorf("NewFixed needs a Spec")
	}
	si := -1
	switch {
	case service != "":
		for i, s := range spec.Services {
			if s.Name == service {
				si = i
			}
		}
		if si < 0 {
			return nil, errorf("plan: no service %q (services: %s)", service, serviceNames(spec))
		}
	case len(spec.Services) == 1:
		si = 0
	default:
		return nil, errorf("plan: the spec has %d services (%s): name the one to plan", len(spec.Services), serviceNames(spec))
	}
	if rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return nil, errorf("plan: the arrival rate must be a finite number >= 0, got %g", rate)
	}
	base := cloneSpec(spec)
	svc := base.Services[si]
	if len(svc.Pools) > 0 {
		return nil, errorf("plan: service %s has pools (%s); a plan sizes a service of one pool", svc.Name, poolNames(svc.Pools))
	}
	model := svc.GPUModel
	if model == "" {
		model = "H100-80GB"
	}
	m, ok := hwmodel.LookupModel(model)
	if !ok {
		return nil, errorf("plan: service %s: unknown GPU model %q", svc.Name, model)
	}
	g := svc.GPUsPerReplica
	nodeGPUs := max(8, g)
	if g < 1 || nodeGPUs > hwmodel.MaxGPUsPerNode {
		return nil, errorf("plan: service %s: %d GPUs per replica do not fit one node (at most %d GPUs)", svc.Name, g, hwmodel.MaxGPUsPerNode)
	}
	svc.Autoscale = nil
	svc.Incidents = nil
	svc.Failover = nil // alone, it has no backup
	svc.Replica.LoadTime = 0
	if rate > 0 {
		svc.Arrivals = Arrivals{Rate: rate}
	}
	base.Services = []Service{svc}
	probe := cloneSpec(base)
	probe.Services[0].Replicas = ReplicaBounds{Initial: 1, Min: 1, Max: 1}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	f := &Fixed{Service: svc.Name, GPUModel: m.Name, GPUsPerReplica: g, spec: base, nodeGPUs: nodeGPUs, perNode: nodeGPUs / g}
	for _, c := range svc.Classes {
		f.Classes = append(f.Classes, c.Name)
	}
	return f, nil
}

// Run simulates the service at n replicas on one seed. It may be called
// from several goroutines at once.
func (f *Fixed) Run(n int, seed uint64) (*Result, error) {
	spec := cloneSpec(f.spec)
	spec.Services[0].Replicas = ReplicaBounds{Initial: n, Min: n, Max: n}
	cs := &hwmodel.ClusterSpec{
		Name:       fmt.Sprintf("plan-%s-%d", strings.ToLower(f.GPUModel), n),
		NodeGroups: []hwmodel.NodeGroupSpec{{NamePrefix: "node", Count: (n + f.perNode - 1) / f.perNode, GPUModel: f.GPUModel, GPUsPerNode: f.nodeGPUs}},
	}
	c, err := cs.Build()
	if err != nil {
		return nil, err
	}
	return Run(Config{Spec: spec, Cluster: c, Seed: seed})
}

func serviceNames(s *Spec) string {
	names := make([]string, len(s.Services))
	for i, v := range s.Services {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// Metric reads one metric of the service's results, of a class (by name)
// or of the whole service (class ""):
//
//   - ttft_*, e2e_*, wait_* (time queued at the gateway), each mean, p50,
//     p95, p99 or max: latencies in seconds from arrival at the gateway
//     over completed requests;
//   - slo: the fraction of arrivals within both class targets;
//   - errors: errors and timeouts over finished requests;
//   - unfinished: the fraction of arrivals still queued or in flight at
//     the horizon;
//   - throughput: completed requests per second;
//   - saturation: the time-averaged fraction of the replicas' slots in
//     use (the whole service only).
func (s ServiceResult) Metric(class, name string) (float64, error) {
	c := s.All
	if class != "" {
		found := false
		for _, x := range s.Classes {
			if x.Name == class {
				c, found = x, true
			}
		}
		if !found {
			return 0, errorf("service %s has no class %q", s.Name, class)
		}
	}
	if kind, stat, ok := strings.Cut(name, "_"); ok {
		l, known := map[string]Latency{"ttft": c.TTFT, "e2e": c.E2E, "wait": c.QueueWait}[kind]
		v, statKnown := map[string]float64{"mean": l.Mean, "p50": l.P50, "p95": l.P95, "p99": l.P99, "max": l.Max}[stat]
		if known && statKnown {
			return v, nil
		}
	}
	switch name {
	case "slo":
		return c.SLOAttained, nil
	case "errors":
		return c.ErrorRate, nil
	case "unfinished":
		if c.Requests == 0 {
			return 0, nil
		}
		return float64(c.Unfinished) / float64(c.Requests), nil
	case "throughput":
		return c.Throughput, nil
	case "saturation":
		if class == "" {
			return s.Saturation, nil
		}
	}
	where := "service " + s.Name
	if class != "" {
		where = "class " + class + " of " + where
	}
	return 0, errorf("no metric %q for %s", name, where)
}
