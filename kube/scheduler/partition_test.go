package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"
)

func label(k, v string) nodeOpt { return func(n *corev1.Node) { n.Labels[k] = v } }

// A scheduler with a node selector sees only its partition: a pod goes
// to the partition's node even where firstfit would pick another, a pod
// that only the other partition could hold is unschedulable, and the
// export's cluster holds the partition's nodes alone.
func TestNodeSelectorPartition(t *testing.T) {
	c := newCluster(
		gpuNode("a-big", "NVIDIA-H100-80GB-HBM3", 8, label("part", "a")),
		gpuNode("b-small", "NVIDIA-H100-80GB-HBM3", 2, label("part", "b")),
		gpuNode("c-none", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("fits", 2, 0), gpuPod("too-big", 4, time.Second))
	s, err := New(Config{Policy: "fcfs/firstfit", NodeSelector: map[string]string{"part": "b"}, Now: func() time.Time { return t0.Add(time.Minute) }},
		c.cs, nil, APISource{Client: c.cs, Ctx: t.Context()})
	if err != nil {
		t.Fatal(err)
	}
	round(t, s)
	if strings.Join(c.binds, " ") != "fits->b-small" {
		t.Errorf("binds %v, want fits->b-small only", c.binds)
	}
	if p := c.pod(t, "team-a", "too-big"); p.Spec.NodeName != "" || len(p.Status.Conditions) == 0 || p.Status.Conditions[0].Reason != corev1.PodReasonUnschedulable {
		t.Errorf("too-big: node %q conditions %+v, want unschedulable on partition b", p.Spec.NodeName, p.Status.Conditions)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Export(t.Context(), APISource{Client: c.cs, Ctx: t.Context()},
		ExportOptions{Policy: "fcfs/firstfit", NodeSelector: map[string]string{"part": "b"}, Now: t0.Add(time.Minute)}, dir); err != nil {
		t.Fatal(err)
	}
	spec, _ := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	if !strings.Contains(string(spec), "name: b-small") || strings.Contains(string(spec), "a-big") || strings.Contains(string(spec), "c-none") {
		t.Errorf("cluster.yaml holds other partitions' nodes:\n%s", spec)
	}
}

func TestSelects(t *testing.T) {
	n := gpuNode("n", "", 0, label("part", "a"), label("zone", "z1"))
	for _, tc := range []struct {
		sel  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"part": "a"}, true},
		{map[string]string{"part": "a", "zone": "z1"}, true},
		{map[string]string{"part": "b"}, false},
		{map[string]string{"part": "a", "rack": "r1"}, false},
		{map[string]string{"part": ""}, false},
	} {
		if got := selects(tc.sel, n); got != tc.want {
			t.Errorf("selects(%v) = %v, want %v", tc.sel, got, tc.want)
		}
	}
}

// A heartbeat (a condition's times) is no change to the books; labels,
// taints, cordoning and allocatable are.
func TestNodeChanged(t *testing.T) {
	base := gpuNode("n", "NVIDIA-H100-80GB-HBM3", 8)
	base.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(t0)}}
	for _, tc := range []struct {
		name string
		edit func(*corev1.Node)
		want bool
	}{
		{"heartbeat", func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(t0.Add(time.Minute)) }, false},
		{"label", func(n *corev1.Node) { n.Labels["part"] = "b" }, true},
		{"cordon", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
		{"taint", taint("gpu", "x", corev1.TaintEffectNoSchedule), true},
		{"allocatable", alloc(string(ResourceGPU), "4"), true},
	} {
		cur := base.DeepCopy()
		tc.edit(cur)
		if got := nodeChanged(base, cur); got != tc.want {
			t.Errorf("%s: nodeChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// bindingAnnotations are the annotations of the Bindings the fake saw,
// by pod.
func bindingAnnotations(c *cluster) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, a := range c.cs.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
			b := ca.GetObject().(*corev1.Binding)
			out[b.Name] = b.Annotations
		}
	}
	return out
}
