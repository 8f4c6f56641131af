package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	"github.com/brigadesim/brigade/workloads"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// keepJobs builds a 10 s job alone and a gang of two node-sized pods.
func keepJobs(t *testing.T) []Job {
	t.Helper()
	w, err := workloads.ReadBrigade(strings.NewReader("name,submit_s,duration_s,gpus,tenant\na,0,10,8,alice\ng,0,10,16,bob\n"), "keep.csv")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := Build(w, Options{Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// update applies f to pod ns/name.
func update(t *testing.T, cs *fake.Clientset, name string, f func(*corev1.Pod)) {
	t.Helper()
	p, err := cs.CoreV1().Pods("ns").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f(p)
	if _, err := cs.CoreV1().Pods("ns").Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func finishPod(p *corev1.Pod) {
	p.Status.Phase = corev1.PodSucceeded
	p.Annotations[scheduler.AnnoReleasedAt] = time.Now().UTC().Format(time.RFC3339Nano)
}

// Keep, as the jobs' controller: an evicted pod comes back under a new
// name with the labels that make it the same job (and, resuming, only
// what it had left to run), a pod deleted after it ended does not, and
// Keep returns once every pod, the new ones included, has ended.
func TestKeep(t *testing.T) {
	for _, mode := range []Evicted{Restart, Resume, Leave} {
		t.Run([]string{"leave", "restart", "resume"}[mode], func(t *testing.T) {
			jobs := keepJobs(t)
			cs := fake.NewClientset()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			type result struct {
				n   int
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := Keep(ctx, cs, jobs, KeepOptions{Evicted: mode, Poll: 5 * time.Millisecond})
				done <- result{n, err}
			}()
			time.Sleep(50 * time.Millisecond) // the informers start
			for _, j := range jobs {
				for _, p := range j.Pods {
					if _, err := cs.CoreV1().Pods("ns").Create(ctx, p.DeepCopy(), metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			// a ran 4 s, then was evicted; g-0 had ended when deleted.
			update(t, cs, "a", func(p *corev1.Pod) {
				p.Spec.NodeName = "n0"
				p.Annotations[scheduler.AnnoBoundAt] = time.Now().Add(-4 * time.Second).UTC().Format(time.RFC3339Nano)
			})
			update(t, cs, "g-0", finishPod)
			time.Sleep(50 * time.Millisecond)
			for _, name := range []string{"a", "g-0"} {
				if err := cs.CoreV1().Pods("ns").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if mode != Leave {
				var again *corev1.Pod
				waitFor(t, "a-r1", func() bool {
					p, err := cs.CoreV1().Pods("ns").Get(ctx, "a-r1", metav1.GetOptions{})
					again = p
					return err == nil
				})
				if again.Labels[scheduler.LabelJob] != "a" || again.Spec.NodeName != "" || again.Annotations[scheduler.AnnoBoundAt] != "" {
					t.Errorf("a-r1: labels %v, node %q, annotations %v: want job a's labels, unbound, as built", again.Labels, again.Spec.NodeName, again.Annotations)
				}
				left, err := time.ParseDuration(again.Annotations[scheduler.AnnoDuration])
				switch {
				case err != nil:
					t.Fatal(err)
				case mode == Restart && left != 10*time.Second:
					t.Errorf("restarted with %v to run, want its whole 10 s", left)
				case mode == Resume && (left > 6*time.Second || left < 5*time.Second):
					t.Errorf("resumed with %v to run, want 10 s less the 4 s it ran", left)
				}
				update(t, cs, "a-r1", finishPod)
			}
			if _, err := cs.CoreV1().Pods("ns").Get(ctx, "g-0-r1", metav1.GetOptions{}); err == nil {
				t.Error("g-0, deleted after it ended, was created again")
			}
			update(t, cs, "g-1", finishPod)
			r := <-done
			want := map[Evicted]int{Leave: 0, Restart: 1, Resume: 1}[mode]
			if r.err != nil || r.n != want {
				t.Errorf("Keep: %d recreated, %v; want %d, nil", r.n, r.err, want)
			}
		})
	}
}

func TestParseEvicted(t *testing.T) {
	for s, want := range map[string]Evicted{"leave": Leave, "restart": Restart, "resume": Resume} {
		if got, err := ParseEvicted(s); err != nil || got != want {
			t.Errorf("%s: %v, %v", s, got, err)
		}
	}
	if _, err := ParseEvicted("retry"); err == nil || !strings.Contains(err.Error(), "leave, restart or resume") {
		t.Errorf("retry: %v", err)
	}
}
