package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestModelForProduct(t *testing.T) {
	for product, want := range map[string]string{
		"NVIDIA-H100-80GB-HBM3":   "H100-80GB",
		"NVIDIA-A100-SXM4-80GB":   "A100-80GB",
		"NVIDIA-A100-PCIE-40GB":   "A100-40GB",
		"NVIDIA-H200":             "H200-141GB",
		"Tesla-T4":                "T4",
		"NVIDIA-L40S":             "L40S",
		"NVIDIA-GeForce-RTX-4090": "",
		"":                        "",
	} {
		m, ok := modelForProduct(product)
		if got := map[bool]string{true: m.Name}[ok]; got != want {
			t.Errorf("%q: got %q, want %q", product, got, want)
		}
	}
}

// The cluster is built from the nodes: the catalogue model from the
// product label, MIG resources as MIG GPUs, CPU and memory allocatable;
// a cordoned node is left out; an unknown product is a generic model.
func TestClusterFromNodes(t *testing.T) {
	cordoned := gpuNode("c-cordoned", "NVIDIA-H100-80GB-HBM3", 8)
	cordoned.Spec.Unschedulable = true
	c := newCluster(
		gpuNode("a-h100", "NVIDIA-H100-80GB-HBM3", 8),
		gpuNode("b-a100", "NVIDIA-A100-SXM4-80GB", 2, alloc("nvidia.com/mig-1g.10gb", "7"), alloc("nvidia.com/mig-3g.40gb", "2")),
		cordoned,
		gpuNode("d-cpu", "", 0, alloc("cpu", "16"), alloc("memory", "64Gi")),
		gpuNode("e-odd", "NVIDIA-GeForce-RTX-4090", 1, taint("x", "y", corev1.TaintEffectNoSchedule)),
	)
	var log strings.Builder
	s, _ := New(Config{Policy: "fcfs", Log: &log}, c.cs, nil, APISource{Client: c.cs, Ctx: t.Context()})
	round(t, s)
	cl := s.cluster
	if cl.NumNodes() != 4 {
		t.Fatalf("%d nodes, want 4 (the cordoned one left out)", cl.NumNodes())
	}
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	want := []struct {
		name         string
		model        hwmodel.ModelID
		gpus, migGPU int
		cpu, mem     int64
	}{
		// 7 × 1g.10gb fill one GPU; 2 × 3g.40gb share another.
		{"a-h100", h100.ID, 8, 0, 64000, 512 * 1024},
		{"b-a100", a100.ID, 4, 2, 64000, 512 * 1024},
		{"d-cpu", h100.ID, 0, 0, 16000, 64 * 1024},
		{"e-odd", h100.ID, 1, 0, 64000, 512 * 1024},
	}
	for i, w := range want {
		n := cl.Node(i)
		mig := 0
		for g := range n.GPUs {
			if cl.IsMIG(i, g) {
				mig++
			}
		}
		if n.Name != w.name || n.GPUs != w.gpus || mig != w.migGPU || n.CPUMilli != w.cpu || n.MemoryMiB != w.mem || (w.gpus > 0 && n.Model != w.model) {
			t.Errorf("node %d: %s model %d, %d GPUs (%d MIG), cpu %d, mem %d; want %+v", i, n.Name, n.Model, n.GPUs, mig, n.CPUMilli, n.MemoryMiB, w)
		}
	}
	if cl.MIGInstanceCount(1, 2)+cl.MIGInstanceCount(1, 3) != 9 {
		t.Errorf("b-a100 has %d+%d MIG instances, want 9", cl.MIGInstanceCount(1, 2), cl.MIGInstanceCount(1, 3))
	}
	if !strings.Contains(log.String(), `GPU product "NVIDIA-GeForce-RTX-4090" is not in Brigade's catalogue`) {
		t.Errorf("no log line for the unknown product:\n%s", log.String())
	}
	if len(s.nodes[3].taints) != 1 {
		t.Errorf("e-odd has taints %v", s.nodes[3].taints)
	}
}

// The policy's order becomes the order of Bindings. One node of one GPU,
// three one-GPU pods created a, b, c with estimates 3h, 1h, 2h. fcfs
// binds a, then (a done) b, then c; sjf binds the shortest first: b (1h),
// then c (2h), then a (3h).
func TestBindOrderFollowsPolicy(t *testing.T) {
	for policy, want := range map[string][]string{
		"fcfs": {"a->n0", "b->n0", "c->n0"},
		"sjf":  {"b->n0", "c->n0", "a->n0"},
	} {
		c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 1),
			gpuPod("a", 1, 0, estimate("3h")), gpuPod("b", 1, 1e9, estimate("1h")), gpuPod("c", 1, 2e9, estimate("2h")))
		s := newSched(t, c, policy)
		for k := range 3 {
			round(t, s)
			if len(c.binds) != k+1 {
				t.Fatalf("%s: after round %d, binds %v", policy, k+1, c.binds)
			}
			round(t, s) // nothing new: no second bind
			c.finish(t, "team-a", strings.Split(c.binds[k], "->")[0])
		}
		if !slices.Equal(c.binds, want) {
			t.Errorf("%s: binds %v, want %v", policy, c.binds, want)
		}
	}
}

// A gang is bound all or none: with two of its three pods present
// nothing is bound; with the third, all three, each pod's GPUs on one
// node, every member carrying the same committed placement.
func TestGangAllOrNone(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 4),
		gpuPod("g-0", 2, 0, gang("train", 3)), gpuPod("g-1", 2, 0, gang("train", 3)))
	s := newSched(t, c, "fcfs/bestfit")
	round(t, s)
	if len(c.binds) != 0 {
		t.Fatalf("bound %v with two of three members", c.binds)
	}
	c.add(t, gpuPod("g-2", 2, 0, gang("train", 3)))
	round(t, s)
	if len(c.binds) != 3 {
		t.Fatalf("binds %v, want the whole gang", c.binds)
	}
	perNode := map[string]int{}
	val := ""
	for _, n := range []string{"g-0", "g-1", "g-2"} {
		p := c.pod(t, "team-a", n)
		perNode[p.Spec.NodeName] += 2
		if val != "" && p.Annotations[AnnoPlacement] != val || p.Annotations[AnnoPlacement] == "" {
			t.Errorf("%s: placement %q, others %q", n, p.Annotations[AnnoPlacement], val)
		}
		val = p.Annotations[AnnoPlacement]
	}
	if perNode["n0"]+perNode["n1"] != 6 || perNode["n0"] > 4 || perNode["n1"] > 4 {
		t.Errorf("GPUs per node %v", perNode)
	}
	// A gang larger than the cluster is never bound, and says why.
	c.add(t, gpuPod("big-0", 4, 0, gang("big", 3)), gpuPod("big-1", 4, 0, gang("big", 3)), gpuPod("big-2", 4, 0, gang("big", 3)))
	round(t, s)
	if len(c.binds) != 3 {
		t.Errorf("binds %v", c.binds)
	}
	if cond := scheduledCond(c.pod(t, "team-a", "big-1")); cond == nil || !strings.Contains(cond.Message, "asks for 12 GPUs") {
		t.Errorf("big-1's condition: %+v", cond)
	}
}

func scheduledCond(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Taints: a pod without a matching toleration never lands on a tainted
// node, even when the policy's placement picks it (bestfit prefers the
// tainted node's exact fit here: it is refused, and the pod waits for
// the untainted node); one that can land nowhere is told why, with a
// Warning event and PodScheduled=False, Unschedulable.
func TestTaintsAndUnschedulable(t *testing.T) {
	c := newCluster(
		gpuNode("n-plain", "NVIDIA-H100-80GB-HBM3", 2),
		gpuNode("n-tainted", "NVIDIA-H100-80GB-HBM3", 8, taint("dedicated", "ml", corev1.TaintEffectNoSchedule)),
		gpuPod("plain", 2, 0),
		gpuPod("wide", 4, 1e9),
		gpuPod("tolerant", 4, 2e9, tolerate("dedicated")),
	)
	s := newSched(t, c, "fcfs+bf/bestfit")
	round(t, s)
	round(t, s)
	if got := c.pod(t, "team-a", "plain").Spec.NodeName; got != "n-plain" {
		t.Errorf("plain on %q, want n-plain", got)
	}
	if got := c.pod(t, "team-a", "tolerant").Spec.NodeName; got != "n-tainted" {
		t.Errorf("tolerant on %q, want n-tainted", got)
	}
	wide := c.pod(t, "team-a", "wide")
	if wide.Spec.NodeName != "" {
		t.Fatalf("wide bound to %s", wide.Spec.NodeName)
	}
	cond := scheduledCond(wide)
	if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != corev1.PodReasonUnschedulable ||
		cond.Message != "0/2 nodes can hold pod wide (4 GPUs, 1000 milli-CPU, 1024 MiB): 1 have taints it does not tolerate, 1 are too small" {
		t.Errorf("wide's condition: %+v", cond)
	}
	evs, _ := c.cs.CoreV1().Events("team-a").List(t.Context(), metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Type != corev1.EventTypeWarning || evs.Items[0].InvolvedObject.Name != "wide" || evs.Items[0].Message != cond.Message {
		t.Errorf("events %+v", evs.Items)
	}
	// Said once, not at every round.
	round(t, s)
	if evs, _ := c.cs.CoreV1().Events("team-a").List(t.Context(), metav1.ListOptions{}); len(evs.Items) != 1 {
		t.Errorf("%d events after another round", len(evs.Items))
	}
}

// A preemption is an Eviction carrying the pod's own grace period: a
// high-priority pod arrives at a node a low-priority one fills.
func TestPreemptEvicts(t *testing.T) {
	grace := int64(42)
	low := gpuPod("low", 1, 0, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &grace })
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 1), low)
	s := newSched(t, c, "priority+preempt")
	round(t, s)
	prio := int32(1000)
	c.add(t, gpuPod("high", 1, 1e9, func(p *corev1.Pod) { p.Spec.Priority = &prio }))
	round(t, s)
	if !slices.Equal(c.evicts, []string{"low grace=42"}) {
		t.Fatalf("evictions %v", c.evicts)
	}
	round(t, s) // low is gone: high takes the GPU
	if !slices.Equal(c.binds, []string{"low->n0", "high->n0"}) {
		t.Errorf("binds %v", c.binds)
	}
}

// A restarted scheduler rebuilds its books from the bound pods before
// its first decision: it binds nothing twice, and a pod that needs the
// GPUs the bound one holds waits.
func TestRestartRebuildsBooks(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4), gpuPod("first", 3, 0))
	round(t, newSched(t, c, "fcfs"))
	c.add(t, gpuPod("third", 1, 1e9), gpuPod("second", 2, 2e9))
	s := newSched(t, c, "fcfs")
	round(t, s)
	round(t, s)
	if !slices.Equal(c.binds, []string{"first->n0", "third->n0"}) {
		t.Errorf("binds %v: want first once, then only third (second needs the GPUs first holds)", c.binds)
	}
	if a := s.cluster.AllocatedMilli(); a != 4000 {
		t.Errorf("books hold %d milli-GPU, want 4000", a)
	}
}

// A bind refused because the pod is already bound (by an earlier
// attempt whose answer was lost) is reconciled from the API server,
// not retried: the pod counts as bound where it is.
func TestBindConflictReconciled(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 2), gpuPod("a", 1, 0))
	// The API server binds it, then the answer is lost.
	c.bindFail = func(pod string) error {
		c.bindFail = nil
		o, _ := c.cs.Tracker().Get(podsGVR, "team-a", pod)
		p := o.(*corev1.Pod).DeepCopy()
		p.Spec.NodeName = "n0"
		_ = c.cs.Tracker().Update(podsGVR, p, "team-a")
		return errTimeout
	}
	s := newSched(t, c, "fcfs")
	round(t, s)
	round(t, s)
	if len(c.binds) != 0 || c.pod(t, "team-a", "a").Spec.NodeName != "n0" {
		t.Errorf("binds %v", c.binds)
	}
	if s.jobs[0].state != running || s.cluster.AllocatedMilli() != 1000 {
		t.Errorf("job state %d, books %d milli", s.jobs[0].state, s.cluster.AllocatedMilli())
	}
}

// A crash between the gang's committed placement and its binds: the
// restarted scheduler completes that placement, not another.
func TestGangCrashCompletesPlacement(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 4),
		gpuPod("g-0", 2, 0, gang("train", 2)), gpuPod("g-1", 2, 0, gang("train", 2)))
	s := newSched(t, c, "fcfs/bestfit")
	crashpoint.Hook = func(p string) {
		if p == crashpoint.GangCommitted {
			panic("crash")
		}
	}
	func() {
		defer func() { _ = recover() }()
		round(t, s)
	}()
	crashpoint.Hook = nil
	if len(c.binds) != 0 {
		t.Fatalf("bound %v before the crash", c.binds)
	}
	want := c.pod(t, "team-a", "g-0").Annotations[AnnoPlacement]
	if want == "" || c.pod(t, "team-a", "g-1").Annotations[AnnoPlacement] != want {
		t.Fatalf("placement not committed on both members")
	}
	// Another pod now fits where bestfit would put a fresh gang: the
	// restart must still complete the committed placement.
	s2 := newSched(t, c, "fcfs/mostfree")
	round(t, s2)
	for _, n := range []string{"g-0", "g-1"} {
		p := c.pod(t, "team-a", n)
		if !strings.Contains(want, `"`+n+`":"`+p.Spec.NodeName+`"`) {
			t.Errorf("%s bound to %q; the committed placement is %s", n, p.Spec.NodeName, want)
		}
	}
	if len(c.binds) != 2 || s2.cluster.AllocatedMilli() != 4000 {
		t.Errorf("binds %v, books %d", c.binds, s2.cluster.AllocatedMilli())
	}
}

// A MIG pod lands on a node that has an instance of its profile, and one
// asking for a profile no node has is unschedulable.
func TestMIGPod(t *testing.T) {
	mig := func(profile string) podOpt {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceName("nvidia.com/mig-"+profile)] = *resource.NewQuantity(1, resource.DecimalSI)
		}
	}
	c := newCluster(gpuNode("n-h100", "NVIDIA-H100-80GB-HBM3", 2),
		gpuNode("n-mig", "NVIDIA-A100-SXM4-80GB", 0, alloc("nvidia.com/mig-1g.10gb", "2")),
		gpuPod("small", 0, 0, mig("1g.10gb")), gpuPod("other", 0, 1e9, mig("3g.40gb")))
	s := newSched(t, c, "fcfs")
	round(t, s)
	if !slices.Equal(c.binds, []string{"small->n-mig"}) {
		t.Errorf("binds %v", c.binds)
	}
	if cond := scheduledCond(c.pod(t, "team-a", "other")); cond == nil || cond.Reason != corev1.PodReasonUnschedulable {
		t.Errorf("other's condition %+v", cond)
	}
}

// A queued pod that is deleted leaves the policy's queue (the books are
// rebuilt): under fcfs it would otherwise block the pod behind it for
// ever. The metrics count the bind and the pending jobs.
func TestDeletedQueuedPodAndMetrics(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 2), gpuPod("running", 2, 0), gpuPod("head", 2, 1e9), gpuPod("next", 1, 2e9))
	s := newSched(t, c, "fcfs")
	s.cfg.Metrics = NewMetrics()
	round(t, s)
	if got := testutil.ToFloat64(s.cfg.Metrics.pending); got != 2 {
		t.Errorf("pending %v, want 2", got)
	}
	if err := c.cs.Tracker().Delete(podsGVR, "team-a", "head"); err != nil {
		t.Fatal(err)
	}
	c.finish(t, "team-a", "running")
	round(t, s)
	if !slices.Equal(c.binds, []string{"running->n0", "next->n0"}) {
		t.Errorf("binds %v", c.binds)
	}
	if got := testutil.ToFloat64(s.cfg.Metrics.bound); got != 2 {
		t.Errorf("bound_total %v, want 2", got)
	}
	if got := testutil.ToFloat64(s.cfg.Metrics.pending); got != 0 {
		t.Errorf("pending %v, want 0", got)
	}
}

// A committed placement whose node has gone before any member was bound
// is taken back: the gang is placed again on the nodes there are.
func TestCommittedPlacementOnGoneNode(t *testing.T) {
	val := `{"g-0":"gone","g-1":"gone"}`
	ann := func(p *corev1.Pod) { p.Annotations[AnnoPlacement] = val }
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4),
		gpuPod("g-0", 2, 0, gang("train", 2), ann), gpuPod("g-1", 2, 0, gang("train", 2), ann))
	s := newSched(t, c, "fcfs")
	round(t, s)
	round(t, s)
	if !slices.Equal(c.binds, []string{"g-0->n0", "g-1->n0"}) {
		t.Errorf("binds %v", c.binds)
	}
	if v := c.pod(t, "team-a", "g-0").Annotations[AnnoPlacement]; v != `{"g-0":"n0","g-1":"n0"}` {
		t.Errorf("placement %s", v)
	}
}
