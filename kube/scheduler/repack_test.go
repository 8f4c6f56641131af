package scheduler

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	corev1 "k8s.io/api/core/v1"
)

// bestfit prefers a tainted node's exact fit; a pod that does not
// tolerate it goes to the equal node it may use, in the same round,
// instead of being refused at every round. A share moves only to a node
// of the same GPU model with room; with none, the start is refused and
// the pod waits.
func TestTaintedChoiceMovesToEqualNode(t *testing.T) {
	const h100, a100 = "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"
	dedicated := taint("dedicated", "ml", corev1.TaintEffectNoSchedule)
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		pods  []*corev1.Pod
		want  map[string]string // pod → node ("" unbound)
	}{
		{"moved to the free H100",
			[]*corev1.Node{gpuNode("a-tainted", h100, 4, dedicated), gpuNode("b-free", h100, 8)},
			[]*corev1.Pod{gpuPod("p", 4, 0)},
			map[string]string{"p": "b-free"}},
		{"a tolerant pod keeps the exact fit",
			[]*corev1.Node{gpuNode("a-tainted", h100, 4, dedicated), gpuNode("b-free", h100, 8)},
			[]*corev1.Pod{gpuPod("p", 4, 0, tolerate("dedicated"))},
			map[string]string{"p": "a-tainted"}},
		{"never to another model",
			[]*corev1.Node{gpuNode("a-tainted", h100, 4, dedicated), gpuNode("b-free", a100, 8)},
			[]*corev1.Pod{gpuPod("p", 4, 0)},
			// fcfs/bestfit's choice of model is the H100; the A100 would be
			// another decision, so the pod waits.
			map[string]string{"p": ""}},
		{"a gang's shares each to a free node",
			[]*corev1.Node{gpuNode("a-tainted", h100, 4, dedicated), gpuNode("b-tainted", h100, 4, dedicated),
				gpuNode("c-free", h100, 4), gpuNode("d-free", h100, 4)},
			[]*corev1.Pod{gpuPod("g-0", 4, 0, gang("g", 2)), gpuPod("g-1", 4, 0, gang("g", 2))},
			map[string]string{"g-0": "c-free", "g-1": "d-free"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			for _, n := range tc.nodes {
				c.add(t, n)
			}
			for _, p := range tc.pods {
				c.add(t, p)
			}
			s := newSched(t, c, "fcfs/bestfit")
			round(t, s)
			for pod, want := range tc.want {
				if got := c.pod(t, "team-a", pod).Spec.NodeName; got != want {
					t.Errorf("%s on %q, want %q (binds %v)", pod, got, want, c.binds)
				}
			}
		})
	}
}

// A placement that splits a gang's pods across nodes (2 + 2 + 4 GPUs for
// two 4-GPU pods) is repacked onto the placement's own nodes, each pod
// whole, and applied; without repacking it would be refused.
func TestSplitGangPlacementRepacked(t *testing.T) {
	const h100 = "NVIDIA-H100-80GB-HBM3"
	c := newCluster(gpuNode("n0", h100, 4), gpuNode("n1", h100, 4), gpuNode("n2", h100, 8),
		gpuPod("g-0", 4, 0, gang("g", 2)), gpuPod("g-1", 4, 0, gang("g", 2)))
	s := newSched(t, c, "fcfs/bestfit")
	nodes, err := s.src.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	pods, err := s.src.Pods()
	if err != nil {
		t.Fatal(err)
	}
	s.sync(t.Context(), nodes, pods)
	if s.needsBuild {
		if err := s.rebuild(); err != nil {
			t.Fatal(err)
		}
	}
	idx := map[string]int{}
	for i, n := range s.nodes {
		idx[n.name] = i
	}
	j := s.byKey["team-a/g"]
	if j == nil || j.state != queued {
		t.Fatalf("gang not queued: %+v", j)
	}
	split := hwmodel.Placement{
		{Node: idx["n0"], GPUs: 0b11, Milli: hwmodel.MilliPerGPU, CPUMilli: 500, MemoryMiB: 512},
		{Node: idx["n1"], GPUs: 0b11, Milli: hwmodel.MilliPerGPU, CPUMilli: 500, MemoryMiB: 512},
		{Node: idx["n2"], GPUs: 0b1111, Milli: hwmodel.MilliPerGPU, CPUMilli: 1000, MemoryMiB: 1024},
	}
	if why := s.host.CheckPlacement(j.id, split); why != "" {
		t.Fatalf("the split placement is not a valid policy placement: %s", why)
	}
	if why := s.apply(policies.Decision{Kind: policies.Start, Job: j.id, Placement: split}); why != "" {
		t.Fatalf("refused: %s", why)
	}
	if j.assign["g-0"] != "n0" || j.assign["g-1"] != "n1" {
		t.Errorf("assigned %v, want g-0 on n0 and g-1 on n1 (the placement's own nodes, each whole)", j.assign)
	}
	if got := j.place.GPUCount(); got != 8 {
		t.Errorf("repacked placement holds %d GPUs, want 8", got)
	}
}
