package workloads

import (
	"fmt"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Job is one schedulable unit read from a trace or generated: a plain job,
// or one task of a DAG job (tasks share a DAG name and name their
// dependencies).
type Job struct {
	Name     string // unique within the workload
	DAG      string // the DAG job this task belongs to; empty for a plain job
	Tenant   string
	Priority int
	Submit   hwmodel.Time
	// Duration is the true running time of one attempt, > 0; 0 for a job
	// that trains an App, whose time the application model gives.
	Duration hwmodel.Time
	// App is the application the job trains under an application model
	// (hwmodel.AppModel, sim.Config.Apps), with global batch size
	// BatchSize on Req.GPUs GPUs; "" for other jobs.
	App       string
	BatchSize int
	// DemandMilli is the job's GPU compute demand in milli-GPU under
	// processor sharing (sim.Config.ProcessorSharing); 0 means its
	// Req.GPUMilli.
	DemandMilli int32
	// Class names the job's kind of work for the speed table: 0 means
	// none (the table's generic speeds), k means Workload.Classes[k-1].
	Class uint16
	// MeasuredOn is the GPU model the job's Duration and Estimate were
	// measured on, plus one; 0 means the run's reference model.
	MeasuredOn uint8
	// Dataset is the dataset the job reads: 0 means none, k means
	// Workload.Datasets[k-1] (a dataset the cluster declares).
	Dataset  uint16
	Estimate hwmodel.Time // user's runtime estimate; 0 when the trace has none
	Req      hwmodel.Request
	Deps     []int // indices into Workload.Jobs of the jobs this one waits for
	// FailedAttempts is how many attempts end in failure (each after running
	// for Duration) before one succeeds; MaxRetries is how many retries the
	// job is allowed after a failure. A job with FailedAttempts > MaxRetries
	// ends Failed, and so do the tasks that depend on it.
	FailedAttempts int
	MaxRetries     int
	// Deadline is how long after Submit the job must finish; 0 means none.
	// The engine's deadline-aware retry policy reads it.
	Deadline hwmodel.Time
	// Checkpoint is how the job saves its progress; zero means it does not
	// (the run's default, if any, applies).
	Checkpoint Checkpoint
	// Source is where the job was read from, for error messages
	// ("file.csv:12"); empty for generated jobs.
	Source string
}

// Checkpoint describes progress-based checkpointing: after every Every of
// progress (not wall time) the job spends Cost of wall time saving it; no
// checkpoint is taken at the very end. Every == 0 means no checkpoints.
type Checkpoint struct {
	Every, Cost hwmodel.Time
}

// Tenant is a group of jobs with a fair-share weight.
type Tenant struct {
	Name   string
	Weight float64
}

// Workload is a validated set of jobs in submission order: Jobs is sorted by
// Submit, ties kept in input order, and a job's index is its ID in a run.
// Every tenant named by a job appears in Tenants exactly once, in order of
// first appearance; every dependency points to another job in Jobs and the
// dependency graph has no cycle.
type Workload struct {
	Jobs    []Job
	Tenants []Tenant
	// Classes names the job classes: Job.Class k is Classes[k-1].
	Classes []string
	// Datasets names the datasets jobs read: Job.Dataset k is
	// Datasets[k-1].
	Datasets []string
	// Skipped counts the records a reader read and left out of Jobs, by
	// kind, for the caller to report (SkipText). ReadSWF fills it; nil
	// when every record was kept, and from the other readers.
	Skipped []Skip
}

// Skip is how many of a trace's records of one kind a reader left out of
// the workload, and why.
type Skip struct {
	Count int
	Line  int    // the first such record's line
	Why   string // what the records are and why they cannot be replayed
}

// DatasetName is job j's dataset, or "" when it reads none.
func (w *Workload) DatasetName(j *Job) string {
	if j.Dataset == 0 {
		return ""
	}
	return w.Datasets[j.Dataset-1]
}

// ClassName is job j's class name, or "" when it has none.
func (w *Workload) ClassName(j *Job) string {
	if j.Class == 0 {
		return ""
	}
	return w.Classes[j.Class-1]
}

// MaxClasses is how many distinct job classes one workload may name.
const MaxClasses = 1<<16 - 1

// classBook interns class (or dataset) names while a workload is read;
// check, when set, says what is wrong with a new name (default: a class
// name's rule).
type classBook struct {
	names []string
	index map[string]uint16
	check func(string) error
}

// id is name's class number (1-based), added if new; 0 for "".
func (b *classBook) id(name string) (uint16, error) {
	if name == "" {
		return 0, nil
	}
	if k, ok := b.index[name]; ok {
		return k, nil
	}
	check := b.check
	if check == nil {
		check = hwmodel.CheckClassName
	}
	if err := check(name); err != nil {
		return 0, err
	}
	if len(b.names) >= MaxClasses {
		return 0, fmt.Errorf("a workload may name at most %d job classes; this is one more", MaxClasses)
	}
	if b.index == nil {
		b.index = make(map[string]uint16)
	}
	b.names = append(b.names, name)
	k := uint16(len(b.names))
	b.index[name] = k
	return k, nil
}

// ParseError locates a bad value in an input file.
type ParseError struct {
	File  string
	Line  int // 1-based; 0 when the problem is not on one line
	Field string
	Msg   string // what was expected, and what was found
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}
