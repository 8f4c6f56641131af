package hwmodel_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestJournalListsChangedNodes: after random allocations, releases, MIG
// reconfigurations and unblocks, a journal lists exactly the nodes whose
// Generation increased since it was cleared, each once, in the order of
// their first change; two journals see the same; a closed one stops.
func TestJournalListsChangedNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a100, _ := hwmodel.LookupModel("A100-80GB")
	nodes := make([]hwmodel.Node, 130) // more than two words of bits
	for i := range nodes {
		nodes[i] = hwmodel.Node{Name: fmt.Sprintf("n%d", i), Model: a100.ID, GPUs: rng.IntN(9), CPUMilli: 64000, MemoryMiB: 1 << 20}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	balanced, err := hwmodel.NamedMIGLayout(a100.ID, "balanced")
	if err != nil {
		t.Fatal(err)
	}
	j, k := c.NewJournal(), c.NewJournal()
	var held []hwmodel.Placement
	gens := func() []uint64 {
		g := make([]uint64, c.NumNodes())
		for i := range g {
			g[i] = c.Generation(i)
		}
		return g
	}
	before := gens()
	var order []int // nodes in the order of their first change
	migShares := 0
	for round := range 2000 {
		i := rng.IntN(c.NumNodes())
		g := c.NodeGPUs(i)
		switch op := rng.IntN(10); {
		case op < 5:
			s := hwmodel.Share{Node: i, CPUMilli: 1000}
			if g > 0 {
				gpu := rng.IntN(g)
				s.GPUs, s.Milli = 1<<gpu, int32(100*(1+rng.IntN(10)))
				if c.IsMIG(i, gpu) {
					s = c.MIGShare(i, gpu, 0, 1000, 0)
				}
			}
			if c.Allocate(hwmodel.Placement{s}) == nil {
				held = append(held, hwmodel.Placement{s})
				if s.Instance > 0 {
					migShares++
				}
			}
		case op < 8:
			if len(held) > 0 {
				x := rng.IntN(len(held))
				c.Release(held[x])
				held = slices.Delete(held, x, x+1)
			}
		case op < 9:
			if g > 0 {
				l := balanced
				if rng.IntN(2) == 0 {
					l = nil
				}
				remap, err := c.Reconfigure(i, rng.IntN(g), l)
				if err == nil && remap != nil {
					for _, p := range held {
						if p[0].Node == i && p[0].Instance > 0 {
							p[0].Instance = remap[p[0].Instance-1] + 1
						}
					}
				}
			}
		default:
			if g > 0 {
				c.UnblockMIG(i, rng.IntN(g))
			}
		}
		for n := range c.NumNodes() { // each op changes at most one node
			if c.Generation(n) != before[n] && !slices.Contains(order, n) {
				order = append(order, n)
			}
		}
		if round%7 == 6 {
			if got := j.Changed(); !slices.Equal(got, order) {
				t.Fatalf("round %d: journal lists %v, generations changed on %v", round, got, order)
			}
			if got := k.Changed(); !slices.Equal(got, order) {
				t.Fatalf("round %d: second journal lists %v, want %v", round, got, order)
			}
			j.Clear()
			k.Clear()
			before, order = gens(), order[:0]
		}
	}
	if migShares == 0 {
		t.Error("no MIG instance was ever allocated")
	}
	k.Close()
	k.Close() // twice is harmless
	j.Clear()
	k.Clear()
	_ = c.Allocate(hwmodel.Placement{{Node: 0, CPUMilli: 1}})
	if got := j.Changed(); !slices.Equal(got, []int{0}) {
		t.Errorf("journal lists %v after a change to node 0", got)
	}
	if got := k.Changed(); len(got) != 0 {
		t.Errorf("closed journal lists %v", got)
	}
}
