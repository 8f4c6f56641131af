package serving

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

// Experiment is an experiment file (docs/serving.md): a cluster, an
// optional batch workload, the services that run beside it, and the
// variants to compare, each a copy of the services with a few switches
// flipped. ParseExperiment reads one; VariantSpec gives a variant's Spec.
type Experiment struct {
	// File names the source in errors ("" when built in Go).
	File string
	// Cluster is shared by the batch jobs and the replicas.
	Cluster ClusterRef
	// Batch is the batch workload (nil: no batch jobs).
	Batch *Batch
	// Seed is the root seed: the request streams, and the synthetic batch
	// workload unless it names its own seed.
	Seed uint64
	// Spec holds the horizon, the bucket and the services as the file
	// declares them; variants are copies of it.
	Spec Spec
	// Variants to run; an experiment without variants runs one, named
	// "default", of the services as declared.
	Variants []Variant
	// Faults is the hardware fault injection (nil: none); variants with
	// faults on (the default) and the batch-only baseline face the same
	// failures (FaultsOn, RunnerFaults).
	Faults *Faults

	// doc holds the file's document, so that problems found after
	// parsing (Validate, the files it names, CheckCluster) name their
	// lines; nil for an experiment built in Go.
	doc *config.Errors
}

// ClusterRef is an experiment's cluster: a preset name, a spec file, or a
// spec written inline; exactly one is set.
type ClusterRef struct {
	// Preset is a built-in cluster name (hwmodel.Presets).
	Preset string
	// Path is a cluster spec file (docs/cluster.md), resolved against the
	// experiment file's folder.
	Path string
	// Inline is a cluster spec written in the experiment file itself.
	Inline *hwmodel.ClusterSpec
}

// Spec returns the cluster spec the reference names.
func (c ClusterRef) Spec() (*hwmodel.ClusterSpec, error) {
	switch {
	case c.Inline != nil:
		s := *c.Inline
		return &s, nil
	case c.Path != "":
		return hwmodel.ResolveCluster(c.Path)
	case c.Preset != "":
		s, ok := hwmodel.Preset(c.Preset)
		if !ok {
			return nil, fmt.Errorf("cluster: unknown preset %q (known: %s)", c.Preset, strings.Join(hwmodel.Presets(), ", "))
		}
		return s, nil
	}
	return nil, fmt.Errorf("cluster: none named")
}

// String names the cluster for tables and logs.
func (c ClusterRef) String() string {
	switch {
	case c.Inline != nil:
		return c.Inline.Name
	case c.Path != "":
		return c.Path
	}
	return c.Preset
}

// Batch is an experiment's batch workload: synthetic jobs or a trace,
// scheduled by a policy as brigade sim names it.
type Batch struct {
	// Synthetic, or Trace and Format (philly, openb, brigade, swf); one is set.
	Synthetic *Synthetic
	Trace     string
	Format    string
	// Policy is a policy spec as brigade sim takes it (default fcfs);
	// Backfill is shorthand for its +bf.
	Policy   string
	Backfill bool
}

// Synthetic is a seeded synthetic batch workload (workloads.Generate with
// its Philly-like defaults) whose arrivals are spaced so that its GPU
// demand is Load × the cluster's GPUs over the arrival window.
type Synthetic struct {
	Jobs int
	Load float64
	// Seed of the workload (0: the experiment's seed).
	Seed uint64
	// MaxDuration caps each job's duration (default 2 days).
	MaxDuration hwmodel.Time
}

// Switch is a variant's override of a service setting: "" keeps what the
// services declare, SwitchOn and SwitchOff force it.
type Switch string

// The values of a Switch.
const (
	SwitchKeep Switch = ""
	SwitchOn   Switch = "on"
	SwitchOff  Switch = "off"
)

// Variant is one run of an experiment: the services as declared, with
// these overrides applied to every service.
type Variant struct {
	Name string
	// Routing, when set, replaces every service's routing.
	Routing Routing
	// Health on enables outlier ejection (with the service's settings, or
	// the defaults); off disables it.
	Health Switch
	// Autoscale on keeps the autoscaler of services that declare one (at
	// least one must); off removes it (static replicas).
	Autoscale Switch
	// Incidents off drops the services' incidents.
	Incidents Switch
	// OnNoGPUs, when set, replaces the autoscalers' choice.
	OnNoGPUs NoGPUs
	// Faults off runs the variant without the experiment's faults; on
	// (or kept) injects them when the experiment has a faults section.
	Faults Switch
	// Failover off drops the services' failover sections (their backups
	// still serve their own traffic).
	Failover Switch
	// PrefixCache off runs the same requests without prefix caching
	// across requests (Service.NoPrefixCache).
	PrefixCache Switch
}

// Defaults filled by ParseExperiment (docs/serving.md); health and
// autoscaling take the engine's own (Health's and Autoscale's comments).
const (
	DefaultBucket           = 60 * hwmodel.Second
	DefaultRouting          = LeastOutstanding
	DefaultBatchPolicy      = "fcfs"
	DefaultBatchLoad        = 0.8
	DefaultMaxBatchDuration = 2 * hwmodel.Day
)

// Limits that keep a mistyped number from exhausting memory; the lists'
// lengths are bounded in the file schema (experiment_file.go).
const (
	maxExperimentBytes = 8 << 20
	maxBatchJobs       = 10_000_000
)

// ExperimentError is one problem with an experiment file: the file, the
// line (0: unknown), the field path such as "services[0].classes[1].name"
// (empty for the whole file) and what was expected.
type ExperimentError = config.Error

// errors returns an empty list of problems for the experiment, with the
// lines of its file when it was parsed from one.
func (e *Experiment) errors() *config.Errors {
	if e.doc != nil {
		return e.doc.Fresh()
	}
	return config.NewErrors(e.File)
}

// LoadExperiment reads an experiment file (YAML or JSON). Relative paths
// in it (a cluster spec, a batch trace, request traces) are resolved
// against the file's folder, and the files they name must exist.
func LoadExperiment(path string) (*Experiment, error) {
	data, err := config.ReadFile(path, "experiment file", maxExperimentBytes)
	if err != nil {
		return nil, err
	}
	e, err := ParseExperiment(data, path)
	if err != nil {
		return nil, err
	}
	if err := e.checkFiles(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkFiles makes sure the files the experiment names can be read: the
// cluster spec (parsed) and the traces (opened; request traces' headers
// read).
func (e *Experiment) checkFiles() error {
	p := e.errors()
	if e.Cluster.Path != "" {
		s, err := e.Cluster.Spec()
		if err != nil {
			return err
		}
		if e.Faults != nil && len(e.Faults.Fail) > 0 {
			// Named failures name the file's nodes: resolved now that
			// it is read.
			c, err := s.Build()
			if err != nil {
				return err
			}
			e.checkNamedFaults(c, p)
		}
	}
	if e.Batch != nil && e.Batch.Trace != "" {
		if fi, err := os.Stat(e.Batch.Trace); err != nil || fi.IsDir() {
			p.Add("batch.trace", "cannot read %s: %v", e.Batch.Trace, orIsDir(err))
		}
	}
	for i, s := range e.Spec.Services {
		if im := s.Replica.Iteration; im != nil {
			if err := im.build(s.GPUsPerReplica); err != nil {
				p.Add(fmt.Sprintf("services[%d].replica.iteration", i), "%v", err)
			}
		}
		for k, pl := range s.Pools {
			if im := pl.Replica.Iteration; im != nil && im != s.Replica.Iteration {
				if err := im.build(s.GPUsPerReplica); err != nil {
					p.Add(fmt.Sprintf("services[%d].pools[%d].replica.iteration", i, k), "%v", err)
				}
			}
		}
		if s.Arrivals.Trace == "" {
			continue
		}
		t, err := OpenTrace(s.Arrivals.Trace)
		if err != nil {
			p.Add(fmt.Sprintf("services[%d].arrivals.trace", i), "%v", err)
			continue
		}
		t.Close()
	}
	return p.Err()
}

// CheckCluster reports services whose replicas no node of c can hold (a
// replica takes GPUsPerReplica GPUs of its model on one node) and named
// failures (faults.fail) that do not name a node or GPU of c.
func (e *Experiment) CheckCluster(c *hwmodel.Cluster) error {
	p := e.errors()
	e.checkNamedFaults(c, p)
	for i, s := range e.Spec.Services {
		set := hwmodel.AnyModel
		if s.GPUModel != "" {
			m, ok := hwmodel.LookupModel(s.GPUModel)
			if !ok {
				continue // Validate reports it
			}
			set = hwmodel.Of(m.ID)
		}
		if most := c.MaxNodeGPUs(set); most < s.GPUsPerReplica {
			model := "GPUs"
			if s.GPUModel != "" {
				model = s.GPUModel + " GPUs"
			}
			p.Add(fmt.Sprintf("services[%d].gpus_per_replica", i), "a replica needs %d %s on one node; the cluster's largest such node has %d", s.GPUsPerReplica, model, most)
		}
	}
	return p.Err()
}

func orIsDir(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("is a directory")
}

// ParseExperiment reads an experiment from YAML or JSON with the strict
// decoder (package config); file names the source in errors and is the
// base of relative paths (nothing is read from disk: LoadExperiment also
// checks the files it names). Every problem is reported at once, up to
// ten, each naming the file, the line and the field path: unknown fields,
// duplicate keys, wrong types and what Check finds. Defaults are filled
// in.
func ParseExperiment(data []byte, file string) (*Experiment, error) {
	p := config.NewErrors(file)
	if len(data) > maxExperimentBytes {
		p.Add("", "file is larger than %d MiB; is it an experiment file?", maxExperimentBytes>>20)
		return nil, p.Err()
	}
	root, ok := config.Parse(data, p)
	if !ok {
		return nil, p.Err()
	}
	var f experimentFile
	root.Decode(&f)
	dir := filepath.Dir(file)
	if file == "" {
		dir = ""
	}
	e := f.experiment(file, dir)
	e.doc = p.Fresh()
	e.Check(p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return e, nil
}

// Names lists the variants' names in order ("default" when there are
// none).
func (e *Experiment) Names() []string {
	if len(e.Variants) == 0 {
		return []string{"default"}
	}
	out := make([]string, len(e.Variants))
	for i, v := range e.Variants {
		out[i] = v.Name
	}
	return out
}

// VariantSpec returns variant i's Spec: a deep copy of the experiment's
// services with the variant's overrides applied. With no variants, i = 0
// is the services as declared.
func (e *Experiment) VariantSpec(i int) *Spec {
	s := cloneSpec(&e.Spec)
	if len(e.Variants) == 0 {
		return s
	}
	v := e.Variants[i]
	for k := range s.Services {
		svc := &s.Services[k]
		if v.Routing != "" {
			svc.Routing = v.Routing
		}
		switch v.Health {
		case SwitchOn:
			svc.Health.Enabled = true
			svc.Health = svc.Health.withDefaults()
		case SwitchOff:
			svc.Health.Enabled = false
		}
		if v.Autoscale == SwitchOff {
			svc.Autoscale = nil
		}
		if v.Incidents == SwitchOff {
			svc.Incidents = nil
		}
		if v.Failover == SwitchOff {
			svc.Failover = nil
		}
		svc.NoPrefixCache = svc.NoPrefixCache || v.PrefixCache == SwitchOff
		if v.OnNoGPUs != "" && svc.Autoscale != nil {
			svc.Autoscale.OnNoGPUs = v.OnNoGPUs
		}
		for p := range svc.Pools {
			if v.Autoscale == SwitchOff {
				svc.Pools[p].Autoscale = nil
			}
			if a := svc.Pools[p].Autoscale; v.OnNoGPUs != "" && a != nil {
				a.OnNoGPUs = v.OnNoGPUs
			}
		}
	}
	return s
}

// Workload builds the batch workload for a cluster of gpus GPUs; seed is
// the experiment's (a synthetic workload's own seed wins). It returns the
// workload and a line describing it.
func (b *Batch) Workload(gpus int, seed uint64) (*workloads.Workload, string, error) {
	if s := b.Synthetic; s != nil {
		if s.Seed != 0 {
			seed = s.Seed
		}
		cfg := workloads.DefaultSyntheticConfig()
		cfg.Jobs = s.Jobs
		cfg.Duration.Max = s.MaxDuration
		w, err := workloads.Generate(cfg, seed)
		if err != nil {
			return nil, "", err
		}
		if err := w.ScaleToLoad(gpus, s.Load); err != nil {
			return nil, "", fmt.Errorf("batch.synthetic.load: %w", err)
		}
		w.FillEstimates()
		last := w.Jobs[len(w.Jobs)-1].Submit
		return w, fmt.Sprintf("synthetic: %d jobs at load %g arriving over %s, seed %d", s.Jobs, s.Load, results.HumanDuration(last.Seconds()), seed), nil
	}
	w, err := workloads.ReadFile(b.Trace, b.Format)
	if err != nil {
		return nil, "", err
	}
	w.FillEstimates()
	return w, fmt.Sprintf("%s (%d jobs)", filepath.Base(b.Trace), len(w.Jobs)), nil
}

// PolicySpec is the batch policy: its spec, with backfill when the
// backfill shorthand asks for it. Call it only on a validated experiment.
func (b *Batch) PolicySpec() policies.Spec {
	s := policies.MustParseSpec(b.Policy)
	if b.Backfill {
		s.Backfill = true
	}
	return s.Canonical()
}
