package workload

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WaitEnded waits until every pod of jobs has succeeded or failed and the
// scheduler has booked its end (brigade.sim/released-at, which its
// export reads), polling every poll; a pod deleted counts as ended. It
// returns ctx's error, with how many pods were left, if ctx ends first.
func WaitEnded(ctx context.Context, cs kubernetes.Interface, jobs []Job, poll time.Duration) error {
	want := map[string]map[string]bool{} // namespace → pod names
	for _, j := range jobs {
		for _, p := range j.Pods {
			if want[p.Namespace] == nil {
				want[p.Namespace] = map[string]bool{}
			}
			want[p.Namespace][p.Name] = true
		}
	}
	namespaces := make([]string, 0, len(want))
	for ns := range want {
		namespaces = append(namespaces, ns)
	}
	slices.Sort(namespaces)
	for {
		left, err := 0, error(nil)
		for _, ns := range namespaces {
			// From the API server's watch cache: quorum reads of every
			// pod at each poll would load it more than the pods do.
			l, lerr := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if lerr != nil {
				err = lerr
				left = -1
				break
			}
			for i := range l.Items {
				p := &l.Items[i]
				if want[ns][p.Name] && !ended(p) {
					left++
				}
			}
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if left < 0 {
				return fmt.Errorf("waiting for the pods to end: %w (last list: %v)", ctx.Err(), err)
			}
			return fmt.Errorf("waiting for the pods to end: %d not ended: %w", left, ctx.Err())
		case <-time.After(poll):
		}
	}
}

func ended(p *corev1.Pod) bool {
	return (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) &&
		p.Annotations[scheduler.AnnoReleasedAt] != ""
}
