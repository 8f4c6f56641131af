package scheduler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A restarted scheduler preempts the jobs it adopted as it would its
// own: the policy's first call after a restart books them under their
// GPU model (before, it booked them under none, and a preemptive policy
// found no victim among them).
func TestRestartPreemptsAdoptedJobs(t *testing.T) {
	prio := func(v int32) podOpt { return func(p *corev1.Pod) { p.Spec.Priority = &v } }
	for _, tc := range []struct {
		name string
		low  []podOpt
		want []string
	}{
		{"pods", []podOpt{prio(0)}, []string{"low-1 grace=nil"}},
		{"gang", []podOpt{prio(0), gang("low", 2)}, []string{"low-0 grace=nil", "low-1 grace=nil"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8),
				gpuPod("low-0", 8, 0, tc.low...), gpuPod("low-1", 8, 1e9, tc.low...))
			round(t, newSched(t, c, "priority+preempt"))
			if len(c.binds) != 2 {
				t.Fatalf("binds %v", c.binds)
			}
			c.add(t, gpuPod("urgent", 8, 5e9, prio(1000)))
			s := newSched(t, c, "priority+preempt")
			round(t, s)
			if !slices.Equal(c.evicts, tc.want) {
				t.Errorf("evictions %v, want %v", c.evicts, tc.want)
			}
		})
	}
}
