//go:build cgo

package live

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/brigadesim/brigade/hwmodel"
)

// DiscoverLocal opens this machine's NVML library and discovers its GPUs.
// Without an NVIDIA driver it returns an error wrapping ErrNoDriver.
func DiscoverLocal() ([]GPU, error) {
	return Discover(nvml.New())
}

// Discover initialises lib, reads every GPU it reports and shuts it down.
// It calls read-only NVML queries only (see the package doc). A GPU that
// fails a query makes Discover fail with an error naming the GPU and the
// query; queries a GPU does not support (ERROR_NOT_SUPPORTED) are not
// errors.
func Discover(lib nvml.Interface) ([]GPU, error) {
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, fmt.Errorf("%w (NVML library not found)", ErrNoDriver)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return nil, fmt.Errorf("%w (NVML library found, but the NVIDIA kernel driver is not loaded)", ErrNoDriver)
	default:
		return nil, fmt.Errorf("NVML Init: %v", ret)
	}
	defer lib.Shutdown()
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML DeviceGetCount: %v", ret)
	}
	gpus := make([]GPU, 0, n)
	for i := 0; i < n; i++ {
		g, err := discoverGPU(lib, i)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

// queryError names the NVML query that failed.
func queryError(query string, ret nvml.Return) error {
	return fmt.Errorf("%s: %v", query, ret)
}

func discoverGPU(lib nvml.Interface, i int) (GPU, error) {
	g := GPU{Index: i, UtilisationPct: -1}
	dev, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return g, queryError("DeviceGetHandleByIndex", ret)
	}
	if g.Model, ret = dev.GetName(); ret != nvml.SUCCESS {
		return g, queryError("GetName", ret)
	}
	if g.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return g, queryError("GetUUID", ret)
	}
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return g, queryError("GetMemoryInfo", ret)
	}
	g.MemoryTotalMiB = int64(mem.Total >> 20)
	g.MemoryUsedMiB = int64(mem.Used >> 20)
	if m, ok := catalogueModel(g.Model, g.MemoryTotalMiB); ok {
		g.Catalogue, g.ModelID, g.Known = m.Name, m.ID, true
	}
	switch u, ret := dev.GetUtilizationRates(); ret {
	case nvml.SUCCESS:
		g.UtilisationPct = int(u.Gpu)
	case nvml.ERROR_NOT_SUPPORTED:
	default:
		return g, queryError("GetUtilizationRates", ret)
	}
	switch cur, _, ret := dev.GetMigMode(); ret {
	case nvml.SUCCESS:
		g.MIGEnabled = cur == nvml.DEVICE_MIG_ENABLE
	case nvml.ERROR_NOT_SUPPORTED:
	default:
		return g, queryError("GetMigMode", ret)
	}
	if !g.MIGEnabled {
		return g, nil
	}
	var err error
	if g.Instances, err = discoverInstances(dev, g); err != nil {
		return g, err
	}
	return g, nil
}

// discoverInstances lists the GPU instances of a GPU in MIG mode, profile by
// profile, and takes each instance's UUID from its MIG device.
func discoverInstances(dev nvml.Device, g GPU) ([]GPUInstance, error) {
	uuids, err := migDeviceUUIDs(dev)
	if err != nil {
		return nil, err
	}
	var out []GPUInstance
	for enum := 0; enum < nvml.GPU_INSTANCE_PROFILE_COUNT; enum++ {
		info, ret := dev.GetGpuInstanceProfileInfo(enum)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_INVALID_ARGUMENT:
			continue // a profile this GPU does not offer
		default:
			return nil, queryError(fmt.Sprintf("GetGpuInstanceProfileInfo(%d)", enum), ret)
		}
		gis, ret := dev.GetGpuInstances(&info)
		if ret != nvml.SUCCESS {
			return nil, queryError(fmt.Sprintf("GetGpuInstances(profile %d)", info.Id), ret)
		}
		name, id := profileName(g, enum, info)
		for _, gi := range gis {
			gii, ret := gi.GetInfo()
			if ret != nvml.SUCCESS {
				return nil, queryError(fmt.Sprintf("GpuInstance.GetInfo(profile %d)", info.Id), ret)
			}
			out = append(out, GPUInstance{
				Profile:   name,
				ProfileID: id,
				ID:        int(gii.Id),
				UUID:      uuids[int(gii.Id)],
				Start:     int(gii.Placement.Start),
				Size:      int(gii.Placement.Size),
			})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Start != out[b].Start {
			return out[a].Start < out[b].Start
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

// migDeviceUUIDs maps GPU instance id to the UUID of its MIG device.
func migDeviceUUIDs(dev nvml.Device) (map[int]string, error) {
	max, ret := dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, queryError("GetMaxMigDeviceCount", ret)
	}
	uuids := make(map[int]string)
	for j := 0; j < max; j++ {
		mig, ret := dev.GetMigDeviceHandleByIndex(j)
		if errors.Is(ret, nvml.ERROR_NOT_FOUND) || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // no MIG device at this index
		}
		if ret != nvml.SUCCESS {
			return nil, queryError(fmt.Sprintf("GetMigDeviceHandleByIndex(%d)", j), ret)
		}
		id, ret := mig.GetGpuInstanceId()
		if ret != nvml.SUCCESS {
			return nil, queryError(fmt.Sprintf("MIG device %d GetGpuInstanceId", j), ret)
		}
		u, ret := mig.GetUUID()
		if ret != nvml.SUCCESS {
			return nil, queryError(fmt.Sprintf("MIG device %d GetUUID", j), ret)
		}
		uuids[id] = u
	}
	return uuids, nil
}

// profileName is the hwmodel name and id of the profile NVML describes at
// enum (the nvml.GPU_INSTANCE_PROFILE_* value queried) when the GPU's model
// is in the catalogue and its MIG table has that enum. The profile is matched
// by enum, not by info.Id, because go-nvml's mocks report the enum as the id
// where real GPUs report the profile id that nvidia-smi prints (19 for an
// H200's 1g.18gb); the id returned is the table's, which is the real one.
// Otherwise the name is built from NVML's slice count and memory
// ("3g.40gb") and the id is NVML's.
func profileName(g GPU, enum int, info nvml.GpuInstanceProfileInfo) (string, int) {
	if g.Known {
		for _, p := range hwmodel.MIGProfiles(g.ModelID) {
			if e, ok := hwmodel.NVMLProfileEnum(p.ID); ok && e == enum {
				return p.Name, p.ID
			}
		}
	}
	return fmt.Sprintf("%dg.%dgb", info.SliceCount, int(math.Round(float64(info.MemorySizeMB)/1024))), int(info.Id)
}
