package serving

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/plan"
)

func TestPlanTargetsParse(t *testing.T) {
	good := []struct {
		in   string
		want []PlanTarget
	}{
		{"ttft_p99<=1s", []PlanTarget{{Metric: "ttft_p99", Op: "<=", Value: 1, Text: "ttft_p99<=1s"}}},
		{"interactive.ttft_p99<=500ms, e2e_p95 <= 20", []PlanTarget{
			{Class: "interactive", Metric: "ttft_p99", Op: "<=", Value: 0.5, Text: "interactive.ttft_p99<=500ms"},
			{Metric: "e2e_p95", Op: "<=", Value: 20, Text: "e2e_p95<=20"}}},
		{"slo>=0.99,errors<0.1%", []PlanTarget{
			{Metric: "slo", Op: ">=", Value: 0.99, Text: "slo>=0.99"},
			{Metric: "errors", Op: "<", Value: 0.001, Text: "errors<0.1%"}}},
		{"saturation<=0.8,wait_mean<2m", []PlanTarget{
			{Metric: "saturation", Op: "<=", Value: 0.8, Text: "saturation<=0.8"},
			{Metric: "wait_mean", Op: "<", Value: 120, Text: "wait_mean<2m"}}},
		{"batch-api.throughput>10,unfinished<=0", []PlanTarget{
			{Class: "batch-api", Metric: "throughput", Op: ">", Value: 10, Text: "batch-api.throughput>10"},
			{Metric: "unfinished", Op: "<=", Value: 0, Text: "unfinished<=0"}}},
	}
	for _, tc := range good {
		got, err := ParsePlanTargets(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
	bad := []struct{ in, want string }{
		{"", "no target given"},
		{"ttft_p99<=1s,", `empty item`},
		{"ttft_p99", `target "ttft_p99" has no comparison`},
		{"ttft_p99=1s", `comparison "=" is not one of`},
		{"ttft_p99=<1s", `comparison "=<" is not one of`},
		{"ttft_p99==1s", `comparison "==" is not one of`},
		{"<=1s", "has no metric before <="},
		{"ttft_p98<=1s", `unknown metric "ttft_p98" (known: ttft_mean`},
		{"latency<=1s", `unknown metric "latency"`},
		{"a.b.ttft_p99<=1s", `is not CLASS.METRIC`},
		{".ttft_p99<=1s", `is not CLASS.METRIC`},
		{"interactive.saturation<=0.8", "saturation is the service's"},
		{"ttft_p99<=fast", `bound "fast" is not a duration`},
		{"ttft_p99<=-1s", `bound "-1s" is not a duration >= 0`},
		{"ttft_p99<=", "no bound after the comparison"},
		{"slo>=99", `bound "99" is not a fraction in [0, 1]`},
		{"errors<=1s", `bound "1s" is not a fraction`},
		{"throughput>=-3", `bound "-3" is not a rate`},
	}
	for _, tc := range bad {
		_, err := ParsePlanTargets(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

func TestPlanTargetDirection(t *testing.T) {
	ts, err := ParsePlanTargets("ttft_p99<=1s,slo>=0.9,saturation>=0.5,throughput<100,errors<=0.01")
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, false, true}
	for i, tg := range ts {
		if tg.Improving() != want[i] {
			t.Errorf("%s: Improving %v, want %v", tg, tg.Improving(), want[i])
		}
	}
}

// The planner against queueing ground truth: c single-slot replicas with
// exponential service behind Poisson arrivals are an M/M/c queue, so the
// smallest c whose mean gateway wait is at most W is known from Erlang C.
// W is taken halfway (geometrically) between two neighbouring counts'
// waits, far from either against the simulation's noise.
func TestPlanReplicasErlangC(t *testing.T) {
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
	spec := mmcSpec(1, lambda, mu, 300_000, LeastOutstanding)
	targets, err := ParsePlanTargets("wait_mean<=" + formatFloat(bound))
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	r, err := PlanReplicas(PlanConfig{Spec: spec, Targets: targets, MaxReplicas: 64, Seeds: []uint64{1, 2, 3},
		Progress: func(p PlanPoint) { order = append(order, p.Replicas) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Points {
		t.Logf("%2d replicas: mean wait %.4f s %v", p.Replicas, p.Values[0], p.Pass[0])
	}
	if r.Replicas != want || r.GPUs != want || !r.NeighbourFails {
		t.Fatalf("planned %d replicas (%d GPUs, neighbour fails %v), Erlang C says %d (wait bound %.4f s)", r.Replicas, r.GPUs, r.NeighbourFails, want, bound)
	}
	if math.Abs(r.GPUHoursPerHour-float64(want)) > 1e-9 {
		t.Errorf("GPU-hours per hour %v, want %d", r.GPUHoursPerHour, want)
	}
	// Exponential then binary: 1, 2, 4, 8, 16, then bisecting (8, 16].
	if wantOrder := []int{1, 2, 4, 8, 16, 12, 10, 11}; !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("tried %v, want %v", order, wantOrder)
	}
	for i := 1; i < len(r.Points); i++ {
		if r.Points[i].Replicas <= r.Points[i-1].Replicas {
			t.Fatalf("points not sorted: %v", order)
		}
	}
	// The measured waits at the answer and its neighbour match Erlang C.
	for _, p := range r.Points {
		if p.Replicas == want || p.Replicas == want-1 {
			_, w := erlangC(p.Replicas, lambda, mu)
			if rel := math.Abs(p.Values[0]-w) / w; rel > 0.15 {
				t.Errorf("%d replicas: worst mean wait %.4f s, Erlang C %.4f s", p.Replicas, p.Values[0], w)
			}
		}
	}
}

func formatFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmtPlanNum(v), "0"), ".")
}

func TestPlanReplicasErrorsAndFloors(t *testing.T) {
	spec := mmcSpec(1, 8, 1, 20_000, LeastOutstanding)
	ts := func(s string) []PlanTarget {
		x, err := ParsePlanTargets(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if _, err := PlanReplicas(PlanConfig{Spec: spec, Targets: ts("busy.e2e_p99<=1s")}); err == nil || !strings.Contains(err.Error(), `no class "busy" (classes: all)`) {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := PlanReplicas(PlanConfig{Spec: spec, Service: "x", Targets: ts("e2e_p99<=1s")}); err == nil || !strings.Contains(err.Error(), `no service "x" (services: mmc)`) {
		t.Errorf("unknown service: %v", err)
	}
	// Unreachable within the range: the answer says by how much.
	r, err := PlanReplicas(PlanConfig{Spec: spec, Targets: ts("wait_mean<=0.1"), MaxReplicas: 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best >= 0 || !strings.Contains(r.Answer(), "no replica count in 1..6 meets every target; at 6 replicas (6 GPUs): wait_mean<=0.1 fails") {
		t.Errorf("unreachable: %s", r.Answer())
	}
	// A saturation floor is checked at the fewest replicas meeting the
	// ceiling: 11 replicas at λ=8 are 8/11 = 73 % busy.
	r, err = PlanReplicas(PlanConfig{Spec: spec, Targets: ts("wait_mean<=0.13,saturation>=0.9"), MaxReplicas: 32})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best >= 0 || !strings.Contains(r.Answer(), "more replicas only move it further") {
		t.Errorf("saturation floor: %s", r.Answer())
	}
	r, err = PlanReplicas(PlanConfig{Spec: spec, Targets: ts("wait_mean<=0.5,saturation>=0.6"), MaxReplicas: 32, Rate: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best < 0 || r.Rate != 4 || r.Replicas > 7 {
		t.Errorf("at 4 rps: %s", r.Answer())
	}
	dir := t.TempDir()
	files, err := WritePlanFiles(dir, r, false)
	if err != nil || len(files) != 2 {
		t.Fatal(files, err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "plan.csv"))
	if err != nil || !strings.HasPrefix(string(csv), "replicas,gpus,gpu_h_per_h,requests,wait_mean,wait_mean<=0.5,saturation,saturation>=0.6,all_pass,chosen\n") {
		t.Errorf("plan.csv: %v\n%s", err, csv)
	}
}

// speculativeSearch tries the sizes plan.Search tries, in its order, and
// finds its answer, whatever the width; prefetch is asked only for sizes
// in range.
func TestSpeculativeSearchMatchesPlanSearch(t *testing.T) {
	for hi := 1; hi <= 70; hi++ {
		for answer := 1; answer <= hi+1; answer++ {
			pass := func(n int) (bool, error) { return n >= answer, nil }
			var want []int
			wb, wf, _ := plan.Search(1, hi, func(n int) (bool, error) { want = append(want, n); return pass(n) })
			for _, width := range []int{1, 2, 3, 8, 16} {
				var got []int
				fetched := map[int]bool{}
				gb, gf, err := speculativeSearch(1, hi, width, func(ns []int) {
					if len(ns) > width {
						t.Fatalf("prefetch of %d sizes at width %d", len(ns), width)
					}
					for _, n := range ns {
						if n < 1 || n > hi {
							t.Fatalf("prefetch %d outside [1, %d]", n, hi)
						}
						fetched[n] = true
					}
				}, func(n int) (bool, error) {
					if !fetched[n] {
						t.Fatalf("size %d passed before it was fetched", n)
					}
					got = append(got, n)
					return pass(n)
				})
				if err != nil || gb != wb || gf != wf || !reflect.DeepEqual(got, want) {
					t.Fatalf("hi %d answer %d width %d: got %d %v %v, plan.Search %d %v %v", hi, answer, width, gb, gf, got, wb, wf, want)
				}
			}
		}
	}
}

// The plan does not depend on how many counts are simulated at once.
func TestPlanReplicasWorkers(t *testing.T) {
	spec := mmcSpec(1, 8, 1, 20_000, LeastOutstanding)
	targets, err := ParsePlanTargets("wait_mean<=0.13,e2e_p99<=6s")
	if err != nil {
		t.Fatal(err)
	}
	var plans []*PlanResult
	for _, w := range []int{1, 3, 16} {
		r, err := PlanReplicas(PlanConfig{Spec: spec, Targets: targets, MaxReplicas: 40, Seeds: []uint64{4, 5}, Workers: w})
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
