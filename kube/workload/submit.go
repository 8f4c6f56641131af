package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createConcurrency is how many pods of jobs due together Submit creates
// at once: a burst of jobs submitted at one instant should reach the API
// server within a few milliseconds of each other, not one after another.
const createConcurrency = 16

// Submit creates the namespace (when missing), a PriorityClass for each
// priority the pods name (when missing), then each job's pods At after
// Submit starts, jobs due at the same instant together, each pod
// annotated with that instant (brigade.sim/submitted-at, which the
// scheduler and its export read as the submit time). It returns when
// every pod is created or at the first error.
func Submit(ctx context.Context, cs kubernetes.Interface, jobs []Job) error {
	if err := prepare(ctx, cs, jobs); err != nil {
		return err
	}
	start := time.Now()
	for i := 0; i < len(jobs); {
		k := i
		for k < len(jobs) && jobs[k].At == jobs[i].At {
			k++
		}
		if wait := time.Until(start.Add(jobs[i].At)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		// Every pod of the burst says the instant it was due: the API
		// keeps creation times in whole seconds, and creating the burst
		// takes time.
		due := start.Add(jobs[i].At).UTC().Format(time.RFC3339Nano)
		var pods []*corev1.Pod
		for _, j := range jobs[i:k] {
			for _, p := range j.Pods {
				p = p.DeepCopy()
				p.Annotations[scheduler.AnnoSubmittedAt] = due
				pods = append(pods, p)
			}
		}
		if err := createAll(ctx, cs, pods); err != nil {
			return err
		}
		i = k
	}
	return nil
}

// prepare creates what the pods need to exist before them.
func prepare(ctx context.Context, cs kubernetes.Interface, jobs []Job) error {
	namespaces := map[string]bool{}
	classes := map[string]int32{}
	for _, j := range jobs {
		for _, p := range j.Pods {
			namespaces[p.Namespace] = true
		}
		classes[PriorityClassName(j.Priority)] = int32(j.Priority)
	}
	for ns := range namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for name, v := range classes {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v,
			Description: "Brigade trace priority " + fmt.Sprint(v)}
		_, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, gerr := cs.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
			if gerr == nil && got.Value != v {
				return fmt.Errorf("PriorityClass %s exists with value %d; the pods need %d", name, got.Value, v)
			}
			err = gerr
		}
		if err != nil {
			return fmt.Errorf("PriorityClass %s: %w", name, err)
		}
	}
	return nil
}

// createAll creates pods, createConcurrency at a time.
func createAll(ctx context.Context, cs kubernetes.Interface, pods []*corev1.Pod) error {
	work := make(chan *corev1.Pod)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range min(createConcurrency, len(pods)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range pods {
		work <- p
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}
