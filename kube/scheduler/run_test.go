package scheduler

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Run over informers, as the leader of its Lease: a pod created while it
// runs is bound, and the Lease names this replica.
func TestRunWithInformersAndLease(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 2), gpuPod("early", 1, 0))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Policy: "fcfs"}, c.cs, nil, RunOptions{Tick: 50 * time.Millisecond, LeaderElect: true,
			LeaseNamespace: "kube-system", LeaseName: "brigade-kube", Identity: "replica-1"})
	}()
	bound := func(name string) bool {
		p, err := c.cs.CoreV1().Pods("team-a").Get(t.Context(), name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == "n0"
	}
	deadline := time.Now().Add(10 * time.Second)
	for !bound("early") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.cs.CoreV1().Pods("team-a").Create(t.Context(), gpuPod("late", 1, time.Second), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for !bound("late") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !bound("early") || !bound("late") {
		t.Errorf("binds %v", c.binds)
	}
	l, err := c.cs.CoordinationV1().Leases("kube-system").Get(t.Context(), "brigade-kube", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "replica-1" {
		t.Errorf("lease %+v, %v", l, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
