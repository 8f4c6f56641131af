package policies

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// Node indexes: how placements find their node without a pass over all
// nodes.
//
// A placer keeps its index beside the cluster, not in it: the index's
// order (node index for first fit, the seeded tie order for the FGD
// paper's placements) is the placer's. Each Place first brings the index
// up to date through the cluster's change journal (hwmodel.Cluster.
// ChangedNode): only nodes whose generation changed since the last call
// are looked at again, so upkeep costs O(log n) per change, not O(n) per
// call. A placer that meets another cluster, or one whose journal no
// longer reaches back to its last call, rebuilds its index in one pass
// (at most once per four changes per node: the journal keeps that many).
//
// Every index answers exactly what the linear scan it replaces answered:
// TestIndexedPlacementsMatchReference runs both side by side.

// nodeSync follows one cluster's change journal.
type nodeSync struct {
	c     hwmodel.ClusterView
	valid bool
	seq   int64    // journal entries consumed
	stamp []uint32 // per node: the round that last listed it
	round uint32
	list  []int32
}

// changed lists the nodes that changed since the last call, each once, or
// reports all: the index must be rebuilt (a different cluster, a journal
// that no longer reaches back, or the first call).
func (s *nodeSync) changed(c hwmodel.ClusterView) (nodes []int32, all bool) {
	now := c.Changes()
	if !s.valid || s.c != c || len(s.stamp) != c.NumNodes() || (now > s.seq && c.ChangedNode(s.seq) < 0) {
		s.c, s.valid, s.seq = c, true, now
		if len(s.stamp) != c.NumNodes() {
			s.stamp = make([]uint32, c.NumNodes())
			s.round = 0
		}
		return nil, true
	}
	s.list = s.list[:0]
	if now == s.seq {
		return s.list, false
	}
	s.round++
	if s.round == 0 { // wrapped: stamps of long ago could collide
		clear(s.stamp)
		s.round = 1
	}
	for ; s.seq < now; s.seq++ {
		i := c.ChangedNode(s.seq)
		if s.stamp[i] != s.round {
			s.stamp[i] = s.round
			s.list = append(s.list, int32(i))
		}
	}
	return s.list, false
}

// maxFree is the largest free share of one of node i's GPUs (MIG GPUs
// have none), which bounds the GPU share a request can get there.
func maxFree(c hwmodel.ClusterView, i int) int32 {
	if c.FreeWholeGPUs(i) > 0 {
		return hwmodel.MilliPerGPU
	}
	var f int32
	for g := c.NodeGPUs(i) - 1; g >= 0; g-- {
		f = max(f, c.FreeMilli(i, g))
	}
	return f
}

// byModel splits nodes (in the order given) by GPU model.
func byModel(c hwmodel.ClusterView, order []int32) [][]int32 {
	out := make([][]int32, hwmodel.MaxModels)
	for _, i := range order {
		m := c.NodeModel(int(i))
		out[m] = append(out[m], i)
	}
	return out
}
