package policies

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

var paperPlacements = []string{"bestfit", "dotprod", "packing", "clustering", "random", "fgd"}

// mustPlacer builds a placement by name; fgd gets tgt (or a default).
func mustPlacer(tb testing.TB, name string, seed uint64, tgt TargetWorkload) Placer {
	tb.Helper()
	if len(tgt.Classes) == 0 {
		tgt = target(PodClass{gpuReq(1, 1000, 1000), 0.5}, PodClass{gpuReq(1, 500, 1000), 0.5})
	}
	p, err := NewPlacerWith(name, PlacerConfig{Seed: seed, Target: tgt})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func share(n int, gpu int, milli int32, r hwmodel.Request) hwmodel.Placement {
	return hwmodel.Placement{{Node: n, GPUs: 1 << uint(gpu), Milli: milli, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}}
}

func wholeOn(n int, mask uint64, r hwmodel.Request) hwmodel.Placement {
	return hwmodel.Placement{{Node: n, GPUs: mask, Milli: 1000, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}}
}

// TestPaperPlacements checks each of the paper's rules on small clusters,
// with scores worked out by hand in the comments. No case has a tie.
func TestPaperPlacements(t *testing.T) {
	v100 := model(t, "V100-32GB")
	type tc struct {
		name   string
		policy string
		tgt    TargetWorkload
		nodes  []hwmodel.Node
		setup  func(*testing.T, *hwmodel.Cluster)
		req    hwmodel.Request
		want   hwmodel.Placement
	}
	one := hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 4000, MemoryMiB: 1024}
	// n0: 8 idle GPUs, 64 CPUs; n1: 4 GPUs with 3 busy, 32 CPUs; n2: 2 idle, 8 CPUs.
	bf := []hwmodel.Node{node(v100, 8, 64000, 1<<20), node(v100, 4, 32000, 1<<20), node(v100, 2, 8000, 1<<20)}
	bfSetup := func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 1, 0b0111, 1000, 0) }
	// packing: n0 8 idle; n1 4 GPUs, GPU 0 has 300 free; n2 2 idle.
	pk := []hwmodel.Node{node(v100, 8, 96000, 1<<20), node(v100, 4, 96000, 1<<20), node(v100, 2, 96000, 1<<20)}
	pkSetup := func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 1, 0b1, 700, 0) }
	// clustering: n0 holds a sharing job; n1 a 1-GPU job and a sharing
	// job; n2 nothing; n3 a 2-GPU job. All 8-GPU nodes.
	cl := []hwmodel.Node{node(v100, 8, 96000, 1<<20), node(v100, 8, 96000, 1<<20), node(v100, 8, 96000, 1<<20), node(v100, 8, 96000, 1<<20)}
	clSetup := func(t *testing.T, c *hwmodel.Cluster) {
		busy(t, c, 0, 0b1, 500, 0)
		busy(t, c, 1, 0b01, 1000, 0)
		busy(t, c, 1, 0b10, 700, 0)
		busy(t, c, 3, 0b11, 1000, 0)
	}
	wholeHalf := target(PodClass{gpuReq(1, 1000, 1000), 0.5}, PodClass{gpuReq(1, 400, 1000), 0.5})
	cases := []tc{
		{
			// n0: ½·60,000/128,000 + ½·7,000/8,000 = 0.671875 → 32;
			// n1: ½·28,000/128,000 + 0 = 0.109375 → 89;
			// n2: ½·4,000/128,000 + ½·1,000/8,000 = 0.078125 → 92.
			name: "bestfit: least free CPU and GPU left", policy: "bestfit",
			nodes: bf, setup: bfSetup, req: one, want: wholeOn(2, 0b1, one),
		},
		{
			// dot = free·req over the two normalised dimensions; score
			// int(100·(1 − dot/2)): n0 dot = ½·(4/128) + 1·(1/8) =
			// 0.140625 → 92; n1 (32 CPUs, 1 GPU free) = ¼·(4/128) +
			// ⅛·⅛ = 0.0234375 → 98. (n2 is left out: it would tie n1.)
			name: "dotprod: the node whose free resources align least", policy: "dotprod",
			nodes: bf[:2], setup: bfSetup, req: one, want: wholeOn(1, 0b1000, one),
		},
		{
			// n0 all idle: max(33−8, 8) = 25; n1 GPU 0 shared with 300
			// free: 100 − ⌊30/10⌋ = 97; n2 all idle: max(33−2, 2) = 31.
			name: "packing: a shared GPU first", policy: "packing",
			nodes: pk, setup: pkSetup, req: frac(200), want: share(1, 0, 200, frac(200)),
		},
		{
			// n1: an idle GPU on a used node: 50 − 1 = 49; n0 25; n2 31.
			name: "packing: then an idle GPU on a used node", policy: "packing",
			nodes: pk, setup: pkSetup, req: frac(400), want: share(1, 1, 400, frac(400)),
		},
		{
			name: "packing: whole GPUs also go to a used node", policy: "packing",
			nodes: pk, setup: pkSetup, req: one, want: wholeOn(1, 0b10, one),
		},
		{
			// Without a used node, the smallest idle node: n2 (31) over n0 (25).
			name: "packing: then the smallest idle node", policy: "packing",
			nodes: pk, req: one, want: wholeOn(2, 0b1, one),
		},
		{
			// base = ⌊25·(8000 − free)/8000⌋. n0 (sharing only, 7,500
			// free): 1 + 75 = 76; n1 (sharing and 1-GPU, 6,300): 5 + 50 =
			// 55; n2 (nothing): 0 + 25; n3 (2-GPU only): 6 + 0. The GPU
			// is n0's tightest: GPU 0.
			name: "clustering: a sharing job joins sharing jobs", policy: "clustering",
			nodes: cl, setup: clSetup, req: frac(200), want: share(0, 0, 200, frac(200)),
		},
		{
			// n3 (its kind only): 6 + 75 = 81.
			name: "clustering: a 2-GPU job joins 2-GPU jobs", policy: "clustering",
			nodes: cl, setup: clSetup, req: whole(2), want: wholeOn(3, 0b1100, whole(2)),
		},
		{
			// n1 holds 1-GPU jobs among others: 55; n2 empty: 25.
			name: "clustering: a 1-GPU job joins a mixed node", policy: "clustering",
			nodes: cl, setup: clSetup, req: one, want: wholeOn(1, 0b100, one),
		},
		{
			// No node holds 4-GPU jobs: the empty node (25) beats nodes
			// holding other kinds (1, 5, 6).
			name: "clustering: a new kind takes an empty node", policy: "clustering",
			nodes: cl, setup: clSetup, req: whole(4), want: wholeOn(2, 0b1111, whole(4)),
		},
		{
			// Target {1 GPU: ½, 0.4 GPU: ½}; one node with GPUs free
			// 400/1000, and one idle node. Before, n0's 400 is
			// fragmented for the 1-GPU class: ½·400 = 200.
			// n0 GPU 0 → 100/1000: both classes fit, 100 fragmented for
			// each: 100; Δ = +100 → int(100·σ(0.1)) = 52.
			// n0 GPU 1 → 400/700: 1 GPU no longer fits (½·1,100), 0.4
			// fits everywhere: 550; Δ = −350 → 41.
			// n1 → 700/1000: ½·700 for the 1-GPU class; Δ = −350 → 41.
			name: "fgd: the placement whose fragmentation grows least", policy: "fgd", tgt: wholeHalf,
			nodes: []hwmodel.Node{node(v100, 2, 32000, 1<<20), node(v100, 2, 32000, 1<<20)},
			setup: func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 0, 0b1, 600, 0) },
			req:   frac(300), want: share(0, 0, 300, frac(300)),
		},
		{
			// Target {0.4 GPU: 1}; GPUs free 400/1000. GPU 0 → 100 leaves
			// 100 unusable: Δ = −100 → 47; GPU 1 → 700 still hosts the
			// class: Δ = 0 → 50. FGD keeps the 400 whole, unlike the
			// tightest-GPU rule of the other placements.
			name: "fgd: chooses the GPU, not always the tightest", policy: "fgd",
			tgt:   target(PodClass{gpuReq(1, 400, 1000), 1}),
			nodes: []hwmodel.Node{node(v100, 2, 32000, 1<<20)},
			setup: func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 0, 0b1, 600, 0) },
			req:   frac(300), want: share(0, 1, 300, frac(300)),
		},
		{
			// Target {1 GPU with 8 CPUs: 1}. A 4-CPU job on n0 (10 CPUs)
			// leaves 6: the class no longer fits, all 2,000 milli become
			// fragmented, Δ = −2000 → 11; on n1 nothing changes: 50.
			// Best fit would pick n0.
			name: "fgd: a CPU-only job avoids starving a node of CPU", policy: "fgd",
			tgt:   target(PodClass{gpuReq(1, 1000, 8000), 1}),
			nodes: []hwmodel.Node{node(v100, 2, 10000, 1<<20), node(v100, 2, 64000, 1<<20)},
			req:   cpuOnly(4000), want: hwmodel.Placement{{Node: 1, CPUMilli: 4000, MemoryMiB: 1024}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, append([]hwmodel.Node(nil), tc.nodes...)...)
			if tc.setup != nil {
				tc.setup(t, c)
			}
			p := mustPlacer(t, tc.policy, 1, tc.tgt)
			got, ok := p.Place(nil, c.View(), tc.req)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, tc.want)
			}
		})
	}
}

// TestScoredTiesFollowSeededOrder: when every node scores the same, each
// scored placement (built by name, as drivers do) takes the first node of
// its tie order: PlacerConfig.TieRank when given, else a permutation drawn
// from the seed, which differs between seeds.
func TestScoredTiesFollowSeededOrder(t *testing.T) {
	v100 := model(t, "V100-32GB")
	nodes := make([]hwmodel.Node, 16)
	for i := range nodes {
		nodes[i] = node(v100, 8, 64000, 1<<20)
	}
	c := newCluster(t, nodes...)
	for _, name := range paperPlacements {
		if name == "random" {
			continue
		}
		picks := map[int]bool{}
		for seed := uint64(0); seed < 8; seed++ {
			first, ok := mustPlacer(t, name, seed, TargetWorkload{}).Place(nil, c.View(), whole(1)) // identical nodes tie
			if !ok {
				t.Fatal("no placement")
			}
			rank := newScored(kindBestFit, PlacerConfig{Seed: seed}).ties(c.View())
			if rank[first[0].Node] != 0 {
				t.Fatalf("%s seed %d: picked node %d, ranked %d in the seed's tie order", name, seed, first[0].Node, rank[first[0].Node])
			}
			picks[first[0].Node] = true
		}
		if len(picks) < 2 {
			t.Fatalf("%s: 8 seeds all chose node %v", name, picks)
		}
		given := make([]int, len(nodes))
		for i := range given {
			given[i] = (i + 11) % len(nodes) // node 5 ranks first
		}
		p, err := NewPlacerWith(name, PlacerConfig{Seed: 1, TieRank: given, Target: target(PodClass{whole(1), 1})})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := p.Place(nil, c.View(), whole(1)); got[0].Node != 5 {
			t.Fatalf("%s with TieRank: picked node %d, want 5", name, got[0].Node)
		}
	}
}

func TestRandomPlacementIsSeeded(t *testing.T) {
	v100 := model(t, "V100-32GB")
	run := func(seed uint64) []hwmodel.Share {
		nodes := make([]hwmodel.Node, 40)
		for i := range nodes {
			nodes[i] = node(v100, 4, 64000, 1<<20)
		}
		c := newCluster(t, nodes...)
		p := mustPlacer(t, "random", seed, TargetWorkload{})
		var out []hwmodel.Share
		for k := 0; k < 30; k++ {
			got, ok := p.Place(nil, c.View(), frac(300))
			if !ok {
				t.Fatal("no placement")
			}
			if err := c.Allocate(got); err != nil {
				t.Fatal(err)
			}
			out = append(out, got...)
		}
		return out
	}
	a, b, other := run(7), run(7), run(8)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different placements")
	}
	if reflect.DeepEqual(a, other) {
		t.Fatal("different seeds, same placements")
	}
	gpus := map[int]bool{}
	for _, s := range a {
		gpus[int(s.GPUs)] = true
	}
	if len(gpus) < 2 {
		t.Fatalf("random GPU choice always took mask %v", gpus)
	}
}

// TestPaperPlacementsRespectConstraints: model, CPU and memory decide
// feasibility for every placement, whatever they prefer.
func TestPaperPlacementsRespectConstraints(t *testing.T) {
	v100 := model(t, "V100-32GB")
	t4 := model(t, "T4")
	nodes := []hwmodel.Node{
		node(v100, 8, 96000, 1<<20), // wrong model
		node(t4, 2, 2000, 1<<20),    // short of CPU
		node(t4, 2, 96000, 1024),    // short of memory
		node(t4, 4, 96000, 1<<20),   // the only fit; GPU 0 is full
	}
	for _, name := range paperPlacements {
		for _, r := range []hwmodel.Request{
			{GPUs: 1, GPUMilli: 1000, CPUMilli: 4000, MemoryMiB: 4096, Models: hwmodel.Of(t4)},
			{GPUs: 1, GPUMilli: 250, CPUMilli: 4000, MemoryMiB: 4096, Models: hwmodel.Of(t4)},
			{GPUs: 2, GPUMilli: 1000, CPUMilli: 4000, MemoryMiB: 4096, Models: hwmodel.Of(t4)},
		} {
			c := newCluster(t, append([]hwmodel.Node(nil), nodes...)...)
			busy(t, c, 3, 0b1, 1000, 0)
			got, ok := mustPlacer(t, name, 3, TargetWorkload{}).Place(nil, c.View(), r)
			if !ok || len(got) != 1 || got[0].Node != 3 || got[0].GPUs&1 != 0 {
				t.Errorf("%s %+v: got %+v %v, want node 3 without GPU 0", name, r, got, ok)
			}
		}
		c := newCluster(t, append([]hwmodel.Node(nil), nodes...)...)
		if got, ok := mustPlacer(t, name, 3, TargetWorkload{}).Place(nil, c.View(), hwmodel.Request{GPUs: 4, GPUMilli: 1000, Models: hwmodel.Of(t4), CPUMilli: 100000}); ok {
			t.Errorf("%s: placed a request no node has CPU for: %+v", name, got)
		}
	}
}

// randomCluster builds a small cluster of mixed models with random load.
func randomCluster(tb testing.TB, rng *rand.Rand) *hwmodel.Cluster {
	models := []hwmodel.ModelID{model(tb, "V100-32GB"), model(tb, "T4"), model(tb, "A100-80GB")}
	nodes := make([]hwmodel.Node, 1+rng.IntN(6))
	for i := range nodes {
		nodes[i] = node(models[rng.IntN(len(models))], rng.IntN(9), int64(1+rng.IntN(32))*2000, int64(1+rng.IntN(16))*4096)
	}
	c := newCluster(tb, nodes...)
	for k := rng.IntN(12); k > 0; k-- {
		i := rng.IntN(len(nodes))
		var mask uint64
		if g := nodes[i].GPUs; g > 0 {
			mask = 1 << uint(rng.IntN(g))
		}
		p := hwmodel.Placement{{Node: i, GPUs: mask, Milli: int32(100 * (1 + rng.IntN(10))), CPUMilli: int64(rng.IntN(4000)), MemoryMiB: int64(rng.IntN(4096))}}
		if mask == 0 {
			p[0].Milli = 0
		}
		_ = c.Allocate(p) // skip what does not fit
	}
	return c
}

func randomRequest(tb testing.TB, rng *rand.Rand) hwmodel.Request {
	r := hwmodel.Request{CPUMilli: int64(rng.IntN(12)) * 1000, MemoryMiB: int64(rng.IntN(8)) * 2048}
	switch rng.IntN(4) {
	case 0: // CPU only
	case 1:
		r.GPUs, r.GPUMilli = 1, int32(50*(1+rng.IntN(19)))
	default:
		r.GPUs, r.GPUMilli = 1+rng.IntN(12), 1000
	}
	if rng.IntN(3) == 0 {
		r.Models = hwmodel.Of(model(tb, "T4"), model(tb, "A100-80GB"))
	}
	return r
}

// TestPaperPlacementsProperties: on random clusters and requests every
// placement fits the cluster and matches the request, and a single-node
// request is placed exactly when first fit (which finds any fit) places it.
func TestPaperPlacementsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tgt := target(PodClass{gpuReq(1, 1000, 2000), 0.4}, PodClass{gpuReq(1, 500, 1000), 0.3}, PodClass{gpuReq(2, 1000, 4000), 0.2}, PodClass{cpuOnly(1000), 0.1})
	for iter := 0; iter < 3000; iter++ {
		c := randomCluster(t, rng)
		r := randomRequest(t, rng)
		_, firstOK := new(FirstFit).Place(nil, c.View(), r)
		for _, name := range paperPlacements {
			p := mustPlacer(t, name, uint64(iter), tgt)
			got, ok := p.Place(nil, c.View(), r)
			if !ok {
				if len(got) != 0 {
					t.Fatalf("%s: failed placement returned %+v", name, got)
				}
				if firstOK && singleNode(c.View(), r) {
					t.Fatalf("%s refused %+v, which first fit places", name, r)
				}
				continue
			}
			if singleNode(c.View(), r) && !firstOK {
				t.Fatalf("%s placed %+v, which first fit refuses", name, r)
			}
			if err := c.Fits(got); err != nil {
				t.Fatalf("%s placed %+v as %+v: %v", name, r, got, err)
			}
			var cpu, mem int64
			for _, s := range got {
				cpu += s.CPUMilli
				mem += s.MemoryMiB
				if s.GPUs != 0 && (s.Milli != r.GPUMilli || !r.Models.Accepts(c.Node(s.Node).Model)) {
					t.Fatalf("%s: share %+v does not match %+v", name, s, r)
				}
			}
			if got.GPUCount() != r.GPUs || cpu != r.CPUMilli || mem != r.MemoryMiB {
				t.Fatalf("%s: placement %+v does not match %+v", name, got, r)
			}
		}
	}
}

// TestFGDPicksTheLeastGrowth checks FGD against a brute force over every
// feasible (node, GPU) option: the chosen option's score is the best.
func TestFGDPicksTheLeastGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tgt := target(PodClass{gpuReq(1, 1000, 2000), 0.4}, PodClass{gpuReq(1, 500, 1000), 0.3}, PodClass{gpuReq(2, 1000, 4000), 0.2}, PodClass{cpuOnly(1000), 0.1})
	checked := 0
	for iter := 0; iter < 2000; iter++ {
		c := randomCluster(t, rng)
		r := randomRequest(t, rng)
		if r.GPUs > 0 && !singleNode(c.View(), r) {
			continue
		}
		got, ok := mustPlacer(t, "fgd", 0, tgt).Place(nil, c.View(), r)
		if !ok {
			continue
		}
		bestScore := int64(-1)
		var chosen int64 = -2
		for i := 0; i < c.NumNodes(); i++ {
			if !feasible(c.View(), i, &r) {
				continue
			}
			before := NodeFragmentation(c.View(), i, tgt)
			try := func(p hwmodel.Placement) {
				if err := c.Allocate(p); err != nil {
					t.Fatal(err)
				}
				s := fgdScore(before - NodeFragmentation(c.View(), i, tgt))
				c.Release(p)
				bestScore = max(bestScore, s)
				if reflect.DeepEqual(p, got) {
					chosen = s
				}
			}
			switch {
			case r.GPUs == 0:
				try(hwmodel.Placement{{Node: i, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}})
			case r.Fractional():
				for g := 0; g < c.Node(i).GPUs; g++ {
					if c.FreeMilli(i, g) >= r.GPUMilli {
						try(share(i, g, r.GPUMilli, r))
					}
				}
			default:
				try(wholeOn(i, idleMask(c.View(), i, r.GPUs), r))
			}
		}
		if chosen != bestScore {
			t.Fatalf("iteration %d: fgd chose %+v scoring %d; the best option scores %d", iter, got, chosen, bestScore)
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d cases checked", checked)
	}
}

// TestFGDCacheMatchesFreshPlacer: a long-lived FGD placer, whose caches
// follow node generations through placements and releases, decides as a
// fresh one would.
func TestFGDCacheMatchesFreshPlacer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	v100, t4 := model(t, "V100-32GB"), model(t, "T4")
	tgt := target(PodClass{gpuReq(1, 1000, 8000), 0.5}, PodClass{gpuReq(1, 300, 2000), 0.3}, PodClass{cpuOnly(4000), 0.2})
	nodes := make([]hwmodel.Node, 24)
	for i := range nodes {
		nodes[i] = node([]hwmodel.ModelID{v100, t4}[i%2], []int{2, 4, 8}[i%3], 48000, 1<<20)
	}
	c := newCluster(t, nodes...)
	long := mustPlacer(t, "fgd", 9, tgt)
	var live []hwmodel.Placement
	shapes := []hwmodel.Request{frac(300), frac(700), whole(1), whole(2), cpuOnly(4000), {GPUs: 1, GPUMilli: 300, CPUMilli: 500, MemoryMiB: 512, Models: hwmodel.Of(t4)}}
	for step := 0; step < 3000; step++ {
		if len(live) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(live))
			c.Release(live[k])
			live = append(live[:k], live[k+1:]...)
			continue
		}
		r := shapes[rng.IntN(len(shapes))]
		got, ok := long.Place(nil, c.View(), r)
		want, wantOK := mustPlacer(t, "fgd", 9, tgt).Place(nil, c.View(), r)
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d %+v: cached %+v %v, fresh %+v %v", step, r, got, ok, want, wantOK)
		}
		if ok {
			if err := c.Allocate(got); err != nil {
				t.Fatal(err)
			}
			live = append(live, got)
		}
	}
	// Past maxShapes distinct shapes, requests are scored without a cache.
	for k := 0; k < maxShapes+100; k++ {
		r := hwmodel.Request{GPUs: 1, GPUMilli: 300, CPUMilli: int64(k), MemoryMiB: 1}
		got, _ := long.Place(nil, c.View(), r)
		want, _ := mustPlacer(t, "fgd", 9, tgt).Place(nil, c.View(), r)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shape %d: cached %+v, fresh %+v", k, got, want)
		}
		if k == maxShapes+50 { // change a node while uncached shapes are placed
			if err := c.Allocate(got); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A different cluster resets the caches.
	c2 := newCluster(t, nodes...)
	got, _ := long.Place(nil, c2.View(), whole(1))
	want, _ := mustPlacer(t, "fgd", 9, tgt).Place(nil, c2.View(), whole(1))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("new cluster: cached %+v, fresh %+v", got, want)
	}
}

func TestFragMeterMatchesNodeFragmentation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tgt := target(PodClass{gpuReq(1, 1000, 2000), 0.35}, PodClass{gpuReq(1, 450, 1000), 0.25}, PodClass{gpuReq(2, 1000, 4000), 0.2},
		PodClass{cpuOnly(1000), 0.1}, PodClass{hwmodel.Request{GPUs: 1, GPUMilli: 450, CPUMilli: 1000, Models: hwmodel.Of(model(t, "T4"))}, 0.1})
	m := NewFragMeter(tgt)
	for iter := 0; iter < 500; iter++ {
		c := randomCluster(t, rng)
		for round := 0; round < 3; round++ {
			got, want := m.Cluster(c.View()), ClusterFragmentation(c.View(), tgt)
			if got != want { // the same sums in the same order
				t.Fatalf("iteration %d: meter %v, ClusterFragmentation %v", iter, got, want)
			}
			// change one node and measure again
			i := rng.IntN(c.NumNodes())
			_ = c.Allocate(hwmodel.Placement{{Node: i, CPUMilli: 500}})
		}
	}
}

func BenchmarkFragMeter(b *testing.B) {
	c, _, tgt := syntheticFill(b, 1000, 1)
	m := NewFragMeter(tgt)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = c.Allocate(hwmodel.Placement{{Node: i % c.NumNodes(), CPUMilli: 1}})
		_ = m.Cluster(c.View())
	}
}

// syntheticFill is a synthetic cluster of n nodes shaped like the
// Alibaba trace's GPU nodes (mostly 8-GPU nodes, some 4- and 2-GPU ones)
// and a workload like its pods (13% CPU-only, ~45% one whole GPU, ~40%
// sharing, a few 2-, 4- and 8-GPU jobs), long enough to request 130% of
// the cluster's GPUs, plus its target workload.
func syntheticFill(tb testing.TB, n int, seed uint64) (*hwmodel.Cluster, []hwmodel.Request, TargetWorkload) {
	rng := rand.New(rand.NewPCG(seed, 99))
	models := []hwmodel.ModelID{model(tb, "G2"), model(tb, "T4"), model(tb, "V100-32GB"), model(tb, "P100")}
	nodes := make([]hwmodel.Node, n)
	for i := range nodes {
		g := []int{8, 8, 8, 4, 2}[rng.IntN(5)]
		nodes[i] = hwmodel.Node{Name: fmt.Sprintf("node-%04d", i), Model: models[rng.IntN(len(models))], GPUs: g, CPUMilli: int64(g) * 12000, MemoryMiB: int64(g) * 96 << 10}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	millis := []int32{810, 470, 320, 650, 230, 460, 590, 160, 550, 220, 370, 110}
	cpus := []int64{3152, 4000, 8000, 11300, 11908, 12000, 16000}
	var pool []hwmodel.Request
	for k := 0; k < 8000; k++ {
		r := hwmodel.Request{CPUMilli: cpus[rng.IntN(len(cpus))], MemoryMiB: int64(1+rng.IntN(32)) * 1024}
		switch x := rng.IntN(100); {
		case x < 13:
		case x < 58:
			r.GPUs, r.GPUMilli = 1, 1000
		case x < 97:
			r.GPUs, r.GPUMilli = 1, millis[rng.IntN(len(millis))]
		default:
			r.GPUs, r.GPUMilli = []int{2, 4, 8}[rng.IntN(3)], 1000
		}
		pool = append(pool, r)
	}
	var reqs []hwmodel.Request
	var total int64
	for float64(total) < 1.3*float64(c.TotalGPUs())*hwmodel.MilliPerGPU {
		r := pool[rng.IntN(len(pool))]
		total += r.TotalMilli()
		reqs = append(reqs, r)
	}
	return c, reqs, TargetFromRequests(pool)
}

// BenchmarkFill places a whole FGD-paper "fill" experiment (pods arrive
// one by one until 130% of the GPUs are requested, never leave) on a
// synthetic 1,000-node cluster, per placement. ns/place is the cost of
// one placement, including the Allocate.
//
//	go test -run '^$' -bench Fill -benchtime 5x ./policies
func BenchmarkFill(b *testing.B) {
	for _, name := range paperPlacements {
		b.Run(name, func(b *testing.B) {
			_, reqs, tgt := syntheticFill(b, 1000, 1)
			var placed, tried int
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c, _, _ := syntheticFill(b, 1000, 1)
				p := mustPlacer(b, name, 42, tgt)
				dst := make(hwmodel.Placement, 0, 64)
				b.StartTimer()
				for _, r := range reqs {
					got, ok := p.Place(dst[:0], c.View(), r)
					tried++
					if ok {
						if err := c.Allocate(got); err != nil {
							b.Fatal(err)
						}
						placed++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tried), "ns/place")
			b.ReportMetric(float64(placed)/float64(b.N), "placed/fill")
		})
	}
}
