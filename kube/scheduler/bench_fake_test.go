package scheduler

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The workload has exactly n pods, the same for the same n, with every
// size and both gang shapes, and gangs never cut short.
func TestBenchWorkload(t *testing.T) {
	for _, n := range []int{1, 24, 25, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := BenchWorkload(n)
			if len(w) != n {
				t.Fatalf("%d pods, want %d", len(w), n)
			}
			if !reflect.DeepEqual(w, BenchWorkload(n)) {
				t.Fatal("two calls gave different workloads")
			}
			names := map[string]bool{}
			members := map[string]int{}
			sizes := map[int]int{}
			for _, p := range w {
				if names[p.Name] {
					t.Fatalf("pod name %s twice", p.Name)
				}
				names[p.Name] = true
				if p.Gang != "" {
					members[p.Gang]++
				} else {
					sizes[p.GPUs]++
				}
				if p.Estimate < 10*time.Minute || p.GPUs < 1 || p.GPUs > 8 {
					t.Errorf("pod %+v", p)
				}
			}
			for _, p := range w {
				if p.Gang != "" && members[p.Gang] != p.GangSize {
					t.Errorf("gang %s has %d members, its pods say %d", p.Gang, members[p.Gang], p.GangSize)
				}
			}
			if n == 1000 {
				if len(members) != 37 || sizes[1] == 0 || sizes[2] == 0 || sizes[4] == 0 || sizes[8] == 0 {
					t.Errorf("gangs %d (want 37), sizes %v", len(members), sizes)
				}
			}
		})
	}
}

func TestPercentiles(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		in            []time.Duration
		p50, p99, sum time.Duration
	}{
		{nil, 0, 0, 0},
		{ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{ms(4, 1, 3, 2), 2 * time.Millisecond, 4 * time.Millisecond, 10 * time.Millisecond},
		{ms(make([]int, 200)...), 0, 0, 0},
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[99-i] = i + 1
	}
	tests = append(tests, struct {
		in            []time.Duration
		p50, p99, sum time.Duration
	}{ms(hundred...), 50 * time.Millisecond, 99 * time.Millisecond, 5050 * time.Millisecond})
	for _, tc := range tests {
		p50, p99, sum := percentiles(tc.in)
		if p50 != tc.p50 || p99 != tc.p99 || sum != tc.sum {
			t.Errorf("percentiles(%v) = %v, %v, %v; want %v, %v, %v", tc.in, p50, p99, sum, tc.p50, tc.p99, tc.sum)
		}
	}
}

// Bench on the fake API server: 4 nodes of 8 GPUs hold the first pods
// of the workload; what it reports agrees with the Bindings the server
// saw, and its pods are gone afterwards.
func TestBenchOnFakeCluster(t *testing.T) {
	var nodes []runtime.Object
	for i := range 4 {
		nodes = append(nodes, gpuNode(fmt.Sprintf("n%d", i), "NVIDIA-H100-80GB-HBM3", 8))
	}
	c := newCluster(nodes...)
	r, err := Bench(t.Context(), c.cs, BenchOptions{Namespace: "bench", Pods: 30, Policy: "sjf+bf/bestfit",
		Quiet: 300 * time.Millisecond, Timeout: 20 * time.Second, Run: RunOptions{Tick: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	binds := len(c.binds)
	c.mu.Unlock()
	if r.Bound == 0 || r.Bound != binds || r.Binds != binds || r.Calls == 0 {
		t.Errorf("bound %d, binds %d, calls %d; the server saw %d Bindings", r.Bound, r.Binds, r.Calls, binds)
	}
	used := map[string]int{}
	for _, p := range BenchWorkload(30) {
		if node, ok := r.Assigned[p.Name]; ok {
			used[node] += p.GPUs
		}
	}
	for node, g := range used {
		if g > 8 {
			t.Errorf("node %s holds %d GPUs", node, g)
		}
	}
	if r.FirstBind <= 0 || r.LastBind < r.FirstBind || r.PodsPerSecond <= 0 || r.CallP50 <= 0 || r.CallP99 < r.CallP50 {
		t.Errorf("result %s", r)
	}
	left, err := c.cs.CoreV1().Pods("bench").List(t.Context(), metav1.ListOptions{LabelSelector: BenchLabel})
	if err != nil || len(left.Items) != 0 {
		t.Errorf("%d pods left after the run (%v)", len(left.Items), err)
	}
}

// Bench refuses to run without a namespace, or with a policy the
// scheduler cannot run, before it creates anything.
func TestBenchRefuses(t *testing.T) {
	c := newCluster()
	tests := []struct {
		opt  BenchOptions
		want string
	}{
		{BenchOptions{}, "bench: a namespace is required"},
		{BenchOptions{Namespace: "bench", Pods: -1}, "bench: pods = -1, want > 0"},
		{BenchOptions{Namespace: "bench", Policy: "fcfs/fgd"}, "fgd placement needs a target workload"},
	}
	for _, tc := range tests {
		_, err := Bench(t.Context(), c.cs, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.opt, err, tc.want)
		}
	}
	if l, _ := c.cs.CoreV1().Pods("bench").List(t.Context(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d pods created", len(l.Items))
	}
}
