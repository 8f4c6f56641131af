//go:build cgo

package live

import (
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// TestMetricsNVMLSampler reads utilisation and memory from go-nvml's mock
// DGX H200 through the NVML sampler, then exports them.
func TestMetricsNVMLSampler(t *testing.T) {
	s := dgxh200.New()
	fillReads(t, s)
	gpus, err := Discover(s)
	if err != nil {
		t.Fatal(err)
	}
	dev3 := s.Devices[3].(*server.Device)
	dev3.MemoryInfo.Used = 5 << 30
	dev3.SetMigMode(nvml.DEVICE_MIG_ENABLE) // utilisation not reported
	sampler, closeFn, err := openSampler(s, gpus)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	samples, err := sampler.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 8 {
		t.Fatalf("%d samples, want 8", len(samples))
	}
	for i, g := range samples {
		want := GPUSample{Index: i, UUID: gpus[i].UUID, Model: "NVIDIA H200 141GB HBM3e", Utilisation: float64(i) / 10,
			MemoryTotalBytes: dev3.MemoryInfo.Total}
		if i == 3 {
			want.Utilisation, want.MemoryUsedBytes = -1, 5<<30
		}
		if g != want {
			t.Errorf("GPU %d: %+v, want %+v", i, g, want)
		}
	}
	got := scrapeRegistry(t, NewMetrics(sampler))
	checkSeries(t, "nvml", got, map[string]float64{
		`brigade_live_gpu_utilisation_ratio{gpu="2",model="NVIDIA H200 141GB HBM3e",uuid="` + gpus[2].UUID + `"}`: 0.2,
		`brigade_live_gpu_utilisation_ratio{gpu="3",model="NVIDIA H200 141GB HBM3e",uuid="` + gpus[3].UUID + `"}`: -1,
		`brigade_live_gpu_memory_used_bytes{gpu="3",model="NVIDIA H200 141GB HBM3e",uuid="` + gpus[3].UUID + `"}`: 5 << 30,
		"brigade_live_gpu_sample_errors_total": 0,
	})

	// A failing read drops the per-GPU series for that scrape and counts.
	dev3.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	if _, err := sampler.Sample(); err == nil || !strings.Contains(err.Error(), "GPU 3: GetMemoryInfo: ERROR_GPU_IS_LOST") {
		t.Errorf("Sample with a lost GPU: %v", err)
	}
	got = scrapeRegistry(t, NewMetrics(sampler))
	checkSeries(t, "lost GPU", got, map[string]float64{
		`brigade_live_gpu_memory_used_bytes{gpu="3",model="NVIDIA H200 141GB HBM3e",uuid="` + gpus[3].UUID + `"}`: -1,
		"brigade_live_gpu_sample_errors_total": 1,
	})

	// An unknown UUID is an error at open.
	bad := append([]GPU(nil), gpus...)
	bad[0].UUID = "GPU-missing"
	if _, _, err := openSampler(s, bad); err == nil || !strings.Contains(err.Error(), "DeviceGetHandleByUUID") {
		t.Errorf("openSampler with an unknown UUID: %v", err)
	}
}

// TestMetricsLocalSampler reads this machine's real GPUs through NVML (a
// machine without an NVIDIA driver must report ErrNoDriver).
func TestMetricsLocalSampler(t *testing.T) {
	gpus, err := DiscoverLocal()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) {
			t.Fatalf("DiscoverLocal: %v", err)
		}
		if _, _, err := OpenLocalSampler(nil); !errors.Is(err, ErrNoDriver) {
			t.Errorf("OpenLocalSampler without a driver: %v, want ErrNoDriver", err)
		}
		t.Skipf("no driver here: %v", err)
	}
	s, closeFn, err := OpenLocalSampler(gpus)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	samples, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != len(gpus) {
		t.Fatalf("%d samples for %d GPUs", len(samples), len(gpus))
	}
	for i, g := range samples {
		if g.UUID != gpus[i].UUID || g.MemoryTotalBytes == 0 || g.MemoryUsedBytes > g.MemoryTotalBytes || g.Utilisation > 1 ||
			(g.Utilisation < 0 && !gpus[i].MIGEnabled) {
			t.Errorf("GPU %d: %+v", i, g)
		}
		t.Logf("%+v", g)
	}
	got := scrapeRegistry(t, NewMetrics(s))
	key := `brigade_live_gpu_memory_total_bytes{gpu="0",model="` + gpus[0].Model + `",uuid="` + gpus[0].UUID + `"}`
	if got[key] != float64(samples[0].MemoryTotalBytes) {
		t.Errorf("%s = %v, want %v", key, got[key], samples[0].MemoryTotalBytes)
	}
}
