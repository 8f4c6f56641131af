package policies

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// shapeIndex keeps, for each request shape placed so far (GPUs, GPUMilli,
// CPUMilli and Models: what the FGD and clustering scores and the GPU and
// CPU part of feasibility depend on; not memory), every node's score and,
// in a max tree over the nodes in tie order, the best of them. A
// placement's node is then the first (in tie order) of the best-scoring
// nodes, found in O(log n), once the shape's scores are brought up to
// date: only the nodes the journal lists as changed since the shape was
// last placed are scored again. So a placement costs O(log n) plus one
// score per node changed since its shape's last placement (FGD cached its
// scores so before, but then looked at every node), instead of a pass
// over every node.
//
// Scores do not depend on Models (only feasibility does), so shapes that
// differ only there share one cache of scores: a change costs one score
// per distinct (GPUs, GPUMilli, CPUMilli), and a tree update per shape.
//
// Memory is checked against a nodeTree of free capacity in the same
// order: a shape's best node that lacks the request's memory sends the
// search on to the next best.
type shapeIndex struct {
	view   hwmodel.ClusterView // the cluster the scores are for
	trees  map[hwmodel.Request]*shapeTree
	scores map[hwmodel.Request]*scoreCache
	size   int // trees and caches kept, in nodes (for the limit)
	// table holds every cache's entries node by node: node i's entry of
	// cache column k is table[i*stride+k]. Shapes place on the nodes that
	// changed lately, one after another, so a node's entries for all
	// shapes are best kept together, in the same cache line or two.
	table  []uint64
	stride int // columns room is made for
	cols   int // columns in use
}

// shapeTree is one shape's best scores.
type shapeTree struct {
	seq    int64 // the journal position the tree reflects
	models hwmodel.ModelSet
	cache  *scoreCache
	score  scoreTree
}

// scoreCache is a column of the index's table: by node,
// (generation+1)<<24 | (gpu+1)<<16 | score as uint16 (noScore when the
// shape cannot go there, memory aside).
type scoreCache struct {
	x   *shapeIndex
	col int
}

// column adds a column to the table, making room for more when it is
// full.
func (x *shapeIndex) column(n int) int {
	if x.cols == x.stride {
		stride := max(4, 2*x.stride)
		table := make([]uint64, n*stride)
		for i := range n {
			copy(table[i*stride:i*stride+x.cols], x.table[i*x.stride:i*x.stride+x.cols])
		}
		x.table, x.stride = table, stride
	}
	x.cols++
	return x.cols - 1
}

// shapeKey is the part of a request that scores depend on; a CPU-only
// request's models do not matter.
func shapeKey(r hwmodel.Request) hwmodel.Request {
	k := hwmodel.Request{GPUs: r.GPUs, GPUMilli: r.GPUMilli, CPUMilli: r.CPUMilli, Models: r.Models}
	if k.GPUs == 0 {
		k.Models = hwmodel.AnyModel
	}
	return k
}

// shape returns the tree of r's shape on c, creating it while there is
// room (at most maxShapes trees, and maxCacheEntries node entries in trees
// and caches together), else nil. A different cluster than last time
// drops every shape.
func (x *shapeIndex) shape(c hwmodel.ClusterView, r hwmodel.Request) *shapeTree {
	if x.view != c {
		x.view = c
		clear(x.trees)
		clear(x.scores)
		x.size = 0
		x.table, x.stride, x.cols = nil, 0, 0
	}
	if x.trees == nil {
		x.trees = make(map[hwmodel.Request]*shapeTree)
		x.scores = make(map[hwmodel.Request]*scoreCache)
	}
	key := shapeKey(r)
	t, ok := x.trees[key]
	if ok {
		return t
	}
	n := c.NumNodes()
	score := key
	score.Models = hwmodel.AnyModel
	cache, ok := x.scores[score]
	if len(x.trees) >= maxShapes || x.size+2*n > maxCacheEntries {
		return nil
	}
	if !ok {
		cache = &scoreCache{x: x, col: x.column(n)}
		x.scores[score] = cache
		x.size += n
	}
	t = &shapeTree{seq: -1, models: key.Models, cache: cache}
	t.score.init(n)
	x.trees[key] = t
	x.size += n
	return t
}

// nodeScorer scores node i for a shape: ok false when the shape cannot go
// there (memory and models aside), else its score and, for a sharing
// request, the GPU (else -1).
type nodeScorer func(i int) (score int64, gpu int, ok bool)

// update brings the shape's tree up to date with c; pos maps a node to its
// leaf (its place in tie order).
func (t *shapeTree) update(c hwmodel.ClusterView, pos []int32, score nodeScorer) {
	now := c.Changes()
	if t.seq == now {
		return
	}
	if t.seq < 0 || c.ChangedNode(t.seq) < 0 {
		// New, or too far behind for the journal: look at every node
		// (unchanged ones keep their cached score).
		for i := range c.NumNodes() {
			t.refresh(c, i, pos, score)
		}
	} else {
		for q := t.seq; q < now; q++ {
			t.refresh(c, c.ChangedNode(q), pos, score)
		}
	}
	t.seq = now
}

func (t *shapeTree) refresh(c hwmodel.ClusterView, i int, pos []int32, score nodeScorer) {
	if t.models != hwmodel.AnyModel && !t.models.Accepts(c.NodeModel(i)) {
		t.score.set(int(pos[i]), noScore)
		return
	}
	t.score.set(int(pos[i]), t.cache.get(c, i, score))
}

// get is node i's score, computed unless cached for its generation.
func (s *scoreCache) get(c hwmodel.ClusterView, i int, score nodeScorer) int16 {
	g := c.Generation(i) + 1
	e := &s.x.table[i*s.x.stride+s.col]
	if *e>>24 == g {
		return int16(uint16(*e))
	}
	v, gpu, ok := score(i)
	if !ok {
		v, gpu = noScore, -1
	}
	// score may not add columns, so e still points into the table.
	*e = g<<24 | uint64(gpu+1)<<16 | uint64(uint16(int16(v)))
	return int16(v)
}

// gpu is the GPU cached with node i's score.
func (s *scoreCache) gpu(i int) int { return int(s.x.table[i*s.x.stride+s.col]>>16&0xff) - 1 }

// noScore marks a leaf whose node the shape cannot go to. Scores are
// above it: 0..100, or from about -175 for the clustering score of a node
// with more than 8 GPUs.
const noScore = math.MinInt16

// scoreTree is a max tree of scores (noScore: none) over leaves.
type scoreTree struct {
	size int
	v    []int16 // 2*size, heap layout
}

func (t *scoreTree) init(n int) {
	t.size = 1
	for t.size < n {
		t.size *= 2
	}
	t.v = make([]int16, 2*t.size)
	for k := range t.v {
		t.v[k] = noScore
	}
}

func (t *scoreTree) set(leaf int, v int16) {
	k := t.size + leaf
	if t.v[k] == v {
		return
	}
	t.v[k] = v
	for k >>= 1; k >= 1; k >>= 1 {
		m := max(t.v[2*k], t.v[2*k+1])
		if t.v[k] == m {
			return
		}
		t.v[k] = m
	}
}

// best is the leftmost leaf with the highest score among the leaves whose
// capacity (in a, a tree of the same shape) meets q, and its score; -1
// when no leaf with a score meets q.
func (t *scoreTree) best(a *nodeTree, q *treeNeed) (leaf int, score int16) {
	top := t.v[1]
	if top == noScore {
		return -1, noScore
	}
	// Usually the best-scoring leaves include one that meets q: find the
	// leftmost of them directly.
	k := 1
	if q.meets(a, 1) {
		for k < t.size {
			switch l := 2 * k; {
			case t.v[l] >= top && q.meets(a, l):
				k = l
			case t.v[l+1] >= top && q.meets(a, l+1):
				k = l + 1
			default:
				if k = t.next(a, q, k, top); k == 0 {
					goto search
				}
			}
		}
		return k - t.size, t.v[k]
	}
search:
	// None meets q: search all, best first where the maxima allow.
	b := bestSearch{t: t, a: a, q: q, leaf: -1, score: noScore}
	b.visit(1, 0, t.size)
	return b.leaf, b.score
}

// next is the first subtree right of k with a score >= top that might
// meet q, or 0.
func (t *scoreTree) next(a *nodeTree, q *treeNeed, k int, top int16) int {
	for {
		for k&1 == 1 {
			k >>= 1
		}
		if k == 0 {
			return 0
		}
		k++
		if t.v[k] >= top && q.meets(a, k) {
			return k
		}
	}
}

// bestSearch is a branch-and-bound search for the leftmost best leaf that
// meets q: a subtree is skipped when its best score cannot beat the best
// leaf found so far (or only tie it from further right).
type bestSearch struct {
	t     *scoreTree
	a     *nodeTree
	q     *treeNeed
	leaf  int
	score int16
}

// visit searches subtree k, whose leaves are lo..lo+width-1.
func (b *bestSearch) visit(k, lo, width int) {
	v := b.t.v[k]
	if v == noScore || v < b.score || (v == b.score && lo > b.leaf) || !b.q.meets(b.a, k) {
		return
	}
	if width == 1 {
		b.leaf, b.score = lo, v
		return
	}
	half := width / 2
	// The child with the higher maximum first: it may raise the bar for
	// the other.
	if l, r := b.t.v[2*k], b.t.v[2*k+1]; r > l {
		b.visit(2*k+1, lo+half, half)
		b.visit(2*k, lo, half)
	} else {
		b.visit(2*k, lo, half)
		b.visit(2*k+1, lo+half, half)
	}
}
