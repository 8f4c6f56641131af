package plan

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/serving"
)

// erlangC is the M/M/c queue's probability of waiting and mean wait.
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

// mmcSpec is single-slot replicas with exponential service of mean 1/mu
// behind Poisson arrivals at lambda: an M/M/c queue at c replicas.
func mmcSpec(lambda, mu float64, requests int) *serving.Spec {
	horizon := hwmodel.Time(float64(requests) / lambda * 1e6)
	return &serving.Spec{Horizon: horizon, Bucket: horizon / 10, Services: []serving.Service{{
		Name: "mmc", GPUsPerReplica: 1, Routing: serving.LeastOutstanding,
		Replica:  serving.ReplicaModel{MaxConcurrent: 1, ServiceTime: &serving.Dist{Kind: "exponential", Mean: 1 / mu}},
		Replicas: serving.ReplicaBounds{Initial: 1, Min: 1, Max: 1},
		Arrivals: serving.Arrivals{Rate: lambda},
		Classes:  []serving.Class{{Name: "all", Weight: 1}},
	}}}
}

func serviceTargets(t *testing.T, s string) []Target {
	t.Helper()
	x, err := ParseTargets(s, ServiceMetrics())
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// The planner against queueing ground truth: c single-slot replicas with
// exponential service behind Poisson arrivals are an M/M/c queue, so the
// smallest c whose mean gateway wait is at most W is known from Erlang C.
// W is taken halfway (geometrically) between two neighbouring counts'
// waits, far from either against the simulation's noise.
func TestReplicasErlangC(t *testing.T) {
	const lambda, mu = 8.0, 1.0
	_, w10 := erlangC(10, lambda, mu)
	_, w11 := erlangC(11, lambda, mu)
	bound := math.Sqrt(w10 * w11)
	want := 0
	for c := 1; c <= 64; c++ {
		if float64(c)*mu <= lambda {
			continue // unstable: the wait grows without bound
		}
		if _, w := erlangC(c, lambda, mu); w <= bound {
			want = c
			break
		}
	}
	targets := serviceTargets(t, "wait_mean<="+strconv.FormatFloat(bound, 'g', 4, 64))
	var order []int
	r, err := Replicas(ReplicaConfig{Spec: mmcSpec(lambda, mu, 300_000), Targets: targets, MaxReplicas: 64, Seeds: []uint64{1, 2, 3},
		Progress: func(p Point) { order = append(order, p.Size) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Points {
		t.Logf("%2d replicas: mean wait %.4f s %v", p.Size, p.Values[0], p.Pass[0])
	}
	if r.Best < 0 {
		t.Fatalf("no answer: %s", r.Answer())
	}
	b := r.Points[r.Best]
	if b.Size != want || b.GPUs != want || !r.NeighbourFails {
		t.Fatalf("planned %d replicas (%d GPUs, neighbour fails %v), Erlang C says %d (wait bound %.4f s)", b.Size, b.GPUs, r.NeighbourFails, want, bound)
	}
	if math.Abs(b.GPUHoursPerHour-float64(want)) > 1e-9 {
		t.Errorf("GPU-hours per hour %v, want %d", b.GPUHoursPerHour, want)
	}
	// Exponential then binary: 1, 2, 4, 8, 16, then bisecting (8, 16].
	if wantOrder := []int{1, 2, 4, 8, 16, 12, 10, 11}; !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("tried %v, want %v", order, wantOrder)
	}
	for i := 1; i < len(r.Points); i++ {
		if r.Points[i].Size <= r.Points[i-1].Size {
			t.Fatalf("points not sorted: %v", order)
		}
	}
	// The measured waits at the answer and its neighbour match Erlang C.
	for _, p := range r.Points {
		if p.Size == want || p.Size == want-1 {
			_, w := erlangC(p.Size, lambda, mu)
			if rel := math.Abs(p.Values[0]-w) / w; rel > 0.15 {
				t.Errorf("%d replicas: worst mean wait %.4f s, Erlang C %.4f s", p.Size, p.Values[0], w)
			}
		}
	}
}

func TestReplicasErrorsAndFloors(t *testing.T) {
	spec := mmcSpec(8, 1, 20_000)
	if _, err := Replicas(ReplicaConfig{Spec: spec, Targets: serviceTargets(t, "busy.e2e_p99<=1s")}); err == nil || !strings.Contains(err.Error(), `no class "busy" (classes: all)`) {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := Replicas(ReplicaConfig{Spec: spec, Service: "x", Targets: serviceTargets(t, "e2e_p99<=1s")}); err == nil || !strings.Contains(err.Error(), `no service "x" (services: mmc)`) {
		t.Errorf("unknown service: %v", err)
	}
	if _, err := Replicas(ReplicaConfig{Spec: spec, Targets: serviceTargets(t, "e2e_p99<=1s"), MaxReplicas: -1}); err == nil || !strings.Contains(err.Error(), "largest replica count must be >= 1") {
		t.Errorf("max -1: %v", err)
	}
	if _, err := Replicas(ReplicaConfig{Spec: spec}); err == nil || !strings.Contains(err.Error(), "no target given") {
		t.Errorf("no target: %v", err)
	}
	// Unreachable within the range: the answer says by how much.
	r, err := Replicas(ReplicaConfig{Spec: spec, Targets: serviceTargets(t, "wait_mean<=0.1"), MaxReplicas: 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best >= 0 || !strings.Contains(r.Answer(), "no replica count in 1..6 meets every target; at 6 replicas (6 GPUs): wait_mean<=0.1 fails with wait_mean = ") ||
		!strings.Contains(r.Answer(), " s off the bound 0.1 s") {
		t.Errorf("unreachable: %s", r.Answer())
	}
	// A saturation floor is checked at the fewest replicas meeting the
	// ceiling: 11 replicas at λ=8 are 8/11 = 73 % busy.
	r, err = Replicas(ReplicaConfig{Spec: spec, Targets: serviceTargets(t, "wait_mean<=0.13,saturation>=0.9"), MaxReplicas: 32})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best >= 0 || !strings.Contains(r.Answer(), "the fewest meeting the targets that more replicas help: saturation>=0.9 fails with saturation = 0.7") ||
		!strings.Contains(r.Answer(), "more replicas only move it further") {
		t.Errorf("saturation floor: %s", r.Answer())
	}
	r, err = Replicas(ReplicaConfig{Spec: spec, Targets: serviceTargets(t, "wait_mean<=0.5,saturation>=0.6"), MaxReplicas: 32, Rate: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best < 0 || r.Rate != 4 || r.Points[r.Best].Size > 7 {
		t.Errorf("at 4 rps: %s", r.Answer())
	}
	dir := t.TempDir()
	files, err := r.WriteFiles(dir, "png")
	if err != nil || strings.Join(files, ",") != "plan.csv,plan.png" {
		t.Fatal(files, err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "replicas,gpus,gpu_h_per_h,requests,wait_mean,wait_mean<=0.5,saturation,saturation>=0.6,all_pass,chosen\n") {
		t.Errorf("plan.csv: %v\n%s", err, csv)
	}
}

// The plan does not depend on how many runs go at once.
func TestReplicasWorkers(t *testing.T) {
	spec := mmcSpec(8, 1, 20_000)
	targets := serviceTargets(t, "wait_mean<=0.13,e2e_p99<=6s")
	var plans []*Result
	for _, w := range []int{1, 3, 16} {
		r, err := Replicas(ReplicaConfig{Spec: spec, Targets: targets, MaxReplicas: 40, Seeds: []uint64{4, 5}, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, r)
	}
	for _, r := range plans[1:] {
		if !reflect.DeepEqual(r, plans[0]) {
			t.Fatalf("workers change the plan:\n%+v\n%+v", plans[0], r)
		}
	}
}

// Every metric the replica vocabulary names is one serving reads, for
// the service and, but for the service-only ones, for a class.
func TestServiceMetricsRead(t *testing.T) {
	f, err := serving.NewFixed(mmcSpec(8, 1, 2_000), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(10, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Services[0]
	for _, m := range ServiceMetrics().Metrics {
		for _, class := range []string{"", "all"} {
			v, err := s.Metric(class, m.Name)
			if m.WholeOnly && class != "" {
				if err == nil {
					t.Errorf("%s of class %s: read %g, want an error", m.Name, class, v)
				}
				continue
			}
			if err != nil || math.IsNaN(v) || v < 0 {
				t.Errorf("%s of %q: %g, %v", m.Name, class, v, err)
			}
		}
	}
}
