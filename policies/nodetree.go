package policies

import (
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
)

// nodeTree is a segment tree over a fixed list of nodes in a fixed order
// (all nodes or one GPU model's, by index or by tie rank). Each tree node holds
// the largest free capacity of its leaves in every dimension, so the
// leftmost leaf that meets a request's needs is found by descending into
// the leftmost child that might meet them: O(log n), and more only where
// the maxima of a subtree come from different leaves none of which meets
// all the needs (then the search backs out and goes right).
//
// Leaves hold exactly a node's values, so at a leaf "might meet" is
// "meets": the search never returns a node that does not fit.
type nodeTree struct {
	size  int       // leaves, a power of two
	nodes []int32   // by leaf: the cluster node
	leaf  []int32   // by cluster node: its leaf, or -1 when not in this tree
	agg   []treeAgg // 2*size, heap layout (root 1)
	pack  []packAgg // 2*size when the tree serves packing, else nil
}

// treeAgg is the largest free capacity under a tree node.
type treeAgg struct {
	cpu, mem int64
	whole    int16 // idle GPUs
	share    int16 // free milli of the freest GPU (MIG GPUs: 0)
}

// noAgg is what an empty leaf holds: nothing meets any need.
var noAgg = treeAgg{cpu: -1, mem: -1, whole: -1, share: -1}

// packAgg is what packing needs beyond treeAgg, for nodes with some GPU
// in use ("used") and nodes with every GPU idle ("idle").
type packAgg struct {
	usedWhole int16     // idle GPUs of a used node
	band      [10]int16 // by hundreds: the freest GPU of a used node with 100b..100b+99 free
	idleSizes uint64    // bit g-1: an idle node with g GPUs
}

var noPack = packAgg{usedWhole: -1, band: [10]int16{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}}

// treeNeed is what a search asks of a leaf: at least this much free. The
// capacity fields ask nothing at 0 (capacities are never negative), the
// packing fields nothing at -1 (see plainNeed).
type treeNeed struct {
	cpu, mem  int64
	whole     int16 // idle GPUs
	share     int16 // free milli on one GPU
	usedWhole int16 // packing: a used node with this many idle GPUs
	band      int8  // packing: a used node with a GPU in this hundred (0..9) ...
	bandMin   int16 // ... with at least this much free
	idleSize  int8  // packing: an idle node of exactly this many GPUs
}

// meets reports whether subtree k might hold a node that meets q (at a
// leaf: whether the node meets q).
func (q *treeNeed) meets(t *nodeTree, k int) bool {
	if t.pack == nil {
		return q.fits(&t.agg[k])
	}
	return q.fits(&t.agg[k]) && q.meetsPack(&t.pack[k])
}

func (q *treeNeed) fits(a *treeAgg) bool {
	return a.whole >= q.whole && a.share >= q.share && a.cpu >= q.cpu && a.mem >= q.mem
}

func (q *treeNeed) meetsPack(p *packAgg) bool {
	return p.usedWhole >= q.usedWhole &&
		(q.band < 0 || p.band[q.band] >= q.bandMin) &&
		(q.idleSize <= 0 || p.idleSizes&(1<<uint(q.idleSize-1)) != 0)
}

// plainNeed asks for capacity only.
func plainNeed(whole, share int, cpu, mem int64) treeNeed {
	return treeNeed{cpu: cpu, mem: mem, whole: int16(whole), share: int16(share), usedWhole: -1, band: -1, idleSize: -1}
}

// build makes the tree over nodes (in that order) of a cluster of n nodes.
func (t *nodeTree) build(c hwmodel.ClusterView, nodes []int32, n int, packing bool) {
	t.size = 1
	for t.size < len(nodes) {
		t.size *= 2
	}
	t.nodes = nodes
	if cap(t.leaf) >= n {
		t.leaf = t.leaf[:n]
	} else {
		t.leaf = make([]int32, n)
	}
	for i := range t.leaf {
		t.leaf[i] = -1
	}
	t.agg = make([]treeAgg, 2*t.size)
	t.pack = nil
	if packing {
		t.pack = make([]packAgg, 2*t.size)
	}
	for k := range t.size {
		if k < len(nodes) {
			t.leaf[nodes[k]] = int32(k)
			t.setLeaf(c, t.size+k, int(nodes[k]))
		} else {
			t.agg[t.size+k] = noAgg
			if packing {
				t.pack[t.size+k] = noPack
			}
		}
	}
	for k := t.size - 1; k >= 1; k-- {
		t.pull(k)
	}
}

// setLeaf writes node i's values into tree node k and reports whether
// they changed.
func (t *nodeTree) setLeaf(c hwmodel.ClusterView, k, i int) bool {
	whole := c.FreeWholeGPUs(i)
	a := treeAgg{cpu: c.FreeCPU(i), mem: c.FreeMemory(i), whole: int16(whole), share: int16(maxFree(c, i))}
	changed := a != t.agg[k]
	t.agg[k] = a
	if t.pack == nil {
		return changed
	}
	p := noPack
	if n := c.NodeGPUs(i); whole == n {
		if n > 0 { // a node without GPUs serves no GPU request
			p.idleSizes = 1 << uint(n-1)
		}
	} else {
		p.usedWhole = int16(whole)
		for g := 0; g < n; g++ {
			// A GPU with nothing free (MIG GPUs among them) serves no
			// request, so it need not be in a band.
			if f := c.FreeMilli(i, g); f > 0 && f < hwmodel.MilliPerGPU {
				b := f / 100
				p.band[b] = max(p.band[b], int16(f))
			}
		}
	}
	changed = changed || p != t.pack[k]
	t.pack[k] = p
	return changed
}

// pull recomputes tree node k from its children and reports whether it
// changed.
func (t *nodeTree) pull(k int) bool {
	l, r := &t.agg[2*k], &t.agg[2*k+1]
	a := treeAgg{cpu: max(l.cpu, r.cpu), mem: max(l.mem, r.mem), whole: max(l.whole, r.whole), share: max(l.share, r.share)}
	changed := a != t.agg[k]
	t.agg[k] = a
	if t.pack != nil {
		pl, pr := &t.pack[2*k], &t.pack[2*k+1]
		p := packAgg{usedWhole: max(pl.usedWhole, pr.usedWhole), idleSizes: pl.idleSizes | pr.idleSizes}
		for b := range p.band {
			p.band[b] = max(pl.band[b], pr.band[b])
		}
		changed = changed || p != t.pack[k]
		t.pack[k] = p
	}
	return changed
}

// update refreshes node i's leaf, if the tree has it, and its ancestors.
func (t *nodeTree) update(c hwmodel.ClusterView, i int) {
	if t.leaf[i] < 0 {
		return
	}
	k := t.size + int(t.leaf[i])
	if !t.setLeaf(c, k, i) {
		return
	}
	if t.pack != nil {
		for k >>= 1; k >= 1 && t.pull(k); k >>= 1 {
		}
		return
	}
	// pull without packing, inlined: most updates climb to the root.
	agg := t.agg
	for k >>= 1; k >= 1; k >>= 1 {
		ch := agg[2*k : 2*k+2 : 2*k+2]
		a := treeAgg{cpu: max(ch[0].cpu, ch[1].cpu), mem: max(ch[0].mem, ch[1].mem),
			whole: max(ch[0].whole, ch[1].whole), share: max(ch[0].share, ch[1].share)}
		if a == agg[k] {
			return
		}
		agg[k] = a
	}
}

// leftmost is the first node, in the tree's order, that meets q, and its
// position in that order; -1, -1 when none does.
func (t *nodeTree) leftmost(q *treeNeed) (node, pos int) {
	if t.size == 0 || !q.meets(t, 1) {
		return -1, -1
	}
	k := 1
	agg, pack := t.agg, t.pack
	for k < t.size {
		// q.meets, spelled out so that it is inlined
		switch l := 2 * k; {
		case q.fits(&agg[l]) && (pack == nil || q.meetsPack(&pack[l])):
			k = l
		case q.fits(&agg[l+1]) && (pack == nil || q.meetsPack(&pack[l+1])):
			k = l + 1
		default:
			// Neither child meets q although k might: back out to the
			// next subtree to the right that might.
			if k = t.next(q, k); k == 0 {
				return -1, -1
			}
		}
	}
	pos = k - t.size
	return int(t.nodes[pos]), pos
}

// next is the first subtree to the right of subtree k that might meet q,
// or 0.
func (t *nodeTree) next(q *treeNeed, k int) int {
	for {
		for k&1 == 1 {
			k >>= 1
		}
		if k == 0 {
			return 0
		}
		k++
		if q.meets(t, k) {
			return k
		}
	}
}

// modelTrees is a nodeTree over all nodes, and, once a request accepts
// some models only, one per GPU model (built then, and kept from then
// on: most runs never need them, and each costs upkeep), kept current
// through the cluster's journal.
type modelTrees struct {
	sync     nodeSync
	all      nodeTree
	trees    []nodeTree        // by model, when perModel
	perModel bool              // trees are built and kept current
	present  []hwmodel.ModelID // models with nodes, ascending
	order    []int32           // the nodes in the trees' order
	key      []int32           // by node: its place in the trees' order
	packing  bool              // the trees carry packAgg too
	sizes    []int             // scratch for idleSizes
}

// refresh brings the trees up to date with c; order gives the nodes in
// the trees' order when they must be rebuilt.
func (m *modelTrees) refresh(c hwmodel.ClusterView, order func() []int32) {
	changed, all := m.sync.changed(c)
	if !all {
		for _, i := range changed {
			m.all.update(c, int(i))
			if m.perModel {
				m.trees[c.NodeModel(int(i))].update(c, int(i))
			}
		}
		return
	}
	m.order = order()
	m.key = make([]int32, len(m.order))
	var seen [64]bool
	for k, i := range m.order {
		m.key[i] = int32(k)
		seen[c.NodeModel(int(i))] = true
	}
	m.present = m.present[:0]
	for id, ok := range seen {
		if ok {
			m.present = append(m.present, hwmodel.ModelID(id))
		}
	}
	m.all.build(c, m.order, c.NumNodes(), m.packing)
	m.perModel = false
}

// models returns the per-model trees, building them on first use.
func (m *modelTrees) models() []nodeTree {
	if !m.perModel {
		c := m.sync.c
		if m.trees == nil {
			m.trees = make([]nodeTree, hwmodel.MaxModels)
		}
		for id, nodes := range byModel(c, m.order) {
			m.trees[id].build(c, nodes, c.NumNodes(), m.packing)
		}
		m.perModel = true
	}
	return m.trees
}

// everyModel reports whether s accepts every model the cluster has, so
// that the tree over all nodes answers for it.
func (m *modelTrees) everyModel(s hwmodel.ModelSet) bool {
	if s == hwmodel.AnyModel {
		return true
	}
	for _, id := range m.present {
		if !s.Accepts(id) {
			return false
		}
	}
	return true
}

// first is the node that meets q and comes first in the trees' order
// among the models s accepts (every model when any is true), and its
// position in that order; -1, -1 when there is none.
func (m *modelTrees) first(q *treeNeed, s hwmodel.ModelSet, any bool) (node, pos int) {
	if any || m.everyModel(s) {
		return m.all.leftmost(q)
	}
	trees := m.models()
	node, pos = -1, -1
	for _, id := range m.present {
		if !s.Accepts(id) {
			continue
		}
		if i, _ := trees[id].leftmost(q); i >= 0 {
			if p := int(m.key[i]); pos < 0 || p < pos {
				node, pos = i, p
			}
		}
	}
	return node, pos
}

// idleSizes lists the sizes (GPU counts, 1..64) of the idle nodes of
// the models s accepts (every model when any is true), ascending.
func (m *modelTrees) idleSizes(s hwmodel.ModelSet, any bool) []int {
	var mask uint64
	if any || m.everyModel(s) {
		mask = m.all.pack[1].idleSizes
	} else {
		trees := m.models()
		for _, id := range m.present {
			if s.Accepts(id) {
				mask |= trees[id].pack[1].idleSizes
			}
		}
	}
	m.sizes = m.sizes[:0]
	for ; mask != 0; mask &= mask - 1 {
		m.sizes = append(m.sizes, bits.TrailingZeros64(mask)+1)
	}
	return m.sizes
}
