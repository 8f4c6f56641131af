package hwmodel

import (
	"fmt"
	"strings"
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

// catalogue lists the models Brigade knows. Order fixes each model's ModelID
// and therefore the bit it takes in a ModelSet; append only.
var catalogue = []GPUModel{
	{Name: "P100", Aliases: []string{"P100-16GB", "TESLA-P100"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "V100-16GB", Aliases: []string{"V100", "V100M16", "V100-SXM2-16GB"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "V100-32GB", Aliases: []string{"V100M32", "V100-SXM2-32GB"}, MemoryMiB: 32 * 1024, Vendor: "NVIDIA"},
	{Name: "T4", Aliases: []string{"T4-16GB", "TESLA-T4"}, MemoryMiB: 16 * 1024, Vendor: "NVIDIA"},
	{Name: "A10", Aliases: []string{"A10-24GB"}, MemoryMiB: 24 * 1024, Vendor: "NVIDIA"},
	{Name: "A100-40GB", Aliases: []string{"A100", "A100-SXM4-40GB"}, MemoryMiB: 40 * 1024, Vendor: "NVIDIA"},
	{Name: "A100-80GB", Aliases: []string{"A100-SXM4-80GB"}, MemoryMiB: 80 * 1024, Vendor: "NVIDIA"},
	{Name: "H100-80GB", Aliases: []string{"H100", "H100-SXM5-80GB"}, MemoryMiB: 80 * 1024, Vendor: "NVIDIA"},
	{Name: "H200-141GB", Aliases: []string{"H200"}, MemoryMiB: 141 * 1024, Vendor: "NVIDIA"},
	// G2 and G3 are GPU models that the Alibaba GPU-sharing trace (2023)
	// names only by code; their memory is not published, so MemoryMiB is 0
	// (unknown).
	{Name: "G2", Vendor: "anonymised (Alibaba trace)"},
	{Name: "G3", Vendor: "anonymised (Alibaba trace)"},
}

var modelByName = func() map[string]ModelID {
	m := make(map[string]ModelID)
	for i := range catalogue {
		catalogue[i].ID = ModelID(i)
		m[normaliseModelName(catalogue[i].Name)] = ModelID(i)
		for _, a := range catalogue[i].Aliases {
			m[normaliseModelName(a)] = ModelID(i)
		}
	}
	return m
}()

func normaliseModelName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "_", "-")
	s = strings.ReplaceAll(s, " ", "-")
	return s
}

// LookupModel finds a GPU model by its name or an alias, ignoring case,
// spaces and underscores.
func LookupModel(name string) (GPUModel, bool) {
	id, ok := modelByName[normaliseModelName(name)]
	if !ok {
		return GPUModel{}, false
	}
	return catalogue[id], true
}

// Model returns the catalogue entry for id.
func Model(id ModelID) GPUModel { return catalogue[id] }

// Models returns a copy of the catalogue in ModelID order.
func Models() []GPUModel {
	out := make([]GPUModel, len(catalogue))
	copy(out, catalogue)
	return out
}

// ModelNames lists the canonical names, for error messages.
func ModelNames() string {
	names := make([]string, len(catalogue))
	for i, m := range catalogue {
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
	for i := range catalogue {
		if s&(1<<i) != 0 {
			names = append(names, catalogue[i].Name)
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
