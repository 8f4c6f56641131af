package policies

import (
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestPlacers checks firstfit and bestfit on hand-built clusters. Since
// bestfit became the FGD paper's (least free CPU and GPU left, equally
// weighted, in whole percent; see scored.go), its expectations are the
// paper's, worked out in the case comments; they agree with the former
// "fewest idle GPUs" rule except where noted. Its cases avoid score ties,
// which go to a seeded random node order.
func TestPlacers(t *testing.T) {
	v100 := model(t, "V100-16GB")
	a100 := model(t, "A100-80GB")
	const cpu, mem = 64000, 512 * 1024
	sh := func(n int, mask uint64, milli int32, cpu, mem int64) hwmodel.Share {
		return hwmodel.Share{Node: n, GPUs: mask, Milli: milli, CPUMilli: cpu, MemoryMiB: mem}
	}
	type tc struct {
		name   string
		nodes  []hwmodel.Node
		setup  func(t *testing.T, c *hwmodel.Cluster)
		req    hwmodel.Request
		first  hwmodel.Placement // nil: no placement expected
		best   hwmodel.Placement
		anyFit bool // both placers give the same answer: first
	}
	eight := func(m hwmodel.ModelID) hwmodel.Node { return node(m, 8, cpu, mem) }
	cases := []tc{
		{
			name:  "whole: lowest GPUs of the lowest node / node left with the least free CPU and GPU",
			nodes: []hwmodel.Node{eight(v100), eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0b0000_0011, 1000, 0)
				busy(t, c, 1, 0b1111_0000, 1000, 0)
			},
			req:   whole(4),
			first: hwmodel.Placement{sh(0, 0b0011_1100, 1000, 4000, 4096)},
			best:  hwmodel.Placement{sh(1, 0b0000_1111, 1000, 4000, 4096)},
		},
		{
			name:  "whole: a node short of CPU is skipped",
			nodes: []hwmodel.Node{eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0, 0, cpu-1000)
			},
			req:    whole(2),
			first:  hwmodel.Placement{sh(1, 0b11, 1000, 2000, 2048)},
			anyFit: true,
		},
		{
			name:  "whole: accepted models are respected",
			nodes: []hwmodel.Node{eight(v100), eight(a100), eight(v100)},
			req: func() hwmodel.Request {
				r := whole(2)
				r.Models = hwmodel.Of(a100)
				return r
			}(),
			first:  hwmodel.Placement{sh(1, 0b11, 1000, 2000, 2048)},
			anyFit: true,
		},
		{
			name:  "whole: no accepted model has room",
			nodes: []hwmodel.Node{eight(v100), eight(a100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 1, 0b0111_1111, 1000, 0) },
			req: func() hwmodel.Request {
				r := whole(2)
				r.Models = hwmodel.Of(a100)
				return r
			}(),
			anyFit: true,
		},
		{
			name:  "whole: fits the cluster but no single node waits, never splits",
			nodes: []hwmodel.Node{eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0b0000_1111, 1000, 0)
				busy(t, c, 1, 0b0000_1111, 1000, 0)
			},
			req:    whole(6),
			anyFit: true,
		},
		{
			name:  "fractional: first GPU with room / smallest sufficient share",
			nodes: []hwmodel.Node{eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0b10, 400, 0) // n0 GPU1 has 600 free
				busy(t, c, 1, 0b01, 500, 0) // n1 GPU0 has 500 free
			},
			req:   frac(500),
			first: hwmodel.Placement{sh(0, 0b01, 500, 500, 512)},
			best:  hwmodel.Placement{sh(1, 0b01, 500, 500, 512)},
		},
		{
			// Best fit (the FGD paper's) picks the node, not the GPU: n1
			// has 6,500 milli free against n0's 7,600, so scores
			// int(100·(1 − ½·63,500/128,000 − ½·5,950/8,000)) = 38 against
			// 31. On n1, GPU 0's 500 is too small: the tightest that
			// suffices is idle GPU 2.
			name:  "fractional: best fit takes the fuller node, then its tightest GPU",
			nodes: []hwmodel.Node{eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0b10, 400, 0)  // n0 GPU1 has 600 free
				busy(t, c, 1, 0b01, 500, 0)  // n1 GPU0 has 500 free
				busy(t, c, 1, 0b10, 1000, 0) // n1 GPU1 is full
			},
			req:   frac(550),
			first: hwmodel.Placement{sh(0, 0b01, 550, 500, 512)},
			best:  hwmodel.Placement{sh(1, 0b100, 550, 500, 512)},
		},
		{
			name:  "fractional: accepted model",
			nodes: []hwmodel.Node{eight(v100), eight(a100)},
			req: func() hwmodel.Request {
				r := frac(250)
				r.Models = hwmodel.Of(a100)
				return r
			}(),
			first:  hwmodel.Placement{sh(1, 0b01, 250, 500, 512)},
			anyFit: true,
		},
		{
			name:  "cpu-only: first node / node left with the least free (the GPU-less one), models ignored",
			nodes: []hwmodel.Node{eight(v100), eight(v100), node(v100, 0, cpu, mem)},
			req: func() hwmodel.Request {
				r := cpuOnly(4000)
				r.Models = hwmodel.Of(a100)
				return r
			}(),
			first: hwmodel.Placement{sh(0, 0, 0, 4000, 1024)},
			best:  hwmodel.Placement{sh(2, 0, 0, 4000, 1024)},
		},
		{
			name:  "gang: fewest nodes, most idle first; best fit's last node is the smallest that completes it",
			nodes: []hwmodel.Node{eight(v100), eight(v100), eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 0, 0b0011_1111, 1000, 0) // 2 idle
				busy(t, c, 2, 0b0000_0111, 1000, 0) // 5 idle
			},
			req: hwmodel.Request{GPUs: 12, GPUMilli: 1000, CPUMilli: 1000, MemoryMiB: 1200},
			// 1000·8/12 = 666, 1000·4/12 = 333; remainder 1 to the first share.
			first: hwmodel.Placement{sh(1, 0xff, 1000, 667, 800), sh(3, 0x0f, 1000, 333, 400)},
			best:  hwmodel.Placement{sh(1, 0xff, 1000, 667, 800), sh(2, 0b0111_1000, 1000, 333, 400)},
		},
		{
			name:  "gang: never mixes models",
			nodes: []hwmodel.Node{eight(v100), eight(a100)},
			req:   whole(12),
		},
		{
			name:  "gang: the model with room wins, whatever the mix",
			nodes: []hwmodel.Node{eight(v100), eight(a100), eight(a100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) {
				busy(t, c, 3, 0b0000_0001, 1000, 0) // V100 has 15 idle, A100 16
			},
			req:    whole(16),
			first:  hwmodel.Placement{sh(1, 0xff, 1000, 8000, 8192), sh(2, 0xff, 1000, 8000, 8192)},
			anyFit: true,
		},
		{
			name:  "gang: accepted model only",
			nodes: []hwmodel.Node{eight(v100), eight(v100), eight(a100), eight(a100)},
			req: func() hwmodel.Request {
				r := whole(10)
				r.Models = hwmodel.Of(a100)
				return r
			}(),
			first: hwmodel.Placement{sh(2, 0xff, 1000, 8000, 8192), sh(3, 0b11, 1000, 2000, 2048)},
			best:  hwmodel.Placement{sh(2, 0xff, 1000, 8000, 8192), sh(3, 0b11, 1000, 2000, 2048)},
		},
		{
			name:  "gang: fewer nodes beats lower index across models",
			nodes: []hwmodel.Node{node(v100, 4, cpu, mem), node(v100, 4, cpu, mem), node(v100, 4, cpu, mem), eight(a100), eight(a100)},
			req:   whole(9), // V100 would need 3 nodes, A100 2
			first: hwmodel.Placement{sh(3, 0xff, 1000, 8000, 8192), sh(4, 0b1, 1000, 1000, 1024)},
			best:  hwmodel.Placement{sh(3, 0xff, 1000, 8000, 8192), sh(4, 0b1, 1000, 1000, 1024)},
		},
		{
			name:  "gang: a node without CPU for its share is passed over",
			nodes: []hwmodel.Node{eight(v100), eight(v100), eight(v100)},
			setup: func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 0, 0, 0, cpu-100) },
			req:   hwmodel.Request{GPUs: 12, GPUMilli: 1000, CPUMilli: 12000},
			first: hwmodel.Placement{sh(1, 0xff, 1000, 8000, 0), sh(2, 0x0f, 1000, 4000, 0)},
			best:  hwmodel.Placement{sh(1, 0xff, 1000, 8000, 0), sh(2, 0x0f, 1000, 4000, 0)},
		},
		{
			name:   "invalid request never places",
			nodes:  []hwmodel.Node{eight(v100)},
			req:    hwmodel.Request{GPUs: 2, GPUMilli: 500},
			anyFit: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, pl := range []struct {
				name string
				p    Placer
				want hwmodel.Placement
			}{
				{"firstfit", new(FirstFit), tc.first},
				{"bestfit", new(BestFit), map[bool]hwmodel.Placement{true: tc.first, false: tc.best}[tc.anyFit]},
			} {
				c := newCluster(t, append([]hwmodel.Node(nil), tc.nodes...)...)
				if tc.setup != nil {
					tc.setup(t, c)
				}
				before := c.AllocatedMilli()
				got, ok := pl.p.Place(nil, c.View(), tc.req)
				if c.AllocatedMilli() != before {
					t.Fatalf("%s changed the cluster", pl.name)
				}
				if ok != (pl.want != nil) {
					t.Fatalf("%s: placed=%v %+v, want %+v", pl.name, ok, got, pl.want)
				}
				if !ok {
					if len(got) != 0 {
						t.Fatalf("%s: failed placement appended %+v", pl.name, got)
					}
					continue
				}
				if !reflect.DeepEqual(got, pl.want) {
					t.Fatalf("%s: got %+v, want %+v", pl.name, got, pl.want)
				}
				if err := c.Fits(got); err != nil {
					t.Fatalf("%s: placement does not fit: %v", pl.name, err)
				}
			}
		})
	}
}

func TestPlaceAppendsToDst(t *testing.T) {
	c := newCluster(t, node(0, 8, 8000, 8192))
	dst := hwmodel.Placement{{Node: 99}}
	got, ok := new(FirstFit).Place(dst, c.View(), whole(1))
	if !ok || len(got) != 2 || got[0].Node != 99 || got[1].Node != 0 {
		t.Fatalf("got %+v %v", got, ok)
	}
}

func TestNewPlacer(t *testing.T) {
	for _, n := range []string{"", "firstfit", "bestfit", "dotprod", "packing", "clustering", "random"} {
		if _, err := NewPlacer(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
		if n != "" && DescribePlacement(n) == "" {
			t.Errorf("%q has no description", n)
		}
	}
	if _, err := NewPlacer("fgd"); err == nil || !strings.Contains(err.Error(), "target workload") {
		t.Errorf("fgd without a target: %v", err)
	}
	if _, err := NewPlacerWith("fgd", PlacerConfig{Target: target(PodClass{whole(1), 1})}); err != nil {
		t.Errorf("fgd with a target: %v", err)
	}
	_, err := NewPlacer("worstfit")
	if err == nil || !strings.Contains(err.Error(), "bestfit, clustering, consolidate, dotprod, fgd, firstfit, mostfree, packing, random") {
		t.Errorf("unknown placement: %v", err)
	}
}
