//go:build cgo

package live

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlSampler reads utilisation and memory through NVML at each scrape.
// It calls read-only queries only: GetUtilizationRates and GetMemoryInfo.
type nvmlSampler struct {
	lib  nvml.Interface
	gpus []GPU
	devs []nvml.Device
}

// OpenLocalSampler opens this machine's NVML library for the metrics
// endpoint's per-GPU series. close shuts NVML down again.
func OpenLocalSampler(gpus []GPU) (s GPUSampler, close func(), err error) {
	return openSampler(nvml.New(), gpus)
}

// openSampler initialises lib and finds each GPU's handle by its UUID.
func openSampler(lib nvml.Interface, gpus []GPU) (GPUSampler, func(), error) {
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED:
		return nil, nil, fmt.Errorf("%w (NVML Init: %v)", ErrNoDriver, ret)
	default:
		return nil, nil, fmt.Errorf("NVML Init: %v", ret)
	}
	s := &nvmlSampler{lib: lib, gpus: gpus}
	for _, g := range gpus {
		dev, ret := lib.DeviceGetHandleByUUID(g.UUID)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, nil, fmt.Errorf("GPU %d (%s): DeviceGetHandleByUUID: %v", g.Index, g.UUID, ret)
		}
		s.devs = append(s.devs, dev)
	}
	return s, func() { lib.Shutdown() }, nil
}

// Sample implements GPUSampler.
func (s *nvmlSampler) Sample() ([]GPUSample, error) {
	out := make([]GPUSample, len(s.devs))
	for i, dev := range s.devs {
		g := s.gpus[i]
		out[i] = GPUSample{Index: g.Index, UUID: g.UUID, Model: g.Model, Utilisation: -1}
		switch u, ret := dev.GetUtilizationRates(); ret {
		case nvml.SUCCESS:
			out[i].Utilisation = float64(u.Gpu) / 100
		case nvml.ERROR_NOT_SUPPORTED: // a GPU in MIG mode
		default:
			return nil, fmt.Errorf("GPU %d: GetUtilizationRates: %v", g.Index, ret)
		}
		mem, ret := dev.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d: GetMemoryInfo: %v", g.Index, ret)
		}
		out[i].MemoryUsedBytes, out[i].MemoryTotalBytes = mem.Used, mem.Total
	}
	return out, nil
}
