package serving

import (
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
)

// randomSpec builds a valid spec from r: any routing, health, autoscaling
// metric and GPU policy, incidents, classes, rate steps.
func randomSpec(r *rand.Rand) *Spec {
	dist := func(mean float64) Dist {
		switch r.IntN(4) {
		case 0:
			return Dist{Kind: "constant", Mean: mean}
		case 1:
			return Dist{Kind: "exponential", Mean: mean, Max: 10 * mean}
		case 2:
			return Dist{Kind: "lognormal", Mean: mean, Sigma: r.Float64() * 1.5}
		}
		return Dist{Kind: "uniform", Min: 1, Max: 2 * mean}
	}
	horizon := hwmodel.Time(5+r.IntN(40)) * mnt
	spec := &Spec{Horizon: horizon, Bucket: hwmodel.Time(10+r.IntN(120)) * sec}
	for k := 1 + r.IntN(2); k > 0; k-- {
		initial := 1 + r.IntN(4)
		svc := Service{
			Name: string(rune('a' + len(spec.Services))), GPUsPerReplica: 1 + r.IntN(4), Priority: r.IntN(3),
			Routing: []Routing{RoundRobin, LeastOutstanding, LatencyAware, PriorityLanes}[r.IntN(4)],
			Replica: ReplicaModel{PrefillTokensPerS: 1000 + r.Float64()*20000, DecodeTokensPerS: 10 + r.Float64()*100, BatchSlowdown: r.Float64() * 0.05,
				MaxConcurrent: 2 + r.IntN(40), LoadTime: hwmodel.Time(r.IntN(180)) * sec, ContinuousBatching: r.IntN(2) == 0,
				Jitter: float64(r.IntN(3)) * 0.25},
			Replicas: ReplicaBounds{Initial: initial, Min: r.IntN(initial + 1), Max: initial + r.IntN(8)},
			Arrivals: Arrivals{Rate: r.Float64() * 20},
			Health:   Health{Enabled: r.IntN(2) == 0, EjectFor: hwmodel.Time(1+r.IntN(120)) * sec, LaneHeadroom: 1},
		}
		if r.IntN(3) == 0 {
			svc.Replica.ServiceTime = &Dist{Kind: "exponential", Mean: 0.1 + r.Float64()*5}
		}
		for s := r.IntN(3); s > 0; s-- {
			svc.Arrivals.Steps = append(svc.Arrivals.Steps, RateStep{At: hwmodel.Time(r.Int64N(int64(horizon))), For: hwmodel.Time(r.Int64N(int64(horizon))), Rate: r.Float64() * 60})
		}
		for c := 1 + r.IntN(3); c > 0; c-- {
			svc.Classes = append(svc.Classes, Class{Name: string(rune('p' + len(svc.Classes))), Weight: 0.1 + r.Float64(), Priority: r.IntN(3),
				InputTokens: dist(200 + r.Float64()*2000), OutputTokens: dist(20 + r.Float64()*300),
				TTFTTarget: hwmodel.Time(r.IntN(5000)) * hwmodel.Millisecond, E2ETarget: hwmodel.Time(r.IntN(60)) * sec,
				Timeout: hwmodel.Time(r.IntN(300)) * sec})
		}
		if r.IntN(2) == 0 {
			svc.Autoscale = &Autoscale{Metric: []Metric{MetricConcurrency, MetricQueue, MetricLatency, MetricUtilisation}[r.IntN(4)],
				Target: 0.2 + r.Float64()*10, Interval: hwmodel.Time(5+r.IntN(60)) * sec, ScaleUpCooldown: hwmodel.Time(r.IntN(120)) * sec,
				ScaleDownCooldown: hwmodel.Time(1+r.IntN(600)) * sec, OnNoGPUs: []NoGPUs{Wait, Preempt}[r.IntN(2)]}
			if svc.Autoscale.Metric == MetricUtilisation {
				svc.Autoscale.Target = 0.1 + r.Float64()*0.9
			}
		}
		for i := r.IntN(4); i > 0; i-- {
			inc := Incident{At: hwmodel.Time(r.Int64N(int64(horizon))), Replica: r.IntN(initial + 2)}
			if r.IntN(2) == 0 {
				inc.Kind, inc.Factor = "slow", 1+r.Float64()*5
			} else {
				inc.Kind, inc.RestartAfter = "fail", hwmodel.Time(1+r.IntN(300))*sec
			}
			svc.Incidents = append(svc.Incidents, inc)
		}
		spec.Services = append(spec.Services, svc)
	}
	return spec
}

// addFailover gives the first service a circuit to the second when the
// second can take its requests (every class name, the same request
// model), from its own stream so that the rest of the spec stays as
// randomSpec drew it.
func addFailover(spec *Spec, r *rand.Rand) {
	if len(spec.Services) < 2 || r.IntN(2) == 0 {
		return
	}
	a, b := &spec.Services[0], &spec.Services[1]
	limit, _ := a.floorLimit()
	if limit < 1 || len(b.Classes) < len(a.Classes) || (a.Replica.ServiceTime == nil) != (b.Replica.ServiceTime == nil) {
		return
	}
	a.Failover = &Failover{Backup: b.Name, MinHealthy: 1 + r.IntN(limit), RecoverAfter: hwmodel.Time(r.IntN(120)) * sec,
		Mode: failoverModes[r.IntN(2)]}
}

// FuzzServing runs random specs beside a busy batch workload, with random
// hardware faults, and the batch engine's invariants on after every event:
// no run may fail or panic, and every service's request books balance.
func FuzzServing(f *testing.F) {
	for seed := uint64(1); seed <= 8; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { fuzzServingOne(t, seed) })
}

// fuzzServingOne is one FuzzServing case.
func fuzzServingOne(t *testing.T, seed uint64) {
	{
		r := rand.New(rand.NewPCG(seed, 0x5e7f))
		spec := randomSpec(r)
		addFailover(spec, rand.New(rand.NewPCG(seed, 0xfa11)))
		addPipeline(spec, rand.New(rand.NewPCG(seed, 0x5e7f+1)))
		c := testCluster(t, 3+r.IntN(4), 8)
		var faults []hwmodel.Fault
		if r.IntN(2) == 0 {
			fm := hwmodel.FailureModel{NodeMTBF: hwmodel.Time(1+r.IntN(6)) * hwmodel.Hour, GPUMTBF: hwmodel.Time(1+r.IntN(12)) * hwmodel.Hour,
				NodeRepair: hwmodel.RepairModel{Mean: 10 * mnt}, GPURepair: hwmodel.RepairModel{Mean: 5 * mnt}}
			faults = fm.Schedule(c, spec.Horizon, seed)
		}
		res, err := Run(Config{Spec: spec, Cluster: c, Batch: busyBatch(8*c.NumNodes()/2, hwmodel.Time(5+r.IntN(30))*mnt), Seed: seed,
			Sim: func(sc *sim.Config) {
				sc.CheckInvariants = true
				sc.Faults = faults
				sc.Retry = sim.RetryPolicy{Kind: sim.RetryFixed, Max: 20}
			}})
		if err != nil {
			if spec.Validate() != nil {
				return
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
		var sent, received int64
		for _, s := range res.Services {
			sent += s.All.FailedOver + s.All.Degraded
			received += s.Received
			if f := s.Failover; f != nil && (f.TimeOpen < 0 || f.TimeOpen > spec.Horizon || int64(len(f.Events)) != f.Openings) {
				t.Fatalf("seed %d: service %s: circuit books %+v", seed, s.Name, f)
			}
		}
		if sent != received {
			t.Fatalf("seed %d: %d requests sent to backups, %d received", seed, sent, received)
		}
		for _, s := range res.Services {
			for _, cl := range append(s.Classes, s.All) {
				if cl.Requests != cl.Completed+cl.Errors+cl.Timeouts+cl.Unfinished || cl.Unfinished < 0 {
					t.Fatalf("seed %d: service %s class %s: books do not balance: %+v", seed, s.Name, cl.Name, cl)
				}
			}
			for _, rp := range s.Replicas {
				if rp.Placed >= 0 && rp.Released < rp.Placed {
					t.Fatalf("seed %d: service %s replica %d placed at %v released at %v", seed, s.Name, rp.ID, rp.Placed, rp.Released)
				}
			}
		}
	}
}
