package hwmodel_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func modelID(t testing.TB, name string) hwmodel.ModelID {
	t.Helper()
	m, ok := hwmodel.LookupModel(name)
	if !ok {
		t.Fatalf("model %q not in catalogue", name)
	}
	return m.ID
}

// capTestCluster is the fixture for the table tests: two 8-GPU A100 nodes,
// one 4-GPU T4 node and one CPU-only node.
func capTestCluster(t testing.TB) *hwmodel.Cluster {
	t.Helper()
	a100, t4 := modelID(t, "A100-80GB"), modelID(t, "T4")
	c, err := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "a100-0", Model: a100, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 * 1024},
		{Name: "a100-1", Model: a100, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 * 1024},
		{Name: "t4-0", Model: t4, GPUs: 4, CPUMilli: 16000, MemoryMiB: 64 * 1024},
		{Name: "cpu-0", GPUs: 0, CPUMilli: 32000, MemoryMiB: 128 * 1024},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// capState is everything a Cluster reports about its free capacity.
type capState struct {
	CPU, Mem      []int64
	Milli         [][]int32
	Whole         []int
	Allocated     int64
	WholeByModel  []int
	WholeAccepted int
}

func capSnapshot(c *hwmodel.Cluster) capState {
	var s capState
	for i := 0; i < c.NumNodes(); i++ {
		s.CPU = append(s.CPU, c.FreeCPU(i))
		s.Mem = append(s.Mem, c.FreeMemory(i))
		s.Whole = append(s.Whole, c.FreeWholeGPUs(i))
		var m []int32
		for g := 0; g < c.Node(i).GPUs; g++ {
			m = append(m, c.FreeMilli(i, g))
		}
		s.Milli = append(s.Milli, m)
	}
	for _, m := range hwmodel.Models() {
		s.WholeByModel = append(s.WholeByModel, c.FreeWholeGPUsAccepted(hwmodel.Of(m.ID)))
	}
	s.Allocated = c.AllocatedMilli()
	s.WholeAccepted = c.FreeWholeGPUsAccepted(hwmodel.AnyModel)
	return s
}

// checkRedLine asserts the capacity red line directly, without trusting
// CheckInvariants: every free value within 0..capacity.
func checkRedLine(t testing.TB, c *hwmodel.Cluster) {
	t.Helper()
	if err := c.CheckInvariants(); err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
	var used int64
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		if f := c.FreeCPU(i); f < 0 || f > n.CPUMilli {
			t.Fatalf("node %s: free CPU %d outside 0..%d", n.Name, f, n.CPUMilli)
		}
		if f := c.FreeMemory(i); f < 0 || f > n.MemoryMiB {
			t.Fatalf("node %s: free memory %d outside 0..%d", n.Name, f, n.MemoryMiB)
		}
		for g := 0; g < n.GPUs; g++ {
			f := c.FreeMilli(i, g)
			if f < 0 || f > hwmodel.MilliPerGPU {
				t.Fatalf("node %s GPU %d: free %d outside 0..1000", n.Name, g, f)
			}
			if c.IsMIG(i, g) {
				// Never whole or shared; its use is its busy instances.
				if f != 0 {
					t.Fatalf("node %s GPU %d: MIG-enabled with %d milli free", n.Name, g, f)
				}
				l := c.MIGLayoutOf(i, g)
				for k := range l {
					if c.MIGBusy(i, g)&(1<<k) != 0 {
						used += int64(hwmodel.MIGMilli(n.Model, l[k].Profile))
					}
				}
				continue
			}
			used += int64(hwmodel.MilliPerGPU - f)
		}
	}
	if a := c.AllocatedMilli(); a != used || a < 0 || a > int64(c.TotalGPUs())*hwmodel.MilliPerGPU {
		t.Fatalf("allocated %d milli, GPUs say %d, capacity %d", a, used, c.TotalGPUs()*hwmodel.MilliPerGPU)
	}
}

func TestClusterAllocate(t *testing.T) {
	whole4 := hwmodel.Placement{{Node: 0, GPUs: 0b1111, Milli: 1000, CPUMilli: 8000, MemoryMiB: 1024}}
	tests := []struct {
		name    string
		pre     []hwmodel.Placement // allocated first, must succeed
		p       hwmodel.Placement
		wantErr string // "" = must fit; else a substring of the error
		check   func(t *testing.T, c *hwmodel.Cluster)
	}{
		{name: "whole GPUs on one node", p: whole4, check: func(t *testing.T, c *hwmodel.Cluster) {
			if c.FreeWholeGPUs(0) != 4 || c.AllocatedMilli() != 4000 || c.FreeCPU(0) != 56000 || c.FreeMemory(0) != 512*1024-1024 {
				t.Errorf("after 4 whole GPUs: whole %d, alloc %d, cpu %d, mem %d", c.FreeWholeGPUs(0), c.AllocatedMilli(), c.FreeCPU(0), c.FreeMemory(0))
			}
			if c.FreeMilli(0, 3) != 0 || c.FreeMilli(0, 4) != 1000 {
				t.Errorf("GPU 3 free %d, GPU 4 free %d", c.FreeMilli(0, 3), c.FreeMilli(0, 4))
			}
		}},
		{name: "all 8 GPUs of a node", p: hwmodel.Placement{{Node: 1, GPUs: 0xff, Milli: 1000}}, check: func(t *testing.T, c *hwmodel.Cluster) {
			if c.FreeWholeGPUs(1) != 0 || c.FreeWholeGPUsAccepted(hwmodel.AnyModel) != 12 {
				t.Errorf("whole on node 1 %d, cluster-wide %d", c.FreeWholeGPUs(1), c.FreeWholeGPUsAccepted(hwmodel.AnyModel))
			}
		}},
		{name: "fractional share", p: hwmodel.Placement{{Node: 2, GPUs: 1, Milli: 300, CPUMilli: 500}}, check: func(t *testing.T, c *hwmodel.Cluster) {
			if c.FreeMilli(2, 0) != 700 || c.FreeWholeGPUs(2) != 3 || c.AllocatedMilli() != 300 {
				t.Errorf("free %d, whole %d, alloc %d", c.FreeMilli(2, 0), c.FreeWholeGPUs(2), c.AllocatedMilli())
			}
		}},
		{name: "second share fills a GPU exactly",
			pre: []hwmodel.Placement{{{Node: 2, GPUs: 1, Milli: 300}}},
			p:   hwmodel.Placement{{Node: 2, GPUs: 1, Milli: 700}},
			check: func(t *testing.T, c *hwmodel.Cluster) {
				if c.FreeMilli(2, 0) != 0 || c.FreeWholeGPUs(2) != 3 || c.AllocatedMilli() != 1000 {
					t.Errorf("free %d, whole %d, alloc %d", c.FreeMilli(2, 0), c.FreeWholeGPUs(2), c.AllocatedMilli())
				}
			}},
		{name: "gang over two nodes", p: hwmodel.Placement{
			{Node: 0, GPUs: 0xff, Milli: 1000, CPUMilli: 32000, MemoryMiB: 4096},
			{Node: 1, GPUs: 0x0f, Milli: 1000, CPUMilli: 16000, MemoryMiB: 2048},
		}, check: func(t *testing.T, c *hwmodel.Cluster) {
			if c.AllocatedMilli() != 12000 || c.FreeWholeGPUs(0) != 0 || c.FreeWholeGPUs(1) != 4 || c.FreeCPU(1) != 48000 {
				t.Errorf("alloc %d, whole %d/%d, cpu1 %d", c.AllocatedMilli(), c.FreeWholeGPUs(0), c.FreeWholeGPUs(1), c.FreeCPU(1))
			}
		}},
		{name: "CPU-only on a GPU-less node", p: hwmodel.Placement{{Node: 3, CPUMilli: 32000, MemoryMiB: 128 * 1024}}, check: func(t *testing.T, c *hwmodel.Cluster) {
			if c.FreeCPU(3) != 0 || c.FreeMemory(3) != 0 || c.AllocatedMilli() != 0 {
				t.Errorf("cpu %d mem %d alloc %d", c.FreeCPU(3), c.FreeMemory(3), c.AllocatedMilli())
			}
		}},
		{name: "empty placement", p: nil},

		{name: "node out of range", p: hwmodel.Placement{{Node: 4, GPUs: 1, Milli: 1000}}, wantErr: "does not exist"},
		{name: "negative node", p: hwmodel.Placement{{Node: -1, GPUs: 1, Milli: 1000}}, wantErr: "does not exist"},
		{name: "node twice", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}, {Node: 0, GPUs: 2, Milli: 1000}}, wantErr: "appears twice"},
		{name: "GPU beyond the node", p: hwmodel.Placement{{Node: 2, GPUs: 1 << 4, Milli: 1000}}, wantErr: "GPU mask"},
		{name: "GPUs on a GPU-less node", p: hwmodel.Placement{{Node: 3, GPUs: 1, Milli: 1000}}, wantErr: "GPU mask"},
		{name: "zero milli", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 0}}, wantErr: "outside 1..1000"},
		{name: "over 1000 milli", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1001}}, wantErr: "outside 1..1000"},
		{name: "negative CPU", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000, CPUMilli: -1}}, wantErr: "negative"},
		{name: "negative memory", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000, MemoryMiB: -1}}, wantErr: "negative"},
		{name: "too much CPU", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000, CPUMilli: 64001}}, wantErr: "milli-CPU"},
		{name: "too much memory", p: hwmodel.Placement{{Node: 2, GPUs: 1, Milli: 1000, MemoryMiB: 64*1024 + 1}}, wantErr: "MiB"},
		{name: "CPU taken by an earlier job",
			pre:     []hwmodel.Placement{{{Node: 3, CPUMilli: 30000}}},
			p:       hwmodel.Placement{{Node: 3, CPUMilli: 2001}},
			wantErr: "2000 free"},
		{name: "whole GPU already shared",
			pre:     []hwmodel.Placement{{{Node: 2, GPUs: 0b10, Milli: 1}}},
			p:       hwmodel.Placement{{Node: 2, GPUs: 0b11, Milli: 1000}},
			wantErr: "GPU 1: needs 1000 milli, 999 free"},
		{name: "fraction does not fit",
			pre:     []hwmodel.Placement{{{Node: 2, GPUs: 1, Milli: 600}}},
			p:       hwmodel.Placement{{Node: 2, GPUs: 1, Milli: 500}},
			wantErr: "400 free"},
		{name: "gang whose second share does not fit",
			pre: []hwmodel.Placement{whole4},
			p: hwmodel.Placement{
				{Node: 1, GPUs: 0xff, Milli: 1000},
				{Node: 0, GPUs: 0xf8, Milli: 1000},
			},
			wantErr: "GPU 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := capTestCluster(t)
			for _, p := range tc.pre {
				if err := c.Allocate(p); err != nil {
					t.Fatalf("pre-allocation %v: %v", p, err)
				}
			}
			before := capSnapshot(c)
			fitsErr := c.Fits(tc.p)
			err := c.Allocate(tc.p)
			if (fitsErr == nil) != (err == nil) {
				t.Fatalf("Fits says %v, Allocate says %v", fitsErr, err)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Allocate: %v", err)
				}
				if tc.check != nil {
					tc.check(t, c)
				}
				checkRedLine(t, c)
				c.Release(tc.p)
				checkRedLine(t, c)
				if got := capSnapshot(c); !reflect.DeepEqual(got, before) {
					t.Fatalf("release did not restore the state:\n got %+v\nwant %+v", got, before)
				}
				return
			}
			if err == nil {
				t.Fatalf("Allocate accepted %v, want an error containing %q", tc.p, tc.wantErr)
			}
			if !errors.Is(err, hwmodel.ErrCapacity) {
				t.Errorf("error %q does not wrap ErrCapacity", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if got := capSnapshot(c); !reflect.DeepEqual(got, before) {
				t.Fatalf("a refused allocation changed the state:\n got %+v\nwant %+v", got, before)
			}
			checkRedLine(t, c)
		})
	}
}

func TestClusterReleaseMoreThanTakenPanics(t *testing.T) {
	tests := []struct {
		name string
		p    hwmodel.Placement
	}{
		{"GPU never taken", hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}}},
		{"CPU never taken", hwmodel.Placement{{Node: 3, CPUMilli: 1}}},
		{"memory never taken", hwmodel.Placement{{Node: 3, MemoryMiB: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := capTestCluster(t)
			defer func() {
				if recover() == nil {
					t.Fatal("Release of capacity never taken did not panic")
				}
			}()
			c.Release(tc.p)
		})
	}
}

func TestNewClusterRejects(t *testing.T) {
	tests := []struct {
		name  string
		nodes []hwmodel.Node
		want  string
	}{
		{"empty name", []hwmodel.Node{{GPUs: 1}}, "name is empty"},
		{"repeated name", []hwmodel.Node{{Name: "a"}, {Name: "a"}}, "repeats"},
		{"too many GPUs", []hwmodel.Node{{Name: "a", GPUs: 65}}, "0..64"},
		{"negative GPUs", []hwmodel.Node{{Name: "a", GPUs: -1}}, "0..64"},
		{"negative CPU", []hwmodel.Node{{Name: "a", CPUMilli: -1}}, ">= 0"},
		{"unknown model", []hwmodel.Node{{Name: "a", GPUs: 1, Model: 200}}, "unknown GPU model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hwmodel.NewCluster(tc.nodes)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewCluster: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// refModel is an independent, obviously correct model of a cluster's free
// capacity, to check Cluster against.
type refModel struct {
	nodes []hwmodel.Node
	cpu   []int64
	mem   []int64
	milli [][]int32
}

func newRefModel(nodes []hwmodel.Node) *refModel {
	r := &refModel{nodes: nodes}
	for _, n := range nodes {
		r.cpu = append(r.cpu, n.CPUMilli)
		r.mem = append(r.mem, n.MemoryMiB)
		m := make([]int32, n.GPUs)
		for g := range m {
			m[g] = hwmodel.MilliPerGPU
		}
		r.milli = append(r.milli, m)
	}
	return r
}

func (r *refModel) fits(p hwmodel.Placement) bool {
	seen := map[int]bool{}
	for _, s := range p {
		if s.Node < 0 || s.Node >= len(r.nodes) || seen[s.Node] {
			return false
		}
		seen[s.Node] = true
		if s.CPUMilli < 0 || s.MemoryMiB < 0 || s.CPUMilli > r.cpu[s.Node] || s.MemoryMiB > r.mem[s.Node] {
			return false
		}
		for g := 0; g < 64; g++ {
			if s.GPUs&(1<<g) == 0 {
				continue
			}
			if g >= r.nodes[s.Node].GPUs || s.Milli < 1 || s.Milli > 1000 || r.milli[s.Node][g] < s.Milli {
				return false
			}
		}
	}
	return true
}

func (r *refModel) apply(p hwmodel.Placement, sign int64) {
	for _, s := range p {
		r.cpu[s.Node] += sign * s.CPUMilli
		r.mem[s.Node] += sign * s.MemoryMiB
		for g := 0; g < r.nodes[s.Node].GPUs; g++ {
			if s.GPUs&(1<<g) != 0 {
				r.milli[s.Node][g] += int32(sign) * s.Milli
			}
		}
	}
}

func (r *refModel) compare(t *testing.T, c *hwmodel.Cluster, step int) {
	t.Helper()
	for i, n := range r.nodes {
		if c.FreeCPU(i) != r.cpu[i] || c.FreeMemory(i) != r.mem[i] {
			t.Fatalf("step %d node %s: cpu %d mem %d, reference %d %d", step, n.Name, c.FreeCPU(i), c.FreeMemory(i), r.cpu[i], r.mem[i])
		}
		whole := 0
		for g, want := range r.milli[i] {
			if got := c.FreeMilli(i, g); got != want {
				t.Fatalf("step %d node %s GPU %d: free %d, reference %d", step, n.Name, g, got, want)
			}
			if want == hwmodel.MilliPerGPU {
				whole++
			}
		}
		if c.FreeWholeGPUs(i) != whole {
			t.Fatalf("step %d node %s: %d whole GPUs free, reference %d", step, n.Name, c.FreeWholeGPUs(i), whole)
		}
	}
}

// randomNodes builds a cluster of 70 nodes (more than 64, so that Fits's
// repeated-node check takes both of its paths) including 0- and 64-GPU
// nodes.
func randomNodes(rng *rand.Rand) []hwmodel.Node {
	models := hwmodel.Models()
	var nodes []hwmodel.Node
	for i := range 70 {
		gpus := []int{0, 1, 2, 4, 8, 8, 8, 64}[rng.IntN(8)]
		nodes = append(nodes, hwmodel.Node{
			Name:      fmt.Sprintf("n%02d", i),
			Model:     models[rng.IntN(len(models))].ID,
			GPUs:      gpus,
			CPUMilli:  int64(rng.IntN(5)) * 16000, // sometimes 0
			MemoryMiB: int64(1+rng.IntN(4)) * 64 * 1024,
		})
	}
	return nodes
}

// randomPlacement draws a placement that is usually plausible, sometimes
// asks for exactly the free capacity or one unit more, and sometimes is
// broken in one of the ways Fits must refuse.
func randomPlacement(rng *rand.Rand, c *hwmodel.Cluster, nodes []hwmodel.Node) hwmodel.Placement {
	var p hwmodel.Placement
	for range 1 + rng.IntN(3) {
		var s hwmodel.Share
		if rng.IntN(50) == 0 {
			s.Node = []int{-1, len(nodes), len(nodes) + 5}[rng.IntN(3)]
		} else if len(p) > 0 && rng.IntN(20) == 0 {
			s.Node = p[0].Node // a repeat
		} else {
			s.Node = rng.IntN(len(nodes))
		}
		gpus := 0
		if s.Node >= 0 && s.Node < len(nodes) {
			gpus = nodes[s.Node].GPUs
		}
		if gpus > 0 {
			k := 1 + rng.IntN(gpus)
			for _, g := range rng.Perm(gpus)[:k] {
				s.GPUs |= 1 << g
			}
			if k == 1 && rng.IntN(2) == 0 {
				s.Milli = int32(1 + rng.IntN(999))
			} else {
				s.Milli = 1000
			}
		}
		if rng.IntN(40) == 0 {
			s.GPUs |= 1 << (gpus + rng.IntN(64-min(gpus, 63))) // beyond the node (no-op for 64 GPUs)
			s.Milli = max(s.Milli, 1)
		}
		if rng.IntN(40) == 0 {
			s.Milli = []int32{0, -5, 1001}[rng.IntN(3)]
		}
		if rng.IntN(3) > 0 {
			s.CPUMilli = rng.Int64N(8000)
			s.MemoryMiB = rng.Int64N(32 * 1024)
		}
		if rng.IntN(40) == 0 {
			s.CPUMilli = -1
		}
		if s.Node >= 0 && s.Node < len(nodes) && rng.IntN(8) == 0 {
			// On the boundary: exactly what is free, or one unit more.
			extra := int64(rng.IntN(2))
			switch rng.IntN(3) {
			case 0:
				s.CPUMilli = c.FreeCPU(s.Node) + extra
			case 1:
				s.MemoryMiB = c.FreeMemory(s.Node) + extra
			case 2:
				if gpus > 0 {
					g := rng.IntN(gpus)
					s.GPUs = 1 << g
					s.Milli = c.FreeMilli(s.Node, g) + int32(extra)
				}
			}
		}
		p = append(p, s)
	}
	return p
}

// TestClusterRandomSequences allocates and releases random placements and
// checks, after every step, that the cluster agrees with an independent
// reference model, that CheckInvariants passes, that nothing is ever over
// capacity, and that a refused allocation changes nothing.
func TestClusterRandomSequences(t *testing.T) {
	seeds, steps := uint64(12), 1500
	if testing.Short() {
		seeds, steps = 3, 500
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x62726967616465))
			nodes := randomNodes(rng)
			c, err := hwmodel.NewCluster(nodes)
			if err != nil {
				t.Fatal(err)
			}
			initial := capSnapshot(c)
			ref := newRefModel(nodes)
			var live []hwmodel.Placement
			accepted, refused, peak := 0, 0, int64(0)
			for step := range steps {
				if len(live) > 0 && rng.IntN(10) < 2 {
					k := rng.IntN(len(live))
					c.Release(live[k])
					ref.apply(live[k], +1)
					live[k] = live[len(live)-1]
					live = live[:len(live)-1]
				} else {
					p := randomPlacement(rng, c, nodes)
					want := ref.fits(p)
					err := c.Allocate(p)
					if (err == nil) != want {
						t.Fatalf("step %d: Allocate(%+v) = %v, reference says fits=%v", step, p, err, want)
					}
					if err != nil {
						refused++
						if !errors.Is(err, hwmodel.ErrCapacity) {
							t.Fatalf("step %d: error %q does not wrap ErrCapacity", step, err)
						}
						// ref.compare below fails if the refusal changed anything.
					} else {
						accepted++
						ref.apply(p, -1)
						live = append(live, p)
					}
				}
				checkRedLine(t, c)
				ref.compare(t, c, step)
				peak = max(peak, c.AllocatedMilli())
			}
			for _, p := range live {
				c.Release(p)
			}
			checkRedLine(t, c)
			if got := capSnapshot(c); !reflect.DeepEqual(got, initial) {
				t.Fatalf("releasing everything did not restore the idle cluster")
			}
			t.Logf("%d accepted, %d refused, peak GPU use %d%%", accepted, refused, peak*100/int64(max(1, c.TotalGPUs())*1000))
			if accepted < steps/20 || refused < steps/20 {
				t.Fatalf("sequence is lopsided: %d accepted, %d refused", accepted, refused)
			}
		})
	}
}

func TestClusterCounts(t *testing.T) {
	c := capTestCluster(t)
	a100, t4, h100 := modelID(t, "A100-80GB"), modelID(t, "T4"), modelID(t, "H100")
	if c.NumNodes() != 4 || c.TotalGPUs() != 20 {
		t.Fatalf("nodes %d GPUs %d, want 4 and 20", c.NumNodes(), c.TotalGPUs())
	}
	if c.GPUsOfModel(a100) != 16 || c.GPUsOfModel(t4) != 4 || c.GPUsOfModel(h100) != 0 {
		t.Errorf("per model: %d %d %d", c.GPUsOfModel(a100), c.GPUsOfModel(t4), c.GPUsOfModel(h100))
	}
	if c.GPUsAccepted(hwmodel.AnyModel) != 20 || c.GPUsAccepted(hwmodel.Of(t4, h100)) != 4 {
		t.Errorf("accepted: %d %d", c.GPUsAccepted(hwmodel.AnyModel), c.GPUsAccepted(hwmodel.Of(t4, h100)))
	}
	if c.MaxNodeGPUs(hwmodel.AnyModel) != 8 || c.MaxNodeGPUs(hwmodel.Of(t4)) != 4 || c.MaxNodeGPUs(hwmodel.Of(h100)) != 0 {
		t.Errorf("max node GPUs: %d %d %d", c.MaxNodeGPUs(hwmodel.AnyModel), c.MaxNodeGPUs(hwmodel.Of(t4)), c.MaxNodeGPUs(hwmodel.Of(h100)))
	}
	if err := c.Allocate(hwmodel.Placement{{Node: 2, GPUs: 0b11, Milli: 1000}}); err != nil {
		t.Fatal(err)
	}
	if c.FreeWholeGPUsAccepted(hwmodel.Of(t4)) != 2 || c.FreeWholeGPUsAccepted(hwmodel.AnyModel) != 18 {
		t.Errorf("free whole after allocation: %d %d", c.FreeWholeGPUsAccepted(hwmodel.Of(t4)), c.FreeWholeGPUsAccepted(hwmodel.AnyModel))
	}
}

func TestClusterSatisfiable(t *testing.T) {
	c := capTestCluster(t)
	a100, t4, h100 := modelID(t, "A100-80GB"), modelID(t, "T4"), modelID(t, "H100")
	tests := []struct {
		name string
		r    hwmodel.Request
		want string // "" = satisfiable
	}{
		{"one whole GPU", hwmodel.Request{GPUs: 1, GPUMilli: 1000}, ""},
		{"a whole node", hwmodel.Request{GPUs: 8, GPUMilli: 1000, CPUMilli: 64000, MemoryMiB: 512 * 1024}, ""},
		{"fraction of a T4", hwmodel.Request{GPUs: 1, GPUMilli: 250, Models: hwmodel.Of(t4)}, ""},
		{"CPU-only", hwmodel.Request{CPUMilli: 32000}, ""},
		{"gang larger than any node", hwmodel.Request{GPUs: 16, GPUMilli: 1000, Models: hwmodel.Of(a100)}, ""},
		{"gang of every A100", hwmodel.Request{GPUs: 16, GPUMilli: 1000}, ""},
		{"gang that would mix models", hwmodel.Request{GPUs: 20, GPUMilli: 1000}, "a gang runs on one GPU model and the cluster has at most 16"},
		{"more GPUs than exist", hwmodel.Request{GPUs: 21, GPUMilli: 1000}, "the cluster has 20"},
		{"model absent", hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: hwmodel.Of(h100)}, "the cluster has 0"},
		{"more T4s than exist", hwmodel.Request{GPUs: 5, GPUMilli: 1000, Models: hwmodel.Of(t4)}, "the cluster has 4"},
		{"T4 node lacks the CPU", hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 16001, Models: hwmodel.Of(t4)}, "no node has"},
		{"no node has the memory", hwmodel.Request{GPUs: 1, GPUMilli: 1000, MemoryMiB: 512*1024 + 1}, "no node has"},
		{"CPU-only too big", hwmodel.Request{CPUMilli: 64001}, "no node has"},
		{"invalid request", hwmodel.Request{GPUs: 2, GPUMilli: 500}, "whole GPUs"},
		{"negative GPUs", hwmodel.Request{GPUs: -1}, ">= 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Satisfiable(tc.r)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Satisfiable: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Satisfiable: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		r  hwmodel.Request
		ok bool
	}{
		{hwmodel.Request{}, true},
		{hwmodel.Request{GPUs: 1, GPUMilli: 1}, true},
		{hwmodel.Request{GPUs: 1, GPUMilli: 1000}, true},
		{hwmodel.Request{GPUs: 8, GPUMilli: 1000}, true},
		{hwmodel.Request{GPUs: 0, GPUMilli: 500}, false},
		{hwmodel.Request{GPUs: 1, GPUMilli: 0}, false},
		{hwmodel.Request{GPUs: 1, GPUMilli: 1001}, false},
		{hwmodel.Request{GPUs: 2, GPUMilli: 999}, false},
		{hwmodel.Request{CPUMilli: -1}, false},
		{hwmodel.Request{MemoryMiB: -1}, false},
	}
	for _, tc := range tests {
		if err := tc.r.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate = %v, want ok=%v", tc.r, err, tc.ok)
		}
	}
	if r := (hwmodel.Request{GPUs: 1, GPUMilli: 300}); !r.Fractional() || r.TotalMilli() != 300 {
		t.Errorf("fractional request: Fractional %v TotalMilli %d", r.Fractional(), r.TotalMilli())
	}
	if r := (hwmodel.Request{GPUs: 4, GPUMilli: 1000}); r.Fractional() || r.TotalMilli() != 4000 {
		t.Errorf("whole request: Fractional %v TotalMilli %d", r.Fractional(), r.TotalMilli())
	}
}
