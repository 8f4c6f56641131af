package scheduler

import (
	"context"
	"slices"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// preempt carries out the policy's Preempt of running job j in the books
// at once, as the simulator does: the policy hears it stop now, at the
// call's instant, so that its next decisions (and the call that follows
// a preempting one in the same round) see the GPUs free; a start placed
// on them is bound only once j's pods have left those nodes
// (deferBlocked). A job whose key outlives its pods (job.stable) is
// queued again at once, the same policy job, and its attempt is recorded
// for the Bindings of its next one (AnnoAttempts); it can start again
// once a controller has created its pods again. A start not bound yet
// (deferred) ran in the books, and would in a replay: its attempt is
// recorded too, and its pods, still pending, are queued again as they
// are. The caller has the pods evicted (evictAll).
func (s *Scheduler) preempt(j *job) {
	if j.place != nil {
		s.host.Stop(j.id, j.place)
		j.place = nil
	}
	if j.stable && len(j.preempted) < maxPreemptedKept {
		j.preempted = append(j.preempted, attemptSpan{Start: j.boundAt, End: s.roundNow})
	}
	requeue := j.stable
	if j.deferred {
		j.assign, j.deferred, j.state, requeue = nil, false, queued, true
	} else {
		j.state = evicting
	}
	if requeue {
		s.host.Job(j.id).Queued = s.at(s.roundNow)
		s.host.Queue(j.id)
	}
}

// maxPreemptedKept bounds the attempts a job's Bindings carry, so that
// AnnoAttempts stays far below the API's 256 KiB of annotations; a job
// preempted more often is exported with its first ones only.
const maxPreemptedKept = 1000

// evictable reports whether member m's pod is there and not yet being
// deleted: a preempted job's pods are all evicted, those that ran to
// their end since the books stopped them too, for the books (and a
// replay) had them preempted, not ended, and no end of theirs is booked:
// their controller creates them again, as it does the others.
func evictable(m *member) bool { return m.pod != nil && m.pod.DeletionTimestamp == nil }

// evictionDone moves a preempted job whose pods are all gone on: a job
// whose key outlives them waits for its controller's new pods (evicted,
// queued in the policy since the preemption); a pod alone is done.
func (s *Scheduler) evictionDone(j *job) {
	switch {
	case j.stable:
		j.size = max(j.size, len(j.members), 1)
		j.members, j.assign, j.state = nil, nil, evicted
	default:
		s.drop(j)
	}
}

// deferBlocked splits starts into those to bind now and those whose
// nodes still hold pods being evicted, which wait (job.deferred, rebound
// by readyDeferred): a Binding onto GPUs a terminating pod still holds
// would be refused by the node, or run two jobs on one GPU.
func (s *Scheduler) deferBlocked(starts []*job) []*job {
	if len(starts) == 0 {
		return starts
	}
	blocked := map[string]bool{}
	for _, j := range s.jobs {
		if j.state != evicting {
			continue
		}
		for _, m := range j.members {
			if !m.ended && m.node != "" {
				blocked[m.node] = true
			}
		}
	}
	now := starts[:0]
	for _, j := range starts {
		wait := false
		for _, node := range j.assign {
			wait = wait || blocked[node]
		}
		switch {
		case wait && !j.deferred:
			j.deferred = true
			s.deferred = append(s.deferred, j)
		case !wait:
			j.deferred = false
			now = append(now, j)
		}
	}
	return now
}

// readyDeferred takes the deferred starts still running in the books out
// of the waiting list, for deferBlocked to bind those now free.
func (s *Scheduler) readyDeferred() []*job {
	var out []*job
	for _, j := range s.deferred {
		if j.deferred && j.state == running {
			out = append(out, j)
		}
		j.deferred = false
	}
	s.deferred = s.deferred[:0]
	return out
}

// evictWorkers is how many Evictions are in flight at once: the API
// server takes about 100 ms over each, so a gang's members, or a round's
// victims, evicted one after another would keep the GPUs the policy
// freed from the jobs it freed them for for as long.
const evictWorkers = 16

// evictAll sends the Evictions of the jobs preempt has taken out of the
// books: a gang's eviction is committed first (its members' marks,
// markEvicting), then every live pod of every job gets its Eviction,
// evictWorkers at a time. A refused or failed Eviction (a disruption
// budget, an API error) is sent again at the next round
// (finishEvictions): the policy has already given the GPUs away, and
// what it started on them binds only once the pods are gone.
func (s *Scheduler) evictAll(ctx context.Context, jobs []*job) {
	type send struct {
		j   *job
		m   *member
		err error
	}
	committed := make([]bool, len(jobs))
	parallel(evictWorkers, len(jobs), func(i int) { committed[i] = !jobs[i].gang || s.markEvicting(ctx, jobs[i]) })
	var sends []*send
	for i, j := range jobs {
		if !committed[i] {
			continue // marked again at the next round
		}
		for _, m := range j.members {
			if evictable(m) {
				sends = append(sends, &send{j: j, m: m})
			}
		}
	}
	parallel(evictWorkers, len(sends), func(i int) { sends[i].err = s.evictPod(ctx, sends[i].j, sends[i].m) })
	for _, x := range sends {
		switch {
		case x.err == nil:
			s.cfg.Metrics.evicted()
		case apierrors.IsNotFound(x.err):
		default:
			s.logf("%s: evicting pod %s (sent again next round): %v", x.j.key, x.m.name, x.err)
		}
	}
}

// evictPod sends member m of job j its policy/v1 Eviction, with the
// pod's own terminationGracePeriodSeconds, for the pod of m's UID only
// (evictAll: a job ends when its pods have; a gang's eviction is first
// committed by the mark brigade.sim/evicting on every member, and from
// then on its members are evicted until none is left, by this scheduler
// or the next, so that no gang runs on in part).
func (s *Scheduler) evictPod(ctx context.Context, j *job, m *member) error {
	uid := m.uid
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: j.ns},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: m.pod.Spec.TerminationGracePeriodSeconds,
			Preconditions: &metav1.Preconditions{UID: &uid}}}
	err := s.client.PolicyV1().Evictions(j.ns).Evict(ctx, ev)
	crashpoint.At(crashpoint.Evicting)
	return err
}

// markEvicting commits a gang's eviction: the mark on every live
// member. A write that fails takes back the marks this call wrote,
// unless the eviction was committed already; false: not committed.
func (s *Scheduler) markEvicting(ctx context.Context, j *job) bool {
	before := evictionCommitted(j)
	var wrote []*member
	for _, m := range j.members {
		if m.ended || m.pod == nil || m.pod.Annotations[AnnoEvicting] != "" {
			continue
		}
		// A merge patch, not an Update: the mark is the same whoever
		// wrote the pod last (its node's status updates race with it).
		got, err := s.patchEvicting(ctx, j.ns, m, `"true"`)
		if err != nil {
			s.logf("%s: marking pod %s for eviction: %v", j.key, m.name, err)
			if before {
				return true
			}
			for _, w := range wrote {
				if got, err := s.patchEvicting(ctx, j.ns, w, "null"); err == nil {
					w.pod = got
				}
			}
			return false
		}
		m.pod = got
		wrote = append(wrote, m)
	}
	return true
}

// patchEvicting sets member m's eviction mark to value (JSON: "true",
// or null to remove it), on the pod of m's UID only.
func (s *Scheduler) patchEvicting(ctx context.Context, ns string, m *member, value string) (*corev1.Pod, error) {
	patch := `{"metadata":{"uid":"` + string(m.uid) + `","annotations":{"` + AnnoEvicting + `":` + value + `}}}`
	return s.client.CoreV1().Pods(ns).Patch(ctx, m.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
}

// evictionCommitted reports whether a live member of the gang carries
// the eviction mark (a scheduler that stopped while marking had decided
// the eviction all the same).
func evictionCommitted(j *job) bool {
	for _, m := range j.members {
		if !m.ended && m.pod != nil && m.pod.Annotations[AnnoEvicting] != "" {
			return true
		}
	}
	return false
}

// finishEvictions evicts what is left of every preempted job whose pods
// did not all get their Eviction, and of every running gang whose
// eviction was committed by a scheduler that stopped before it was done
// (preempted in the books now, as that scheduler's policy had decided).
func (s *Scheduler) finishEvictions(ctx context.Context) {
	var rest []*job
	for _, j := range s.jobs {
		switch {
		case j.state == running && j.gang && evictionCommitted(j):
			s.preempt(j)
		case j.state != evicting:
			continue
		}
		if slices.ContainsFunc(j.members, evictable) {
			rest = append(rest, j)
		}
	}
	s.evictAll(ctx, rest)
}
