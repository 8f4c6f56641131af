//go:build unix

package scheduler_test

import (
	"context"
	"flag"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/controlplane"
	"github.com/brigadesim/brigade/kube/scheduler"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var (
	benchQPS   = flag.Float64("bench-kube-api-qps", scheduler.DefaultAPIQPS, "BenchmarkRealAPI: the scheduler client's QPS")
	benchBurst = flag.Int("bench-kube-api-burst", scheduler.DefaultAPIBurst, "BenchmarkRealAPI: the scheduler client's burst")
)

// BenchmarkRealAPI runs the scheduler in this process against a real
// control plane (etcd, kube-apiserver, KWOK): 150 nodes of 8 GPUs, 1,000
// pending pods created before it starts (scheduler.BenchWorkload), until
// every pod that the policy places is bound. Each policy is a
// sub-benchmark; each iteration is a fresh set of pods on the same
// nodes. It reports binding throughput, the first and last binding, the
// scheduling call's p50/p99 (no API call) and the Binding round trip's
// p50/p99 (medians over iterations), and this process's CPU time.
func BenchmarkRealAPI(b *testing.B) {
	cp := controlplane.ForTest(b)
	ctx := context.Background()
	names, err := controlplane.AddGPUNodes(ctx, cp.Clientset, 150, controlplane.NodeSpec{GPUs: 8})
	if err != nil {
		b.Fatal(err)
	}
	if err := controlplane.WaitNodesReady(ctx, cp.Clientset, names); err != nil {
		b.Fatal(err)
	}
	rc := rest.CopyConfig(cp.Config)
	rc.QPS, rc.Burst, rc.UserAgent = float32(*benchQPS), *benchBurst, "brigade-kube-bench"
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("scheduler client: QPS %v, burst %d", rc.QPS, rc.Burst)
	for _, policy := range []string{"fcfs/bestfit", "sjf+bf/bestfit"} {
		b.Run(policy, func(b *testing.B) {
			var results []scheduler.BenchResult
			var cpu []time.Duration
			for range b.N {
				before := cpuTime(b)
				r, err := scheduler.Bench(ctx, client, scheduler.BenchOptions{Namespace: "bench", Policy: policy, Setup: cp.Clientset})
				if err != nil {
					b.Fatal(err)
				}
				cpu = append(cpu, cpuTime(b)-before)
				checkPlacements(b, r, len(names), 8)
				b.Log(r)
				results = append(results, r)
			}
			med := func(f func(scheduler.BenchResult) float64) float64 {
				v := make([]float64, len(results))
				for i, r := range results {
					v[i] = f(r)
				}
				slices.Sort(v)
				return v[len(v)/2]
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return r.PodsPerSecond }), "pods/s")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return float64(r.Bound) }), "bound")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return float64(r.FirstBind.Milliseconds()) }), "first-bind-ms")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return float64(r.LastBind.Milliseconds()) }), "last-bind-ms")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return us(r.CallP50) }), "call-p50-µs")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return us(r.CallP99) }), "call-p99-µs")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return us(r.BindP50) }), "bind-p50-µs")
			b.ReportMetric(med(func(r scheduler.BenchResult) float64 { return us(r.BindP99) }), "bind-p99-µs")
			slices.Sort(cpu)
			b.ReportMetric(float64(cpu[len(cpu)/2].Milliseconds()), "proc-cpu-ms")
		})
	}
}

// checkPlacements fails b when the bound pods overfill a node's GPUs or
// split a gang (some members bound, some not), and, under a backfilling
// policy, when a pod on its own was left pending though a node had its
// GPUs free.
func checkPlacements(b *testing.B, r scheduler.BenchResult, nodes, gpusPerNode int) {
	b.Helper()
	used := map[string]int{}
	gangBound := map[string]int{}
	for _, p := range scheduler.BenchWorkload(r.Pods) {
		if node, ok := r.Assigned[p.Name]; ok {
			used[node] += p.GPUs
			if p.Gang != "" {
				gangBound[p.Gang]++
			}
		}
	}
	most := 0 // the most free GPUs on one node
	if len(used) < nodes {
		most = gpusPerNode
	}
	for node, g := range used {
		if g > gpusPerNode {
			b.Errorf("node %s holds %d GPUs of pods, it has %d", node, g, gpusPerNode)
		}
		most = max(most, gpusPerNode-g)
	}
	for _, p := range scheduler.BenchWorkload(r.Pods) {
		_, bound := r.Assigned[p.Name]
		switch {
		case p.Gang != "" && gangBound[p.Gang] != 0 && gangBound[p.Gang] != p.GangSize:
			b.Errorf("gang %s: %d of %d members bound", p.Gang, gangBound[p.Gang], p.GangSize)
		case p.Gang == "" && !bound && p.GPUs <= most && r.Policy != "fcfs/bestfit":
			b.Errorf("%s: pod %s (%d GPUs) left pending with a node of %d free GPUs", r.Policy, p.Name, p.GPUs, most)
		}
	}
	if r.Bound == 0 {
		b.Errorf("%s: nothing bound", r.Policy)
	}
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
