package hwmodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

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

// Validate checks the request's own consistency (not whether any GPU has
// such a profile: see Cluster.Satisfiable).
func (r MIGRequest) Validate() error {
	switch {
	case r.MinSlices < 0:
		return fmt.Errorf("mig min slices must be >= 0, got %d", r.MinSlices)
	case r.MinMemoryMiB < 0:
		return fmt.Errorf("mig min memory must be >= 0, got %d MiB", r.MinMemoryMiB)
	case r.Profile != "" && strings.TrimSpace(r.Profile) != r.Profile:
		return fmt.Errorf("mig profile %q has surrounding spaces", r.Profile)
	}
	return nil
}

// Matches reports whether profile profileIndex of model m satisfies r.
// A request that names a profile matches that profile only (by name,
// ignoring case); MinSlices and MinMemoryMiB, when set, must also hold
// (they always hold for zero). A request without a name matches every
// profile with at least MinSlices compute slices and MinMemoryMiB memory.
// The zero request matches nothing.
func (r MIGRequest) Matches(m ModelID, profileIndex int) bool {
	ps := migOf(m).profilesOrNil() // not MIGProfiles: placement calls this in inner loops
	if r.IsZero() || profileIndex < 0 || profileIndex >= len(ps) {
		return false
	}
	p := &ps[profileIndex]
	if r.Profile != "" && !strings.EqualFold(r.Profile, p.Name) {
		return false
	}
	return p.Slices >= r.MinSlices && p.MemoryMiB >= r.MinMemoryMiB
}

// --- the table ---

// migModel is one MIG-capable model's geometry and profiles.
type migModel struct {
	compute, memory int // compute slices and memory slices of the GPU
	profiles        []MIGProfile
}

// NVML's GPU instance profile enum (nvml.GPU_INSTANCE_PROFILE_*, what
// Device.GetGpuInstanceProfileInfo takes), copied so that this package needs
// no go-nvml import. It differs from the profile id that NVML reports in
// GpuInstanceProfileInfo.Id and nvidia-smi prints (19 for the 1-slice
// profile, 0 for 7 slices), which is what MIGProfile.ID holds.
const (
	nvmlProfile1Slice     = 0 // GPU_INSTANCE_PROFILE_1_SLICE
	nvmlProfile2Slice     = 1
	nvmlProfile3Slice     = 2
	nvmlProfile4Slice     = 3
	nvmlProfile7Slice     = 4
	nvmlProfile1SliceRev1 = 7 // +me: the one 1-slice instance with media extensions
	nvmlProfile1SliceRev2 = 9 // 1 compute slice with 2 memory slices
)

// nvmlProfileEnum maps a reported profile id to the enum.
var nvmlProfileEnum = map[int]int{
	19: nvmlProfile1Slice,
	20: nvmlProfile1SliceRev1,
	15: nvmlProfile1SliceRev2,
	14: nvmlProfile2Slice,
	9:  nvmlProfile3Slice,
	5:  nvmlProfile4Slice,
	0:  nvmlProfile7Slice,
}

// NVMLProfileEnum is the NVML enum value (nvml.GPU_INSTANCE_PROFILE_*)
// that GetGpuInstanceProfileInfo takes for a profile whose reported id
// (MIGProfile.ID, as nvidia-smi prints it) is id; ok is false for an id
// the table does not use.
func NVMLProfileEnum(id int) (enum int, ok bool) {
	enum, ok = nvmlProfileEnum[id]
	return enum, ok
}

// a100Like builds the seven profiles that A100, H100 and H200 share: the
// same compute and memory slice geometry and the same placements, with
// per-model names and memory sizes. Sizes are MiB as NVML reports them
// (nvidia-smi prints them in GiB: 4864 MiB is its "4.75").
func a100Like(oneG, oneGme, oneGbig, twoG, threeG, fourG, sevenG string, m1, m2, m4, m8 int64) migModel {
	all := []int{0, 1, 2, 3, 4, 5, 6}
	return migModel{compute: 7, memory: 8, profiles: []MIGProfile{
		{ID: 19, Name: oneG, Slices: 1, MemorySlices: 1, MemoryMiB: m1, MaxInstances: 7, Starts: all},
		{ID: 20, Name: oneGme, Slices: 1, MemorySlices: 1, MemoryMiB: m1, MaxInstances: 1, Starts: all},
		{ID: 15, Name: oneGbig, Slices: 1, MemorySlices: 2, MemoryMiB: m2, MaxInstances: 4, Starts: []int{0, 2, 4, 6}},
		{ID: 14, Name: twoG, Slices: 2, MemorySlices: 2, MemoryMiB: m2, MaxInstances: 3, Starts: []int{0, 2, 4}},
		{ID: 9, Name: threeG, Slices: 3, MemorySlices: 4, MemoryMiB: m4, MaxInstances: 2, Starts: []int{0, 4}},
		{ID: 5, Name: fourG, Slices: 4, MemorySlices: 4, MemoryMiB: m4, MaxInstances: 1, Starts: []int{0}},
		{ID: 0, Name: sevenG, Slices: 7, MemorySlices: 8, MemoryMiB: m8, MaxInstances: 1, Starts: []int{0}},
	}}
}

// migTable is Brigade's one MIG table, by model name. Sources:
//
//   - A100-40GB and A100-80GB: nvidia-smi mig -lgip / -lgipp output for
//     real A100s as the MIG user guide shows it; go-nvml's dgxa100 mock
//     agrees on everything but the id (below).
//   - H100-80GB: go-nvml's dgxh100 mock for counts and memory (its round
//     sizes, 10240 MiB for 1g.10gb, look synthesised; real H100s may report
//     a little less, which this table does not claim); the placements are
//     the MIG user guide's, the same as A100's. The mock lists the 1g.20gb
//     profile at starts 0..6 with size 1 and the 3g and 7g profiles with
//     sizes 3 and 7 (compute slices, not memory slices); real GPUs report
//     {0,2,4,6}:2, {0,4}:4 and {0}:8.
//   - H200-141GB: a real H200 with driver 580 (ids, counts, memory). The
//     dgxh200 mock gives larger memory sizes (18432 MiB for the 1-slice
//     profiles, 35840, 72704 and 144384 for the others) and the same
//     placement slips as its H100 mock; real hardware wins.
//   - Ids: the id real NVML reports and nvidia-smi prints (19, 20, 15, 14,
//     9, 5, 0). The mocks report the GetGpuInstanceProfileInfo enum value
//     (0, 7, 9, 1, 2, 3, 4) as the id instead; NVMLProfileEnum maps one to
//     the other.
//
// hwmodel/nvml_test.go checks the table against the mocks and names each
// place where it deliberately differs.
var migTable = map[string]migModel{
	"A100-40GB": a100Like("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
		4864, 9856, 19968, 40192),
	"A100-80GB": a100Like("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
		9856, 19968, 40192, 80384),
	"H100-80GB": a100Like("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
		10240, 20480, 40960, 81920),
	"H200-141GB": a100Like("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
		16384, 33280, 71424, 143360),
}

// migByModel indexes migTable by ModelID; nil for models without MIG.
var migByModel = func() []*migModel {
	out := make([]*migModel, NumModels())
	for name, mm := range migTable {
		m, ok := LookupModel(name)
		if !ok {
			panic("hwmodel: MIG table names unknown model " + name)
		}
		mm := mm
		out[m.ID] = &mm
	}
	return out
}()

// profilesOrNil is mm's profiles, or nil for a nil mm (a model without
// MIG).
func (mm *migModel) profilesOrNil() []MIGProfile {
	if mm == nil {
		return nil
	}
	return mm.profiles
}

func migOf(m ModelID) *migModel {
	if int(m) >= len(migByModel) {
		return nil
	}
	return migByModel[m]
}

// MIGProfiles returns a copy of model m's MIG profiles in table order (the
// order of nvidia-smi mig -lgip: 1g, 1g+me, the 1g with two memory slices,
// 2g, 3g, 4g, 7g); a profile's position is its index in MIGInstance.Profile.
// It returns nil for a model without MIG.
func MIGProfiles(m ModelID) []MIGProfile {
	mm := migOf(m)
	if mm == nil {
		return nil
	}
	out := make([]MIGProfile, len(mm.profiles))
	for i, p := range mm.profiles {
		p.Starts = slices.Clone(p.Starts)
		out[i] = p
	}
	return out
}

// MIGCapable reports whether model m supports MIG.
func MIGCapable(m ModelID) bool { return migOf(m) != nil }

// MIGSlices returns model m's compute and memory slice counts (7 and 8 for
// every model in the table), or 0, 0 for a model without MIG.
func MIGSlices(m ModelID) (compute, memory int) {
	mm := migOf(m)
	if mm == nil {
		return 0, 0
	}
	return mm.compute, mm.memory
}

// LookupMIGProfile finds model m's profile by name, ignoring case.
func LookupMIGProfile(m ModelID, name string) (index int, p MIGProfile, ok bool) {
	mm := migOf(m)
	if mm == nil {
		return -1, MIGProfile{}, false
	}
	name = strings.TrimSpace(name)
	for i, q := range mm.profiles {
		if strings.EqualFold(q.Name, name) {
			q.Starts = slices.Clone(q.Starts)
			return i, q, true
		}
	}
	return -1, MIGProfile{}, false
}

// MIGMilli is the share of the GPU, in milli-GPUs, that profile
// profileIndex of model m takes: its compute slices × 1000 / the GPU's
// compute slices, rounded to nearest (143, 286, 429, 571 and 1000 for 1,
// 2, 3, 4 and 7 of 7 slices). Utilisation counts a MIG job by it. It is 0
// for a model without MIG or an index out of range.
func MIGMilli(m ModelID, profileIndex int) int32 {
	mm := migOf(m)
	if mm == nil || profileIndex < 0 || profileIndex >= len(mm.profiles) {
		return 0
	}
	s := mm.profiles[profileIndex].Slices
	return int32((s*MilliPerGPU + mm.compute/2) / mm.compute)
}

// profileNames lists model m's profile names for error messages.
func profileNames(mm *migModel) string {
	names := make([]string, len(mm.profiles))
	for i, p := range mm.profiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func intsString(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

// --- layouts ---

// String writes the layout as ParseMIGLayout reads it back exactly: each
// instance as profile@start, in index order, joined by ","; "" for an
// empty layout. An instance whose profile index model m lacks is written
// as "?<index>@<start>".
func (l MIGLayout) String(m ModelID) string {
	mm := migOf(m)
	var b strings.Builder
	for k, in := range l {
		if k > 0 {
			b.WriteByte(',')
		}
		if mm != nil && in.Profile >= 0 && in.Profile < len(mm.profiles) {
			b.WriteString(mm.profiles[in.Profile].Name)
		} else {
			fmt.Fprintf(&b, "?%d", in.Profile)
		}
		fmt.Fprintf(&b, "@%d", in.Start)
	}
	return b.String()
}

// Slices is the number of compute slices the layout's instances take on a
// GPU of model m (profiles m lacks count 0).
func (l MIGLayout) Slices(m ModelID) int {
	mm := migOf(m)
	n := 0
	for _, in := range l {
		if mm != nil && in.Profile >= 0 && in.Profile < len(mm.profiles) {
			n += mm.profiles[in.Profile].Slices
		}
	}
	return n
}

// Clone returns a copy of l (nil for an empty l).
func (l MIGLayout) Clone() MIGLayout {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}

// ValidateMIGLayout reports why layout l cannot be made on a GPU of model
// m, or nil. An empty layout (a whole GPU) is valid on every model. The
// rules are NVML's: every profile exists on the model; every start is one
// the profile allows; no two instances share a memory slice; no profile
// has more instances than its maximum; the instances take no more compute
// slices than the GPU has. The message names the instance (index,
// profile, start) and why; the caller adds which GPU.
func ValidateMIGLayout(m ModelID, l MIGLayout) error {
	if len(l) == 0 {
		return nil
	}
	mm := migOf(m)
	if mm == nil {
		return fmt.Errorf("model %s does not support MIG (MIG models: A100-40GB, A100-80GB, H100-80GB, H200-141GB)", Model(m).Name)
	}
	if len(l) > 64 {
		return fmt.Errorf("layout has %d instances; a GPU holds at most %d", len(l), mm.compute)
	}
	count := make([]int, len(mm.profiles))
	owner := make([]int, mm.memory) // memory slice -> instance index + 1
	compute := 0
	for k, in := range l {
		if in.Profile < 0 || in.Profile >= len(mm.profiles) {
			return fmt.Errorf("instance %d: profile index %d does not exist on %s (profiles: %s)", k, in.Profile, Model(m).Name, profileNames(mm))
		}
		p := &mm.profiles[in.Profile]
		if !slices.Contains(p.Starts, in.Start) {
			return fmt.Errorf("instance %d (%s@%d): %s cannot start at memory slice %d (valid starts: %s)", k, p.Name, in.Start, p.Name, in.Start, intsString(p.Starts))
		}
		for s := in.Start; s < in.Start+p.MemorySlices; s++ {
			if o := owner[s]; o != 0 {
				q := &mm.profiles[l[o-1].Profile]
				return fmt.Errorf("instance %d (%s@%d) overlaps instance %d (%s@%d) at memory slice %d", k, p.Name, in.Start, o-1, q.Name, l[o-1].Start, s)
			}
			owner[s] = k + 1
		}
		count[in.Profile]++
		if count[in.Profile] > p.MaxInstances {
			return fmt.Errorf("instance %d: profile %s: %d instances, a GPU holds at most %d", k, p.Name, count[in.Profile], p.MaxInstances)
		}
		compute += p.Slices
		if compute > mm.compute {
			return fmt.Errorf("instance %d (%s@%d): the layout takes %d compute slices, the GPU has %d", k, p.Name, in.Start, compute, mm.compute)
		}
	}
	return nil
}

// namedLayouts are the layouts NamedMIGLayout knows, by the compute slices
// of their instances (each the first profile of that size in the table: the
// plain 1g, never +me or the 1g with two memory slices).
var namedLayouts = []struct {
	name   string
	slices []int
	doc    string
}{
	{"whole", []int{7}, "one 7g instance: the whole GPU as one instance"},
	{"all-1g", []int{1, 1, 1, 1, 1, 1, 1}, "seven 1g instances"},
	{"balanced", []int{3, 2, 1, 1}, "3g + 2g + 1g + 1g"},
	{"halves", []int{3, 3}, "two 3g instances (one compute slice stays unused)"},
	{"4g-3g", []int{4, 3}, "4g + 3g: all seven compute slices in two instances"},
	{"all-2g", []int{2, 2, 2}, "three 2g instances"},
}

// MIGLayoutNames lists the named layouts in a fixed order: whole, all-1g,
// balanced, halves, 4g-3g, all-2g.
func MIGLayoutNames() []string {
	out := make([]string, len(namedLayouts))
	for i, n := range namedLayouts {
		out[i] = n.name
	}
	return out
}

// MIGLayoutDescription says what a named layout is, or "" for an unknown
// name.
func MIGLayoutDescription(name string) string {
	for _, n := range namedLayouts {
		if n.name == name {
			return n.doc
		}
	}
	return ""
}

// NamedMIGLayout returns the named layout (see MIGLayoutNames) for model
// m, its starts assigned as ParseMIGLayout assigns them.
func NamedMIGLayout(m ModelID, name string) (MIGLayout, error) {
	mm := migOf(m)
	if mm == nil {
		return nil, fmt.Errorf("model %s does not support MIG", Model(m).Name)
	}
	for _, n := range namedLayouts {
		if n.name != strings.ToLower(strings.TrimSpace(name)) {
			continue
		}
		var profs []int
		for _, s := range n.slices {
			idx := -1
			for i, p := range mm.profiles {
				if p.Slices == s {
					idx = i
					break
				}
			}
			if idx < 0 {
				return nil, fmt.Errorf("layout %q: %s has no %dg profile", n.name, Model(m).Name, s)
			}
			profs = append(profs, idx)
		}
		return place(m, mm, profs, make([]int, len(profs)), make([]bool, len(profs)))
	}
	return nil, fmt.Errorf("unknown MIG layout name %q (named layouts: %s)", name, strings.Join(MIGLayoutNames(), ", "))
}

// maxLayoutText bounds ParseMIGLayout's input; a real layout is far
// shorter.
const maxLayoutText = 1024

// ParseMIGLayout reads a layout for a GPU of model m: either a named layout
// (MIGLayoutNames) or profile names separated by commas, each optionally
// followed by "@start" (a memory slice), e.g. "3g.71gb,2g.35gb,1g.18gb,
// 1g.18gb" or "3g.71gb@4,1g.18gb@0". Names ignore case and spaces around
// them. Instance k of the result is the k-th item. An empty string (or
// only spaces) is the empty layout: a whole GPU, not MIG-enabled.
//
// Items without "@" get starts deterministically: larger profiles first
// (more compute slices, then more memory slices, then item order), each at
// the lowest valid start that is free, backtracking to the next valid
// start when a later item would not fit otherwise. So "3g.71gb,2g.35gb,
// 1g.18gb,1g.18gb" puts 3g at 4, 2g at 0 and the 1g instances at 2 and 3,
// because 3g at 0 would leave the second 1g only memory slice 7, where no
// instance may start. The result is then checked with ValidateMIGLayout.
func ParseMIGLayout(m ModelID, s string) (MIGLayout, error) {
	if len(s) > maxLayoutText {
		return nil, fmt.Errorf("layout is %d bytes long, at most %d allowed", len(s), maxLayoutText)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	mm := migOf(m)
	if mm == nil {
		return nil, fmt.Errorf("model %s does not support MIG", Model(m).Name)
	}
	for _, n := range namedLayouts {
		if strings.EqualFold(s, n.name) {
			return NamedMIGLayout(m, n.name)
		}
	}
	items := strings.Split(s, ",")
	if len(items) > mm.compute {
		return nil, fmt.Errorf("layout has %d instances; a %s GPU holds at most %d", len(items), Model(m).Name, mm.compute)
	}
	profs := make([]int, len(items))
	starts := make([]int, len(items))
	fixed := make([]bool, len(items))
	for k, it := range items {
		name, start, hasStart := strings.Cut(strings.TrimSpace(it), "@")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("item %d of %q is empty; want a profile name (%s) or a named layout (%s)", k, s, profileNames(mm), strings.Join(MIGLayoutNames(), ", "))
		}
		idx, _, ok := LookupMIGProfile(m, name)
		if !ok {
			return nil, fmt.Errorf("item %d: profile %q does not exist on %s (profiles: %s; named layouts: %s)", k, name, Model(m).Name, profileNames(mm), strings.Join(MIGLayoutNames(), ", "))
		}
		profs[k] = idx
		if hasStart {
			st, err := strconv.Atoi(strings.TrimSpace(start))
			if err != nil || st < 0 || st >= mm.memory {
				return nil, fmt.Errorf("item %d (%s): start %q is not a memory slice 0..%d", k, mm.profiles[idx].Name, strings.TrimSpace(start), mm.memory-1)
			}
			starts[k], fixed[k] = st, true
		}
	}
	return place(m, mm, profs, starts, fixed)
}

// place assigns starts to the items that are not fixed (see
// ParseMIGLayout) and validates the result.
func place(m ModelID, mm *migModel, profs, starts []int, fixed []bool) (MIGLayout, error) {
	l := make(MIGLayout, len(profs))
	for k := range profs {
		l[k] = MIGInstance{Profile: profs[k], Start: starts[k]}
	}
	// Check everything but the free items' placement first, so that the
	// message names the real problem (a bad fixed start, too many
	// instances, too many slices) rather than "does not fit".
	var fixedOnly MIGLayout
	count := make([]int, len(mm.profiles))
	compute := 0
	for k, p := range profs {
		if fixed[k] {
			fixedOnly = append(fixedOnly, l[k])
		}
		count[p]++
		if count[p] > mm.profiles[p].MaxInstances {
			return nil, fmt.Errorf("item %d: profile %s: %d instances, a GPU holds at most %d", k, mm.profiles[p].Name, count[p], mm.profiles[p].MaxInstances)
		}
		compute += mm.profiles[p].Slices
		if compute > mm.compute {
			return nil, fmt.Errorf("item %d (%s): the layout takes %d compute slices, the GPU has %d", k, mm.profiles[p].Name, compute, mm.compute)
		}
	}
	if err := ValidateMIGLayout(m, fixedOnly); err != nil {
		return nil, err
	}
	var free []int
	var used uint64 // memory slices taken
	for k := range profs {
		if fixed[k] {
			used |= (uint64(1)<<mm.profiles[profs[k]].MemorySlices - 1) << l[k].Start
		} else {
			free = append(free, k)
		}
	}
	slices.SortStableFunc(free, func(a, b int) int {
		pa, pb := &mm.profiles[profs[a]], &mm.profiles[profs[b]]
		if pa.Slices != pb.Slices {
			return pb.Slices - pa.Slices
		}
		return pb.MemorySlices - pa.MemorySlices
	})
	var try func(i int, used uint64) bool
	try = func(i int, used uint64) bool {
		if i == len(free) {
			return true
		}
		k := free[i]
		p := &mm.profiles[profs[k]]
		mask := uint64(1)<<p.MemorySlices - 1
		for _, st := range p.Starts {
			if used&(mask<<st) != 0 {
				continue
			}
			l[k].Start = st
			if try(i+1, used|mask<<st) {
				return true
			}
		}
		return false
	}
	if !try(0, used) {
		names := make([]string, len(profs))
		for k, p := range profs {
			names[k] = mm.profiles[p].Name
			if fixed[k] {
				names[k] += "@" + strconv.Itoa(starts[k])
			}
		}
		return nil, fmt.Errorf("no placement of %s fits one %s GPU: the instances' valid starts leave no way to keep their memory slices apart", strings.Join(names, ","), Model(m).Name)
	}
	if err := ValidateMIGLayout(m, l); err != nil { // cannot happen: kept as a backstop
		return nil, err
	}
	return l, nil
}
