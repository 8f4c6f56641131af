package policies

import (
	"errors"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// FGD, fragmentation gradient descent: the feasible node (and, for a
// sharing request, the GPU) where placing the request makes the node's
// expected fragmentation for the target workload (see NodeFragmentation)
// grow least. As in the reference simulator, the score is
//
//	score = int(100 · sigmoid((frag before − frag after) / 1000))
//
// so a placement that leaves fragmentation unchanged scores 50, and one
// that adds a whole GPU of it about 26. For a sharing request every GPU
// with enough free share is tried and the node's score is the best of
// them; the GPU is the lowest-numbered one reaching it. A whole-GPU
// request takes the lowest-numbered idle GPUs (which idle GPUs does not
// change fragmentation); a CPU-only request changes only the node's free
// CPU, which matters to classes that then lack CPU. Ties between nodes go
// to the first in the tie order, as for every scored placement
// (scored.go).
//
// Speed: a node's fragmentation is cached until its generation
// (hwmodel.Cluster.Generation) changes, and so is its score for each
// request shape (GPUs, GPUMilli, CPUMilli, Models; up to maxShapes of
// them, fewer on clusters of over about 2,000 nodes) in a shapeIndex, so a
// placement recomputes only the nodes that changed since the same shape
// was last placed (the cluster's journal lists them) and finds the best
// node in O(log n).

// maxShapes bounds how many request shapes a placer keeps scores for, and
// maxCacheEntries their size (node entries of score caches, 8 bytes each,
// and of trees, 4 bytes); further shapes are scored by a pass over the
// nodes.
const (
	maxShapes       = 1024
	maxCacheEntries = 4 << 20
)

// fragClass is one class of a compiled target workload.
type fragClass struct {
	mi  int32 // index of its GPUMilli in fragModel.millis; -1 for CPU-only
	req hwmodel.Request
	p   float64
}

// fragModel is a target workload compiled for fast evaluation: the free
// milli of a node's GPUs is sorted once per evaluation and merged with
// the classes' distinct GPUMilli, so each class then costs O(1). It sums
// like NodeFragmentation (see fragTally), so results are bit-identical.
type fragModel struct {
	millis  []int32     // distinct GPUMilli of the GPU classes, descending
	classes []fragClass // in the target's order
	cnt     []int32     // scratch, per milli: GPUs with at least that free
	big     []int64     // scratch, per milli: their free milli
}

func compileTarget(t TargetWorkload) fragModel {
	var m fragModel
	for _, k := range t.Classes {
		if k.Req.GPUMilli > 0 && !slices.Contains(m.millis, k.Req.GPUMilli) {
			m.millis = append(m.millis, k.Req.GPUMilli)
		}
	}
	slices.SortFunc(m.millis, func(a, b int32) int { return int(b) - int(a) })
	for _, k := range t.Classes {
		m.classes = append(m.classes, fragClass{mi: int32(slices.Index(m.millis, k.Req.GPUMilli)), req: k.Req, p: k.Popularity})
	}
	m.cnt = make([]int32, len(m.millis))
	m.big = make([]int64, len(m.millis))
	return m
}

// eval is the fragmentation of a node of GPU model model whose GPUs have
// free milli free (any order) and cpu milli-CPU free.
func (m *fragModel) eval(free []int32, cpu int64, model hwmodel.ModelID) float64 {
	var buf [hwmodel.MaxGPUsPerNode]int32
	s := buf[:len(free)]
	var total int64
	for k, f := range free { // insertion sort, descending
		total += int64(f)
		j := k
		for ; j > 0 && s[j-1] < f; j-- {
			s[j] = s[j-1]
		}
		s[j] = f
	}
	if total == 0 {
		return 0
	}
	j, acc := 0, int64(0)
	for u, milli := range m.millis {
		for j < len(s) && s[j] >= milli {
			acc += int64(s[j])
			j++
		}
		m.cnt[u], m.big[u] = int32(j), acc
	}
	var tally fragTally
	for k := range m.classes {
		c := &m.classes[k]
		fits, small := false, int64(0)
		if c.mi >= 0 {
			fits, small = m.cnt[c.mi] >= int32(c.req.GPUs), total-m.big[c.mi]
		}
		tally.add(c.p, &c.req, total, cpu, model, fits, small)
	}
	return tally.sum()
}

// evalNode is eval on node i's current state.
func (m *fragModel) evalNode(c hwmodel.ClusterView, i int) float64 {
	var buf [hwmodel.MaxGPUsPerNode]int32
	free := buf[:c.NodeGPUs(i)]
	for g := range free {
		free[g] = c.FreeMilli(i, g)
	}
	return m.eval(free, c.FreeCPU(i), c.NodeModel(i))
}

// FragMeter measures fragmentation like NodeFragmentation and
// ClusterFragmentation, but keeps each node's value until the node's
// generation changes, so measuring a cluster after each placement costs a
// pass over the nodes' generations plus one evaluation of each changed
// node. It follows one cluster at a time (a different cluster resets it)
// and is not safe for concurrent use. Values agree with
// NodeFragmentation up to floating-point rounding.
type FragMeter struct {
	m    fragModel
	c    hwmodel.ClusterView
	gen  []uint64 // per node: generation+1 the value is for; 0 none
	frag []float64
}

// NewFragMeter returns a meter for the target workload t.
func NewFragMeter(t TargetWorkload) *FragMeter {
	return &FragMeter{m: compileTarget(t)}
}

func (f *FragMeter) follow(c hwmodel.ClusterView) {
	if f.c == c && len(f.gen) == c.NumNodes() {
		return
	}
	f.c = c
	f.gen = make([]uint64, c.NumNodes())
	f.frag = make([]float64, c.NumNodes())
}

// Node is node i's fragmentation in milli-GPU.
func (f *FragMeter) Node(c hwmodel.ClusterView, i int) float64 {
	f.follow(c)
	if g := c.Generation(i) + 1; f.gen[i] != g {
		f.frag[i], f.gen[i] = f.m.evalNode(c, i), g
	}
	return f.frag[i]
}

// Cluster is the cluster's fragmentation in milli-GPU, the sum over nodes
// in index order.
func (f *FragMeter) Cluster(c hwmodel.ClusterView) float64 {
	var sum float64
	for i := 0; i < c.NumNodes(); i++ {
		sum += f.Node(c, i)
	}
	return sum
}

// errNoTarget is returned for "fgd" without a target workload.
var errNoTarget = errors.New(`placement "fgd" needs a target workload (PlacerConfig.Target, e.g. TargetFromRequests of the trace's requests)`)

// fgdState is the FGD placer's model: the target workload compiled, and
// each node's fragmentation cached by generation. (Scores are cached per
// request shape by the placer's shapeIndex.)
type fgdState struct {
	meter *FragMeter
	// scratch, so that score clears no arrays on the stack
	free [hwmodel.MaxGPUsPerNode]int32
	seen [hwmodel.MaxGPUsPerNode]struct {
		free  int32
		score int64
	}
}

func newFGD(cfg PlacerConfig) (Placer, error) {
	if len(cfg.Target.Classes) == 0 {
		return nil, errNoTarget
	}
	p := newScored(kindFGD, cfg)
	p.fgd = &fgdState{meter: NewFragMeter(cfg.Target)}
	return p, nil
}

// fgdScore turns a fragmentation change (before − after, milli-GPU) into
// the reference's integer score.
func fgdScore(delta float64) int64 {
	return int64(1.0 / (1.0 + math.Exp(-(delta / 1000))) * maxScore)
}

// score is node i's FGD score for r and, for a sharing request, its GPU.
func (f *fgdState) score(c hwmodel.ClusterView, i int, r *hwmodel.Request) (int64, int) {
	m := &f.meter.m
	before := f.meter.Node(c, i)
	model := c.NodeModel(i) // not c.Node(i): that copies a MIG node's layouts
	free := f.free[:c.NodeGPUs(i)]
	for g := range free {
		free[g] = c.FreeMilli(i, g)
	}
	cpu := c.FreeCPU(i) - r.CPUMilli
	switch {
	case r.GPUs == 0:
		return fgdScore(before - m.eval(free, cpu, model)), -1
	case !r.Fractional():
		for g, k := 0, r.GPUs; g < len(free) && k > 0; g++ {
			if free[g] == hwmodel.MilliPerGPU {
				free[g] = 0
				k--
			}
		}
		return fgdScore(before - m.eval(free, cpu, model)), -1
	}
	// GPUs with equal free share give equal scores: evaluate each value once.
	seen := &f.seen
	nseen := 0
	best, bestG := int64(-1), -1
	for g, v := range free {
		if v < r.GPUMilli {
			continue
		}
		s := int64(-1)
		for _, e := range seen[:nseen] {
			if e.free == v {
				s = e.score
				break
			}
		}
		if s < 0 {
			free[g] = v - r.GPUMilli
			s = fgdScore(before - m.eval(free, cpu, model))
			free[g] = v
			seen[nseen].free, seen[nseen].score = v, s
			nseen++
		}
		if s > best {
			best, bestG = s, g
		}
	}
	return best, bestG
}
