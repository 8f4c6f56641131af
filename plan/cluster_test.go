package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// steady is n one-GPU jobs of an hour, one every ten minutes, and one job
// of wide GPUs first (a gang may span nodes): about six GPUs busy at once, so the wait falls to 0 from
// six or seven GPUs on.
func steady(n, wide int) *workloads.Workload {
	// Jobs go in submission order.
	w := &workloads.Workload{Tenants: []workloads.Tenant{{Name: "t", Weight: 1}}, Jobs: []workloads.Job{{Name: "wide", Tenant: "t",
		Duration: hwmodel.Minute, Req: hwmodel.Request{GPUs: wide, GPUMilli: hwmodel.MilliPerGPU}}}}
	for i := range n {
		w.Jobs = append(w.Jobs, workloads.Job{Name: fmt.Sprintf("j%d", i), Tenant: "t", Submit: hwmodel.Time(i) * 10 * hwmodel.Minute,
			Duration: hwmodel.Hour, Req: hwmodel.Request{GPUs: 1, GPUMilli: hwmodel.MilliPerGPU}})
	}
	return w
}

func TestCluster(t *testing.T) {
	spec, err := policies.ParseSpec("fcfs")
	if err != nil {
		t.Fatal(err)
	}
	targets, err := ParseTargets("wait_s.p99<=60", SummaryMetrics())
	if err != nil {
		t.Fatal(err)
	}
	cfg := ClusterConfig{Workload: steady(40, 2), WorkloadName: "steady", Policy: spec, Targets: targets,
		Models: []string{"H100-80GB"}, GPUsPerNode: 2, MinNodes: 1, MaxNodes: 16, Seeds: []uint64{1, 2}}
	r, err := Cluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Best < 0 {
		t.Fatalf("no answer: %s", r.Answer())
	}
	b := r.Points[r.Best]
	if b.Size < 3 || b.Size > 5 || !r.NeighbourFails || b.Unfit != 0 {
		t.Errorf("answer %s (%+v)", r.Answer(), b)
	}
	// The first point is the largest size, simulated first.
	if r.Points[len(r.Points)-1].Size != 16 || !r.Points[len(r.Points)-1].OK() {
		t.Errorf("largest size %+v", r.Points[len(r.Points)-1])
	}
	// A job wider than the largest cluster never fits: no size is an
	// answer, and the message says why.
	cfg.Workload = steady(40, 33)
	r, err = Cluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Best >= 0 || !strings.Contains(r.Answer(), "16 × H100-80GB (32 GPUs): 1 jobs can never fit it") {
		t.Errorf("unfit: %s", r.Answer())
	}
	cfg.GPUsPerNode = 0
	if _, err := Cluster(cfg); err == nil || !strings.Contains(err.Error(), "GPUs per node must be 1..") {
		t.Errorf("0 GPUs per node: %v", err)
	}
}

func ExampleParseTargets() {
	ts, err := ParseTargets("interactive.ttft_p99<=500ms,errors<=0.1%,throughput>=20", ServiceMetrics())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range ts {
		fmt.Printf("%s: class %q, metric %s %s %g, improved by more replicas: %v\n", t, t.Class, t.Metric, t.Op, t.Value, t.Improving())
	}
	_, err = ParseTargets("wait_s.p99<=1h", SummaryMetrics())
	fmt.Println(err)
	// Output:
	// interactive.ttft_p99<=500ms: class "interactive", metric ttft_p99 <= 0.5, improved by more replicas: true
	// errors<=0.1%: class "", metric errors <= 0.001, improved by more replicas: true
	// throughput>=20: class "", metric throughput >= 20, improved by more replicas: true
	// target "wait_s.p99<=1h": bound "1h" is not a finite number
}
