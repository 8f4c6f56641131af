//go:build linux

package crashtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Two replicas' timings: short leases, so that the takeover fits a test.
const (
	replicaLease = 2 * time.Second
	// leaderKillAt: the leader kills itself between two Bindings of a
	// gang, this many times in (a few gangs into the run).
	leaderKillAt = 12
	leaderWait   = 20 * time.Second
)

// holding is one holder of the Lease, as the test saw it.
type holding struct {
	holder   string
	acquired time.Time // the Lease's acquireTime
	seen     time.Time
}

// leaseWatch polls the replicas' Lease and records each new holder.
type leaseWatch struct {
	mu       sync.Mutex
	holdings []holding
}

func watchLease(t *testing.T, cs kubernetes.Interface) *leaseWatch {
	lw := &leaseWatch{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			l, err := cs.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
			if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
				h := holding{holder: *l.Spec.HolderIdentity, seen: time.Now()}
				if l.Spec.AcquireTime != nil {
					h.acquired = l.Spec.AcquireTime.Time
				}
				lw.mu.Lock()
				if n := len(lw.holdings); n == 0 || lw.holdings[n-1].holder != h.holder {
					lw.holdings = append(lw.holdings, h)
				}
				lw.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return lw
}

// waitHolder waits until name holds the Lease and returns its holding.
func (lw *leaseWatch) waitHolder(name string, d time.Duration) (holding, bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		lw.mu.Lock()
		for _, h := range lw.holdings {
			if h.holder == name {
				lw.mu.Unlock()
				return h, true
			}
		}
		lw.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	return holding{}, false
}

func (lw *leaseWatch) holders() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	var out []string
	for _, h := range lw.holdings {
		out = append(out, h.holder)
	}
	return out
}

// Two schedulers with leader election on 2 s leases: only the Lease's
// holder binds; the leader is killed (SIGKILL, by itself between two
// Bindings of a gang), the other takes the Lease within about a lease
// and finishes every pod, completing that gang first; no pod is bound
// twice, no gang in part (doc.go's checks).
func TestTwoReplicas(t *testing.T) {
	t0 := time.Now()
	c := startCluster(t, campaignNode)
	cs := c.cp.Clientset
	o := watchPods(t, cs)
	lw := watchLease(t, cs)
	w := newWorkload(uint64(envInt(t, seedEnv, 1)))

	a := startLife(t, c.dir, c.cp.Kubeconfig, "replica-a", fmt.Sprintf("%s:%d", crashpoint.GangBetweenBinds, leaderKillAt), replicaLease)
	if _, ok := lw.waitHolder("replica-a", leaderWait); !ok {
		a.kill("stopped")
		t.Fatalf("replica-a did not take the Lease in %s:\n%s", leaderWait, a.tail(20))
	}
	b := startLife(t, c.dir, c.cp.Kubeconfig, "replica-b", "", replicaLease)
	created := 0
	for range 2 {
		pods := w.batch(24, 5)
		createPods(t, cs, pods)
		created += len(pods)
	}
	select {
	case <-a.done:
		a.killedBy = "itself, between a gang's Bindings"
	case <-time.After(leaderWait):
		a.kill("the test, its crash point not reached in " + leaderWait.String())
	}
	killed := a.end
	pods := w.batch(24, 5)
	createPods(t, cs, pods)
	created += len(pods)
	hb, took := lw.waitHolder("replica-b", 5*replicaLease)
	if !took {
		t.Errorf("replica-b did not take the Lease within %s of the leader's death:\n%s", 5*replicaLease, b.tail(20))
	}
	finished := o.waitAll(created, 3*time.Minute)
	select {
	case <-b.done:
		t.Errorf("replica-b ended before the test stopped it (%s):\n%s", b.cmd.ProcessState, b.tail(20))
	default:
	}
	b.stop()
	binds, accepted, unanswered, refused := endChecks(t, c, o, created, finished, "replica-b", b.tail)
	if got := strings.Join(lw.holders(), ","); got != "replica-a,replica-b" {
		t.Errorf("Lease holders %s, want replica-a,replica-b", got)
	}
	byA, byB := 0, 0
	var firstB time.Time
	for _, bd := range binds {
		switch bd.agent {
		case "replica-a":
			byA++
			if bd.received.After(killed) {
				t.Errorf("replica-a's Binding of %s received at %s, after its death at %s", bd.pod, bd.received.Format(stamp), killed.Format(stamp))
			}
		case "replica-b":
			byB++
			if firstB.IsZero() {
				firstB = bd.received
			}
			if !bd.received.After(hb.acquired) {
				t.Errorf("replica-b sent a Binding of %s at %s, before it took the Lease at %s", bd.pod, bd.received.Format(stamp), hb.acquired.Format(stamp))
			}
		}
	}
	if t.Failed() {
		t.Logf("end of replica-a:\n%s\nend of replica-b:\n%s", a.tail(15), b.tail(15))
	}
	t.Logf("two replicas, %d s leases (renew deadline %s, retry %s): replica-a led from %s, killed by %s after %s; replica-b took the Lease %s after the kill (seen %s after), first Binding %s after",
		int(replicaLease.Seconds()), replicaLease*3/4, replicaLease/8, a.start.Format(stamp), a.killedBy, killed.Sub(a.start).Round(time.Millisecond),
		hb.acquired.Sub(killed).Round(time.Millisecond), hb.seen.Sub(killed).Round(time.Millisecond), firstB.Sub(killed).Round(time.Millisecond))
	t.Logf("pods %d (%d in %d gangs); Bindings %d: replica-a %d, replica-b %d (%d accepted, %d taken unanswered by a killed sender, %d refused); peak GPUs on a node %d of %d; wall time %s",
		created, len(w.gangOf), w.gangs, len(binds), byA, byB, accepted, unanswered, refused, o.peak, nodeGPUs, time.Since(t0).Round(100*time.Millisecond))
}

const stamp = "15:04:05.000"
