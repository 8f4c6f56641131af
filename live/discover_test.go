//go:build cgo

package live

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// fillReads sets, on every mock device, the read-only queries Discover calls
// that go-nvml's mock servers leave unset (they panic on unset methods):
// utilisation, and the MIG device handles (one per GPU instance, UUID
// "MIG-<gpu>-<gi id>").
func fillReads(t *testing.T, s *server.Server) {
	t.Helper()
	for i, d := range s.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			if dev.MigMode == nvml.DEVICE_MIG_ENABLE {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED // as real GPUs in MIG mode
			}
			return nvml.Utilization{Gpu: uint32(10 * i), Memory: 5}, nvml.SUCCESS
		}
		dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
		dev.GetMigDeviceHandleByIndexFunc = func(j int) (nvml.Device, nvml.Return) {
			var ids []int
			for gi := range dev.GpuInstances {
				ids = append(ids, int(gi.Info.Id))
			}
			if j >= len(ids) {
				return nil, nvml.ERROR_NOT_FOUND
			}
			// Map order is random; index j is the j-th smallest id.
			for a := range ids {
				for b := a + 1; b < len(ids); b++ {
					if ids[b] < ids[a] {
						ids[a], ids[b] = ids[b], ids[a]
					}
				}
			}
			id := ids[j]
			return &mock.Device{
				GetGpuInstanceIdFunc: func() (int, nvml.Return) { return id, nvml.SUCCESS },
				GetUUIDFunc:          func() (string, nvml.Return) { return fmt.Sprintf("MIG-%d-%d", i, id), nvml.SUCCESS },
			}, nvml.SUCCESS
		}
	}
}

// enableMIG puts a mock device in MIG mode and creates GPU instances of the
// given NVML profile enums at the given starts and sizes (mock-side set-up only: live
// itself never does this).
func enableMIG(t *testing.T, s *server.Server, gpu int, enums, starts, sizes []int) {
	t.Helper()
	dev := s.Devices[gpu].(*server.Device)
	dev.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	for k, e := range enums {
		info, ret := dev.GetGpuInstanceProfileInfo(e)
		if ret != nvml.SUCCESS {
			t.Fatalf("mock profile %d: %v", e, ret)
		}
		pl := nvml.GpuInstancePlacement{Start: uint32(starts[k]), Size: uint32(sizes[k])}
		if _, ret := dev.CreateGpuInstanceWithPlacement(&info, &pl); ret != nvml.SUCCESS {
			t.Fatalf("mock create: %v", ret)
		}
	}
}

func TestDiscoverMocks(t *testing.T) {
	type inst struct {
		profile     string
		id          int // the real profile id (nvidia-smi mig -lgip)
		start, size int
	}
	tests := []struct {
		name      string
		server    func() *server.Server
		setup     func(t *testing.T, s *server.Server)
		n         int
		model     string
		catalogue string
		totalMiB  int64
		migGPU    int // -1: none
		want      []inst
	}{
		{name: "dgxh200 whole GPUs", server: dgxh200.New, n: 8, model: "NVIDIA H200 141GB HBM3e",
			catalogue: "H200-141GB", totalMiB: 141 * 1024, migGPU: -1},
		{name: "dgxa100 whole GPUs", server: dgxa100.New, n: 8, model: "Mock NVIDIA A100-SXM4-40GB",
			catalogue: "A100-40GB", totalMiB: 40 * 1024, migGPU: -1},
		{name: "dgxh200 GPU 2 in MIG mode", server: dgxh200.New, n: 8, model: "NVIDIA H200 141GB HBM3e",
			catalogue: "H200-141GB", totalMiB: 141 * 1024, migGPU: 2,
			setup: func(t *testing.T, s *server.Server) {
				// 3g.71gb at 4, 1g.18gb at 0 and 1 (created out of order).
				enableMIG(t, s, 2, []int{nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.GPU_INSTANCE_PROFILE_1_SLICE}, []int{4, 0, 1}, []int{4, 1, 1})
			},
			want: []inst{{"1g.18gb", 19, 0, 1}, {"1g.18gb", 19, 1, 1}, {"3g.71gb", 9, 4, 4}}},
		{name: "dgxa100 GPU 0 in MIG mode", server: dgxa100.New, n: 8, model: "Mock NVIDIA A100-SXM4-40GB",
			catalogue: "A100-40GB", totalMiB: 40 * 1024, migGPU: 0,
			setup: func(t *testing.T, s *server.Server) {
				enableMIG(t, s, 0, []int{nvml.GPU_INSTANCE_PROFILE_4_SLICE, nvml.GPU_INSTANCE_PROFILE_2_SLICE}, []int{0, 4}, []int{4, 2})
			},
			want: []inst{{"4g.20gb", 5, 0, 4}, {"2g.10gb", 14, 4, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server()
			fillReads(t, s)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			gpus, err := Discover(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(gpus) != tc.n {
				t.Fatalf("%d GPUs, want %d", len(gpus), tc.n)
			}
			for i, g := range gpus {
				mock := s.Devices[i].(*server.Device)
				if g.Index != i || g.Model != tc.model || g.Catalogue != tc.catalogue || !g.Known || g.UUID != mock.UUID || !strings.HasPrefix(g.UUID, "GPU-") {
					t.Errorf("GPU %d: %+v", i, g)
				}
				if g.MemoryTotalMiB != tc.totalMiB || g.MemoryUsedMiB != 0 {
					t.Errorf("GPU %d memory %d/%d MiB, want 0/%d", i, g.MemoryUsedMiB, g.MemoryTotalMiB, tc.totalMiB)
				}
				if g.MIGEnabled != (i == tc.migGPU) {
					t.Errorf("GPU %d MIGEnabled %v", i, g.MIGEnabled)
				}
				if i != tc.migGPU {
					if g.UtilisationPct != 10*i || len(g.Instances) != 0 {
						t.Errorf("GPU %d: utilisation %d instances %v", i, g.UtilisationPct, g.Instances)
					}
					continue
				}
				if g.UtilisationPct != -1 {
					t.Errorf("GPU %d in MIG mode: utilisation %d, want -1 (not reported)", i, g.UtilisationPct)
				}
				if len(g.Instances) != len(tc.want) {
					t.Fatalf("GPU %d instances %+v, want %v", i, g.Instances, tc.want)
				}
				for k, w := range tc.want {
					gi := g.Instances[k]
					if gi.Profile != w.profile || gi.ProfileID != w.id || gi.Start != w.start || gi.Size != w.size || gi.UUID != fmt.Sprintf("MIG-%d-%d", i, gi.ID) {
						t.Errorf("instance %d: %+v, want %v", k, gi, w)
					}
				}
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(s *server.Server)
		want   string
		is     error
	}{
		{name: "no library", break_: func(s *server.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		}, want: "no NVIDIA driver found on this machine (NVML library not found)", is: ErrNoDriver},
		{name: "driver not loaded", break_: func(s *server.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, want: "no NVIDIA driver found on this machine (NVML library found, but the NVIDIA kernel driver is not loaded)", is: ErrNoDriver},
		{name: "GPU 3 lost", break_: func(s *server.Server) {
			s.Devices[3].(*server.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
		}, want: "GPU 3: GetMemoryInfo: ERROR_GPU_IS_LOST"},
		{name: "GPU 5 handle", break_: func(s *server.Server) {
			inner := s.DeviceGetHandleByIndexFunc
			s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
				if i == 5 {
					return nil, nvml.ERROR_UNKNOWN
				}
				return inner(i)
			}
		}, want: "GPU 5: DeviceGetHandleByIndex: ERROR_UNKNOWN"},
		{name: "GPU 1 MIG devices", break_: func(s *server.Server) {
			dev := s.Devices[1].(*server.Device)
			dev.SetMigMode(nvml.DEVICE_MIG_ENABLE)
			dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
		}, want: "GPU 1: GetMaxMigDeviceCount: ERROR_GPU_IS_LOST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := dgxh200.New()
			fillReads(t, s)
			tc.break_(s)
			gpus, err := Discover(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Discover: %v (%d GPUs), want an error containing %q", err, len(gpus), tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}

// TestDiscoverLocal runs against this machine's real NVML: on a machine
// without an NVIDIA driver it must report ErrNoDriver; with one it must
// discover at least one GPU.
func TestDiscoverLocal(t *testing.T) {
	gpus, err := DiscoverLocal()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) {
			t.Fatalf("DiscoverLocal: %v, want ErrNoDriver or success", err)
		}
		t.Logf("no driver here: %v", err)
		return
	}
	if len(gpus) == 0 {
		t.Fatal("NVML loaded but reported no GPUs")
	}
	for _, g := range gpus {
		t.Logf("%+v", g)
	}
}

func TestCatalogueModel(t *testing.T) {
	tests := []struct {
		name   string
		mib    int64
		want   string
		wantOK bool
	}{
		{"NVIDIA H200 141GB HBM3e", 143771, "H200-141GB", true},
		{"NVIDIA H100 80GB HBM3", 81559, "H100-80GB", true},
		{"NVIDIA A100-SXM4-80GB", 81920, "A100-80GB", true},
		{"NVIDIA A100-PCIE-40GB", 40960, "A100-40GB", true},
		{"Tesla V100-SXM2-32GB", 32768, "V100-32GB", true},
		{"NVIDIA H100 NVL", 95830, "", false},
		{"NVIDIA B200 180GB HBM3e", 184320, "B200-180GB", true},
		{"NVIDIA B300 288GB HBM3e", 294912, "", false},
		{"NVIDIA H200 141GB HBM3e", 0, "H200-141GB", true},
	}
	for _, tc := range tests {
		m, ok := catalogueModel(tc.name, tc.mib)
		if ok != tc.wantOK || m.Name != tc.want {
			t.Errorf("catalogueModel(%q, %d) = %q %v, want %q %v", tc.name, tc.mib, m.Name, ok, tc.want, tc.wantOK)
		}
	}
}
