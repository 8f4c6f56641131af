//go:build linux

package crashtest

import (
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A scheduler killed between the Evictions of a preempted gang's pods:
// the next life evicts the rest, so that no gang runs on in part, and
// the pod that preempted it runs.
func TestKilledWhileEvictingGang(t *testing.T) {
	c := startCluster(t, 2)
	cs := c.cp.Clientset
	o := watchPods(t, cs)
	if _, err := cs.SchedulingV1().PriorityClasses().Create(t.Context(), &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	preempting := envPolicy + "=priority+preempt"
	gang := map[string]string{scheduler.LabelGang: "low", scheduler.LabelGangSize: "2"}
	createPods(t, cs, []*corev1.Pod{gpuPod("low-0", nodeGPUs, time.Hour, gang), gpuPod("low-1", nodeGPUs, time.Hour, gang)})
	l1 := startLife(t, c.dir, c.cp.Kubeconfig, "life-000", "", 0, preempting)
	waitFor(t, "the gang bound", func() bool { _, bound, _ := o.progress(); return bound == 2 })
	l1.kill("the test, once the gang was bound")

	urgent := gpuPod("urgent", nodeGPUs, 2*time.Second, nil)
	urgent.Spec.PriorityClassName = "urgent"
	createPods(t, cs, []*corev1.Pod{urgent})
	l2 := startLife(t, c.dir, c.cp.Kubeconfig, "life-001", crashpoint.Evicting+":1", 0, preempting)
	select {
	case <-l2.done:
	case <-time.After(20 * time.Second):
		l2.kill("the test")
		t.Fatalf("life-001 did not evict the gang in 20 s:\n%s", l2.tail(20))
	}
	if !l2.diedAtPoint() {
		t.Fatalf("life-001 ended without reaching its crash point:\n%s", l2.tail(20))
	}
	l3 := startLife(t, c.dir, c.cp.Kubeconfig, "life-002", "", 0, preempting)
	defer l3.stop()
	gone := func(name string) bool {
		_, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	waitFor(t, "both members of the preempted gang gone and urgent succeeded", func() bool {
		o.mu.Lock()
		done := o.pods["urgent"] != nil && o.pods["urgent"].phase == corev1.PodSucceeded
		o.mu.Unlock()
		return done && gone("low-0") && gone("low-1")
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range o.violations {
		t.Error(v)
	}
}

// waitFor polls cond for up to 30 s and fails the test, naming what,
// if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("30 s without %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
