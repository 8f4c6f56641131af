package hwmodel_test

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func mustLayout(t testing.TB, m hwmodel.ModelID, s string) hwmodel.MIGLayout {
	t.Helper()
	l, err := hwmodel.ParseMIGLayout(m, s)
	if err != nil {
		t.Fatalf("%s %q: %v", hwmodel.Model(m).Name, s, err)
	}
	return l
}

// migTestCluster: node 0 has 4 H200s (balanced, all-1g, whole, whole),
// node 1 has 2 A100-40GB (MIG "whole", i.e. one 7g instance; and a whole
// GPU), node 2 has 2 T4s.
func migTestCluster(t testing.TB) *hwmodel.Cluster {
	t.Helper()
	h, a, t4 := modelID(t, "H200"), modelID(t, "A100-40GB"), modelID(t, "T4")
	c, err := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "h200", Model: h, GPUs: 4, CPUMilli: 64000, MemoryMiB: 1 << 20,
			MIG: []hwmodel.MIGLayout{mustLayout(t, h, "balanced"), mustLayout(t, h, "all-1g"), nil, nil}},
		{Name: "a100", Model: a, GPUs: 2, CPUMilli: 32000, MemoryMiB: 1 << 19,
			MIG: []hwmodel.MIGLayout{mustLayout(t, a, "whole"), {}}},
		{Name: "t4", Model: t4, GPUs: 2, CPUMilli: 16000, MemoryMiB: 1 << 16},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkRedLine(t, c)
	return c
}

// migState is everything a Cluster reports, MIG included.
type migState struct {
	Cap        capState
	Layouts    [][]string
	Busy       [][]uint64
	Blocked    [][]uint64
	Gen        []uint64
	NodeFree   []int64
	MIGGPUs    int
	SliceTotal int
	SliceBusy  int
}

func migSnapshot(c *hwmodel.Cluster) migState {
	s := migState{Cap: capSnapshot(c), MIGGPUs: c.NumMIGGPUs()}
	s.SliceTotal, s.SliceBusy = c.MIGSliceStats()
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		var ls []string
		var busy, blocked []uint64
		for g := 0; g < n.GPUs; g++ {
			ls = append(ls, fmt.Sprintf("%v:%s", c.IsMIG(i, g), c.MIGLayoutOf(i, g).String(n.Model)))
			busy = append(busy, c.MIGBusy(i, g))
			blocked = append(blocked, c.MIGBlocked(i, g))
		}
		s.Layouts = append(s.Layouts, ls)
		s.Busy = append(s.Busy, busy)
		s.Blocked = append(s.Blocked, blocked)
		s.Gen = append(s.Gen, c.Generation(i))
		s.NodeFree = append(s.NodeFree, c.NodeFreeMilli(i))
	}
	return s
}

// TestMIGGPUsInvisibleToWholeAndShared: MIG-enabled GPUs are not idle
// GPUs, have no free milli, and refuse whole and shared shares.
func TestMIGGPUsInvisibleToWholeAndShared(t *testing.T) {
	c := migTestCluster(t)
	h, a := modelID(t, "H200"), modelID(t, "A100-40GB")
	if c.FreeWholeGPUs(0) != 2 || c.FreeWholeGPUs(1) != 1 || c.FreeWholeGPUs(2) != 2 {
		t.Errorf("FreeWholeGPUs %d %d %d, want 2 1 2", c.FreeWholeGPUs(0), c.FreeWholeGPUs(1), c.FreeWholeGPUs(2))
	}
	if got := c.FreeWholeGPUsAccepted(hwmodel.Of(h)); got != 2 {
		t.Errorf("FreeWholeGPUsAccepted(H200) = %d, want 2", got)
	}
	if got := c.FreeWholeGPUsAccepted(hwmodel.AnyModel); got != 5 {
		t.Errorf("FreeWholeGPUsAccepted(any) = %d, want 5", got)
	}
	if c.HasNodeWithIdleGPUs(hwmodel.Of(h), 3) || !c.HasNodeWithIdleGPUs(hwmodel.Of(h), 2) || c.HasNodeWithIdleGPUs(hwmodel.Of(a), 2) {
		t.Error("HasNodeWithIdleGPUs counts MIG GPUs")
	}
	for _, g := range []int{0, 1} {
		if c.FreeMilli(0, g) != 0 || !c.IsMIG(0, g) {
			t.Errorf("H200 GPU %d: FreeMilli %d, IsMIG %v", g, c.FreeMilli(0, g), c.IsMIG(0, g))
		}
	}
	if c.FreeMilli(0, 2) != 1000 || c.IsMIG(0, 2) || c.IsMIG(1, 1) || !c.IsMIG(1, 0) {
		t.Error("whole GPUs reported as MIG")
	}
	if c.NodeFreeMilli(0) != 2000 || c.NodeFreeMilli(1) != 1000 {
		t.Errorf("NodeFreeMilli %d %d", c.NodeFreeMilli(0), c.NodeFreeMilli(1))
	}
	if c.AllocatedMilli() != 0 || c.NumMIGGPUs() != 3 || c.TotalGPUs() != 8 || c.GPUsOfModel(h) != 4 {
		t.Errorf("allocated %d, MIG GPUs %d, total %d", c.AllocatedMilli(), c.NumMIGGPUs(), c.TotalGPUs())
	}
	if total, busy := c.MIGSliceStats(); total != 21 || busy != 0 {
		t.Errorf("MIGSliceStats = %d, %d; want 21, 0", total, busy)
	}
	before := migSnapshot(c)
	for _, p := range []hwmodel.Placement{
		{{Node: 0, GPUs: 0b0001, Milli: 1000}},
		{{Node: 0, GPUs: 0b0001, Milli: 1}},
		{{Node: 0, GPUs: 0b0110, Milli: 1000}},
		{{Node: 1, GPUs: 0b01, Milli: 500}},
	} {
		err := c.Allocate(p)
		if err == nil || !errors.Is(err, hwmodel.ErrCapacity) || !strings.Contains(err.Error(), "is MIG-enabled") {
			t.Errorf("Allocate(%+v) = %v, want a MIG-enabled refusal", p, err)
		}
	}
	if !reflect.DeepEqual(migSnapshot(c), before) {
		t.Fatal("a refused allocation changed the books")
	}
	// The whole GPUs still work as before.
	if err := c.Allocate(hwmodel.Placement{{Node: 0, GPUs: 0b1100, Milli: 1000}}); err != nil {
		t.Fatal(err)
	}
	if c.FreeWholeGPUs(0) != 0 || c.AllocatedMilli() != 2000 {
		t.Errorf("after 2 whole GPUs: whole %d, allocated %d", c.FreeWholeGPUs(0), c.AllocatedMilli())
	}
	checkRedLine(t, c)
}

func TestMIGAllocateRelease(t *testing.T) {
	h := modelID(t, "H200")
	share := func(node, gpu, k int, milli int32) hwmodel.Share {
		return hwmodel.Share{Node: node, GPUs: 1 << gpu, Milli: milli, Instance: k + 1, CPUMilli: 1000, MemoryMiB: 1024}
	}
	tests := []struct {
		name    string
		pre     []hwmodel.Placement
		p       hwmodel.Placement
		wantErr string
	}{
		{name: "3g instance", p: hwmodel.Placement{share(0, 0, 0, 429)}},
		{name: "1g instance", p: hwmodel.Placement{share(0, 1, 6, 143)}},
		{name: "7g instance on A100", p: hwmodel.Placement{share(1, 0, 0, 1000)}},
		{name: "with a whole GPU elsewhere", p: hwmodel.Placement{share(0, 0, 1, 286), {Node: 1, GPUs: 0b10, Milli: 1000}}},
		{name: "wrong milli", p: hwmodel.Placement{share(0, 0, 0, 428)}, wantErr: "share of 428 milli, the instance is 429"},
		{name: "whole milli on a 3g", p: hwmodel.Placement{share(0, 0, 0, 1000)}, wantErr: "the instance is 429"},
		{name: "instance out of range", p: hwmodel.Placement{share(0, 0, 4, 143)}, wantErr: "has 4 MIG instances, no instance 4"},
		{name: "negative instance", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 143, Instance: -1}}, wantErr: "negative"},
		{name: "two GPUs", p: hwmodel.Placement{{Node: 0, GPUs: 0b11, Milli: 143, Instance: 3}}, wantErr: "exactly one GPU"},
		{name: "no GPU", p: hwmodel.Placement{{Node: 0, Milli: 143, Instance: 3}}, wantErr: "exactly one GPU"},
		{name: "whole GPU", p: hwmodel.Placement{share(0, 2, 0, 143)}, wantErr: "GPU 2 is not MIG-enabled"},
		{name: "T4", p: hwmodel.Placement{share(2, 0, 0, 143)}, wantErr: "not MIG-enabled"},
		{name: "busy", pre: []hwmodel.Placement{{share(0, 0, 2, 143)}}, p: hwmodel.Placement{share(0, 0, 2, 143)}, wantErr: "MIG instance 2 (1g.18gb@2) is in use"},
		{name: "CPU short", p: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 429, Instance: 1, CPUMilli: 64001}}, wantErr: "milli-CPU"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := migTestCluster(t)
			for _, p := range tc.pre {
				if err := c.Allocate(p); err != nil {
					t.Fatal(err)
				}
			}
			before := migSnapshot(c)
			err := c.Allocate(tc.p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, hwmodel.ErrCapacity) {
					t.Fatalf("Allocate = %v, want ErrCapacity with %q", err, tc.wantErr)
				}
				if !reflect.DeepEqual(migSnapshot(c), before) {
					t.Fatal("a refused allocation changed the books")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkRedLine(t, c)
			var milli int64
			slices := 0
			for _, s := range tc.p {
				if s.Instance > 0 {
					if c.MIGBusy(s.Node, bits.TrailingZeros64(s.GPUs))&(1<<(s.Instance-1)) == 0 || c.MIGInstanceFree(s.Node, bits.TrailingZeros64(s.GPUs), s.Instance-1) {
						t.Error("instance not marked busy")
					}
					l := c.MIGLayoutOf(s.Node, bits.TrailingZeros64(s.GPUs))
					slices += hwmodel.MIGProfiles(c.Node(s.Node).Model)[l[s.Instance-1].Profile].Slices
				}
				milli += int64(s.Milli) * int64(s.GPUCount())
			}
			if c.AllocatedMilli() != milli {
				t.Errorf("AllocatedMilli %d, want %d", c.AllocatedMilli(), milli)
			}
			if _, busy := c.MIGSliceStats(); busy != slices {
				t.Errorf("busy slices %d, want %d", busy, slices)
			}
			if c.SharesOfKind(0, 0) != 0 || c.ShareKinds(0) != 0 {
				t.Error("a MIG share counted as a GPU-sharing share")
			}
			c.Release(tc.p)
			checkRedLine(t, c)
			after := migSnapshot(c)
			after.Gen, before.Gen = nil, nil
			if !reflect.DeepEqual(after, before) {
				t.Fatalf("release did not restore the books:\n%+v\n%+v", after, before)
			}
		})
	}
	_ = h
}

func TestMIGReleaseMistakesPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    hwmodel.Share
	}{
		{"free instance", hwmodel.Share{Node: 0, GPUs: 1, Milli: 143, Instance: 3}},
		{"wrong milli", hwmodel.Share{Node: 0, GPUs: 1, Milli: 143, Instance: 1}},
		{"not MIG", hwmodel.Share{Node: 0, GPUs: 4, Milli: 143, Instance: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := migTestCluster(t)
			if err := c.Allocate(hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 429, Instance: 1}}); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			c.Release(hwmodel.Placement{tc.s})
		})
	}
}

func TestMIGReconfigure(t *testing.T) {
	h, a := modelID(t, "H200"), modelID(t, "A100-40GB")
	c := migTestCluster(t)
	// Occupy GPU 0's 2g (instance 1, at 0) and 1g at 3 (instance 3).
	busy := hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 286, Instance: 2}}
	busy1g := hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 143, Instance: 4}}
	for _, p := range []hwmodel.Placement{busy, busy1g} {
		if err := c.Allocate(p); err != nil {
			t.Fatal(err)
		}
	}
	refuse := func(node, gpu int, l hwmodel.MIGLayout, want string) {
		t.Helper()
		before := migSnapshot(c)
		remap, err := c.Reconfigure(node, gpu, l)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Reconfigure(%d, %d, %v) = %v, want an error with %q", node, gpu, l, err, want)
		}
		if remap != nil {
			t.Errorf("remap %v with an error", remap)
		}
		if !reflect.DeepEqual(migSnapshot(c), before) {
			t.Fatal("a refused Reconfigure changed the books")
		}
		checkRedLine(t, c)
	}
	refuse(0, 0, mustLayout(t, h, "all-1g"), `MIG instance 1 (2g.35gb@0) is in use and the new layout`)
	refuse(0, 0, mustLayout(t, h, "3g.71gb@4,2g.35gb@0,1g.18gb@2"), `MIG instance 3 (1g.18gb@3) is in use`)
	refuse(0, 0, nil, "is in use")
	refuse(0, 0, mustLayout(t, h, "2g.35gb@4,1g.18gb@3"), "is in use") // the 2g moved
	refuse(0, 0, hwmodel.MIGLayout{{Profile: 3, Start: 0}, {Profile: 3, Start: 1}}, `node "h200" GPU 0: MIG layout "2g.35gb@0,2g.35gb@1"`)
	refuse(0, 0, hwmodel.MIGLayout{{Profile: 9, Start: 0}}, "profile index 9 does not exist on H200-141GB")
	refuse(2, 0, hwmodel.MIGLayout{{Profile: 0, Start: 0}}, "T4 does not support MIG")
	refuse(0, 9, nil, "no GPU 9")
	refuse(7, 0, nil, "node 7 does not exist")
	// A whole GPU in use cannot be partitioned.
	if err := c.Allocate(hwmodel.Placement{{Node: 0, GPUs: 0b100, Milli: 300}}); err != nil {
		t.Fatal(err)
	}
	refuse(0, 2, mustLayout(t, h, "balanced"), "a whole GPU can be MIG-partitioned only while idle")

	// Keep both busy instances, in a new order, and add a 4g at 4... no:
	// the 2g at 0 and the 1g at 3 leave 2 and 4..7. New layout: the 1g at
	// 3 first, a new 1g at 2, a new 3g at 4, the 2g at 0 last.
	gen := c.Generation(0)
	l := mustLayout(t, h, "1g.18gb@3,1g.18gb@2,3g.71gb@4,2g.35gb@0")
	remap, err := c.Reconfigure(0, 0, l)
	if err != nil {
		t.Fatal(err)
	}
	// Old: 0 3g@4, 1 2g@0, 2 1g@2, 3 1g@3. The 3g@4 and 1g@2 were free and
	// reappear with the same profile and start, so they survive.
	if want := []int{2, 3, 1, 0}; !reflect.DeepEqual(remap, want) {
		t.Fatalf("remap %v, want %v", remap, want)
	}
	if c.Generation(0) == gen {
		t.Error("Reconfigure did not bump the generation")
	}
	if got := c.MIGLayoutOf(0, 0).String(h); got != l.String(h) {
		t.Errorf("layout %s, want %s", got, l.String(h))
	}
	if c.MIGBusy(0, 0) != 0b1001 || c.MIGBlocked(0, 0) != 0 {
		t.Errorf("busy %#b blocked %#b, want 0b1001 and 0", c.MIGBusy(0, 0), c.MIGBlocked(0, 0))
	}
	checkRedLine(t, c)
	// The running shares, rewritten with remap, release cleanly.
	busy[0].Instance = remap[busy[0].Instance-1] + 1
	busy1g[0].Instance = remap[busy1g[0].Instance-1] + 1
	c.Release(busy)
	checkRedLine(t, c)

	// New instances are blocked until UnblockMIG.
	l2 := mustLayout(t, h, "1g.18gb@3,1g.18gb@2,1g.18gb@0,1g.18gb@1,3g.71gb@4")
	remap, err = c.Reconfigure(0, 0, l2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 4, -1}; !reflect.DeepEqual(remap, want) {
		t.Fatalf("remap %v, want %v", remap, want)
	}
	if c.MIGBusy(0, 0) != 0b00001 || c.MIGBlocked(0, 0) != 0b01100 {
		t.Fatalf("busy %#b blocked %#b", c.MIGBusy(0, 0), c.MIGBlocked(0, 0))
	}
	if c.MIGInstanceFree(0, 0, 2) || !c.MIGInstanceFree(0, 0, 1) || c.MIGInstanceFree(0, 0, 0) || c.MIGInstanceFree(0, 0, 5) {
		t.Error("MIGInstanceFree ignores busy or blocked")
	}
	err = c.Allocate(hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 143, Instance: 3}})
	if err == nil || !strings.Contains(err.Error(), "is being reconfigured") {
		t.Fatalf("allocating a blocked instance: %v", err)
	}
	if k := c.FindMIGInstance(0, 0, hwmodel.MIGRequest{Profile: "1g.18gb"}); k != 1 {
		t.Errorf("FindMIGInstance = %d, want 1 (0 is busy, 2 and 3 blocked)", k)
	}
	gen = c.Generation(0)
	c.UnblockMIG(0, 0)
	if c.MIGBlocked(0, 0) != 0 || c.Generation(0) == gen {
		t.Error("UnblockMIG did not unblock, or did not bump the generation")
	}
	gen = c.Generation(0)
	c.UnblockMIG(0, 0)
	c.UnblockMIG(0, 3)
	if c.Generation(0) != gen {
		t.Error("UnblockMIG with nothing blocked bumped the generation")
	}
	s := c.MIGShare(0, 0, 2, 10, 10)
	if s.Milli != 143 || s.Instance != 3 || s.GPUs != 1 {
		t.Fatalf("MIGShare = %+v", s)
	}
	if err := c.Allocate(hwmodel.Placement{s}); err != nil {
		t.Fatal(err)
	}
	checkRedLine(t, c)
	c.Release(hwmodel.Placement{s})
	busy1g[0].Instance = 1
	c.Release(busy1g)

	// An idle MIG GPU can go back to whole, and then be handed out whole.
	whole0 := c.FreeWholeGPUs(0)
	remap, err = c.Reconfigure(0, 0, nil)
	if err != nil || len(remap) != 5 {
		t.Fatalf("MIG off: %v, %v", remap, err)
	}
	if c.IsMIG(0, 0) || c.FreeMilli(0, 0) != 1000 || c.FreeWholeGPUs(0) != whole0+1 || c.NumMIGGPUs() != 2 {
		t.Fatalf("after MIG off: IsMIG %v FreeMilli %d whole %d", c.IsMIG(0, 0), c.FreeMilli(0, 0), c.FreeWholeGPUs(0))
	}
	checkRedLine(t, c)
	if err := c.Allocate(hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}}); err != nil {
		t.Fatal(err)
	}
	refuse(0, 0, mustLayout(t, h, "whole"), "only while idle")
	c.Release(hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000}})

	// An idle whole GPU can be partitioned; every instance starts blocked.
	remap, err = c.Reconfigure(1, 1, mustLayout(t, a, "halves"))
	if err != nil || remap != nil {
		t.Fatalf("partition a whole GPU: %v, %v", remap, err)
	}
	if !c.IsMIG(1, 1) || c.MIGBlocked(1, 1) != 0b11 || c.FreeWholeGPUs(1) != 0 || c.FreeMilli(1, 1) != 0 {
		t.Fatal("partitioned GPU books wrong")
	}
	// Reconfiguring a whole GPU to no layout does nothing.
	gen = c.Generation(0)
	if remap, err := c.Reconfigure(0, 3, nil); err != nil || remap != nil || c.Generation(0) != gen {
		t.Fatalf("no-op Reconfigure: %v, %v", remap, err)
	}
	checkRedLine(t, c)
	// Node keeps the initial description.
	if n := c.Node(0); len(n.MIG) != 4 || n.MIG[0].String(h) != mustLayout(t, h, "balanced").String(h) {
		t.Errorf("Node(0).MIG = %v", n.MIG)
	}
}

func TestNewClusterMIG(t *testing.T) {
	h, a, t4 := modelID(t, "H200"), modelID(t, "A100-40GB"), modelID(t, "T4")
	bad := []struct {
		name string
		node hwmodel.Node
		want string
	}{
		{"too few layouts", hwmodel.Node{Name: "x", Model: h, GPUs: 2, MIG: []hwmodel.MIGLayout{nil}}, `node "x": mig lists 1 layouts for 2 GPUs`},
		{"overlap", hwmodel.Node{Name: "x", Model: a, GPUs: 2, MIG: []hwmodel.MIGLayout{nil, {{Profile: 5, Start: 0}, {Profile: 4, Start: 0}}}},
			`node "x" GPU 1: MIG layout "4g.20gb@0,3g.20gb@0": instance 1 (3g.20gb@0) overlaps instance 0 (4g.20gb@0)`},
		{"bad start", hwmodel.Node{Name: "x", Model: a, GPUs: 1, MIG: []hwmodel.MIGLayout{{{Profile: 4, Start: 2}}}}, `node "x" GPU 0: MIG layout "3g.20gb@2": instance 0 (3g.20gb@2): 3g.20gb cannot start at memory slice 2`},
		{"T4", hwmodel.Node{Name: "x", Model: t4, GPUs: 1, MIG: []hwmodel.MIGLayout{{{Profile: 0, Start: 0}}}}, `node "x" GPU 0`},
	}
	for _, tc := range bad {
		_, err := hwmodel.NewCluster([]hwmodel.Node{tc.node})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// The cluster copies the layouts it is given.
	l := mustLayout(t, h, "balanced")
	nodes := []hwmodel.Node{{Name: "x", Model: h, GPUs: 1, MIG: []hwmodel.MIGLayout{l}}}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	l[0].Start = 0
	nodes[0].MIG[0] = nil
	if err := c.CheckInvariants(); err != nil || !c.IsMIG(0, 0) || c.MIGLayoutOf(0, 0)[0].Start != 4 {
		t.Fatalf("changing the caller's layout changed the cluster: %v", err)
	}
	if c.Generation(0) != 0 {
		t.Error("a new cluster's generation is not 0")
	}
}

func TestMIGSatisfiable(t *testing.T) {
	c := migTestCluster(t)
	h, a, t4 := modelID(t, "H200"), modelID(t, "A100-40GB"), modelID(t, "T4")
	mig := func(r hwmodel.MIGRequest, models hwmodel.ModelSet, cpu int64) hwmodel.Request {
		return hwmodel.Request{GPUs: 1, MIG: r, Models: models, CPUMilli: cpu}
	}
	ok := []hwmodel.Request{
		mig(hwmodel.MIGRequest{Profile: "3g.71gb"}, hwmodel.AnyModel, 0),
		mig(hwmodel.MIGRequest{Profile: "4g.71gb"}, hwmodel.AnyModel, 0), // no GPU has one now; reconfiguration may make it
		mig(hwmodel.MIGRequest{Profile: "1g.5gb"}, hwmodel.Of(a), 0),
		mig(hwmodel.MIGRequest{MinSlices: 7}, hwmodel.AnyModel, 32000),
		mig(hwmodel.MIGRequest{MinMemoryMiB: 100000}, hwmodel.AnyModel, 0),
	}
	for _, r := range ok {
		if err := c.Satisfiable(r); err != nil {
			t.Errorf("%v: %v", r.MIG, err)
		}
	}
	bad := []struct {
		r    hwmodel.Request
		want string
	}{
		{mig(hwmodel.MIGRequest{Profile: "3g.71gb"}, hwmodel.Of(a), 0), "matching 3g.71gb"},
		{mig(hwmodel.MIGRequest{Profile: "1g.5gb"}, hwmodel.Of(t4), 0), "no node of model T4"},
		{mig(hwmodel.MIGRequest{MinMemoryMiB: 100000}, hwmodel.Of(a), 0), "matching"},
		{mig(hwmodel.MIGRequest{MinSlices: 8}, hwmodel.AnyModel, 0), "matching"},
		{mig(hwmodel.MIGRequest{MinSlices: 7}, hwmodel.Of(h), 64001), "64001 milli-CPU"},
		{hwmodel.Request{GPUs: 2, GPUMilli: 1000, MIG: hwmodel.MIGRequest{MinSlices: 1}}, "gpus 1 and gpu_milli 0"},
		{hwmodel.Request{GPUs: 1, GPUMilli: 500, MIG: hwmodel.MIGRequest{MinSlices: 1}}, "gpus 1 and gpu_milli 0"},
		{mig(hwmodel.MIGRequest{MinSlices: -1}, hwmodel.AnyModel, 0), "min slices"},
	}
	for _, tc := range bad {
		err := c.Satisfiable(tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
	r := mig(hwmodel.MIGRequest{MinSlices: 1}, hwmodel.AnyModel, 0)
	if r.Fractional() || !r.WantsMIG() || r.TotalMilli() != 0 {
		t.Errorf("MIG request: Fractional %v WantsMIG %v TotalMilli %d", r.Fractional(), r.WantsMIG(), r.TotalMilli())
	}
}

// TestMIGRandomSequences mixes MIG allocations, whole and shared
// allocations, releases, reconfigurations and unblocks at random, and
// checks CheckInvariants and the red line after every step, that refusals
// change nothing, and that AllocatedMilli always equals what the live
// placements hold.
func TestMIGRandomSequences(t *testing.T) {
	seeds, steps := uint64(8), 2000
	if testing.Short() {
		seeds, steps = 2, 500
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x6d6967))
			models := []hwmodel.ModelID{modelID(t, "A100-40GB"), modelID(t, "A100-80GB"), modelID(t, "H100"), modelID(t, "H200"), modelID(t, "T4")}
			var nodes []hwmodel.Node
			for i := range 6 {
				m := models[rng.IntN(len(models))]
				n := hwmodel.Node{Name: fmt.Sprintf("n%d", i), Model: m, GPUs: 1 + rng.IntN(8), CPUMilli: 64000, MemoryMiB: 1 << 20}
				if hwmodel.MIGCapable(m) && rng.IntN(3) > 0 {
					for range n.GPUs {
						n.MIG = append(n.MIG, randomLayout(rng, m))
					}
				}
				nodes = append(nodes, n)
			}
			c, err := hwmodel.NewCluster(nodes)
			if err != nil {
				t.Fatal(err)
			}
			var live []hwmodel.Placement
			liveMilli := func() int64 {
				var s int64
				for _, p := range live {
					for _, sh := range p {
						s += int64(sh.Milli) * int64(sh.GPUCount())
					}
				}
				return s
			}
			counts := map[string]int{}
			for step := range steps {
				i := rng.IntN(len(nodes))
				g := rng.IntN(nodes[i].GPUs)
				before := migSnapshot(c)
				switch op := rng.IntN(10); {
				case op < 2 && len(live) > 0:
					k := rng.IntN(len(live))
					c.Release(live[k])
					live[k] = live[len(live)-1]
					live = live[:len(live)-1]
					counts["release"]++
				case op < 6:
					// A MIG share, usually on an existing instance.
					k := rng.IntN(len(c.MIGLayoutOf(i, g)) + 1)
					s := c.MIGShare(i, g, k, int64(rng.IntN(4000)), int64(rng.IntN(4096)))
					if rng.IntN(10) == 0 {
						s.Milli += int32(rng.IntN(3)) - 1
					}
					want := c.IsMIG(i, g) && c.MIGInstanceFree(i, g, k) && s.Milli == hwmodel.MIGMilli(nodes[i].Model, c.MIGLayoutOf(i, g)[k].Profile)
					err := c.Allocate(hwmodel.Placement{s})
					if (err == nil) != want {
						t.Fatalf("step %d: Allocate(%+v) = %v, expected fit %v", step, s, err, want)
					}
					if err == nil {
						live = append(live, hwmodel.Placement{s})
						counts["mig"]++
					} else {
						counts["mig refused"]++
					}
				case op < 7:
					// A whole or shared share.
					milli := int32(1000)
					if rng.IntN(2) == 0 {
						milli = int32(1 + rng.IntN(999))
					}
					s := hwmodel.Share{Node: i, GPUs: 1 << g, Milli: milli}
					want := !c.IsMIG(i, g) && c.FreeMilli(i, g) >= milli
					err := c.Allocate(hwmodel.Placement{s})
					if (err == nil) != want {
						t.Fatalf("step %d: Allocate(%+v) = %v, expected fit %v", step, s, err, want)
					}
					if err == nil {
						live = append(live, hwmodel.Placement{s})
						counts["whole/shared"]++
					}
				case op < 8:
					var l hwmodel.MIGLayout
					if hwmodel.MIGCapable(nodes[i].Model) && rng.IntN(5) > 0 {
						l = randomLayout(rng, nodes[i].Model)
						// Often keep the busy instances, so that some succeed.
						if rng.IntN(2) == 0 {
							l = keepBusy(c, i, g, l, rng)
						}
					}
					old := c.MIGLayoutOf(i, g)
					remap, err := c.Reconfigure(i, g, l)
					if err != nil {
						counts["reconfigure refused"]++
						if !reflect.DeepEqual(migSnapshot(c), before) {
							t.Fatalf("step %d: refused Reconfigure changed the books", step)
						}
						break
					}
					counts["reconfigure"]++
					// Rewrite the live shares on this GPU.
					for _, p := range live {
						for j := range p {
							if p[j].Node == i && p[j].GPUs == 1<<g && p[j].Instance > 0 {
								nk := remap[p[j].Instance-1]
								if nk < 0 {
									t.Fatalf("step %d: busy instance %d dropped (old %v new %v)", step, p[j].Instance-1, old, l)
								}
								p[j].Instance = nk + 1
							}
						}
					}
				default:
					c.UnblockMIG(i, g)
					counts["unblock"]++
				}
				if err := c.CheckInvariants(); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				checkRedLine(t, c)
				if c.AllocatedMilli() != liveMilli() {
					t.Fatalf("step %d: AllocatedMilli %d, live placements hold %d", step, c.AllocatedMilli(), liveMilli())
				}
			}
			for _, p := range live {
				c.Release(p)
			}
			checkRedLine(t, c)
			if _, busy := c.MIGSliceStats(); c.AllocatedMilli() != 0 || busy != 0 {
				t.Fatalf("after releasing everything: allocated %d, busy slices %d", c.AllocatedMilli(), busy)
			}
			t.Log(counts)
			if counts["mig"] < steps/50 || counts["reconfigure"] < steps/50 {
				t.Fatalf("sequence is lopsided: %v", counts)
			}
		})
	}
}

// randomLayout draws a valid layout for model m: a named layout, or random
// profiles placed by ParseMIGLayout (retrying until one fits).
func randomLayout(rng *rand.Rand, m hwmodel.ModelID) hwmodel.MIGLayout {
	if rng.IntN(3) == 0 {
		names := hwmodel.MIGLayoutNames()
		l, err := hwmodel.NamedMIGLayout(m, names[rng.IntN(len(names))])
		if err != nil {
			panic(err)
		}
		return l
	}
	ps := hwmodel.MIGProfiles(m)
	for {
		var names []string
		for range 1 + rng.IntN(5) {
			names = append(names, ps[rng.IntN(len(ps))].Name)
		}
		if l, err := hwmodel.ParseMIGLayout(m, strings.Join(names, ",")); err == nil {
			return l
		}
	}
}

// keepBusy returns a layout that holds GPU (i, g)'s busy instances
// unchanged plus those of want that do not overlap them, shuffled.
func keepBusy(c *hwmodel.Cluster, i, g int, want hwmodel.MIGLayout, rng *rand.Rand) hwmodel.MIGLayout {
	m := c.Node(i).Model
	old, busy := c.MIGLayoutOf(i, g), c.MIGBusy(i, g)
	var l hwmodel.MIGLayout
	for k, in := range old {
		if busy&(1<<k) != 0 {
			l = append(l, in)
		}
	}
	for _, in := range want {
		try := append(append(hwmodel.MIGLayout(nil), l...), in)
		if hwmodel.ValidateMIGLayout(m, try) == nil {
			l = try
		}
	}
	rng.Shuffle(len(l), func(a, b int) { l[a], l[b] = l[b], l[a] })
	if len(l) == 0 && len(old) > 0 {
		return want
	}
	return l
}

// TestMIGQueriesDoNotAllocate: placement calls these per GPU.
func TestMIGQueriesDoNotAllocate(t *testing.T) {
	c := migTestCluster(t)
	h := modelID(t, "H200")
	r := hwmodel.MIGRequest{MinSlices: 2}
	n := testing.AllocsPerRun(100, func() {
		_ = c.FindMIGInstance(0, 1, r)
		_ = c.FindMIGInstance(0, 0, r)
		_ = r.Matches(h, 3)
		_ = hwmodel.MIGMilli(h, 4)
		_ = c.MIGInstanceFree(0, 0, 2)
		_ = c.MIGBusy(0, 0) | c.MIGBlocked(0, 0)
		_ = c.IsMIG(0, 1)
		_ = c.MIGShare(0, 0, 1, 0, 0)
		_ = c.Node(0)
	})
	if n != 0 {
		t.Errorf("%v allocations per run", n)
	}
	p := hwmodel.Placement{c.MIGShare(0, 0, 0, 100, 100)}
	n = testing.AllocsPerRun(100, func() {
		if err := c.Allocate(p); err != nil {
			t.Fatal(err)
		}
		c.Release(p)
	})
	if n != 0 {
		t.Errorf("MIG Allocate+Release: %v allocations per run", n)
	}
}
