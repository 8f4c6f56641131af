package runner

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// DefaultSpeeds is the name that picks the speed table Brigade ships
// (hwmodel.DefaultSpeeds) where a speed table file is asked for.
const DefaultSpeeds = "default"

// LoadSpeeds reads the speed table a flag or field names: DefaultSpeeds
// for the shipped table, else a file; "" for none (nil).
func LoadSpeeds(name string) (*hwmodel.SpeedTable, error) {
	switch name {
	case "":
		return nil, nil
	case DefaultSpeeds:
		return hwmodel.DefaultSpeeds(), nil
	}
	return hwmodel.LoadSpeedTable(name)
}

// SpeedReference is the GPU model a workload's durations were measured on
// where its jobs do not say: the model named (a catalogue name or alias),
// else the model that holds most of cluster c's GPUs (the lowest ModelID
// on a tie), so that on a cluster of one model every job runs at its
// measured pace.
func SpeedReference(name string, c *hwmodel.Cluster) (hwmodel.ModelID, error) {
	if name != "" {
		m, ok := hwmodel.LookupModel(name)
		if !ok {
			return 0, fmt.Errorf("unknown GPU model %q (known: %s)", name, hwmodel.ModelNames())
		}
		return m.ID, nil
	}
	best, most := hwmodel.ModelID(0), 0
	for m := range hwmodel.NumModels() {
		if n := c.GPUsOfModel(hwmodel.ModelID(m)); n > most {
			best, most = hwmodel.ModelID(m), n
		}
	}
	return best, nil
}

// speeds resolves the comparison's speed settings into opt for workload w
// on cluster c: the table (with the cluster spec's custom models' speeds
// added), the reference model, and a warning for classes the table lacks.
func (c *Comparison) speeds(opt *Options, spec *hwmodel.ClusterSpec, probe *hwmodel.Cluster, w *workloads.Workload, warn func(string, ...any)) error {
	if c.Speeds == "" {
		if c.SpeedReference != "" {
			return &RequestError{"speed-reference", fmt.Errorf("needs --speeds (a speed table, or %s)", DefaultSpeeds)}
		}
		return nil
	}
	t, err := LoadSpeeds(c.Speeds)
	if err != nil {
		return err
	}
	if t, err = spec.WithModelSpeeds(t); err != nil {
		return err
	}
	ref, err := SpeedReference(c.SpeedReference, probe)
	if err != nil {
		return &RequestError{"speed-reference", err}
	}
	if err := t.Check(probe.ModelsPresent() | hwmodel.Of(ref)); err != nil {
		return err
	}
	if unknown := t.Compile(w.Classes).Unknown; len(unknown) > 0 {
		warn("%s has no rows for job %s %s; %s at its generic speeds", t.Source, map[bool]string{true: "class", false: "classes"}[len(unknown) == 1], quoteList(unknown), map[bool]string{true: "it runs", false: "they run"}[len(unknown) == 1])
	}
	opt.Speeds, opt.SpeedReference = t, ref
	return nil
}

// quoteList is names quoted and joined by commas, at most five of them.
func quoteList(names []string) string {
	out := ""
	for i, n := range names {
		if i == 5 {
			return out + fmt.Sprintf(" and %d more", len(names)-5)
		}
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", n)
	}
	return out
}

// speedsFile is the speed table file the comparison reads, "" for none or
// the shipped table.
func (c *Comparison) speedsFile() string {
	if c.Speeds == DefaultSpeeds {
		return ""
	}
	return c.Speeds
}
