package serving

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// Validate checks every value of the experiment with Check; errors name
// the file, the line when the experiment was parsed, and the field path.
// It fills no defaults: an Experiment built in Go must set every field
// that ParseExperiment would fill.
func (e *Experiment) Validate() error {
	p := e.errors()
	e.Check(p)
	return p.Err()
}

// Check reports every problem of the experiment: its cluster, its batch
// workload, its services (Spec.Check, the rules the engine runs by, and
// rate steps in time order and within the horizon), its faults (Faults.Check, and named failures
// resolved against a cluster that needs no file) and its variants, and
// then, when all that is valid, each variant's services as its switches
// leave them.
func (e *Experiment) Check(p *config.Errors) {
	set := 0
	if e.Cluster.Preset != "" {
		set++
		if _, ok := hwmodel.Preset(e.Cluster.Preset); !ok {
			p.Add("cluster", "unknown preset %q (known: %s)", e.Cluster.Preset, strings.Join(hwmodel.Presets(), ", "))
		}
	}
	if e.Cluster.Path != "" {
		set++
	}
	if e.Cluster.Inline != nil {
		set++
	}
	if set != 1 {
		p.Add("cluster", "want exactly one of a preset, a spec file or an inline spec")
	}
	if e.Batch != nil {
		e.Batch.Check(p.In("batch"))
	}
	e.Spec.Check(p)
	for i, s := range e.Spec.Services {
		var last hwmodel.Time
		for k, st := range s.Arrivals.Steps {
			at := fmt.Sprintf("services[%d].arrivals.steps[%d].at", i, k)
			if st.At < last {
				p.Add(at, "steps must be in time order: %s is before the previous step's %s", fmtDur(st.At), fmtDur(last))
			}
			if h := e.Spec.Horizon; h > 0 && st.At > h {
				p.Add(at, "%s is after the horizon (%s)", fmtDur(st.At), fmtDur(h))
			}
			last = st.At
		}
	}
	if e.Faults != nil {
		e.Faults.Check(p.In("faults"))
		if len(e.Faults.Fail) > 0 && e.Cluster.Path == "" && (e.Cluster.Inline != nil || e.Cluster.Preset != "") {
			if s, err := e.Cluster.Spec(); err == nil {
				if c, err := s.Build(); err == nil {
					e.checkNamedFaults(c, p)
				}
			}
		}
	}
	seen := map[string]int{}
	for i := range e.Variants {
		v := &e.Variants[i]
		v.check(p.Index("variants", i), e)
		if k, dup := seen[v.Name]; dup && v.Name != "" {
			p.Add(fmt.Sprintf("variants[%d].name", i), "%q is already the name of variants[%d]", v.Name, k)
		}
		seen[v.Name] = i
	}
	if p.Count() == 0 {
		// A variant's switches can make what was valid invalid (priority
		// lanes with too little headroom): each variant as it runs.
		for i, name := range e.Names() {
			if err := config.Validate("", e.VariantSpec(i)); err != nil {
				p.Add("", "variant %s: %v", name, err)
			}
		}
	}
}

func (v *Variant) check(p *config.Errors, e *Experiment) {
	switch {
	case v.Name == "":
		p.Add("name", "want a name")
	case !validName(v.Name):
		p.Add("name", "want letters, digits and . _ - + only (it names rows and files), got %q", v.Name)
	}
	if v.Routing != "" && !slices.Contains(routings, v.Routing) {
		p.Add("routing", "unknown routing %q (known: %s)", v.Routing, joinNames(routings))
	}
	for _, sw := range []struct {
		f string
		v Switch
	}{{"health", v.Health}, {"autoscale", v.Autoscale}, {"incidents", v.Incidents}, {"faults", v.Faults}, {"failover", v.Failover}, {"prefix_cache", v.PrefixCache}} {
		if sw.v != SwitchKeep && sw.v != SwitchOn && sw.v != SwitchOff {
			p.Add(sw.f, "want on or off, got %q", sw.v)
		}
	}
	if v.OnNoGPUs != "" && !slices.Contains(noGPUChoices, v.OnNoGPUs) {
		p.Add("on_no_gpus", "want %s, got %q", joinNames(noGPUChoices), v.OnNoGPUs)
	}
	if v.Autoscale == SwitchOn || v.OnNoGPUs != "" {
		if !slices.ContainsFunc(e.Spec.Services, func(s Service) bool { return s.hasAutoscale() }) {
			p.Add("autoscale", "no service declares an autoscale section for the variant to use")
		}
	}
	if v.Incidents == SwitchOn && !slices.ContainsFunc(e.Spec.Services, func(s Service) bool { return len(s.Incidents) > 0 }) {
		p.Add("incidents", "no service declares incidents")
	}
	if v.Failover == SwitchOn && !slices.ContainsFunc(e.Spec.Services, func(s Service) bool { return s.Failover != nil }) {
		p.Add("failover", "no service declares a failover section")
	}
	if v.Faults == SwitchOn && e.Faults == nil {
		p.Add("faults", "the experiment has no faults section")
	}
}

// Check reports what is wrong with the batch workload.
func (b *Batch) Check(p *config.Errors) {
	switch {
	case b.Synthetic != nil && b.Trace != "":
		p.Add("", "synthetic and trace are alternatives; give one")
	case b.Synthetic == nil && b.Trace == "":
		p.Add("", "want synthetic: {jobs, load, ...} or trace: FILE")
	}
	if s := b.Synthetic; s != nil {
		if s.Jobs < 1 || s.Jobs > maxBatchJobs {
			p.Add("synthetic.jobs", "want 1 to %d jobs, got %d", maxBatchJobs, s.Jobs)
		}
		if !(s.Load > 0) || s.Load > 100 {
			p.Add("synthetic.load", "want a load > 0 (GPU demand over capacity), got %g", s.Load)
		}
		if s.MaxDuration < hwmodel.Second {
			p.Add("synthetic.max_duration", "want at least 1s, got %s", fmtDur(s.MaxDuration))
		}
	}
	if b.Trace != "" && !slices.Contains(workloads.Formats, b.Format) {
		p.Add("format", "unknown trace format %q (known: %s)", b.Format, strings.Join(workloads.Formats, ", "))
	}
	if b.Trace == "" && b.Format != "" {
		p.Add("format", "a format is for a trace; there is none")
	}
	if s, err := policies.ParseSpec(b.Policy); err != nil {
		p.Add("policy", "%v", err)
	} else if err := s.Check(); err != nil {
		p.Add("policy", "%v", err)
	}
}
