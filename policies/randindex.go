package policies

import (
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
)

// randIndex counts and lists random's feasible nodes in node order, 64 at
// a time. Random draws uniformly among the feasible nodes in node order,
// so it needs their exact count and the k-th of them: nothing a bound can
// skip. Each block of 64 nodes keeps, per resource, one bitmask per level
// of "at least this much free": idle GPUs (exact), the freest GPU's share
// (by hundreds of milli), free CPU (by 1,024 milli) and memory (by 4,096
// MiB). A block's feasible nodes are then a handful of ANDs of those
// masks, plus an exact look at the few nodes whose CPU, memory or share
// falls in the same level as the request's: about 10 ns per block instead
// of 64 feasibility tests.
type randIndex struct {
	sync   nodeSync
	blocks []randBlock
	nodes  []randNode // by cluster node: its values when last indexed
	models []hwmodel.ModelID
	masks  []uint64 // scratch: by block, its feasible nodes
}

type randNode struct {
	cpu, mem int64
	whole    int16
	share    int16
}

const randLevels = 256

type randBlock struct {
	all    uint64             // the block's nodes
	whole  []uint64           // [w]: nodes with at least w idle GPUs
	share  [11]uint64         // [l]: nodes whose freest GPU has at least 100·l milli free (10: an idle GPU)
	cpu    [randLevels]uint64 // [l]: nodes whose free CPU is at level l or above
	mem    [randLevels]uint64
	models []uint64 // by model
}

func cpuLevel(v int64) int { return int(min(v>>10, randLevels-1)) }
func memLevel(v int64) int { return int(min(v>>12, randLevels-1)) }

func (x *randIndex) refresh(c hwmodel.ClusterView) {
	changed, all := x.sync.changed(c)
	if all {
		x.build(c)
		return
	}
	for _, i := range changed {
		x.set(c, int(i))
	}
}

func (x *randIndex) build(c hwmodel.ClusterView) {
	n := c.NumNodes()
	x.blocks = make([]randBlock, (n+63)/64)
	x.nodes = make([]randNode, n)
	for b := range x.blocks {
		blk := &x.blocks[b]
		blk.models = make([]uint64, hwmodel.MaxModels)
		most := 0
		for i := 64 * b; i < min(n, 64*b+64); i++ {
			most = max(most, c.NodeGPUs(i))
			blk.all |= 1 << uint(i-64*b)
			blk.models[c.NodeModel(i)] |= 1 << uint(i-64*b)
		}
		blk.whole = make([]uint64, most+1)
	}
	for i := range n {
		x.nodes[i] = randNode{whole: -1, share: -1, cpu: -1, mem: -1}
		x.set(c, i)
	}
}

// set moves node i's bits to its current levels.
func (x *randIndex) set(c hwmodel.ClusterView, i int) {
	blk := &x.blocks[i/64]
	bit := uint64(1) << uint(i%64)
	old := x.nodes[i]
	now := randNode{cpu: c.FreeCPU(i), mem: c.FreeMemory(i), whole: int16(c.FreeWholeGPUs(i)), share: int16(maxFree(c, i))}
	x.nodes[i] = now
	// A node is in levels 0..L of a resource: move the top from old to new.
	raise := func(masks []uint64, from, to int) {
		for l := from + 1; l <= to; l++ {
			masks[l] |= bit
		}
		for l := to + 1; l <= from; l++ {
			masks[l] &^= bit
		}
	}
	raise(blk.whole, int(old.whole), int(now.whole))
	raise(blk.share[:], shareLevel(old.share), shareLevel(now.share))
	raise(blk.cpu[:], levelOr(old.cpu, cpuLevel), cpuLevel(now.cpu))
	raise(blk.mem[:], levelOr(old.mem, memLevel), memLevel(now.mem))
}

func shareLevel(f int16) int {
	if f < 0 {
		return -1
	}
	return int(f / 100)
}

func levelOr(v int64, level func(int64) int) int {
	if v < 0 {
		return -1
	}
	return level(v)
}

// pick returns the k-th (from 0) feasible node for r in node order, where
// k is drawn by draw from the number of feasible nodes; -1 (and no draw)
// when there is none.
func (x *randIndex) pick(r *hwmodel.Request, draw func(n int) int) int {
	x.models = x.models[:0]
	if r.GPUs > 0 && r.Models != hwmodel.AnyModel {
		for m := range numModels() {
			if r.Models.Accepts(hwmodel.ModelID(m)) {
				x.models = append(x.models, hwmodel.ModelID(m))
			}
		}
	}
	x.masks = x.masks[:0]
	total := 0
	for b := range x.blocks {
		m := x.feasible(b, r)
		x.masks = append(x.masks, m)
		total += bits.OnesCount64(m)
	}
	if total == 0 {
		return -1
	}
	k := draw(total)
	for b, m := range x.masks {
		if n := bits.OnesCount64(m); k >= n {
			k -= n
			continue
		}
		for ; k > 0; k-- {
			m &= m - 1
		}
		return 64*b + bits.TrailingZeros64(m)
	}
	panic("unreachable")
}

// feasible is the mask of block b's nodes that r fits.
func (x *randIndex) feasible(b int, r *hwmodel.Request) uint64 {
	blk := &x.blocks[b]
	m := blk.all
	base := 64 * b
	if r.GPUs > 0 {
		if r.Models != hwmodel.AnyModel {
			var mm uint64
			for _, id := range x.models {
				mm |= blk.models[id]
			}
			m &= mm
		}
		if !r.Fractional() {
			if r.GPUs >= len(blk.whole) {
				return 0
			}
			m &= blk.whole[r.GPUs]
		} else {
			l := int(r.GPUMilli / 100)
			edge := blk.share[l] & m
			if l < 10 {
				edge &^= blk.share[l+1]
			}
			m &= blk.share[min(l+1, 10)]
			for e := edge; e != 0; e &= e - 1 {
				if i := bits.TrailingZeros64(e); x.nodes[base+i].share >= int16(r.GPUMilli) {
					m |= 1 << uint(i)
				}
			}
		}
		if m == 0 {
			return 0
		}
	}
	m = x.atLeast(m, blk.cpu[:], cpuLevel(r.CPUMilli), base, func(n *randNode) bool { return n.cpu >= r.CPUMilli })
	if m == 0 {
		return 0
	}
	return x.atLeast(m, blk.mem[:], memLevel(r.MemoryMiB), base, func(n *randNode) bool { return n.mem >= r.MemoryMiB })
}

// atLeast keeps of mask m the nodes at a level above l, and those at
// level l that ok accepts.
func (x *randIndex) atLeast(m uint64, levels []uint64, l, base int, ok func(*randNode) bool) uint64 {
	edge := levels[l] & m
	var out uint64
	if l+1 < len(levels) {
		out = levels[l+1] & m
		edge &^= out
	}
	for ; edge != 0; edge &= edge - 1 {
		if i := bits.TrailingZeros64(edge); ok(&x.nodes[base+i]) {
			out |= 1 << uint(i)
		}
	}
	return out
}
