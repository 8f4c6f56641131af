package scenario

import (
	"path/filepath"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// File is one experiment: a cluster, a workload, the faults it runs
// under, the setups to compare and what to report (docs/scenarios.md).
type File struct {
	// Title heads the generated page; Intro and Notes are Markdown
	// written before and after its results.
	Title string `json:"title"`
	Intro string `json:"intro"`
	Notes string `json:"notes"`
	// Page is the Markdown page to write (relative to the working
	// directory); Plot is its PNG, beside it. Empty: no page.
	Page string `json:"page"`
	Plot string `json:"plot"`

	Seed    uint64 `json:"seed"`
	Cluster string `json:"cluster"` // a preset or a cluster spec file; none in a plan
	Policy  string `json:"policy"`  // a policy spec (policies.ParseSpec)
	// Kueue is the Kueue manifest file (relative to this one) that a
	// policy of the kueue order admits by.
	Kueue    string   `json:"kueue"`
	Workload Workload `json:"workload"`
	// MIGReconfigTime is how long a MIG reconfiguration blocks its GPU.
	MIGReconfigTime string  `json:"mig_reconfig_time"`
	Faults          *Faults `json:"faults"`
	// Preemption is what a preempted job loses and pays: every setup's,
	// unless the setup gives its own.
	Preemption *Preemption `json:"preemption"`
	// Speeds names a speed table (a file relative to this one, or
	// default) that every setup runs with; SpeedReference the GPU model
	// the workload's durations were measured on (required with Speeds).
	Speeds         string `json:"speeds"`
	SpeedReference string `json:"speed_reference"`
	// Setups are the variants compared, each the experiment above with
	// its own fields in place of the shared ones; none: one setup.
	Setups  []Setup  `json:"setups" config:"max=16"`
	Columns []Column `json:"columns" config:"max=16"`
	Charts  []Chart  `json:"charts" config:"max=6"`
	// Plan, when set, makes the file a capacity plan instead of a
	// comparison of setups (plan.go).
	Plan *Plan `json:"plan"`
	// Serving, when set, is a serving experiment file (relative to this
	// one) that the file runs as brigade serve does, for its page
	// (serving.go).
	Serving string `json:"serving"`

	path string // where the file was read from: relative paths resolve against its folder
	// explicitAt is where each explicit job is in the built workload,
	// which is in submission order (buildWorkload).
	explicitAt []int
}

// Workload is what the jobs are: a trace, a generator, explicit jobs, or
// explicit jobs followed by generated ones.
type Workload struct {
	Name string `json:"name"`
	// Embedded is the Philly sample brigade sim runs by default.
	Embedded  bool       `json:"embedded"`
	Trace     string     `json:"trace"`
	Format    string     `json:"format"`
	Synthetic *Synthetic `json:"synthetic"`
	Jobs      []Job      `json:"jobs" config:"max=10000"`
	// Classes gives the generated jobs classes for the speed table, drawn
	// from the file's seed: CLASS or CLASS=WEIGHT entries.
	Classes []string `json:"classes" config:"max=1000"`
	// Datasets gives the generated jobs datasets (the cluster's), drawn
	// from the file's seed: NAME or NAME=WEIGHT entries.
	Datasets []string `json:"datasets" config:"max=1000"`
}

// Synthetic is the generator's setting (workloads.Generate).
type Synthetic struct {
	Jobs int `json:"jobs"`
	// RatePerHour spaces arrivals as a Poisson process; or Load with
	// LoadGPUs spaces them so that the jobs' GPU-time is Load × LoadGPUs
	// × the arrival window (durations capped at two days).
	RatePerHour float64   `json:"rate_per_hour"`
	Load        float64   `json:"load"`
	LoadGPUs    int       `json:"load_gpus"`
	Duration    *Duration `json:"duration"`
	MIG         *MIG      `json:"mig"`
}

// Duration is a distribution of job lengths.
type Duration struct {
	Dist   string  `json:"dist"`
	Median string  `json:"median"`
	Sigma  float64 `json:"sigma"`
	Min    string  `json:"min"`
	Max    string  `json:"max"`
}

// MIG makes every generated job ask for one MIG instance, drawn from the
// mix of the phase it arrives in; phases take turns, each PhaseLength.
type MIG struct {
	PhaseLength string     `json:"phase_length"`
	Phases      []MIGPhase `json:"phases" config:"max=64"`
}

// MIGPhase is one mix of MIG requests.
type MIGPhase struct {
	Name    string     `json:"name"`
	Classes []MIGClass `json:"classes" config:"max=64"`
}

// MIGClass is one kind of MIG request and its relative weight.
type MIGClass struct {
	MinSlices    int     `json:"min_slices"`
	MinMemoryGiB int64   `json:"min_memory_gib"`
	Weight       float64 `json:"weight"`
}

// Job is one explicit job.
type Job struct {
	Name         string      `json:"name"`
	Tenant       string      `json:"tenant"`
	Submit       string      `json:"submit"`
	Duration     string      `json:"duration"`
	GPUs         int         `json:"gpus"`
	CPUPerGPU    float64     `json:"cpus_per_gpu"`
	MemGiBPerGPU int64       `json:"memory_gib_per_gpu"`
	Checkpoint   *Checkpoint `json:"checkpoint"`
	// Class is the job's class in the speed table.
	Class string `json:"class"`
	// Dataset is the dataset the job reads (one the cluster declares).
	Dataset string `json:"dataset"`
}

// Checkpoint is a job's checkpointing: every Every of progress, costing
// Cost.
type Checkpoint struct {
	Every string `json:"every"`
	Cost  string `json:"cost"`
}

// Faults are the hardware failures and the retry rules.
type Faults struct {
	NodeMTBF   string `json:"node_mtbf"`
	NodeRepair string `json:"node_repair"`
	// RackMTBF and RackRepair add rack (switch) failures, which take a
	// rack's nodes down together; optional.
	RackMTBF    string `json:"rack_mtbf"`
	RackRepair  string `json:"rack_repair"`
	Retry       string `json:"retry"`
	MaxRetries  int    `json:"max_retries"`
	RestartTime string `json:"restart_time"`
}

// Setup is one variant of the experiment. Empty fields take the shared
// ones.
type Setup struct {
	Name    string `json:"name"`
	What    string `json:"what"`
	Cluster string `json:"cluster"`
	Policy  string `json:"policy"`
	// Kueue replaces the file's Kueue manifests for this setup.
	Kueue string `json:"kueue"`
	// NoFaults runs the setup without failures (retries still apply).
	NoFaults bool `json:"no_faults"`
	// NoCheckpoints drops the explicit jobs' checkpoints.
	NoCheckpoints bool `json:"no_checkpoints"`
	// WholeGPUs serves every MIG request with a whole GPU.
	WholeGPUs bool `json:"whole_gpus"`
	// Preemption replaces the file's preemption cost for this setup.
	Preemption *Preemption `json:"preemption"`
}

// Preemption is the cost of a preemption (sim.Config.PreemptRestart and
// SaveOnPreempt): Restart is added to the attempt after each one; with
// Save a preempted job saves all its progress as it stops, without it
// it keeps what its completed checkpoints saved.
type Preemption struct {
	Restart string `json:"restart"`
	Save    bool   `json:"save"`
}

// Column is one column of the results table: a header and the value it
// shows (Value's grammar is in docs/scenarios.md), formatted as Format.
type Column struct {
	Header string `json:"header"`
	Value  string `json:"value"`
	Format string `json:"format"`
}

// Chart is one panel of the page's plot: bars of one value per setup, or
// a time series per setup.
type Chart struct {
	Title  string `json:"title"`
	Value  string `json:"value"`
	Format string `json:"format"`
	Series string `json:"series"`
	// LogScale draws bars on a logarithmic axis; values at or below zero
	// sit at the axis floor, a tenth of the smallest positive value.
	LogScale bool `json:"log_scale"`
	// Window averages a time series over windows of this length.
	Window string `json:"window"`
}

// Load reads a scenario file.
func Load(path string) (*File, error) {
	data, err := config.ReadFile(path, "scenario file", 0)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes a scenario file strictly with the config decoder: unknown
// fields (with the field meant), wrong types and what Check finds are all
// reported at once, each with the file, line and field. path names the
// file in errors, and the files it names resolve against path's folder.
func Parse(data []byte, path string) (*File, error) {
	f := &File{path: path}
	if err := config.Decode(data, path, f); err != nil {
		return nil, err
	}
	return f, nil
}

// resolve returns a path named in the file, relative to the file's folder.
func (f *File) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.path), p)
}

// duration reads a non-negative duration field ("" is 0), reporting a
// malformed one at field of e; e may be nil once the file is checked.
func duration(e *config.Errors, field, v string) hwmodel.Time {
	if v == "" {
		return 0
	}
	t, err := hwmodel.ParseDuration(v)
	if err != nil || t < 0 {
		if e != nil {
			e.Add(field, "want a duration such as 30s, 5m, 2h or 21d, got %q", v)
		}
		return 0
	}
	return t
}

// positive reads a duration field that must be above zero.
func positive(e *config.Errors, field, v string) hwmodel.Time {
	t := duration(e, field, v)
	if t <= 0 && e.Count() == 0 {
		e.Add(field, "want a positive duration such as 30s, 5m, 2h or 21d, got %q", v)
	}
	return t
}

// Check reports every problem of the file (config.Checker): the policy
// specs, durations, the workload, faults, setups, columns and charts.
func (f *File) Check(e *config.Errors) {
	if f.Serving != "" {
		f.checkServing(e)
		return
	}
	if f.Policy == "" {
		e.Add("policy", "missing: want a policy spec such as fcfs+bf (docs/policies.md)")
	}
	if f.Plan != nil {
		f.Plan.Check(e.In("plan"))
		for _, x := range []struct {
			field string
			set   bool
		}{{"cluster", f.Cluster != ""}, {"setups", len(f.Setups) > 0}, {"columns", len(f.Columns) > 0}, {"charts", len(f.Charts) > 0}, {"faults", f.Faults != nil}, {"speeds", f.Speeds != ""}} {
			if x.set {
				e.Add(x.field, "a plan sizes clusters of the models it names under the file's policy; it has no %s", x.field)
			}
		}
	} else if f.Cluster == "" {
		e.Add("cluster", "missing: want a preset (brigade gpus --presets) or a cluster spec file")
	}
	if f.Policy != "" {
		if _, err := policies.ParseSpec(f.Policy); err != nil {
			e.Add("policy", "%v", err)
		}
	}
	duration(e, "mig_reconfig_time", f.MIGReconfigTime)
	if f.Preemption != nil {
		duration(e.In("preemption"), "restart", f.Preemption.Restart)
	}
	checkSpeeds(e, f.Speeds, f.SpeedReference)
	f.Workload.Check(e.In("workload"))
	if f.Faults != nil {
		f.Faults.Check(e.In("faults"))
	}
	seen := map[string]int{}
	for i, s := range f.Setups {
		se := e.Index("setups", i)
		if s.Name == "" {
			se.Add("name", "missing: each setup is named in the results")
		} else if j, dup := seen[s.Name]; dup {
			se.Add("name", "%q is already setups[%d]'s name", s.Name, j)
		}
		seen[s.Name] = i
		if s.Policy != "" {
			if _, err := policies.ParseSpec(s.Policy); err != nil {
				se.Add("policy", "%v", err)
			}
		}
		if s.Kueue != "" && !isKueue(orDefault(s.Policy, f.Policy)) {
			se.Add("kueue", "Kueue manifests are for a policy of the kueue order; this setup's is %q", orDefault(s.Policy, f.Policy))
		}
		if s.NoFaults && f.Faults == nil {
			se.Add("no_faults", "the file has no faults section to leave out")
		}
		if s.Preemption != nil {
			duration(se.In("preemption"), "restart", s.Preemption.Restart)
		}
	}
	for i, c := range f.Columns {
		ce := e.Index("columns", i)
		if c.Header == "" {
			ce.Add("header", "missing")
		}
		if err := checkValue(c.Value); err != nil {
			ce.Add("value", "%v", err)
		}
		if err := checkFormat(c.Format); err != nil {
			ce.Add("format", "%v", err)
		}
	}
	for i, c := range f.Charts {
		ce := e.Index("charts", i)
		switch {
		case c.Value != "" && c.Series != "":
			ce.Add("series", "give value (bars) or series (a time series), not both")
		case c.Value != "":
			if err := checkValue(c.Value); err != nil {
				ce.Add("value", "%v", err)
			}
		case c.Series != "":
			if err := checkSeries(c.Series); err != nil {
				ce.Add("series", "%v", err)
			}
		default:
			ce.Add("", "give value (bars) or series (a time series)")
		}
		if err := checkFormat(c.Format); err != nil {
			ce.Add("format", "%v", err)
		}
		duration(ce, "window", c.Window)
		if c.Window != "" && c.Series == "" {
			ce.Add("window", "a window averages a time series (series)")
		}
		if c.LogScale && c.Value == "" {
			ce.Add("log_scale", "a logarithmic axis is for bars (value)")
		}
	}
	if len(f.Charts) > 0 && f.Plot == "" {
		e.Add("charts", "charts need a plot file to draw into (plot: NAME.png)")
	}
}

// orDefault is v, or def when v is "".
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Check reports what is wrong with the faults section.
func (fl *Faults) Check(e *config.Errors) {
	positive(e.In("node_mtbf"), "", fl.NodeMTBF)
	positive(e.In("node_repair"), "", fl.NodeRepair)
	if fl.RackMTBF != "" || fl.RackRepair != "" {
		positive(e.In("rack_mtbf"), "", fl.RackMTBF)
		positive(e.In("rack_repair"), "", fl.RackRepair)
	}
	duration(e, "restart_time", fl.RestartTime)
	switch fl.Retry {
	case "", "trace", "none", "fixed", "deadline":
	default:
		e.Add("retry", "want one of trace, none, fixed, deadline, got %q", fl.Retry)
	}
	if fl.MaxRetries < 0 {
		e.Add("max_retries", "want >= 0, got %d", fl.MaxRetries)
	}
}

// Check reports what is wrong with the workload: it must be a trace, or
// explicit jobs and a generator.
func (w *Workload) Check(e *config.Errors) {
	if !w.Embedded && w.Trace == "" && w.Synthetic == nil && len(w.Jobs) == 0 {
		e.Add("", "want a trace, the embedded sample (embedded: true), a synthetic generator or jobs")
	}
	if (w.Trace != "" || w.Embedded) && (w.Synthetic != nil || len(w.Jobs) > 0) {
		e.Add("trace", "a trace cannot be combined with synthetic or jobs")
	}
	if w.Trace != "" && w.Embedded {
		e.Add("embedded", "give a trace file or the embedded sample, not both")
	}
	if w.Format != "" && w.Trace == "" {
		e.Add("format", "a format is for a trace; this workload has none")
	}
	if s := w.Synthetic; s != nil {
		s.Check(e.In("synthetic"))
	}
	if len(w.Classes) > 0 {
		if w.Synthetic == nil {
			e.Add("classes", "classes are drawn for generated jobs; this workload has no synthetic generator (give explicit jobs a class of their own)")
		} else if _, _, err := workloads.ParseClassList(strings.Join(w.Classes, ",")); err != nil {
			e.Add("classes", "%v", err)
		}
	}
	if len(w.Datasets) > 0 {
		if w.Synthetic == nil {
			e.Add("datasets", "datasets are drawn for generated jobs; this workload has no synthetic generator (give explicit jobs a dataset of their own)")
		} else if _, _, err := workloads.ParseClassList(strings.Join(w.Datasets, ",")); err != nil {
			e.Add("datasets", "%v", err)
		}
	}
	names := map[string]int{}
	for i, j := range w.Jobs {
		je := e.Index("jobs", i)
		if j.Name == "" {
			je.Add("name", "missing")
		} else if k, dup := names[j.Name]; dup {
			je.Add("name", "%q is already jobs[%d]'s name", j.Name, k)
		}
		names[j.Name] = i
		if j.GPUs < 0 {
			je.Add("gpus", "want >= 0, got %d", j.GPUs)
		}
		if j.Class != "" {
			if err := hwmodel.CheckClassName(j.Class); err != nil {
				je.Add("class", "%v", err)
			}
		}
		if j.Dataset != "" {
			if err := workloads.CheckDatasetName(j.Dataset); err != nil {
				je.Add("dataset", "%v", err)
			}
		}
		duration(je, "submit", j.Submit)
		positive(je.In("duration"), "", j.Duration)
		if j.CPUPerGPU < 0 {
			je.Add("cpus_per_gpu", "want >= 0, got %g", j.CPUPerGPU)
		}
		if j.MemGiBPerGPU < 0 {
			je.Add("memory_gib_per_gpu", "want >= 0, got %d", j.MemGiBPerGPU)
		}
		if c := j.Checkpoint; c != nil {
			positive(je.In("checkpoint.every"), "", c.Every)
			duration(je, "checkpoint.cost", c.Cost)
		}
	}
}

// Check reports what is wrong with the generator's setting.
func (s *Synthetic) Check(e *config.Errors) {
	if s.Jobs <= 0 || s.Jobs > maxSyntheticJobs {
		e.Add("jobs", "want 1 to %d, got %d", maxSyntheticJobs, s.Jobs)
	}
	switch {
	case s.RatePerHour > 0 && s.Load > 0:
		e.Add("load", "give rate_per_hour or load, not both")
	case s.RatePerHour < 0:
		e.Add("rate_per_hour", "want a positive rate, got %g", s.RatePerHour)
	case s.Load < 0:
		e.Add("load", "want a positive load, got %g", s.Load)
	case s.Load > 0 && s.LoadGPUs <= 0:
		e.Add("load_gpus", "load needs the number of GPUs it is a load of")
	}
	if s.Load > 0 && (s.Duration != nil || s.MIG != nil) {
		e.Add("load", "load draws the default job mix; duration and mig go with rate_per_hour")
	}
	if d := s.Duration; d != nil {
		de := e.In("duration")
		for _, x := range []struct{ k, v string }{{"median", d.Median}, {"min", d.Min}, {"max", d.Max}} {
			duration(de, x.k, x.v)
		}
	}
	if m := s.MIG; m != nil {
		me := e.In("mig")
		if duration(me, "phase_length", m.PhaseLength) <= 0 && len(m.Phases) > 1 && me.Count() == 0 {
			me.Add("phase_length", "several phases need a positive phase length")
		}
		if len(m.Phases) == 0 {
			me.Add("phases", "want at least one phase")
		}
		for i, ph := range m.Phases {
			pe := me.Index("phases", i)
			if len(ph.Classes) == 0 {
				pe.Add("classes", "want at least one class")
			}
			for k, c := range ph.Classes {
				ce := pe.Index("classes", k)
				if c.MinSlices < 1 || c.MinSlices > 7 {
					ce.Add("min_slices", "want 1 to 7, got %d", c.MinSlices)
				}
				if !(c.Weight > 0) {
					ce.Add("weight", "want a positive weight, got %v", c.Weight)
				}
				if c.MinMemoryGiB < 0 {
					ce.Add("min_memory_gib", "want >= 0, got %d", c.MinMemoryGiB)
				}
			}
		}
	}
}

// maxSyntheticJobs bounds a generated workload (about 2 KB a job in
// memory, with results).
const maxSyntheticJobs = 5_000_000

// checkSpeeds checks a speeds and speed_reference pair: both or neither,
// and a known reference model. The table itself is read when the file
// runs, and its errors name its own file and line.
func checkSpeeds(e *config.Errors, speeds, reference string) {
	switch {
	case speeds != "" && reference == "":
		e.Add("speed_reference", "required with speeds: the GPU model the workload's durations were measured on")
	case speeds == "" && reference != "":
		e.Add("speeds", "required with speed_reference")
	case reference != "":
		if _, ok := hwmodel.LookupModel(reference); !ok {
			e.Add("speed_reference", "unknown model %q (known: %s)", reference, hwmodel.ModelNames())
		}
	}
}
