package hwmodel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestJournalRecordsEveryGenerationChange: after random allocations,
// releases, refusals and MIG reconfigurations, the journal lists exactly
// the generation changes, in order, as far back as it keeps; older
// entries and entries not yet written answer -1.
func TestJournalRecordsEveryGenerationChange(t *testing.T) {
	c := migTestCluster(t)
	if c.Changes() != 0 || c.ChangedNode(0) != -1 {
		t.Fatalf("a fresh cluster has %d changes, ChangedNode(0) = %d", c.Changes(), c.ChangedNode(0))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	h := modelID(t, "H200")
	var want []int // node of each change, by number
	gens := func() []uint64 {
		g := make([]uint64, c.NumNodes())
		for i := range g {
			g[i] = c.Generation(i)
		}
		return g
	}
	var live []hwmodel.Placement
	for step := 0; step < 5000; step++ {
		before := gens()
		switch x := rng.IntN(10); {
		case x < 5:
			i := rng.IntN(c.NumNodes())
			n := c.Node(i)
			p := hwmodel.Placement{{Node: i, CPUMilli: int64(rng.IntN(3)) * 100}}
			if n.GPUs > 0 {
				p[0].GPUs, p[0].Milli = 1<<uint(rng.IntN(n.GPUs)), int32(100*(1+rng.IntN(10)))
			}
			if c.Allocate(p) == nil {
				live = append(live, p)
			}
		case x < 8 && len(live) > 0:
			k := rng.IntN(len(live))
			c.Release(live[k])
			live = append(live[:k], live[k+1:]...)
		case x < 9:
			layout := hwmodel.MIGLayout(nil)
			if rng.IntN(2) == 0 {
				layout = mustLayout(t, h, "balanced")
			}
			_, _ = c.Reconfigure(0, rng.IntN(4), layout)
		default:
			c.UnblockMIG(0, rng.IntN(4))
		}
		after := gens()
		for i := range after {
			for d := before[i]; d < after[i]; d++ {
				want = append(want, i)
			}
		}
		if c.Changes() != int64(len(want)) {
			t.Fatalf("step %d: %d changes, generations went up %d times", step, c.Changes(), len(want))
		}
		if err := c.CheckInvariants(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	kept := 0
	for seq := range want {
		got := c.ChangedNode(int64(seq))
		switch {
		case got == -1:
			if kept > 0 {
				t.Fatalf("change %d forgotten after change %d was kept", seq, seq-1)
			}
		case got != want[seq]:
			t.Fatalf("change %d: journal says node %d, it was node %d", seq, got, want[seq])
		default:
			kept++
		}
	}
	if kept < 1024 || kept == len(want) {
		t.Errorf("journal kept %d of %d changes; want at least 1024 and not all (the test must wrap it)", kept, len(want))
	}
	for _, seq := range []int64{-1, c.Changes(), c.Changes() + 5} {
		if got := c.ChangedNode(seq); got != -1 {
			t.Errorf("ChangedNode(%d) = %d, want -1", seq, got)
		}
	}
}

// TestJournalKeepsFourChangesPerNode: a large cluster's journal keeps at
// least four entries per node, so a reader that rescans all nodes when
// it falls behind does so at most once per four changes per node.
func TestJournalKeepsFourChangesPerNode(t *testing.T) {
	nodes := make([]hwmodel.Node, 3000)
	for i := range nodes {
		nodes[i] = hwmodel.Node{Name: fmt.Sprint("n", i), GPUs: 1, CPUMilli: 1 << 20}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4*len(nodes); k++ {
		if err := c.Allocate(hwmodel.Placement{{Node: k % len(nodes), CPUMilli: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := int64(0); seq < c.Changes(); seq++ {
		if got := c.ChangedNode(seq); got != int(seq)%len(nodes) {
			t.Fatalf("ChangedNode(%d) = %d, want %d", seq, got, int(seq)%len(nodes))
		}
	}
}
