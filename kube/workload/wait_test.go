package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// WaitEnded returns once every pod of the jobs has ended and its end is
// booked, not before: a pod Succeeded without released-at still counts as
// running, and pods of other jobs in the namespace do not count.
func TestWaitEnded(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, released bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Annotations: map[string]string{}},
			Status: corev1.PodStatus{Phase: phase}}
		if released {
			p.Annotations[scheduler.AnnoReleasedAt] = "2026-12-03T10:00:00Z"
		}
		return p
	}
	jobs := []Job{{Name: "a", Pods: []*corev1.Pod{pod("a-0", "", false), pod("a-1", "", false)}}}
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		done bool
	}{
		{"all ended and booked", []*corev1.Pod{pod("a-0", corev1.PodSucceeded, true), pod("a-1", corev1.PodFailed, true),
			pod("other", corev1.PodRunning, false)}, true},
		{"ended, end not booked", []*corev1.Pod{pod("a-0", corev1.PodSucceeded, true), pod("a-1", corev1.PodSucceeded, false)}, false},
		{"one running", []*corev1.Pod{pod("a-0", corev1.PodSucceeded, true), pod("a-1", corev1.PodRunning, false)}, false},
		{"one deleted", []*corev1.Pod{pod("a-0", corev1.PodSucceeded, true)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, p := range tc.pods {
				if _, err := cs.CoreV1().Pods("ns").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			err := WaitEnded(ctx, cs, jobs, 10*time.Millisecond)
			if tc.done != (err == nil) {
				t.Fatalf("err %v, want done=%v", err, tc.done)
			}
			if err != nil && !strings.Contains(err.Error(), "1 not ended") {
				t.Errorf("err %v, want it to count the pod not ended", err)
			}
		})
	}
}
