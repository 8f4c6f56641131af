package policies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// fullPass is the figure the runner reported before FragTracker: the full
// pass over the nodes in index order, rounded to an integer.
func fullPass(c *hwmodel.Cluster, t TargetWorkload) int64 {
	return int64(math.Round(ClusterFragmentation(c.View(), t)))
}

// trackerRun drives a random run on a cluster: placements of shared and
// whole GPUs, CPU-only shares and MIG instances, releases in any order,
// MIG reconfigurations and unblocks, as an engine would apply them.
type trackerRun struct {
	rng    *rand.Rand
	c      *hwmodel.Cluster
	held   []hwmodel.Placement
	layout []string // named MIG layouts to reconfigure to ("" turns MIG off)
}

func randomTrackerCluster(tb testing.TB, rng *rand.Rand, maxNodes int, mig bool) *hwmodel.Cluster {
	models := []hwmodel.ModelID{model(tb, "V100-32GB"), model(tb, "T4"), model(tb, "A100-80GB"), model(tb, "H100-80GB")}
	nodes := make([]hwmodel.Node, 1+rng.IntN(maxNodes))
	for i := range nodes {
		m := models[rng.IntN(len(models))]
		g := []int{0, 1, 2, 4, 8, 8}[rng.IntN(6)]
		nodes[i] = node(m, g, int64(1+rng.IntN(32))*2000, int64(1+rng.IntN(16))*4096)
		if mig && g > 0 && hwmodel.MIGCapable(m) && rng.IntN(3) == 0 {
			nodes[i].MIG = make([]hwmodel.MIGLayout, g)
			for k := range g {
				if rng.IntN(2) == 0 {
					l, err := hwmodel.NamedMIGLayout(m, []string{"balanced", "all-1g", "halves"}[rng.IntN(3)])
					if err != nil {
						tb.Fatal(err)
					}
					nodes[i].MIG[k] = l
				}
			}
		}
	}
	return newCluster(tb, nodes...)
}

// randomTarget is either a trace's target (TargetFromRequests of random
// requests, popularities such as 37/412) or classes with arbitrary
// popularities that need not sum to 1, halves and quarters included, so
// that nodes' values land on half-integers.
func randomTarget(tb testing.TB, rng *rand.Rand) (t TargetWorkload, trace bool) {
	if rng.IntN(2) == 0 {
		reqs := make([]hwmodel.Request, 1+rng.IntN(400))
		for i := range reqs {
			reqs[i] = randomRequest(tb, rng)
		}
		return TargetFromRequestsCoverage(reqs, []float64{0.5, 0.95, 1}[rng.IntN(3)]), true
	}
	for k := 1 + rng.IntN(6); k > 0; k-- {
		p := []float64{0.5, 0.25, 0.125, rng.Float64(), rng.Float64() / 3}[rng.IntN(5)]
		t.Classes = append(t.Classes, PodClass{randomRequest(tb, rng), p})
	}
	return t, false
}

func (r *trackerRun) step(tb testing.TB) {
	c, rng := r.c, r.rng
	switch op := rng.IntN(20); {
	case op < 10: // place something
		i := rng.IntN(c.NumNodes())
		s := hwmodel.Share{Node: i, CPUMilli: int64(rng.IntN(4)) * 1000, MemoryMiB: int64(rng.IntN(4)) * 1024}
		g := c.NodeGPUs(i)
		switch kind := rng.IntN(4); {
		case g == 0 || kind == 0: // CPU only
		case kind == 1: // a share of one GPU, any milli
			s.GPUs, s.Milli = 1<<rng.IntN(g), int32(1+rng.IntN(1000))
		case kind == 2: // whole GPUs
			s.GPUs, s.Milli = rng.Uint64()&(1<<g-1), hwmodel.MilliPerGPU
			if s.GPUs == 0 {
				s.Milli = 0
			}
		default: // a MIG instance, if the GPU has a free one
			gpu := rng.IntN(g)
			for k := range c.MIGInstanceCount(i, gpu) {
				if c.MIGInstanceFree(i, gpu, k) {
					s = c.MIGShare(i, gpu, k, s.CPUMilli, s.MemoryMiB)
					break
				}
			}
		}
		p := hwmodel.Placement{s}
		if c.Allocate(p) == nil {
			r.held = append(r.held, p)
		}
	case op < 16: // release something
		if len(r.held) > 0 {
			k := rng.IntN(len(r.held))
			c.Release(r.held[k])
			r.held[k] = r.held[len(r.held)-1]
			r.held = r.held[:len(r.held)-1]
		}
	case op < 19: // repartition a GPU (refused while in use: changes nothing)
		i := rng.IntN(c.NumNodes())
		if g := c.NodeGPUs(i); g > 0 && hwmodel.MIGCapable(c.NodeModel(i)) {
			var l hwmodel.MIGLayout
			if name := r.layout[rng.IntN(len(r.layout))]; name != "" {
				var err error
				if l, err = hwmodel.NamedMIGLayout(c.NodeModel(i), name); err != nil {
					tb.Fatal(err)
				}
			}
			gpu := rng.IntN(g)
			remap, err := c.Reconfigure(i, gpu, l)
			if err != nil {
				break
			}
			for _, p := range r.held { // busy instances keep their place under a new index
				if s := &p[0]; s.Node == i && s.Instance > 0 && s.GPUs == 1<<gpu {
					s.Instance = remap[s.Instance-1] + 1
				}
			}
		}
	default:
		i := rng.IntN(c.NumNodes())
		if g := c.NodeGPUs(i); g > 0 {
			c.UnblockMIG(i, rng.IntN(g))
		}
	}
}

// TestFragTrackerMatchesFullPass: on random runs (random clusters,
// targets, placements, releases, MIG on and off) the tracker's figure
// after every batch of changes is the full pass's, rounded as the runner
// rounds it, and so is the old FragMeter.Cluster's. With a trace's
// target nearly every figure comes from the fixed-point total; with
// popularities such as 1/2 and 1/8 figures land on halves, which the
// ordered pass decides.
func TestFragTrackerMatchesFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var fast, checks [2]int // by whether the target is a trace's
	for iter := range 300 {
		mig := iter%2 == 1
		c := randomTrackerCluster(t, rng, []int{4, 40, 400}[iter%3], mig)
		tgt, trace := randomTarget(t, rng)
		kind := 0
		if trace {
			kind = 1
		}
		r := &trackerRun{rng: rng, c: c, layout: []string{"", "balanced", "all-1g", "halves", "4g-3g"}}
		tr := NewFragTracker(c.View(), tgt)
		meter := NewFragMeter(tgt)
		for round := range 150 {
			for k := rng.IntN(4); k > 0; k-- {
				r.step(t)
			}
			passes := tr.passes
			got, want := tr.Milli(), fullPass(c, tgt)
			if old := int64(math.Round(meter.Cluster(c.View()))); old != want {
				t.Fatalf("iteration %d round %d: FragMeter.Cluster rounds to %d, ClusterFragmentation to %d", iter, round, old, want)
			}
			if got != want {
				t.Fatalf("iteration %d round %d (%d nodes, mig %v): tracker %d, full pass %d (%v)", iter, round, c.NumNodes(), mig, got, want, ClusterFragmentation(c.View(), tgt))
			}
			if tr.passes == passes {
				fast[kind]++
			}
			checks[kind]++
		}
	}
	t.Logf("fixed-point answers: %d of %d with a trace's target, %d of %d with dyadic popularities", fast[1], checks[1], fast[0], checks[0])
	if fast[1] < checks[1]*95/100 {
		t.Errorf("with a trace's target the fixed-point total answered %d of %d calls; expected nearly all", fast[1], checks[1])
	}
}

// TestFragTrackerFallsBehind: a tracker that misses more changes than the
// cluster's journal keeps looks at every node and still gives the full
// pass's figure.
func TestFragTrackerFallsBehind(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for iter := range 6 {
		c := randomTrackerCluster(t, rng, 8, iter%2 == 1)
		tgt, _ := randomTarget(t, rng)
		r := &trackerRun{rng: rng, c: c, layout: []string{"", "balanced"}}
		tr := NewFragTracker(c.View(), tgt)
		for round := range 4 {
			before := c.Changes()
			for c.Changes()-before < 3000 {
				r.step(t)
			}
			if c.ChangedNode(before) >= 0 {
				t.Fatalf("iteration %d: the journal still holds change %d of %d; the test needs more changes", iter, before, c.Changes())
			}
			if got, want := tr.Milli(), fullPass(c, tgt); got != want {
				t.Fatalf("iteration %d round %d: tracker %d, full pass %d", iter, round, got, want)
			}
		}
	}
}

// reshift rebuilds the fixed-point book with k fraction bits, so that a
// test can make its error bound coarse and the ordered pass frequent.
func (f *FragTracker) reshift(k int) {
	f.shift, f.sum = k, 0
	for i := range f.frag {
		f.fixed[i], f.gen[i] = 0, 0
		f.update(i)
	}
}

// TestFragTrackerCoarse: with few fraction bits the bound B is wide, so
// both the fixed-point answer and the ordered pass are taken often, and
// near-half figures are decided by the pass; the figures still agree.
func TestFragTrackerCoarse(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	count := map[bool]int{}
	for iter := range 120 {
		c := randomTrackerCluster(t, rng, 60, iter%2 == 0)
		tgt, _ := randomTarget(t, rng)
		r := &trackerRun{rng: rng, c: c, layout: []string{"", "balanced"}}
		tr := NewFragTracker(c.View(), tgt)
		if tr.shift == 0 {
			t.Fatalf("iteration %d: fixed-point book off for target %+v", iter, tgt)
		}
		tr.reshift(6 + rng.IntN(8))
		for round := range 100 {
			r.step(t)
			passes := tr.passes
			if got, want := tr.Milli(), fullPass(c, tgt); got != want {
				t.Fatalf("iteration %d round %d: shift %d: tracker %d, full pass %d", iter, round, tr.shift, got, want)
			}
			count[tr.passes > passes]++
		}
	}
	if count[false] < 100 || count[true] < 100 {
		t.Errorf("fixed-point answers %d, ordered passes %d: want both taken", count[false], count[true])
	}
}

// TestFragTrackerHalves: figures exactly on a half round up, as
// math.Round does, and the tracker hands them to the ordered pass.
func TestFragTrackerHalves(t *testing.T) {
	v := model(t, "V100-32GB")
	tgt := target(PodClass{gpuReq(1, 1000, 0), 0.5})
	c := newCluster(t, node(v, 1, 8000, 8192), node(v, 1, 8000, 8192), node(v, 1, 8000, 8192))
	tr := NewFragTracker(c.View(), tgt)
	if got := tr.Milli(); got != 0 { // an idle GPU fits the class: nothing is fragmented
		t.Fatalf("idle cluster: %d", got)
	}
	for k, want := range []int64{1, 1, 2} { // 0.5, 1.0, 1.5 → 1, 1, 2
		busy(t, c, k, 1, 999, 0) // leaves 1 milli that the class cannot use: 0.5 fragmented
		passes := tr.passes
		if got, full := tr.Milli(), fullPass(c, tgt); got != want || full != want {
			t.Fatalf("after %d nodes: tracker %d, full pass %d, want %d", k+1, got, full, want)
		}
		if k != 1 && tr.passes == passes {
			t.Errorf("after %d nodes: a figure on a half came from the fixed-point total", k+1)
		}
	}
}

// TestFragTrackerUnboundedTarget: a target the fixed-point book cannot
// bound (a negative popularity) is still measured exactly, by the pass.
func TestFragTrackerUnboundedTarget(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	tgt := target(PodClass{gpuReq(1, 1000, 1000), 1.5}, PodClass{gpuReq(1, 300, 0), -0.25}, PodClass{cpuOnly(500), 0.1})
	c := randomTrackerCluster(t, rng, 50, true)
	r := &trackerRun{rng: rng, c: c, layout: []string{"", "all-1g"}}
	tr := NewFragTracker(c.View(), tgt)
	if tr.shift != 0 {
		t.Fatalf("shift %d for a negative popularity", tr.shift)
	}
	for round := range 200 {
		r.step(t)
		if got, want := tr.Milli(), fullPass(c, tgt); got != want {
			t.Fatalf("round %d: tracker %d, full pass %d", round, got, want)
		}
	}
}

// TestFragTrackerBound: the shift keeps the fixed-point total below 2^62
// on a cluster where every node is all fragmentation (no class fits).
func TestFragTrackerBound(t *testing.T) {
	h := model(t, "H100-80GB")
	nodes := make([]hwmodel.Node, 10000)
	for i := range nodes {
		nodes[i] = node(h, 8, 1000, 1024)
	}
	tgt := target(PodClass{gpuReq(1, 1000, 2000), 0.7}, PodClass{cpuOnly(500), 0.3}) // CPU too small for the GPU class
	c := newCluster(t, nodes...)
	tr := NewFragTracker(c.View(), tgt)
	want := fullPass(c, tgt)
	if got := tr.Milli(); got != want || want != 80000*1000 {
		t.Fatalf("tracker %d, full pass %d, want %d", got, want, 80000*1000)
	}
	if tr.sum >= 1<<62 || tr.sum < 1<<59 {
		t.Errorf("fixed-point total %#x with shift %d: want in [2^59, 2^62)", tr.sum, tr.shift)
	}
}

func BenchmarkFragTracker(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c, _, tgt := syntheticFill(b, n, 1)
			tr := NewFragTracker(c.View(), tgt)
			for i := 0; b.Loop(); i++ {
				_ = c.Allocate(hwmodel.Placement{{Node: i % c.NumNodes(), CPUMilli: 1}})
				_ = tr.Milli()
			}
		})
	}
}
