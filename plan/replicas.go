package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/serving"
)

// ServiceMetrics is the vocabulary of a replica plan: the metrics
// serving.ServiceResult.Metric reads, of a class (CLASS.METRIC) or of the
// whole service. Latencies (ttft_*, e2e_*, wait_*; mean, p50, p95, p99,
// max) are bounded in seconds, slo, errors, unfinished and saturation by
// fractions, throughput in requests per second. More replicas behind one
// queue lower latencies, errors, unfinished requests and saturation, and
// raise SLO attainment and throughput.
func ServiceMetrics() Catalogue {
	c := Catalogue{Classes: true, Whole: "service", Example: "interactive.ttft_p99<=1s,errors<=0.001"}
	for _, m := range []string{"ttft", "e2e", "wait"} {
		for _, s := range []string{"mean", "p50", "p95", "p99", "max"} {
			c.Metrics = append(c.Metrics, Metric{Name: m + "_" + s, Unit: Seconds, Trend: Falls})
		}
	}
	c.Metrics = append(c.Metrics,
		Metric{Name: "slo", Unit: Fraction, Trend: Rises},
		Metric{Name: "errors", Unit: Fraction, Trend: Falls},
		Metric{Name: "unfinished", Unit: Fraction, Trend: Falls},
		Metric{Name: "throughput", Unit: Rate, Trend: Rises},
		Metric{Name: "saturation", Unit: Fraction, Trend: Falls, WholeOnly: true},
	)
	return c
}

// ReplicaConfig is a replica plan for one service of a spec.
type ReplicaConfig struct {
	Spec *serving.Spec
	// Service names the service to plan; "" when the spec has one.
	Service string
	Targets []Target
	// MaxReplicas bounds the search (default 256).
	MaxReplicas int
	// Seeds: every target must hold on each (default: seed 1).
	Seeds []uint64
	// Rate, when > 0, replaces the service's arrivals with a constant
	// Poisson rate in requests per second (serving.NewFixed).
	Rate float64
	// Workers bounds the runs at once (default GOMAXPROCS); the result
	// does not depend on it.
	Workers  int
	Progress func(Point)
}

// Replicas finds the smallest replica count N in [1, MaxReplicas] at which
// one service, run alone with N warm replicas (serving.Fixed), meets every
// target on every seed.
//
// Every metric of ServiceMetrics has a known trend, so the search needs no
// probe: with more identical replicas behind the same queue no request
// waits longer (for an M/M/c queue the wait falls strictly with c), so
// the Improving targets hold from some count on. It tries 1, 2, 4, 8, ...
// until a count passes, then bisects the last bracket; with the same seed
// the request stream is the same at every N, which keeps the noise
// between neighbouring counts small. The answer's neighbour N-1 is always
// among the counts simulated (bisection ends on a failing count next to a
// passing one), and Result.NeighbourFails records that it failed. The
// other targets (a saturation floor) are checked at that N.
func Replicas(cfg ReplicaConfig) (*Result, error) {
	if len(cfg.Targets) == 0 {
		return nil, fmt.Errorf("plan: no target given")
	}
	maxN := cfg.MaxReplicas
	if maxN == 0 {
		maxN = 256
	}
	if maxN < 1 {
		return nil, fmt.Errorf("plan: the largest replica count must be >= 1, got %d", maxN)
	}
	f, err := serving.NewFixed(cfg.Spec, cfg.Service, cfg.Rate)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Targets {
		if t.Class != "" && !slices.Contains(f.Classes, t.Class) {
			return nil, fmt.Errorf("plan: target %s: service %s has no class %q (classes: %s)", t, f.Service, t.Class, strings.Join(f.Classes, ", "))
		}
	}
	eval := func(_ string, n int, seed uint64) (Sample, error) {
		r, err := f.Run(n, seed)
		if err != nil {
			return Sample{}, err
		}
		s := r.Services[0]
		out := Sample{Metrics: map[string]float64{}, Requests: s.All.Requests}
		if h := r.Horizon.Seconds() / 3600; h > 0 {
			out.GPUHoursPerHour = s.GPUHours / h
		}
		for _, t := range cfg.Targets {
			v, err := s.Metric(t.Class, t.Metric)
			if err != nil {
				return Sample{}, err
			}
			out.Metrics[t.Key()] = v
		}
		return out, nil
	}
	return Run(Config{Axis: AxisReplicas, Targets: cfg.Targets, Models: []string{f.GPUModel}, GPUsPer: f.GPUsPerReplica,
		Lo: 1, Hi: maxN, Seeds: cfg.Seeds, Workers: cfg.Workers, Eval: eval, Progress: cfg.Progress,
		Service: f.Service, Rate: cfg.Rate})
}
