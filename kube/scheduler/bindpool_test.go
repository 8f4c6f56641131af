package scheduler

import (
	"fmt"
	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"strings"
	"testing"
)

// One round starts more jobs than there are bind workers; two single
// pods' Bindings fail (the pods read back unbound). The others are bound
// (gangs after their commit), the failed two are taken off the books
// and bound at the next round, and no node ever holds more GPUs than it
// has.
func TestConcurrentBindsSettleInOrder(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 8),
		gpuNode("n2", "NVIDIA-H100-80GB-HBM3", 8))
	for i := range 12 {
		c.add(t, gpuPod(fmt.Sprintf("p%02d", i), 1, 0))
	}
	c.add(t, gpuPod("train-0", 4, 0, gang("train", 2)), gpuPod("train-1", 4, 0, gang("train", 2)),
		gpuPod("eval-0", 2, 0, gang("eval", 2)), gpuPod("eval-1", 2, 0, gang("eval", 2)))
	fail := map[string]bool{"p03": true, "p07": true}
	c.bindFail = func(pod string) error {
		if fail[pod] {
			return errTimeout
		}
		return nil
	}
	s := newSched(t, c, "fcfs/bestfit")
	if 14 <= bindWorkers {
		t.Fatalf("the round must start more jobs (14) than there are workers (%d)", bindWorkers)
	}
	round(t, s)
	if len(c.binds) != 14 {
		t.Fatalf("first round: %d binds %v, want 14 (all but p03 and p07)", len(c.binds), c.binds)
	}
	for _, j := range s.jobs {
		failed := strings.HasSuffix(j.key, "/p03/uid-p03") || strings.HasSuffix(j.key, "/p07/uid-p07")
		if failed != (j.state == limbo) || failed != (j.place == nil) {
			t.Errorf("job %s: state %d, placed %v", j.key, j.state, j.place != nil)
		}
	}
	if got := s.cluster.AllocatedMilli(); got != 22*1000 {
		t.Errorf("books hold %d milli-GPUs after the first round, want 22000 (the two failed starts taken back)", got)
	}
	c.bindFail = nil
	round(t, s)
	if len(c.binds) != 16 {
		t.Fatalf("second round: binds %v, want all 16", c.binds)
	}
	perNode := map[string]int{}
	for _, b := range c.binds {
		pod, node, _ := strings.Cut(b, "->")
		lim := c.pod(t, "team-a", pod).Spec.Containers[0].Resources.Limits[ResourceGPU]
		perNode[node] += int(lim.Value())
	}
	for node, g := range perNode {
		if g > 8 {
			t.Errorf("node %s holds %d GPUs", node, g)
		}
	}
	for _, g := range []string{"train", "eval"} {
		if v := c.pod(t, "team-a", g+"-0").Annotations[AnnoPlacement]; v == "" || v != c.pod(t, "team-a", g+"-1").Annotations[AnnoPlacement] {
			t.Errorf("gang %s: placement %q not on both members", g, v)
		}
	}
}

// A panic in a bind worker (a crash hook) reaches the caller of Round,
// as it would from a serial loop, so a test can recover it.
func TestBindWorkerPanicReachesRound(t *testing.T) {
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 8),
		gpuPod("a-0", 2, 0, gang("a", 2)), gpuPod("a-1", 2, 0, gang("a", 2)),
		gpuPod("b-0", 2, 0, gang("b", 2)), gpuPod("b-1", 2, 0, gang("b", 2)))
	s := newSched(t, c, "fcfs/bestfit")
	crashpoint.Hook = func(p string) {
		if p == crashpoint.GangCommitted {
			panic("crash at " + p)
		}
	}
	defer func() { crashpoint.Hook = nil }()
	got := func() (p any) {
		defer func() { p = recover() }()
		round(t, s)
		return nil
	}()
	if got != "crash at committed" {
		t.Errorf("Round raised %v, want the hook's panic", got)
	}
}
