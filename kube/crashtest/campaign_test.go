//go:build linux

package crashtest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/internal/crashpoint"
)

// Campaign sizes; the environment may make it longer (or another seed).
const (
	livesEnv     = "BRIGADE_KUBE_CRASHTEST_LIVES"
	seedEnv      = "BRIGADE_KUBE_CRASHTEST_SEED"
	defaultLives = 60
	campaignNode = 100
	livesByBatch = 3 // a batch of pods every this many lives
	pointWait    = 2 * time.Second
)

// killPoints are where a life is told to kill itself. crashpoint.Evicting
// is not among them: the campaign's policy never preempts, so no life
// would reach it.
var killPoints = []string{crashpoint.GangAnnotatedPartly, crashpoint.GangCommitted, crashpoint.GangBetweenBinds,
	crashpoint.BoundUnbooked, crashpoint.Rebuilding}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// The kill -9 campaign: the scheduler, a process of its own, is killed
// with SIGKILL again and again, at random moments and at each crash
// point, and restarted on the same control plane while pods and gangs
// arrive in batches; a last life runs everything to its end. Then no
// pod may have been bound twice or moved, lost or left unfinished, no
// gang bound in part or off its committed placement, no node's GPUs
// over-committed at any moment the test saw (docs: doc.go).
func TestKillCampaign(t *testing.T) {
	lives := envInt(t, livesEnv, defaultLives)
	seed := uint64(envInt(t, seedEnv, 1))
	t0 := time.Now()
	c := startCluster(t, campaignNode)
	o := watchPods(t, c.cp.Clientset)
	rng := rand.New(rand.NewPCG(seed, 1))
	w := newWorkload(seed)
	setup := time.Since(t0)

	created := 0
	kinds := map[string]int{}
	var all []*life
	for i := range lives {
		if i%livesByBatch == 0 {
			pods := w.batch(24, 5)
			createPods(t, c.cp.Clientset, pods)
			created += len(pods)
		}
		crash, wait := "", time.Duration(20+rng.IntN(780))*time.Millisecond
		if i%2 == 1 {
			crash, wait = fmt.Sprintf("%s:%d", killPoints[(i/2)%len(killPoints)], 1+rng.IntN(3)), pointWait
		}
		l := startLife(t, c.dir, c.cp.Kubeconfig, fmt.Sprintf("life-%03d", i), crash, 0)
		all = append(all, l)
		select {
		case <-l.done:
			l.killedBy = "at " + strings.Split(crash, ":")[0]
		case <-time.After(wait):
			kind := "random moment"
			if crash != "" {
				kind = "point not reached in " + pointWait.String()
			}
			l.kill(kind)
		}
		if ws, ok := l.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("%s ended by itself (%s), not by SIGKILL:\n%s", l.name, l.cmd.ProcessState, l.tail(20))
		}
		if atPoint := l.killedBy == "at "+strings.Split(crash, ":")[0]; crash != "" && atPoint != l.diedAtPoint() {
			t.Errorf("%s: ended %q, but its log says otherwise:\n%s", l.name, l.killedBy, l.tail(5))
		}
		kinds[l.killedBy]++
	}

	tFinal := time.Now()
	final := startLife(t, c.dir, c.cp.Kubeconfig, "life-final", "", 0)
	all = append(all, final)
	finished := o.waitAll(created, 3*time.Minute)
	drain := time.Since(tFinal)
	final.stop()
	binds, accepted, unanswered, refused := endChecks(t, c, o, created, finished, "the last life", final.tail)
	for _, b := range binds {
		if b.code/100 != 2 {
			t.Logf("Binding not accepted: %s sent %s -> %s at %s: %d %s", b.agent, b.pod, b.node, b.received.Format(stamp), b.code, http.StatusText(b.code))
		}
	}
	if t.Failed() {
		for _, l := range all[max(0, len(all)-4):] {
			t.Logf("end of %s (%s):\n%s", l.name, l.killedBy, l.tail(15))
		}
	}
	t.Logf("kill -9 campaign, seed %d: %d nodes of %d GPUs; %d lives (%d killed: %s; the last ran %s to the end)",
		seed, campaignNode, nodeGPUs, len(all), len(all)-1, formatKinds(kinds), drain.Round(100*time.Millisecond))
	t.Logf("pods %d (%d in %d gangs), gangs overtaken by later pods %d; Bindings %d (%d accepted, %d taken unanswered by a killed sender, %d refused); pod events seen %d; peak GPUs on a node %d of %d",
		created, len(w.gangOf), w.gangs, w.overtaken(binds), len(binds), accepted, unanswered, refused, o.events, o.peak, nodeGPUs)
	t.Logf("wall time %s (control plane and nodes %s)", time.Since(t0).Round(100*time.Millisecond), setup.Round(100*time.Millisecond))
}

func formatKinds(kinds map[string]int) string {
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	return strings.Join(parts, ", ")
}

// overtaken counts the gangs that waited: those whose first member was
// bound after a pod created after them.
func (w *workload) overtaken(binds []bindRecord) int {
	waited, started := map[string]bool{}, map[string]bool{}
	latest := -1
	for _, b := range binds {
		if b.code/100 != 2 {
			continue
		}
		seq, ok := w.seq[b.pod]
		if !ok {
			continue
		}
		if g := w.gangOf[b.pod]; g != "" && !started[g] {
			started[g] = true
			waited[g] = latest > seq
		}
		latest = max(latest, seq)
	}
	n := 0
	for _, v := range waited {
		if v {
			n++
		}
	}
	return n
}
