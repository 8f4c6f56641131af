package policies

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// cpuIndex finds best fit's and dot product's node without scoring every
// node. Both scores fall as a node's free CPU and free GPU milli grow, so
// the best node is among those with the least of both left, where it is
// feasible; but a node short of the request's CPU is not feasible, and
// nodes short of CPU are exactly the ones with the least left. So the
// index orders nodes by free CPU: the nodes with enough CPU are then a
// suffix of the order, and within it the least-left ones are found by
// bounds.
//
// Nodes are split into classes by GPU model and idle GPU count (every
// node of a class has at least 1000 milli per idle GPU free, and a
// whole-GPU request can go only to the classes of accepted models with
// as many idle GPUs as it asks for, or more); each class is a
// treap ordered by (free CPU, tie rank), and every treap node holds the
// least and most free CPU, GPU milli, CPU+16·GPU (best fit's measure:
// 128,000 / 8,000 = 16), memory and freest-GPU share of its subtree, and
// its first node in tie order. A search takes the classes best bound
// first and, within a treap, skips subtrees whose best possible score
// (from the least values) is below the best node found, or equal to it
// but with no node earlier in tie order; a subtree whose best and worst
// possible scores agree and whose nodes all fit is settled by its first
// node in tie order without visiting it. Upkeep is O(log n) per changed
// node (expected: treap priorities are a fixed hash of the node index).
type cpuIndex struct {
	sync  nodeSync
	kind  scoreKind
	roots [][]int32 // by model, by idle GPUs: the class's treap, -1 when empty
	nodes []cpuNode // by cluster node: its values when last indexed, links
	agg   []cpuAgg  // by cluster node: its subtree's

	// the search's request and best node so far
	r      hwmodel.Request
	shared bool    // r is a sharing request
	a, b   float64 // dot product: weights of free CPU and GPU milli
	bestS  int64
	bestR  int32
	pick   int32
	order  []cpuClass // scratch: classes by bound
}

type cpuNode struct {
	cpu, gpu, mem int64
	share         int16 // freest GPU's free milli
	class         int16 // idle GPUs: the class within its model
	rank          int32
	l, r          int32
	prio          uint32
}

type cpuAgg struct {
	minCPU, maxCPU, minGPU, maxGPU, minK, maxK, minMem, maxMem int64
	minShare, maxShare                                         int16
	first                                                      int32 // node first in tie order
	firstRank                                                  int32
}

type cpuClass struct {
	bound int64
	root  int32
}

// refresh brings the index up to date with c; rank is the tie order.
func (x *cpuIndex) refresh(c hwmodel.ClusterView, rank []int32) {
	changed, all := x.sync.changed(c)
	if all {
		x.build(c, rank)
		return
	}
	for _, i := range changed {
		x.move(c, i)
	}
}

func (x *cpuIndex) build(c hwmodel.ClusterView, rank []int32) {
	n := c.NumNodes()
	x.nodes = make([]cpuNode, n)
	x.agg = make([]cpuAgg, n)
	x.roots = make([][]int32, hwmodel.MaxModels)
	for i := range n {
		m := c.NodeModel(i)
		for len(x.roots[m]) <= c.NodeGPUs(i) {
			x.roots[m] = append(x.roots[m], -1)
		}
	}
	for i := range n {
		x.nodes[i] = cpuNode{rank: rank[i], prio: hashPrio(uint32(i))}
		x.load(c, int32(i))
		x.insert(c.NodeModel(i), int32(i))
	}
}

// hashPrio is a treap priority: a fixed scramble of the node index.
func hashPrio(i uint32) uint32 {
	i ^= i >> 16
	i *= 0x7feb352d
	i ^= i >> 15
	i *= 0x846ca68b
	i ^= i >> 16
	return i
}

// load reads node i's values from the cluster.
func (x *cpuIndex) load(c hwmodel.ClusterView, i int32) {
	n := &x.nodes[i]
	n.cpu, n.gpu, n.mem = c.FreeCPU(int(i)), c.NodeFreeMilli(int(i)), c.FreeMemory(int(i))
	n.share = int16(maxFree(c, int(i)))
	n.class = int16(c.FreeWholeGPUs(int(i)))
}

// move re-indexes node i after a change.
func (x *cpuIndex) move(c hwmodel.ClusterView, i int32) {
	m := c.NodeModel(int(i))
	n := &x.nodes[i]
	root := &x.roots[m][n.class]
	if c.FreeWholeGPUs(int(i)) == int(n.class) && c.FreeCPU(int(i)) == n.cpu {
		x.load(c, i) // same place in the same treap: refresh the path
		x.touch(*root, i)
		return
	}
	*root = x.remove(*root, i)
	x.load(c, i)
	x.insert(m, i)
}

func (x *cpuIndex) insert(m hwmodel.ModelID, i int32) {
	n := &x.nodes[i]
	root := &x.roots[m][n.class]
	*root = x.put(*root, i)
}

// put inserts node i into treap t: down to where its priority belongs,
// then split what lies below (a small subtree, in expectation).
func (x *cpuIndex) put(t, i int32) int32 {
	n := &x.nodes[i]
	if t < 0 || n.prio > x.nodes[t].prio {
		n.l, n.r = x.split(t, i)
		x.pull(i)
		return i
	}
	if x.before(i, t) {
		x.nodes[t].l = x.put(x.nodes[t].l, i)
	} else {
		x.nodes[t].r = x.put(x.nodes[t].r, i)
	}
	x.pull(t)
	return t
}

// before reports whether node i comes before node j in treap order.
func (x *cpuIndex) before(i, j int32) bool {
	a, b := &x.nodes[i], &x.nodes[j]
	return a.cpu < b.cpu || (a.cpu == b.cpu && a.rank < b.rank)
}

// split splits treap t into the nodes before node i and the rest.
func (x *cpuIndex) split(t, i int32) (int32, int32) {
	if t < 0 {
		return -1, -1
	}
	if x.before(t, i) {
		a, b := x.split(x.nodes[t].r, i)
		x.nodes[t].r = a
		x.pull(t)
		return t, b
	}
	a, b := x.split(x.nodes[t].l, i)
	x.nodes[t].l = b
	x.pull(t)
	return a, t
}

func (x *cpuIndex) merge(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case x.nodes[a].prio > x.nodes[b].prio:
		x.nodes[a].r = x.merge(x.nodes[a].r, b)
		x.pull(a)
		return a
	}
	x.nodes[b].l = x.merge(a, x.nodes[b].l)
	x.pull(b)
	return b
}

// remove takes node i (at its indexed values) out of treap t.
func (x *cpuIndex) remove(t, i int32) int32 {
	if t == i {
		return x.merge(x.nodes[t].l, x.nodes[t].r)
	}
	if x.before(i, t) {
		x.nodes[t].l = x.remove(x.nodes[t].l, i)
	} else {
		x.nodes[t].r = x.remove(x.nodes[t].r, i)
	}
	x.pull(t)
	return t
}

// touch recomputes the aggregates on the path from t down to node i.
func (x *cpuIndex) touch(t, i int32) {
	if t != i {
		if x.before(i, t) {
			x.touch(x.nodes[t].l, i)
		} else {
			x.touch(x.nodes[t].r, i)
		}
	}
	x.pull(t)
}

func (x *cpuIndex) pull(t int32) {
	n := &x.nodes[t]
	a := cpuAgg{
		minCPU: n.cpu, maxCPU: n.cpu, minGPU: n.gpu, maxGPU: n.gpu,
		minK: n.cpu + 16*n.gpu, maxK: n.cpu + 16*n.gpu, minMem: n.mem, maxMem: n.mem,
		minShare: n.share, maxShare: n.share, first: t, firstRank: n.rank,
	}
	for _, k := range [2]int32{n.l, n.r} {
		if k < 0 {
			continue
		}
		b := &x.agg[k]
		a.minCPU, a.maxCPU = min(a.minCPU, b.minCPU), max(a.maxCPU, b.maxCPU)
		a.minGPU, a.maxGPU = min(a.minGPU, b.minGPU), max(a.maxGPU, b.maxGPU)
		a.minK, a.maxK = min(a.minK, b.minK), max(a.maxK, b.maxK)
		a.minMem, a.maxMem = min(a.minMem, b.minMem), max(a.maxMem, b.maxMem)
		a.minShare, a.maxShare = min(a.minShare, b.minShare), max(a.maxShare, b.maxShare)
		if b.firstRank < a.firstRank {
			a.first, a.firstRank = b.first, b.firstRank
		}
	}
	x.agg[t] = a
}

// best is the feasible node with the highest score for single-node
// request r, ties to the first in tie order, or -1.
func (x *cpuIndex) best(r *hwmodel.Request) int {
	x.r, x.shared = *r, r.Fractional() // a copy: a pointer kept here would move r to the heap
	x.a = float64(r.CPUMilli) / maxSpecCPU / maxSpecCPU
	x.b = float64(r.TotalMilli()) / maxSpecGPU / maxSpecGPU
	x.bestS, x.bestR, x.pick = math.MinInt64, math.MaxInt32, -1
	x.order = x.order[:0]
	for m, classes := range x.roots {
		if r.GPUs > 0 && !r.Models.Accepts(hwmodel.ModelID(m)) {
			continue
		}
		for w, root := range classes {
			if root < 0 || (!x.shared && w < r.GPUs) {
				continue
			}
			ub, _ := x.bounds(root)
			x.order = append(x.order, cpuClass{ub, root})
		}
	}
	// Best bound first: the first class searched usually holds the answer
	// and its score rules out the others at their roots.
	for k := 1; k < len(x.order); k++ {
		for j := k; j > 0 && x.order[j].bound > x.order[j-1].bound; j-- {
			x.order[j], x.order[j-1] = x.order[j-1], x.order[j]
		}
	}
	for _, cl := range x.order {
		if cl.bound < x.bestS {
			break
		}
		x.visit(cl.root)
	}
	return int(x.pick)
}

// visit searches treap t.
func (x *cpuIndex) visit(t int32) {
	if t < 0 {
		return
	}
	a, r := &x.agg[t], &x.r
	if a.maxCPU < r.CPUMilli || a.maxMem < r.MemoryMiB || (x.shared && a.maxShare < int16(r.GPUMilli)) {
		return
	}
	ub, lb := x.bounds(t)
	if ub < x.bestS || (ub == x.bestS && a.firstRank > x.bestR) {
		return
	}
	if lb == ub && a.minCPU >= r.CPUMilli && a.minMem >= r.MemoryMiB && (!x.shared || a.minShare >= int16(r.GPUMilli)) {
		// Every node fits and scores ub: the first in tie order wins.
		x.offer(ub, a.first)
		return
	}
	n := &x.nodes[t]
	if n.cpu >= r.CPUMilli && n.mem >= r.MemoryMiB && (!x.shared || n.share >= int16(r.GPUMilli)) {
		x.offer(x.score(n), t)
	}
	// The cheaper side (less free CPU) first; a side wholly short of CPU
	// is skipped by its maximum above.
	x.visit(n.l)
	x.visit(n.r)
}

func (x *cpuIndex) offer(s int64, i int32) {
	if rk := x.nodes[i].rank; s > x.bestS || (s == x.bestS && rk < x.bestR) {
		x.bestS, x.bestR, x.pick = s, rk, i
	}
}

// score is the policy's score of an indexed node, computed exactly as
// scored.score computes it from the cluster.
func (x *cpuIndex) score(n *cpuNode) int64 {
	r := &x.r
	if x.kind == kindBestFit {
		s := (float64(n.cpu)-float64(r.CPUMilli))/maxSpecCPU*0.5 +
			(float64(n.gpu)-float64(r.TotalMilli()))/maxSpecGPU*0.5
		return int64((1.0 - s) * maxScore)
	}
	dot := float64(n.cpu)/maxSpecCPU*(float64(r.CPUMilli)/maxSpecCPU) +
		float64(n.gpu)/maxSpecGPU*(float64(r.TotalMilli())/maxSpecGPU)
	return int64(maxScore * (1 - dot/2))
}

// bounds are the highest and lowest scores a feasible node of treap t can
// have. Both scores fall as free CPU and GPU grow; a feasible node has at
// least the request's CPU and GPU milli free. The margin covers the
// rounding of the scores' floating-point arithmetic (relative error far
// below 1e-12), so the bounds hold for the computed scores too.
func (x *cpuIndex) bounds(t int32) (ub, lb int64) {
	a, r := &x.agg[t], &x.r
	rg := r.TotalMilli()
	c0 := max(a.minCPU, r.CPUMilli)
	g0 := max(a.minGPU, rg)
	k0 := max(a.minK, c0+16*g0)
	var hi, lo float64
	if x.kind == kindBestFit {
		// score = 100 − (cpu − rc)/2560 − (gpu − rg)/160 = 100 − (K − R)/2560
		R := r.CPUMilli + 16*rg
		hi = maxScore - float64(k0-R)/2560
		lo = maxScore - float64(a.maxK-R)/2560
	} else {
		// score = 100 − 50·(a·cpu + b·gpu), with K = cpu + 16·gpu:
		// a·cpu + b·gpu = a·K + (b−16a)·gpu = (b/16)·K + (a−b/16)·cpu.
		least := x.a*float64(c0) + x.b*float64(g0)
		most := x.a*float64(a.maxCPU) + x.b*float64(a.maxGPU)
		if x.b >= 16*x.a {
			least = max(least, x.a*float64(k0)+(x.b-16*x.a)*float64(g0))
			most = min(most, x.a*float64(a.maxK)+(x.b-16*x.a)*float64(a.maxGPU))
		} else {
			least = max(least, x.b/16*float64(k0)+(x.a-x.b/16)*float64(c0))
			most = min(most, x.b/16*float64(a.maxK)+(x.a-x.b/16)*float64(a.maxCPU))
		}
		hi = maxScore - 50*least
		lo = maxScore - 50*most
	}
	margin := 1e-9 * (math.Abs(hi) + math.Abs(lo) + maxScore)
	return int64(hi + margin), int64(lo - margin)
}
