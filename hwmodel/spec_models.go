package hwmodel

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/brigadesim/brigade/config"
)

// GPUModelSpec declares a custom GPU model in a cluster spec: one the
// catalogue lacks, with its memory and its speeds on the speed table's
// scale (A100-80GB = 1 in the default table). Loading the spec registers
// it (RegisterModel), so its nodes, traces and job requests may name it.
type GPUModelSpec struct {
	Name      string `json:"name" config:"required"`
	MemoryMiB int64  `json:"memory_mib" config:"required"`
	Vendor    string `json:"vendor,omitempty"`
	// Speed is its generic speed: the speed table's row (*, this model).
	Speed float64 `json:"speed" config:"required"`
	// Speeds are its speeds for job classes the table has rows for.
	Speeds []ClassSpeedSpec `json:"speeds,omitempty"`
}

// ClassSpeedSpec is one job class's speed on a custom model.
type ClassSpeedSpec struct {
	Class string  `json:"class" config:"required"`
	Speed float64 `json:"speed" config:"required"`
}

// Check reports what is wrong with one custom model's declaration, short
// of registering it (ClusterSpec.Check does that).
func (m *GPUModelSpec) Check(e *config.Errors) {
	if msg := checkName(m.Name, 64); msg != "" {
		e.Add("name", "%s", msg)
	}
	if m.MemoryMiB <= 0 || m.MemoryMiB > UnlimitedCapacity {
		e.Add("memory_mib", "must be in 1..%d, got %d", UnlimitedCapacity, m.MemoryMiB)
	}
	if !(m.Speed > 0) || math.IsInf(m.Speed, 0) {
		e.Add("speed", "want a finite number > 0 (relative to A100-80GB = 1 in the default speed table), got %v", m.Speed)
	}
	seen := map[string]int{}
	for i, s := range m.Speeds {
		ei := e.Index("speeds", i)
		if err := CheckClassName(s.Class); err != nil {
			ei.Add("class", "%v", err)
		} else if j, dup := seen[s.Class]; dup {
			ei.Add("class", "class %s is given twice (first at speeds[%d])", s.Class, j)
		}
		seen[s.Class] = i
		if !(s.Speed > 0) || math.IsInf(s.Speed, 0) {
			ei.Add("speed", "want a finite number > 0, got %v", s.Speed)
		}
	}
}

// registerModels checks the spec's custom models and adds them to the
// catalogue, before its nodes name them; it returns the IDs it added (not
// those a spec had registered before), for unregisterModels.
func (s *ClusterSpec) registerModels(p *config.Errors) []ModelID {
	var added []ModelID
	for i := range s.GPUModels {
		m := &s.GPUModels[i]
		e := p.Index("gpu_models", i)
		before := e.Count()
		m.Check(e)
		if e.Count() > before {
			continue
		}
		n := NumModels()
		g, err := RegisterModel(GPUModel{Name: m.Name, MemoryMiB: m.MemoryMiB, Vendor: m.Vendor})
		switch {
		case err != nil:
			e.Add("name", "%v", err)
		case int(g.ID) >= n:
			added = append(added, g.ID)
		}
	}
	return added
}

// WithModelSpeeds is t with the speeds of the spec's custom models added
// (t itself when the spec declares none): a speed table cannot know them.
func (s *ClusterSpec) WithModelSpeeds(t *SpeedTable) (*SpeedTable, error) {
	if len(s.GPUModels) == 0 {
		return t, nil
	}
	out := t.Clone()
	for _, m := range s.GPUModels {
		model, ok := LookupModel(m.Name)
		if !ok {
			return nil, fmt.Errorf("%s: gpu_models: %s is not registered; validate the spec first", s.where(), m.Name)
		}
		src := s.where() + ": gpu_models " + m.Name
		if err := out.Set(AnyClass, model.ID, m.Speed, src); err != nil {
			return nil, err
		}
		for _, c := range m.Speeds {
			if err := out.Set(c.Class, model.ID, c.Speed, src); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// gpuModelsYAML writes the gpu_models field.
func gpuModelsYAML(b *bytes.Buffer, ms []GPUModelSpec) {
	if len(ms) == 0 {
		return
	}
	b.WriteString("gpu_models:\n")
	for _, m := range ms {
		fmt.Fprintf(b, "  - name: %s\n", yamlString(m.Name))
		fmt.Fprintf(b, "    memory_mib: %d\n", m.MemoryMiB)
		if m.Vendor != "" {
			fmt.Fprintf(b, "    vendor: %s\n", yamlString(m.Vendor))
		}
		fmt.Fprintf(b, "    speed: %s\n", strconv.FormatFloat(m.Speed, 'g', -1, 64))
		if len(m.Speeds) > 0 {
			b.WriteString("    speeds:\n")
			for _, c := range m.Speeds {
				fmt.Fprintf(b, "      - class: %s\n        speed: %s\n", yamlString(c.Class), strconv.FormatFloat(c.Speed, 'g', -1, 64))
			}
		}
	}
}
