package hwmodel_test

// This file checks hwmodel's MIG table against go-nvml's mock DGX machines.
// It is an external test package so that hwmodel itself does not depend on
// go-nvml; the mocks need no NVIDIA driver (go-nvml's cgo bindings load
// libnvidia-ml lazily, and the mocks never call them).
//
// Where a mock disagrees with what real GPUs report, real hardware wins: the
// test then asserts our value and its message says so (see realOverrides).

import (
	"fmt"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"

	"github.com/brigadesim/brigade/hwmodel"
)

// mockMachines are the mock servers, one per model in our MIG table.
var mockMachines = []struct {
	model  string
	server func() nvml.Interface
}{
	{"A100-40GB", func() nvml.Interface { return dgxa100.New() }},
	{"A100-80GB", func() nvml.Interface { return dgxa100.NewWithGPUs(gpus.Multiple(8, gpus.A100_SXM4_80GB)...) }},
	{"H100-80GB", func() nvml.Interface { return dgxh100.New() }},
	{"H200-141GB", func() nvml.Interface { return dgxh200.New() }},
}

// override is a place where the mock and real hardware disagree; our table
// follows real hardware.
type override struct {
	mockMemoryMiB int64 // 0: the mock agrees on memory
	mockStarts    []int // nil: the mock agrees on starts
	mockSize      int   // 0: the mock agrees on the placement size
	why           string
}

// realOverrides lists every known disagreement by model and profile name.
var realOverrides = map[string]map[string]override{
	"H100-80GB": {
		"1g.20gb": {mockStarts: []int{0, 1, 2, 3, 4, 5, 6}, mockSize: 1,
			why: "the mock gives the 1-slice, 2-memory-slice profile seven 1-slice placements for its 4 instances; real H100s report {0,2,4,6}:2, as A100 does"},
		"3g.40gb": {mockSize: 3, why: "the mock gives placement size 3 (compute slices); real H100s report {0,4}:4 (memory slices), as A100 does"},
		"7g.80gb": {mockSize: 7, why: "the mock gives placement size 7; real H100s report {0}:8, as A100 does"},
	},
	"H200-141GB": {
		"1g.18gb":    {mockMemoryMiB: 18432, why: "a real H200 (driver 580) reports 16384 MB for 1g.18gb"},
		"1g.18gb+me": {mockMemoryMiB: 18432, why: "a real H200 (driver 580) reports 16384 MB for 1g.18gb+me"},
		"1g.35gb": {mockMemoryMiB: 35840, mockStarts: []int{0, 1, 2, 3, 4, 5, 6}, mockSize: 1,
			why: "a real H200 (driver 580) reports 33280 MB for 1g.35gb; its placements are {0,2,4,6}:2 as on A100/H100, the mock gives seven of size 1"},
		"2g.35gb": {mockMemoryMiB: 35840, why: "a real H200 (driver 580) reports 33280 MB for 2g.35gb"},
		"3g.71gb": {mockMemoryMiB: 72704, mockSize: 3, why: "a real H200 (driver 580) reports 71424 MB for 3g.71gb, placement size 4 memory slices (the mock: 3)"},
		"4g.71gb": {mockMemoryMiB: 72704, why: "a real H200 (driver 580) reports 71424 MB for 4g.71gb"},
		"7g.141gb": {mockMemoryMiB: 144384, mockSize: 7,
			why: "a real H200 (driver 580) reports 143360 MB for 7g.141gb, placement size 8 memory slices (the mock: 7)"},
	},
}

// realH200 is what a real H200 with driver 580 reports (nvidia-smi mig
// -lgip): name, profile id, instances, memory in MB (MiB).
var realH200 = []struct {
	name      string
	id, count int
	memMiB    int64
}{
	{"1g.18gb", 19, 7, 16384},
	{"1g.18gb+me", 20, 1, 16384},
	{"1g.35gb", 15, 4, 33280},
	{"2g.35gb", 14, 3, 33280},
	{"3g.71gb", 9, 2, 71424},
	{"4g.71gb", 5, 1, 71424},
	{"7g.141gb", 0, 1, 143360},
}

func TestMIGTableMatchesRealH200(t *testing.T) {
	h, _ := hwmodel.LookupModel("H200-141GB")
	ps := hwmodel.MIGProfiles(h.ID)
	if len(ps) != len(realH200) {
		t.Fatalf("%d H200 profiles, a real H200 reports %d", len(ps), len(realH200))
	}
	for i, want := range realH200 {
		p := ps[i]
		if p.Name != want.name || p.ID != want.id || p.MaxInstances != want.count || p.MemoryMiB != want.memMiB {
			t.Errorf("profile %d: %s id %d ×%d %d MiB; a real H200 reports %s id %d ×%d %d MB", i, p.Name, p.ID, p.MaxInstances, p.MemoryMiB, want.name, want.id, want.count, want.memMiB)
		}
	}
}

func TestMIGTableMatchesNVMLMocks(t *testing.T) {
	used := map[string]bool{} // overrides the test relied on
	for _, mm := range mockMachines {
		t.Run(mm.model, func(t *testing.T) {
			model, ok := hwmodel.LookupModel(mm.model)
			if !ok {
				t.Fatalf("unknown model %s", mm.model)
			}
			srv := mm.server()
			if ret := srv.Init(); ret != nvml.SUCCESS {
				t.Fatalf("Init: %v", ret)
			}
			n, ret := srv.DeviceGetCount()
			if ret != nvml.SUCCESS || n == 0 {
				t.Fatalf("DeviceGetCount: %d, %v", n, ret)
			}
			dev, ret := srv.DeviceGetHandleByIndex(0)
			if ret != nvml.SUCCESS {
				t.Fatalf("DeviceGetHandleByIndex(0): %v", ret)
			}
			name, _ := dev.GetName()
			ours := hwmodel.MIGProfiles(model.ID)
			if ours == nil {
				t.Fatalf("%s: no MIG profiles in our table", mm.model)
			}
			compute, memory := hwmodel.MIGSlices(model.ID)
			if compute != 7 || memory != 8 {
				t.Errorf("MIGSlices = %d, %d; want 7, 8", compute, memory)
			}

			// Every profile the mock device supports is in our table, and
			// no two of ours share an NVML enum.
			byEnum := map[int]hwmodel.MIGProfile{}
			for _, p := range ours {
				enum, ok := hwmodel.NVMLProfileEnum(p.ID)
				if !ok {
					t.Fatalf("%s: profile id %d has no NVML enum", p.Name, p.ID)
				}
				if q, dup := byEnum[enum]; dup {
					t.Fatalf("%s and %s share NVML enum %d", p.Name, q.Name, enum)
				}
				byEnum[enum] = p
			}
			for enum := 0; enum < nvml.GPU_INSTANCE_PROFILE_COUNT; enum++ {
				_, ret := dev.GetGpuInstanceProfileInfo(enum)
				if _, known := byEnum[enum]; (ret == nvml.SUCCESS) != known {
					t.Errorf("%s (%s): NVML profile enum %d: mock returns %v, our table has it: %v", mm.model, name, enum, ret, known)
				}
			}

			for _, p := range ours {
				enum, _ := hwmodel.NVMLProfileEnum(p.ID)
				info, ret := dev.GetGpuInstanceProfileInfo(enum)
				if ret != nvml.SUCCESS {
					t.Errorf("%s: GetGpuInstanceProfileInfo(%d): %v", p.Name, enum, ret)
					continue
				}
				ov, hasOv := realOverrides[mm.model][p.Name]
				if hasOv {
					used[mm.model+" "+p.Name] = true
				}
				// The mocks put the enum in Id; real NVML reports the
				// profile id that nvidia-smi prints (19 for 1g, ..., 0 for
				// 7g). Our table holds the real id; the enum mapping is
				// what ties the two together.
				if int(info.Id) != enum {
					t.Errorf("%s: mock reports Id %d for enum %d (expected the mock to echo the enum)", p.Name, info.Id, enum)
				}
				if int(info.SliceCount) != p.Slices {
					t.Errorf("%s: %d compute slices, mock says %d", p.Name, p.Slices, info.SliceCount)
				}
				if int(info.InstanceCount) != p.MaxInstances {
					t.Errorf("%s: at most %d instances, mock says %d", p.Name, p.MaxInstances, info.InstanceCount)
				}
				wantMem := int64(info.MemorySizeMB)
				if hasOv && ov.mockMemoryMiB != 0 {
					if wantMem != ov.mockMemoryMiB {
						t.Errorf("%s: the mock's memory changed from %d to %d MB; recheck the override (%s)", p.Name, ov.mockMemoryMiB, wantMem, ov.why)
					}
					wantMem = p.MemoryMiB // real hardware wins
				}
				if p.MemoryMiB != wantMem {
					t.Errorf("%s: %d MiB, mock says %d", p.Name, p.MemoryMiB, wantMem)
				}

				pl, ret := dev.GetGpuInstancePossiblePlacements(&info)
				if ret != nvml.SUCCESS {
					t.Errorf("%s: GetGpuInstancePossiblePlacements: %v", p.Name, ret)
					continue
				}
				var starts []int
				sizes := map[int]bool{}
				for _, x := range pl {
					starts = append(starts, int(x.Start))
					sizes[int(x.Size)] = true
				}
				wantStarts, wantSize := starts, -1
				if len(sizes) == 1 {
					for s := range sizes {
						wantSize = s
					}
				}
				if hasOv && ov.mockStarts != nil {
					if !slices.Equal(starts, ov.mockStarts) {
						t.Errorf("%s: the mock's starts changed from %v to %v; recheck the override (%s)", p.Name, ov.mockStarts, starts, ov.why)
					}
					wantStarts = p.Starts // real hardware wins
				}
				if hasOv && ov.mockSize != 0 {
					if wantSize != ov.mockSize {
						t.Errorf("%s: the mock's placement size changed from %d to %d; recheck the override (%s)", p.Name, ov.mockSize, wantSize, ov.why)
					}
					wantSize = p.MemorySlices // real hardware wins
				}
				if !slices.Equal(p.Starts, wantStarts) {
					t.Errorf("%s: starts %v, mock says %v", p.Name, p.Starts, wantStarts)
				}
				if p.MemorySlices != wantSize {
					t.Errorf("%s: %d memory slices, mock placements have size %d", p.Name, p.MemorySlices, wantSize)
				}
				if hasOv {
					t.Logf("%s %s: real hardware wins over the mock: %s", mm.model, p.Name, ov.why)
				}
			}
			if ret := srv.Shutdown(); ret != nvml.SUCCESS {
				t.Errorf("Shutdown: %v", ret)
			}
		})
	}
	// Every override must still be needed: a stale one would hide a change.
	for model, byName := range realOverrides {
		for name := range byName {
			if !used[model+" "+name] {
				t.Errorf("override for %s %s names no profile of our table", model, name)
			}
		}
	}
}

// TestNVMLMockCreatesOurLayouts creates each named layout's instances on
// a mock device, at our starts and sizes, as a live driver would, and reads
// them back per profile. The mocks check neither overlaps nor starts (our
// ValidateMIGLayout does, against the table the test above checks), so this
// checks the round trip: profile ids and placements survive NVML's types.
func TestNVMLMockCreatesOurLayouts(t *testing.T) {
	for _, mm := range mockMachines {
		model, _ := hwmodel.LookupModel(mm.model)
		ps := hwmodel.MIGProfiles(model.ID)
		for _, name := range hwmodel.MIGLayoutNames() {
			l, err := hwmodel.NamedMIGLayout(model.ID, name)
			if err != nil {
				t.Fatalf("%s %s: %v", mm.model, name, err)
			}
			srv := mm.server()
			dev, _ := srv.DeviceGetHandleByIndex(0)
			if ret, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
				t.Fatalf("SetMigMode: %v", ret)
			}
			want := map[int][]nvml.GpuInstancePlacement{} // by enum
			for k, in := range l {
				enum, _ := hwmodel.NVMLProfileEnum(ps[in.Profile].ID)
				info, ret := dev.GetGpuInstanceProfileInfo(enum)
				if ret != nvml.SUCCESS {
					t.Fatalf("%s %s instance %d: %v", mm.model, name, k, ret)
				}
				pl := nvml.GpuInstancePlacement{Start: uint32(in.Start), Size: uint32(ps[in.Profile].MemorySlices)}
				if _, ret := dev.CreateGpuInstanceWithPlacement(&info, &pl); ret != nvml.SUCCESS {
					t.Errorf("%s %s: creating %s at %d: %v", mm.model, name, ps[in.Profile].Name, in.Start, ret)
				}
				want[enum] = append(want[enum], pl)
			}
			for enum, pls := range want {
				info, _ := dev.GetGpuInstanceProfileInfo(enum)
				gis, ret := dev.GetGpuInstances(&info)
				if ret != nvml.SUCCESS {
					t.Fatalf("GetGpuInstances: %v", ret)
				}
				var got []nvml.GpuInstancePlacement
				for _, gi := range gis {
					gii, ret := gi.GetInfo()
					if ret != nvml.SUCCESS {
						t.Fatalf("GetInfo: %v", ret)
					}
					got = append(got, gii.Placement)
				}
				byStart := func(a, b nvml.GpuInstancePlacement) int { return int(a.Start) - int(b.Start) }
				slices.SortFunc(got, byStart)
				slices.SortFunc(pls, byStart)
				if !slices.Equal(got, pls) {
					t.Errorf("%s %s: profile enum %d: mock holds %v, we created %v", mm.model, name, enum, got, pls)
				}
			}
		}
	}
}

func ExampleMIGProfiles() {
	h, _ := hwmodel.LookupModel("H200")
	for _, p := range hwmodel.MIGProfiles(h.ID) {
		fmt.Printf("%-11s id %2d ×%d %6d MiB starts %v\n", p.Name, p.ID, p.MaxInstances, p.MemoryMiB, p.Starts)
	}
	// Output:
	// 1g.18gb     id 19 ×7  16384 MiB starts [0 1 2 3 4 5 6]
	// 1g.18gb+me  id 20 ×1  16384 MiB starts [0 1 2 3 4 5 6]
	// 1g.35gb     id 15 ×4  33280 MiB starts [0 2 4 6]
	// 2g.35gb     id 14 ×3  33280 MiB starts [0 2 4]
	// 3g.71gb     id  9 ×2  71424 MiB starts [0 4]
	// 4g.71gb     id  5 ×1  71424 MiB starts [0]
	// 7g.141gb    id  0 ×1 143360 MiB starts [0]
}
