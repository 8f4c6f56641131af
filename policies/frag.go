package policies

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// Fragmentation, as the FGD paper (Weng et al., ATC'23) measures it.
//
// A node's idle GPU capacity is fragmented for one request class when the
// class cannot use it. For a class that asks for GPUs:
//
//   - the node's GPU model is not one the class accepts, or the node lacks
//     the CPU for it, or it has fewer than GPUs GPUs with at least GPUMilli
//     free each: all of the node's free GPU milli is fragmented;
//   - otherwise the class fits, and only the free milli on GPUs with less
//     than GPUMilli free is fragmented (a whole-GPU class: every partly
//     used GPU's remainder).
//
// For a CPU-only class all of the node's free GPU milli counts as
// fragmented: such a request never uses a GPU, fit or not. (The reference
// simulator counts it so, and its published fragmentation ratios, about
// 14% of idle GPUs on an empty cluster for the default Alibaba trace, are
// exactly the CPU-only classes' share.)
//
// The node's fragmentation for a target workload is the expectation over
// its classes: Σ popularity × fragmented milli. Memory plays no part, as in
// the paper. The cluster's is the sum over nodes.
//
// The sum is taken exactly as the reference does in floating point: each
// class adds popularity × milli to one of six tallies by why it is
// fragmented (lacks both CPU and GPU room, lacks GPU room or fits, lacks
// CPU only, CPU-only class with or without CPU, wrong model), in the
// target's class order, and the tallies are added in that order. FGD
// truncates scores to integers, so a last-bit difference can change a
// decision; summed this way, placements follow the reference's.

// fragTally is the six tallies of a node's fragmentation.
type fragTally struct{ lackBoth, lackGPU, lackCPU, cpuFits, cpuLacks, noAccess float64 }

func (t *fragTally) sum() float64 {
	return t.lackBoth + t.lackGPU + t.lackCPU + t.cpuFits + t.cpuLacks + t.noAccess
}

// add tallies class r (popularity p) on a node whose GPUs have free milli
// free (summing to total), with cpu milli-CPU free and GPU model m.
// fits reports whether the node has r.GPUs GPUs with r.GPUMilli free, and
// small is the free milli on the other GPUs.
func (t *fragTally) add(p float64, r *hwmodel.Request, total, cpu int64, m hwmodel.ModelID, fits bool, small int64) {
	all := p * float64(total)
	switch {
	case r.GPUMilli == 0:
		if cpu >= r.CPUMilli {
			t.cpuFits += all
		} else {
			t.cpuLacks += all
		}
	case !r.Models.Accepts(m):
		t.noAccess += all
	case fits && cpu >= r.CPUMilli:
		t.lackGPU += p * float64(small) // fits: only the too-small GPUs' free milli
	case fits:
		t.lackCPU += all
	case cpu >= r.CPUMilli:
		t.lackGPU += all
	default:
		t.lackBoth += all
	}
}

// NodeFragmentation is the expected fragmented GPU capacity of node i, in
// milli-GPU, for the target workload t.
func NodeFragmentation(c hwmodel.ClusterView, node int, t TargetWorkload) float64 {
	n := struct {
		GPUs  int
		Model hwmodel.ModelID
	}{c.NodeGPUs(node), c.NodeModel(node)} // not c.Node: that copies a MIG node's layouts
	var buf [hwmodel.MaxGPUsPerNode]int32
	free := buf[:n.GPUs]
	var total int64
	for g := range free {
		free[g] = c.FreeMilli(node, g)
		total += int64(free[g])
	}
	if total == 0 {
		return 0
	}
	cpu := c.FreeCPU(node)
	var tally fragTally
	for k := range t.Classes {
		r := &t.Classes[k].Req
		fit, small := 0, int64(0)
		for _, f := range free {
			if f >= r.GPUMilli {
				fit++
			} else {
				small += int64(f)
			}
		}
		tally.add(t.Classes[k].Popularity, r, total, cpu, n.Model, fit >= r.GPUs, small)
	}
	return tally.sum()
}

// ClusterFragmentation is the sum of NodeFragmentation over all nodes, in
// milli-GPU. Divided by the cluster's idle GPU milli it is the paper's
// fragmentation ratio. It costs a pass over every node and every class.
func ClusterFragmentation(c hwmodel.ClusterView, t TargetWorkload) float64 {
	var sum float64
	for i := 0; i < c.NumNodes(); i++ {
		sum += NodeFragmentation(c, i, t)
	}
	return sum
}

// FragTracker keeps a cluster's fragmentation current as the cluster
// changes: math.Round(ClusterFragmentation(c, t)) as an integer, the
// figure the time series report, at the cost of re-evaluating the nodes
// the cluster's change journal (hwmodel.Cluster.Changes, ChangedNode)
// lists since the last call plus O(1), rather than a pass over every node
// after every batch of events. A tracker that falls further behind than
// the journal keeps re-evaluates every node, which the journal's length
// (at least four changes per node) amortises to O(1) per change.
//
// The figure is exactly the full pass's: ClusterFragmentation sums the
// nodes' float64 values in index order, and that ordered sum's rounding
// errors, not the exact sum, decide math.Round near a half. A running
// float sum would drift from it, so the tracker keeps two books per node:
// its value v (bit-identical to NodeFragmentation, as FragMeter's is) and
// q = round(v·2^k), an integer, whose total Q is exact however the nodes
// change. With n nodes, u = 2^-53 and γ = n·u/(1−n·u), the ordered float
// sum Ŝ lies within γ·S of the exact sum S of the values (recursive
// summation of nonnegative terms), and S within n/2 units 2^-k of Q·2^-k,
// so
//
//	|Ŝ − Q·2^-k| ≤ B = (n/2 + γ·(Q + n/2))·2^-k.
//
// math.Round is floor(x + ½) on nonnegative x, so when no half-integer lies
// within B of Q·2^-k it rounds every x in that interval, Ŝ included, to
// the integer nearest Q·2^-k, which the tracker reads off Q's bits.
// Otherwise it sums the values in node order as ClusterFragmentation does,
// so the result is the full pass's, bit for bit, either way. That pass is
// rare: B is under 10^-4 milli on 10,000 nodes, and figures that are a
// half in exact arithmetic (popularities k/N make them multiples of 1/N)
// come about once in N calls. No call took it on the whole Philly trace
// under four policies (605,012 calls) nor on a 20,000-job synthetic run;
// 59 of 42,915 did on the openb default trace.
//
// k is the largest that keeps Q below 2^62 for any state of the cluster:
// no node's value exceeds its GPUs × 1000 milli × the target's total
// popularity, and the tracker bounds each by twice that. A target whose
// popularities are negative or not finite, or a value outside the bound,
// turns the fixed-point book off and every Milli sums in node order.
type FragTracker struct {
	m      fragModel
	c      hwmodel.ClusterView
	seen   int64     // the cluster's Changes() when the tracker last looked
	gen    []uint64  // per node: Generation+1 that frag is for
	frag   []float64 // per node: its fragmentation, as NodeFragmentation
	fixed  []int64   // per node: frag·2^shift, rounded
	sum    int64     // Σ fixed, exact
	shift  int       // k; 0 when the fixed-point book is off
	perGPU float64   // bound on a node's value per GPU
	passes int       // Milli calls that summed frag in node order
}

// NewFragTracker returns a tracker of c's fragmentation for target t. It
// evaluates every node now and from then on re-evaluates only the nodes
// the cluster's journal lists as changed. It only reads c; it is not safe
// for concurrent use.
func NewFragTracker(c hwmodel.ClusterView, t TargetWorkload) *FragTracker {
	n := c.NumNodes()
	f := &FragTracker{m: compileTarget(t), c: c, gen: make([]uint64, n), frag: make([]float64, n), fixed: make([]int64, n)}
	var pop float64
	ok := true
	for _, k := range t.Classes {
		if !(k.Popularity >= 0) || math.IsInf(k.Popularity, 0) {
			ok = false
		}
		pop += k.Popularity
	}
	f.perGPU = 2 * pop * hwmodel.MilliPerGPU
	if bound := f.perGPU * float64(c.TotalGPUs()); ok && !math.IsInf(bound, 0) {
		_, e := math.Frexp(bound) // bound < 2^e
		f.shift = min(62, 62-e)
	}
	if f.shift < 1 {
		f.shift = 0
	}
	f.seen = c.Changes()
	for i := range n {
		f.update(i)
	}
	return f
}

// update re-evaluates node i, unless its value is for its present
// generation already (a node the journal lists twice).
func (f *FragTracker) update(i int) {
	g := f.c.Generation(i) + 1
	if f.gen[i] == g {
		return
	}
	f.gen[i] = g
	v := f.m.evalNode(f.c, i)
	f.frag[i] = v
	if f.shift == 0 {
		return
	}
	if !(v >= 0 && v <= f.perGPU*float64(f.c.NodeGPUs(i))) {
		f.shift = 0
		return
	}
	q := int64(math.Round(math.Ldexp(v, f.shift)))
	f.sum += q - f.fixed[i]
	f.fixed[i] = q
}

// Milli is the cluster's fragmentation in milli-GPU, rounded:
// int64(math.Round(ClusterFragmentation(c, t))) for the cluster's current
// state.
func (f *FragTracker) Milli() int64 {
	now := f.c.Changes()
	for seq := f.seen; seq < now; seq++ {
		i := f.c.ChangedNode(seq)
		if i < 0 { // fallen behind the journal: look at every node
			for k := range f.frag {
				f.update(k)
			}
			break
		}
		f.update(i)
	}
	f.seen = now
	if r, ok := f.rounded(); ok {
		return r
	}
	f.passes++
	var sum float64
	for _, v := range f.frag {
		sum += v
	}
	return int64(math.Round(sum))
}

// rounded is Milli from the fixed-point total, when B (see FragTracker)
// proves it equal to the ordered sum's rounding; ok is false otherwise.
func (f *FragTracker) rounded() (r int64, ok bool) {
	k := f.shift
	if k == 0 {
		return 0, false
	}
	n := float64(len(f.frag))
	g := n * 0x1p-53
	g /= 1 - g
	// B in units of 2^-k, with room for this float arithmetic's own
	// rounding: the slack is far below 2^53, so one part in 2^20 and a
	// unit more cover it.
	b := (n/2 + g*(float64(f.sum)+n/2)) * (1 + 0x1p-20)
	half := int64(1) << (k - 1)
	if !(b+1 < float64(half)) {
		return 0, false
	}
	bound := int64(b) + 1
	frac := f.sum & (1<<k - 1)
	if d := frac - half; d <= bound && d >= -bound {
		return 0, false
	}
	r = f.sum >> k
	if frac > half {
		r++
	}
	return r, true
}
