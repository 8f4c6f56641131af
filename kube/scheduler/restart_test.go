package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// A scheduler stopped while the Evictions of a preempted gang were in
// flight, with one of them not through (here: refused, and the
// scheduler stopped at its crash point): the next one evicts the rest
// (the gang's eviction was committed by the mark on its members), rather
// than leaving half a gang running.
func TestRestartFinishesGangEviction(t *testing.T) {
	prio := func(v int32) podOpt { return func(p *corev1.Pod) { p.Spec.Priority = &v } }
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("low-0", 8, 0, prio(0), gang("low", 2)), gpuPod("low-1", 8, 0, prio(0), gang("low", 2)))
	round(t, newSched(t, c, "priority+preempt"))
	c.add(t, gpuPod("urgent", 8, 5e9, prio(1000)))
	c.evictFail = func(pod string) error {
		if pod == "low-1" {
			return apierrors.NewInternalError(fmt.Errorf("stopped"))
		}
		return nil
	}
	crashpoint.Hook = func(p string) {
		if p == crashpoint.Evicting {
			panic("crash")
		}
	}
	func() {
		defer func() { _ = recover() }()
		round(t, newSched(t, c, "priority+preempt"))
	}()
	crashpoint.Hook, c.evictFail = nil, nil
	if len(c.evicts) != 1 || c.pod(t, "team-a", "low-1").Annotations[AnnoEvicting] == "" {
		t.Fatalf("before the restart: evictions %v; low-1 must still be there, marked", c.evicts)
	}
	s := newSched(t, c, "priority+preempt")
	round(t, s)
	round(t, s)
	if !slices.Equal(c.evicts, []string{"low-0 grace=nil", "low-1 grace=nil"}) {
		t.Errorf("evictions %v, want both members", c.evicts)
	}
	if !slices.Contains(c.binds, "urgent->n0") && !slices.Contains(c.binds, "urgent->n1") {
		t.Errorf("binds %v: urgent not bound", c.binds)
	}
}

// A gang member whose Binding fails (the API server timed out and the
// pod is still unbound) is bound at a later round to the node its
// committed placement names, not left unbound until a restart.
func TestGangBindFailureCompletedNextRound(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("g-0", 8, 0, gang("train", 2)), gpuPod("g-1", 8, 0, gang("train", 2)))
	c.bindFail = func(pod string) error {
		if pod == "g-1" {
			c.bindFail = nil
			return errTimeout
		}
		return nil
	}
	s := newSched(t, c, "fcfs")
	round(t, s)
	if len(c.binds) != 1 {
		t.Fatalf("binds %v after the failed Binding, want g-0's only", c.binds)
	}
	want := c.pod(t, "team-a", "g-0").Annotations[AnnoPlacement]
	round(t, s)
	if len(c.binds) != 2 || !strings.Contains(want, `"g-1":"`+c.pod(t, "team-a", "g-1").Spec.NodeName+`"`) {
		t.Errorf("binds %v; the committed placement is %s", c.binds, want)
	}
	if a := s.cluster.AllocatedMilli(); a != 16000 {
		t.Errorf("books hold %d milli-GPU, want 16000", a)
	}
}
