package hwmodel

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ModelID indexes the GPU catalogue. It is small so that a set of accepted
// models fits one machine word (see ModelSet).
type ModelID uint8

// GPUModel describes one GPU product as the scheduler sees it.
type GPUModel struct {
	ID        ModelID
	Name      string   // canonical name, e.g. "A100-80GB"
	Aliases   []string // other spellings traces use, e.g. "V100M32"
	MemoryMiB int64    // device memory
	Vendor    string
}

// builtin lists the models Brigade knows. Order fixes each model's ModelID
// and therefore the bit it takes in a ModelSet; append only. Memory is the
// device memory of the named variant; the speed table (package speeds)
// says how fast each model runs which work.
var builtin = []GPUModel{
	{Name: "P100", Aliases: []string{"P100-16GB", "TESLA-P100"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "V100-16GB", Aliases: []string{"V100", "V100M16", "V100-SXM2-16GB"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "V100-32GB", Aliases: []string{"V100M32", "V100-SXM2-32GB"}, MemoryMiB: 32 * 1024, Vendor: "NVIDIA"},
	{Name: "T4", Aliases: []string{"T4-16GB", "TESLA-T4"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "A10", Aliases: []string{"A10-24GB"}, MemoryMiB: 24 * 1024, Vendor: "NVIDIA"},
	{Name: "A100-40GB", Aliases: []string{"A100", "A100-SXM4-40GB"}, MemoryMiB: 40 * 1024, Vendor: "NVIDIA"},
	{Name: "A100-80GB", Aliases: []string{"A100-SXM4-80GB", "A100-SXM-80GB"}, MemoryMiB: 80 * 1024, Vendor: "NVIDIA"},
	{Name: "H100-80GB", Aliases: []string{"H100", "H100-SXM5-80GB", "H100-SXM-80GB"}, MemoryMiB: 80 * 1024, Vendor: "NVIDIA"},
	{Name: "H200-141GB", Aliases: []string{"H200", "H200-SXM5-141GB", "H200-SXM-141GB"}, MemoryMiB: 141 * 1024, Vendor: "NVIDIA"},
	// G2 and G3 are GPU models that the Alibaba GPU-sharing trace (2023)
	// names only by code; their memory is not published, so MemoryMiB is 0
	// (unknown).
	{Name: "G2", Vendor: "anonymised (Alibaba trace)"},
	{Name: "G3", Vendor: "anonymised (Alibaba trace)"},
	// K80 is one of the board's two GPUs, as Gavel and schedulers count it.
	{Name: "K80", Aliases: []string{"TESLA-K80", "K80-12GB"}, MemoryMiB: 12 * 1024, Vendor: "NVIDIA"},
	{Name: "A30", Aliases: []string{"A30-24GB", "A30-PCIE-24GB"}, MemoryMiB: 24 * 1024, Vendor: "NVIDIA"},
	{Name: "L4", Aliases: []string{"L4-24GB"}, MemoryMiB: 24 * 1024, Vendor: "NVIDIA"},
	{Name: "L40", Aliases: []string{"L40-48GB"}, MemoryMiB: 48 * 1024, Vendor: "NVIDIA"},
	{Name: "L40S", Aliases: []string{"L40S-48GB"}, MemoryMiB: 48 * 1024, Vendor: "NVIDIA"},
	{Name: "B200-180GB", Aliases: []string{"B200", "B200-SXM-180GB"}, MemoryMiB: 180 * 1024, Vendor: "NVIDIA"},
	{Name: "B300-270GB", Aliases: []string{"B300", "B300-SXM-270GB"}, MemoryMiB: 270 * 1024, Vendor: "NVIDIA"},
	{Name: "MI300X-192GB", Aliases: []string{"MI300X"}, MemoryMiB: 192 * 1024, Vendor: "AMD"},
	{Name: "MI325X-256GB", Aliases: []string{"MI325X"}, MemoryMiB: 256 * 1024, Vendor: "AMD"},
	{Name: "MI355X-288GB", Aliases: []string{"MI355X"}, MemoryMiB: 288 * 1024, Vendor: "AMD"},
}

// MaxModels is how many models the catalogue can hold: a ModelSet is one
// 64-bit word.
const MaxModels = 64

// catalogueState is one immutable version of the catalogue: the built-in
// models, then the custom ones cluster specs declared, in the order they
// were registered. Registering a model publishes a new version, so readers
// never lock and never see a half-built one.
type catalogueState struct {
	models []GPUModel
	byName map[string]ModelID
}

// current is the catalogue now. It is set by a variable initialiser, not
// init, so that other package-level tables (the MIG table) can look
// models up while they are built.
var current = func() *atomic.Pointer[catalogueState] {
	st := &catalogueState{byName: make(map[string]ModelID)}
	for _, m := range builtin {
		st = st.with(m)
	}
	p := new(atomic.Pointer[catalogueState])
	p.Store(st)
	return p
}()

var registerMu sync.Mutex

// with returns a new version holding m too, at the next ModelID.
func (st *catalogueState) with(m GPUModel) *catalogueState {
	next := &catalogueState{models: append(slices.Clip(st.models), m), byName: maps.Clone(st.byName)}
	id := ModelID(len(st.models))
	next.models[id].ID = id
	next.models[id].Aliases = slices.Clone(m.Aliases)
	next.byName[normaliseModelName(m.Name)] = id
	for _, a := range m.Aliases {
		next.byName[normaliseModelName(a)] = id
	}
	return next
}

// catalogue is the current list of models in ModelID order; read-only.
func catalogue() []GPUModel { return current.Load().models }

// NumModels is how many models the catalogue holds now. It only grows.
func NumModels() int { return len(current.Load().models) }

// RegisterModel adds a custom model (one a cluster spec declares) to the
// catalogue and returns it with its ModelID. Registering a model that the
// catalogue already holds under that name with the same memory returns the
// existing entry, so loading one spec twice is harmless; a name or alias
// that another model holds, a different memory for a known name, or a full
// catalogue is an error. IDs of custom models follow registration order, so
// a program that loads the same specs in the same order gets the same IDs.
func RegisterModel(m GPUModel) (GPUModel, error) {
	registerMu.Lock()
	defer registerMu.Unlock()
	st := current.Load()
	name := strings.TrimSpace(m.Name)
	if name == "" {
		return GPUModel{}, fmt.Errorf("a custom GPU model needs a name")
	}
	if m.MemoryMiB <= 0 {
		return GPUModel{}, fmt.Errorf("custom GPU model %q: memory_mib must be > 0, got %d", name, m.MemoryMiB)
	}
	if id, ok := st.byName[normaliseModelName(name)]; ok {
		have := st.models[id]
		switch {
		case !IsCustom(id):
			return GPUModel{}, fmt.Errorf("custom GPU model %q: the catalogue already has %s; use it by name, or give the custom model another name", name, have.Name)
		case have.MemoryMiB != m.MemoryMiB:
			return GPUModel{}, fmt.Errorf("custom GPU model %q is declared twice, with memory_mib %d and %d", name, have.MemoryMiB, m.MemoryMiB)
		}
		return have, nil
	}
	for _, a := range m.Aliases {
		if id, ok := st.byName[normaliseModelName(a)]; ok {
			return GPUModel{}, fmt.Errorf("custom GPU model %q: alias %q already names %s", name, a, st.models[id].Name)
		}
	}
	if len(st.models) >= MaxModels {
		return GPUModel{}, fmt.Errorf("custom GPU model %q: the catalogue is full (%d models)", name, MaxModels)
	}
	m.Name = name
	if m.Vendor == "" {
		m.Vendor = "custom"
	}
	next := st.with(m)
	current.Store(next)
	return next.models[len(next.models)-1], nil
}

// unregisterModels takes back models a refused spec registered: those of
// ids still at the catalogue's end, newest first, so that no ID another
// spec got since moves.
func unregisterModels(ids []ModelID) {
	if len(ids) == 0 {
		return
	}
	registerMu.Lock()
	defer registerMu.Unlock()
	st := current.Load()
	n := len(st.models)
	for k := len(ids) - 1; k >= 0 && int(ids[k]) == n-1; k-- {
		n--
	}
	if n == len(st.models) {
		return
	}
	next := &catalogueState{byName: make(map[string]ModelID)}
	for _, m := range st.models[:n] {
		next = next.with(m)
	}
	current.Store(next)
}

// IsCustom reports whether id is a model a cluster spec registered.
func IsCustom(id ModelID) bool { return int(id) >= len(builtin) }

func normaliseModelName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "_", "-")
	s = strings.ReplaceAll(s, " ", "-")
	return s
}

// LookupModel finds a GPU model by its name or an alias, ignoring case,
// spaces and underscores.
func LookupModel(name string) (GPUModel, bool) {
	st := current.Load()
	id, ok := st.byName[normaliseModelName(name)]
	if !ok {
		return GPUModel{}, false
	}
	return st.models[id], true
}

// Model returns the catalogue entry for id.
func Model(id ModelID) GPUModel { return catalogue()[id] }

// Models returns a copy of the catalogue in ModelID order.
func Models() []GPUModel {
	cat := catalogue()
	out := make([]GPUModel, len(cat))
	copy(out, cat)
	for i := range out {
		out[i].Aliases = slices.Clone(out[i].Aliases)
	}
	return out
}

// ModelNames lists the canonical names, for error messages.
func ModelNames() string {
	cat := catalogue()
	names := make([]string, len(cat))
	for i, m := range cat {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// ModelSet is a set of GPU models; the zero value accepts every model.
type ModelSet uint64

// AnyModel accepts every model.
const AnyModel ModelSet = 0

// Of returns the set holding the given models.
func Of(ids ...ModelID) ModelSet {
	var s ModelSet
	for _, id := range ids {
		s |= 1 << id
	}
	return s
}

// Accepts reports whether a GPU of model id satisfies the set.
func (s ModelSet) Accepts(id ModelID) bool { return s == 0 || s&(1<<id) != 0 }

// String lists the set's canonical names joined by "|", or "any".
func (s ModelSet) String() string {
	if s == 0 {
		return "any"
	}
	var names []string
	for i, m := range catalogue() {
		if s&(1<<i) != 0 {
			names = append(names, m.Name)
		}
	}
	return strings.Join(names, "|")
}

// ParseModelSet reads a list of model names separated by "|" or ",".
// An empty string, "any" or "nan" means any model.
func ParseModelSet(s string) (ModelSet, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "any") || strings.EqualFold(s, "nan") {
		return AnyModel, nil
	}
	var set ModelSet
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' }) {
		m, ok := LookupModel(part)
		if !ok {
			return 0, fmt.Errorf("unknown GPU model %q (known: %s)", part, ModelNames())
		}
		set |= 1 << m.ID
	}
	return set, nil
}
