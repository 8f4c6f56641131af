package scheduler

import (
	"testing"

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
