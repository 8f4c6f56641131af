package live

import (
	"errors"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// GPU is what NVML reports about one GPU of this machine.
type GPU struct {
	Index int    `json:"index"`
	Model string `json:"model"` // the name NVML reports, e.g. "NVIDIA H200 141GB HBM3e"
	// Catalogue is the hwmodel catalogue name the model maps to ("" when
	// it maps to none); ModelID is meaningful only when Known is true.
	Catalogue      string          `json:"catalogue,omitempty"`
	ModelID        hwmodel.ModelID `json:"-"`
	Known          bool            `json:"-"`
	UUID           string          `json:"uuid"`
	MemoryTotalMiB int64           `json:"memory_total_mib"`
	MemoryUsedMiB  int64           `json:"memory_used_mib"`
	// UtilisationPct is the GPU utilisation NVML reports (0-100), or -1
	// when NVML does not report it (as on a GPU in MIG mode).
	UtilisationPct int           `json:"utilisation_pct"`
	MIGEnabled     bool          `json:"mig_enabled"`
	Instances      []GPUInstance `json:"instances,omitempty"`
}

// GPUInstance is one MIG GPU instance on a GPU in MIG mode.
type GPUInstance struct {
	Profile   string `json:"profile"`    // e.g. "1g.18gb"
	ProfileID int    `json:"profile_id"` // the id nvidia-smi mig -lgip prints
	ID        int    `json:"id"`         // the GPU instance id on its GPU
	UUID      string `json:"uuid"`       // the MIG device's UUID ("" if NVML gives none)
	Start     int    `json:"start"`      // placement start (memory slices)
	Size      int    `json:"size"`       // placement size (memory slices)
}

// ErrNoDriver is returned (wrapped) by DiscoverLocal when this machine has no
// NVIDIA driver: the NVML library cannot be loaded.
var ErrNoDriver = errors.New("no NVIDIA driver found on this machine")

// ErrNoCgo is returned by DiscoverLocal in a binary built with CGO_ENABLED=0.
var ErrNoCgo = errors.New("built without cgo: NVML unavailable")

// catalogueModel maps an NVML device name to the hwmodel catalogue, checking
// that the memory NVML reports is within 10% of the catalogue's so that, for
// example, an "H100 NVL" (94 GB) is not taken for an H100-80GB.
func catalogueModel(name string, totalMiB int64) (hwmodel.GPUModel, bool) {
	s := strings.TrimSpace(name)
	for _, p := range []string{"Mock ", "NVIDIA ", "Tesla "} {
		s = strings.TrimSpace(strings.TrimPrefix(s, p))
	}
	fields := strings.Fields(s)
	cands := []string{s}
	if len(fields) >= 2 {
		cands = append(cands, fields[0]+"-"+fields[1]) // "H200 141GB HBM3e" → H200-141GB
	}
	if len(fields) >= 1 {
		if parts := strings.Split(fields[0], "-"); len(parts) >= 2 {
			cands = append(cands, parts[0]+"-"+parts[len(parts)-1]) // "A100-PCIE-40GB" → A100-40GB
		}
	}
	for _, c := range cands {
		m, ok := hwmodel.LookupModel(c)
		if !ok {
			continue
		}
		if m.MemoryMiB > 0 && totalMiB > 0 {
			d := float64(totalMiB-m.MemoryMiB) / float64(m.MemoryMiB)
			if d > 0.10 || d < -0.10 {
				continue
			}
		}
		return m, true
	}
	return hwmodel.GPUModel{}, false
}
