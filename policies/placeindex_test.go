package policies

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// equivCluster builds a random cluster for the reference comparison: n
// nodes of mixed models and sizes (0 to 64 GPUs), CPU and memory from
// tight to unlimited, and on H200 nodes some MIG-enabled GPUs.
func equivCluster(tb testing.TB, rng *rand.Rand, n int) *hwmodel.Cluster {
	h200 := model(tb, "H200")
	models := []hwmodel.ModelID{model(tb, "V100-32GB"), model(tb, "T4"), model(tb, "A100-80GB"), model(tb, "G2"), h200}
	nodes := make([]hwmodel.Node, n)
	for i := range nodes {
		m := models[rng.IntN(len(models))]
		gpus := []int{0, 1, 2, 2, 4, 8, 8, 8, 3, 16, 32, 64}[rng.IntN(12)] // idle 1 and 32 tie in packing
		cpu := int64(1+rng.IntN(24)) * 4000
		if rng.IntN(20) == 0 {
			cpu = hwmodel.UnlimitedCapacity
		}
		mem := int64(1+rng.IntN(16)) * 32 << 10
		if rng.IntN(20) == 0 {
			mem = hwmodel.UnlimitedCapacity
		}
		nodes[i] = hwmodel.Node{Name: fmt.Sprintf("n%d", i), Model: m, GPUs: gpus, CPUMilli: cpu, MemoryMiB: mem}
		if m == h200 && gpus > 0 && rng.IntN(3) == 0 {
			nodes[i].MIG = make([]hwmodel.MIGLayout, gpus)
			for g := range nodes[i].MIG {
				if rng.IntN(2) == 0 {
					l, err := hwmodel.NamedMIGLayout(h200, "balanced")
					if err != nil {
						tb.Fatal(err)
					}
					nodes[i].MIG[g] = l
				}
			}
		}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// equivRequest draws a request: whole GPUs (sometimes a gang), a GPU
// share, CPU only, a few MIG and invalid ones; CPU and memory from none to
// more than most nodes have; sometimes constrained to models.
func equivRequest(tb testing.TB, rng *rand.Rand, shapes []hwmodel.Request) hwmodel.Request {
	if len(shapes) > 0 && rng.IntN(4) != 0 {
		return shapes[rng.IntN(len(shapes))] // repeated shapes exercise the caches
	}
	r := hwmodel.Request{CPUMilli: int64(rng.IntN(16)) * 2000, MemoryMiB: int64(rng.IntN(12)) * 16 << 10}
	switch x := rng.IntN(100); {
	case x < 15: // CPU only
	case x < 50:
		r.GPUs, r.GPUMilli = 1, int32(10*(1+rng.IntN(100)))
	case x < 90:
		r.GPUs, r.GPUMilli = []int{1, 1, 1, 2, 2, 3, 4, 8}[rng.IntN(8)], 1000
	case x < 95:
		r.GPUs, r.GPUMilli = 9+rng.IntN(40), 1000 // a gang on most clusters
	case x < 98:
		r = hwmodel.Request{GPUs: 1, CPUMilli: r.CPUMilli, MIG: hwmodel.MIGRequest{MinSlices: 1 + rng.IntN(3)}}
	default:
		r.GPUs, r.GPUMilli = 2, 500 // invalid: never placed
	}
	if rng.IntN(4) == 0 { // CPU-only requests must ignore it
		all := []hwmodel.ModelID{model(tb, "V100-32GB"), model(tb, "T4"), model(tb, "A100-80GB"), model(tb, "G2"), model(tb, "H200")}
		r.Models = hwmodel.Of(all[rng.IntN(len(all))], all[rng.IntN(len(all))])
	}
	return r
}

// TestIndexedPlacementsMatchReference runs every placement and its
// reference (the linear algorithm, placeref_test.go) side by side on
// random clusters through random sequences of placements, releases and
// MIG reconfigurations, and requires the very same answer every time.
// Each placer lives through several clusters and comes back to earlier
// ones, as the live driver's and tests' placers may.
func TestIndexedPlacementsMatchReference(t *testing.T) {
	rounds, steps := 40, 600
	if testing.Short() {
		rounds, steps = 8, 300
	}
	for _, name := range PlacementNames() {
		if name == "mostfree" {
			continue // it keeps no index: its own linear algorithm (mostfree_test.go)
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(len(name))))
			compared, placed := 0, 0
			for round := 0; round < rounds; round++ {
				n := []int{1, 3, 7, 20, 64, 150, 400, 0}[round%8]
				clusters := []*hwmodel.Cluster{equivCluster(t, rng, n), equivCluster(t, rng, n)}
				var shapes, pool []hwmodel.Request
				for k := 0; k < 12; k++ {
					shapes = append(shapes, equivRequest(t, rng, nil))
				}
				for k := 0; k < 200; k++ {
					pool = append(pool, equivRequest(t, rng, shapes))
				}
				cfg := PlacerConfig{Seed: rng.Uint64(), Target: TargetFromRequests(pool)}
				if round%3 == 1 {
					cfg.TieRank = rng.Perm(n)
				}
				got, err := NewPlacerWith(name, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want := newRefPlacer(name, cfg)
				live := make([][]hwmodel.Placement, len(clusters))
				release := []int{15, 30, 45}[round%3] // how full the clusters run
				dst := make(hwmodel.Placement, 0, 64)
				for step := 0; step < steps; step++ {
					k := 0
					if step%50 >= 40 {
						k = 1 // a while on the other cluster, then back
					}
					c := clusters[k]
					switch x := rng.IntN(100); {
					case x < release && len(live[k]) > 0:
						j := rng.IntN(len(live[k]))
						c.Release(live[k][j])
						live[k][j] = live[k][len(live[k])-1]
						live[k] = live[k][:len(live[k])-1]
						continue
					case x < release+2:
						reconfigure(c, rng)
						continue
					case x == 99 && step%7 == 0:
						churn(c, rng) // past what the journal keeps
						continue
					}
					r := equivRequest(t, rng, shapes)
					prefix := rng.IntN(2) // sometimes append after an earlier share
					dst = append(dst[:0], hwmodel.Share{Node: -7})[:prefix]
					p, ok := got.Place(dst, c.View(), r)
					q, wantOK := want.Place(nil, c.View(), r)
					compared++
					if ok != wantOK || (ok && !reflect.DeepEqual([]hwmodel.Share(p[prefix:]), []hwmodel.Share(q))) {
						t.Fatalf("round %d step %d, %d nodes, %+v:\nindexed %v %+v\nlinear  %v %+v", round, step, n, r, ok, p[prefix:], wantOK, q)
					}
					if !ok {
						if len(p) != prefix {
							t.Fatalf("a failed placement returned %+v", p)
						}
						continue
					}
					placement := append(hwmodel.Placement(nil), p[prefix:]...)
					if err := c.Allocate(placement); err != nil {
						t.Fatalf("round %d step %d: %+v does not fit: %v", round, step, placement, err)
					}
					live[k] = append(live[k], placement)
					placed++
				}
			}
			t.Logf("%d requests compared, %d placed", compared, placed)
			if placed < compared/4 {
				t.Errorf("only %d of %d requests placed: the clusters are too full to test much", placed, compared)
			}
		})
	}
}

// reconfigure changes one MIG-capable GPU's layout, or unblocks one, as
// the drivers do: an idle whole GPU may become MIG and back.
func reconfigure(c *hwmodel.Cluster, rng *rand.Rand) {
	if c.NumNodes() == 0 {
		return
	}
	i := rng.IntN(c.NumNodes())
	n := c.Node(i)
	if n.GPUs == 0 {
		return
	}
	g := rng.IntN(n.GPUs)
	if rng.IntN(2) == 0 {
		c.UnblockMIG(i, g)
		return
	}
	var l hwmodel.MIGLayout
	if rng.IntN(2) == 0 {
		var err error
		if l, err = hwmodel.NamedMIGLayout(n.Model, "all-1g"); err != nil {
			return // not MIG-capable
		}
	}
	_, _ = c.Reconfigure(i, g, l) // refused while in use: fine
}

// churn changes more nodes than the cluster's journal keeps, and changes
// them back, so that placers must notice that they lost track.
func churn(c *hwmodel.Cluster, rng *rand.Rand) {
	if c.NumNodes() == 0 {
		return
	}
	var held []hwmodel.Placement
	for k := 0; k < 2100; k++ {
		p := hwmodel.Placement{{Node: rng.IntN(c.NumNodes()), CPUMilli: int64(rng.IntN(2))}}
		if c.Allocate(p) == nil {
			held = append(held, p)
		}
	}
	for _, p := range held[:len(held)/2] {
		c.Release(p)
	}
}

// TestIndexedPlacementsMatchReferenceHalfFull compares them again on the
// benchmark's cluster and pods (place_bench_test.go): a thousand nodes of
// the Alibaba trace's kinds kept half full, where most shapes recur and
// ties are many. Both placers start fresh on the warmed-up cluster, so
// the indexed one also builds its index from a busy cluster.
func TestIndexedPlacementsMatchReferenceHalfFull(t *testing.T) {
	steps := 3000
	if testing.Short() {
		steps = 500
	}
	for _, name := range PlacementNames() {
		if name == "mostfree" {
			continue // it keeps no index: its own linear algorithm (mostfree_test.go)
		}
		t.Run(name, func(t *testing.T) {
			run := newBenchRun(t, name, 1000)
			cfg := PlacerConfig{Seed: 7, Target: run.target}
			got, err := NewPlacerWith(name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := newRefPlacer(name, cfg)
			for step := 0; step < steps; step++ {
				for 2*run.c.AllocatedMilli() > int64(run.c.TotalGPUs())*hwmodel.MilliPerGPU {
					k := run.rng.IntN(len(run.live))
					run.c.Release(run.live[k])
					run.live[k] = run.live[len(run.live)-1]
					run.live = run.live[:len(run.live)-1]
				}
				r := run.pods.next()
				p, ok := got.Place(nil, run.c.View(), r)
				q, wantOK := want.Place(nil, run.c.View(), r)
				if ok != wantOK || !reflect.DeepEqual(p, q) {
					t.Fatalf("step %d, %+v:\nindexed %v %+v\nlinear  %v %+v", step, r, ok, p, wantOK, q)
				}
				if ok {
					if err := run.c.Allocate(p); err != nil {
						t.Fatal(err)
					}
					run.live = append(run.live, p)
				}
			}
		})
	}
}
