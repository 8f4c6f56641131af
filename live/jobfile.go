package live

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// JobSpec is one entry of a live job file (docs/live.md).
type JobSpec struct {
	Name     string            `json:"name" config:"required"`
	Command  string            `json:"command" config:"required"`
	Args     []string          `json:"args,omitempty"`
	Shell    bool              `json:"shell,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Workdir  string            `json:"workdir,omitempty"`
	GPUs     int               `json:"gpus,omitempty"`
	GPUMilli int32             `json:"gpu_milli,omitempty"`
	// CPUMilli and MemoryMiB are the job's CPU (thousandths of a core)
	// and memory, booked against the machine's (the trace format's
	// names).
	CPUMilli   int64  `json:"cpu_milli,omitempty"`
	MemoryMiB  int64  `json:"memory_mib,omitempty"`
	MIGProfile string `json:"mig_profile,omitempty"`
	Tenant     string `json:"tenant,omitempty"`
	Priority   int    `json:"priority,omitempty"`
	Estimate   string `json:"estimate,omitempty"`
	Deadline   string `json:"deadline,omitempty"`
	Retries    int    `json:"retries,omitempty"`
	// Deps names the jobs of the file this one waits for: it is queued
	// when all of them succeeded, and fails when one of them fails.
	Deps []string `json:"deps,omitempty"`
}

// MaxRetries bounds a job's retries. The state record keeps every ended
// attempt (Record.Attempts), so the bound is also the bound on its size;
// with the default back-off the 100th retry would come after 2^99 s, so it
// takes nothing a real job needs.
const MaxRetries = 100

// jobFile is a job file's schema: the list of jobs.
type jobFile struct {
	Jobs []JobSpec `json:"jobs"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ParseJobFile reads a job file strictly (package config): unknown
// fields, duplicate keys and names, and invalid values are errors naming
// the file, the line and the field, all of them at once (up to ten).
func ParseJobFile(path string) ([]JobSpec, error) {
	b, err := config.ReadFile(path, "job file", 0)
	if err != nil {
		return nil, err
	}
	return ParseJobs(path, b)
}

// ParseJobs is ParseJobFile on bytes already read; path only names errors.
// A file with nothing in it (or only comments) lists no jobs: the driver
// watches the file, which may be started empty and filled later.
func ParseJobs(path string, b []byte) ([]JobSpec, error) {
	e := config.NewErrors(path)
	var f jobFile
	if root, ok := config.Parse(b, e); ok && !root.IsNull() {
		root.Decode(&f)
	}
	if err := e.Err(); err != nil {
		return nil, err
	}
	return f.Jobs, nil
}

// Check reports every problem of the file: each job's own, names used
// twice, and dependencies on no job of the file, on the job itself or on
// one below it (a job waits only for jobs above it, as the trace format
// has them, so the file is in an order the jobs can start in and holds no
// cycle).
func (f *jobFile) Check(e *config.Errors) {
	index := make(map[string]int, len(f.Jobs))
	for i := range f.Jobs {
		s := &f.Jobs[i]
		s.Check(e.Index("jobs", i))
		if k, ok := index[s.Name]; ok && s.Name != "" {
			e.Add(fmt.Sprintf("jobs[%d].name", i), "%q is already used by jobs[%d]", s.Name, k)
			continue
		}
		index[s.Name] = i
	}
	for i, s := range f.Jobs {
		for d, dep := range s.Deps {
			field := fmt.Sprintf("jobs[%d].deps[%d]", i, d)
			switch k, ok := index[dep]; {
			case !ok:
				e.Add(field, "%q is no job of this file", dep)
			case k == i:
				e.Add(field, "a job cannot wait for itself")
			case k > i:
				e.Add(field, "%q is listed below it; a job waits only for jobs above it in the file", dep)
			}
		}
	}
}

// Check reports what is wrong with one job.
func (s *JobSpec) Check(e *config.Errors) {
	switch {
	case s.Name == "":
		e.Add("name", "required")
	case !nameRE.MatchString(s.Name):
		e.Add("name", "%q must be letters, digits, '.', '_' or '-' (at most 128, not starting with '.' or '-'), so that its log file stays in the log folder", s.Name)
	}
	if s.Command == "" {
		e.Add("command", "required")
	}
	if s.Shell && len(s.Args) > 0 {
		e.Add("args", "not allowed with shell: true (put them in command)")
	}
	if s.GPUs < 0 {
		e.Add("gpus", "must be >= 0, got %d", s.GPUs)
	}
	switch {
	case s.GPUMilli < 0 || s.GPUMilli >= hwmodel.MilliPerGPU:
		e.Add("gpu_milli", "must be in 1..999 (a time-sliced share of one GPU), got %d", s.GPUMilli)
	case s.GPUMilli > 0 && s.GPUs > 0:
		e.Add("gpu_milli", "give either gpus or gpu_milli, not both")
	}
	if s.MIGProfile != "" && (s.GPUs > 0 || s.GPUMilli > 0) {
		e.Add("mig_profile", "give one of gpus, gpu_milli or mig_profile")
	}
	if s.CPUMilli < 0 {
		e.Add("cpu_milli", "must be >= 0, got %d", s.CPUMilli)
	}
	if s.MemoryMiB < 0 {
		e.Add("memory_mib", "must be >= 0, got %d", s.MemoryMiB)
	}
	if s.Retries < 0 || s.Retries > MaxRetries {
		e.Add("retries", "must be in 0..%d, got %d", MaxRetries, s.Retries)
	}
	for _, f := range []struct{ name, v string }{{"estimate", s.Estimate}, {"deadline", s.Deadline}} {
		if f.v == "" {
			continue
		}
		d, err := hwmodel.ParseDuration(f.v)
		switch {
		case err != nil:
			e.Add(f.name, "%v", err)
		case d <= 0:
			e.Add(f.name, "must be > 0, got %q", f.v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if k == "" || k == "CUDA_VISIBLE_DEVICES" {
			e.Add("env."+k, "%q may not be set (the driver sets CUDA_VISIBLE_DEVICES)", k)
		}
	}
}

// request is the hwmodel.Request the spec asks for.
func (s *JobSpec) request() hwmodel.Request {
	r := hwmodel.Request{CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB}
	switch {
	case s.MIGProfile != "":
		r.GPUs, r.MIG = 1, hwmodel.MIGRequest{Profile: s.MIGProfile}
	case s.GPUMilli > 0:
		r.GPUs, r.GPUMilli = 1, s.GPUMilli
	case s.GPUs > 0:
		r.GPUs, r.GPUMilli = s.GPUs, hwmodel.MilliPerGPU
	}
	return r
}

// estimate is the spec's estimate, defaulting to one hour.
func (s *JobSpec) estimate() hwmodel.Time {
	if d, err := hwmodel.ParseDuration(s.Estimate); err == nil && d > 0 {
		return d
	}
	return hwmodel.Hour
}
