package hwmodel

import "fmt"

// MIGProfile is one NVIDIA Multi-Instance GPU instance profile of a GPU
// model, as NVML describes it (GPU instance profile info and placements).
type MIGProfile struct {
	ID           int    // NVML GPU instance profile id, e.g. 9 for 3g.71gb on H200
	Name         string // e.g. "3g.71gb", "1g.18gb+me"
	Slices       int    // compute slices (the "g" number)
	MemorySlices int    // memory slices out of the GPU's MIGMemorySlices
	MemoryMiB    int64  // instance memory as NVML reports it (its "MB" are MiB)
	MaxInstances int    // most instances of this profile one GPU holds
	// Starts are the valid start positions, in memory slices; an instance
	// occupies [Start, Start+MemorySlices).
	Starts []int
}

// MIGInstance is one GPU instance of a layout: a profile (index into
// MIGProfiles of the GPU's model) at a start position.
type MIGInstance struct {
	Profile int
	Start   int
}

// MIGLayout is a GPU's partition into instances. A nil or empty layout
// means the GPU is not MIG-enabled (it is used whole or shared).
type MIGLayout []MIGInstance

// MIGRequest is what a MIG job asks for: an exact profile by name, or any
// instance with at least MinSlices compute slices and MinMemoryMiB memory.
// The zero value asks for no MIG instance.
type MIGRequest struct {
	Profile      string
	MinSlices    int
	MinMemoryMiB int64
}

// IsZero reports whether r asks for no MIG instance.
func (r MIGRequest) IsZero() bool { return r == MIGRequest{} }

func (r MIGRequest) String() string {
	switch {
	case r.IsZero():
		return "none"
	case r.Profile != "":
		return r.Profile
	}
	return fmt.Sprintf(">=%dg,>=%dMiB", r.MinSlices, r.MinMemoryMiB)
}
