package serving

import (
	"fmt"
	"math"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// erlangC returns the probability that an arrival waits in an M/M/c queue
// with offered load a = λ/μ (a < c), and the mean wait λ/μ.
func erlangC(c int, lambda, mu float64) (pWait, meanWait float64) {
	a := lambda / mu
	// Erlang B by its stable recurrence, then C from B.
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	rho := a / float64(c)
	pWait = b / (1 - rho + rho*b)
	return pWait, pWait / (float64(c)*mu - lambda)
}

func TestErlangCFormula(t *testing.T) {
	// Published values: M/M/2 with a = 1 waits with probability 1/3; M/M/1
	// reduces to rho and rho/(mu - lambda).
	if p, _ := erlangC(2, 1, 1); math.Abs(p-1.0/3) > 1e-12 {
		t.Fatalf("C(2, 1) = %v, want 1/3", p)
	}
	if p, w := erlangC(1, 0.5, 1); math.Abs(p-0.5) > 1e-12 || math.Abs(w-1) > 1e-12 {
		t.Fatalf("M/M/1 rho 0.5: P(wait) %v W %v, want 0.5 and 1", p, w)
	}
}

func testCluster(t testing.TB, nodes, gpus int) *hwmodel.Cluster {
	t.Helper()
	m, _ := hwmodel.LookupModel("H100-80GB")
	ns := make([]hwmodel.Node, nodes)
	for i := range ns {
		ns[i] = hwmodel.Node{Name: fmt.Sprintf("n%d", i), Model: m.ID, GPUs: gpus, CPUMilli: 1 << 40, MemoryMiB: 1 << 40}
	}
	c, err := hwmodel.NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mmcSpec is c single-slot replicas with exponential service of mean 1/mu
// behind Poisson arrivals at lambda: an M/M/c queue.
func mmcSpec(c int, lambda, mu float64, requests int, routing Routing) *Spec {
	horizon := hwmodel.Time(float64(requests) / lambda * 1e6)
	return &Spec{Horizon: horizon, Bucket: horizon / 10, Services: []Service{{
		Name: "mmc", GPUsPerReplica: 1, Routing: routing,
		Replica:  ReplicaModel{MaxConcurrent: 1, ServiceTime: &Dist{Kind: "exponential", Mean: 1 / mu}},
		Replicas: ReplicaBounds{Initial: c, Min: c, Max: c},
		Arrivals: Arrivals{Rate: lambda},
		Classes:  []Class{{Name: "all", Weight: 1}},
	}}}
}

// Poisson arrivals, exponential service and c identical replicas behind
// the gateway's queue are an M/M/c queue whatever the router (each sends
// only to a free replica): the mean wait must match Erlang C.
func TestErlangC(t *testing.T) {
	cases := []struct {
		c          int
		lambda, mu float64
		requests   int
		routing    Routing
		seed       uint64
	}{
		{1, 0.5, 1, 400_000, LeastOutstanding, 1},
		{4, 3.2, 1, 1_000_000, LeastOutstanding, 2},
		{4, 3.2, 1, 1_000_000, RoundRobin, 3},
		{8, 6, 1, 1_000_000, LatencyAware, 4},
		{16, 28, 2, 1_000_000, PriorityLanes, 5},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, tc := range cases {
		name := fmt.Sprintf("c%d_rho%.2f_%s", tc.c, tc.lambda/(float64(tc.c)*tc.mu), tc.routing)
		t.Run(name, func(t *testing.T) {
			res, err := Run(Config{Spec: mmcSpec(tc.c, tc.lambda, tc.mu, tc.requests, tc.routing),
				Cluster: testCluster(t, tc.c, 1), Seed: tc.seed})
			if err != nil {
				t.Fatal(err)
			}
			all := res.Services[0].All
			_, want := erlangC(tc.c, tc.lambda, tc.mu)
			got := all.QueueWait.Mean
			if rel := math.Abs(got-want) / want; rel > 0.02 {
				t.Errorf("mean wait %.5f s, Erlang C %.5f s: off by %.2f%% (> 2%%) over %d requests", got, want, 100*rel, all.Completed)
			}
			// The response time adds one mean service time.
			if rel := math.Abs(all.E2E.Mean-(want+1/tc.mu)) / (want + 1/tc.mu); rel > 0.02 {
				t.Errorf("mean response %.5f s, want %.5f", all.E2E.Mean, want+1/tc.mu)
			}
			if all.Requests != all.Completed+all.Errors+all.Timeouts+all.Unfinished || all.Errors != 0 {
				t.Errorf("books: %+v", all)
			}
			t.Logf("%d requests: mean wait %.4f s (Erlang C %.4f s)", all.Completed, got, want)
		})
	}
}

// Little's law per replica: the time-averaged number of requests on a
// replica equals its throughput times the mean time a request spends on
// it. The books are independent (an integral over time vs per-request
// sums), so a broken dispatch or completion shows.
func TestLittlesLawPerReplica(t *testing.T) {
	for _, continuous := range []bool{false, true} {
		t.Run(fmt.Sprintf("continuous=%v", continuous), func(t *testing.T) { littlesLaw(t, continuous) })
	}
}

func littlesLaw(t *testing.T, continuous bool) {
	spec := &Spec{Horizon: 2 * hwmodel.Hour, Services: []Service{{
		Name: "llm", GPUsPerReplica: 2, Routing: LeastOutstanding,
		Replica: ReplicaModel{PrefillTokensPerS: 8000, DecodeTokensPerS: 40, BatchSlowdown: 0.02, MaxConcurrent: 8,
			LoadTime: 60 * hwmodel.Second, ContinuousBatching: continuous},
		Replicas: ReplicaBounds{Initial: 5, Min: 5, Max: 5},
		Arrivals: Arrivals{Rate: 4, Steps: []RateStep{{At: 30 * hwmodel.Minute, For: 20 * hwmodel.Minute, Rate: 9}}},
		Classes: []Class{
			{Name: "chat", Weight: 3, Priority: 1, InputTokens: Dist{Kind: "lognormal", Mean: 600, Sigma: 1, Max: 8000},
				OutputTokens: Dist{Kind: "lognormal", Mean: 200, Sigma: 0.8, Max: 2000}, Timeout: 2 * hwmodel.Minute},
			{Name: "batch", Weight: 1, InputTokens: Dist{Kind: "uniform", Min: 100, Max: 2000},
				OutputTokens: Dist{Kind: "exponential", Mean: 300}},
		},
		Incidents: []Incident{{At: 40 * hwmodel.Minute, Replica: 1, Kind: "slow", Factor: 3}},
	}}}
	res, err := Run(Config{Spec: spec, Cluster: testCluster(t, 4, 8), Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	svc := res.Services[0]
	for _, r := range svc.Replicas {
		alive := (r.Released - r.Ready).Seconds()
		if r.Completed < 1000 || alive <= 0 {
			t.Fatalf("replica %d: %d requests over %.0f s", r.ID, r.Completed, alive)
		}
		l := r.BusyIntegral / alive
		lw := float64(r.Completed) / alive * (r.SojournSum / float64(r.Completed))
		if rel := math.Abs(l-lw) / l; rel > 0.01 {
			t.Errorf("replica %d: L = %.4f, λW = %.4f (%.2f%% apart)", r.ID, l, lw, 100*rel)
		}
	}
	for _, c := range append(svc.Classes, svc.All) {
		if c.Requests != c.Completed+c.Errors+c.Timeouts+c.Unfinished {
			t.Errorf("class %s: %d requests != %d completed + %d errors + %d timeouts + %d unfinished",
				c.Name, c.Requests, c.Completed, c.Errors, c.Timeouts, c.Unfinished)
		}
	}
}
