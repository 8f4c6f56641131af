package live

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"sigs.k8s.io/yaml"
)

// JobSpec is one entry of a live job file (docs/live.md).
type JobSpec struct {
	Name     string            `json:"name"`
	Command  string            `json:"command"`
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

type jobFile struct {
	Jobs []JobSpec `json:"jobs"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ParseJobFile reads a job file strictly: unknown fields, duplicate names
// and invalid values are errors naming the file, the entry and the field.
func ParseJobFile(path string) ([]JobSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseJobs(path, b)
}

// ParseJobs is ParseJobFile on bytes already read; path only names errors.
func ParseJobs(path string, b []byte) ([]JobSpec, error) {
	var f jobFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, locate(b, err))
	}
	seen := make(map[string]int)
	for i := range f.Jobs {
		if err := f.Jobs[i].validate(); err != nil {
			return nil, fmt.Errorf("%s: jobs[%d] (%q): %v", path, i, f.Jobs[i].Name, err)
		}
		if k, ok := seen[f.Jobs[i].Name]; ok {
			return nil, fmt.Errorf("%s: jobs[%d]: name: %q is already used by jobs[%d]", path, i, f.Jobs[i].Name, k)
		}
		seen[f.Jobs[i].Name] = i
	}
	if err := checkDeps(f.Jobs); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return f.Jobs, nil
}

// locate names the entry and field of a strict decoding error when it can.
func locate(b []byte, err error) error {
	var loose struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if yaml.Unmarshal(b, &loose) != nil {
		return err
	}
	known := map[string]bool{}
	t := reflect.TypeOf(JobSpec{})
	for i := 0; i < t.NumField(); i++ {
		known[strings.Split(t.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for i, m := range loose.Jobs {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !known[k] {
				return fmt.Errorf("jobs[%d] (%v): %s: unknown field", i, m["name"], k)
			}
		}
	}
	return err
}

func (s *JobSpec) validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("name: required")
	case !nameRE.MatchString(s.Name):
		return fmt.Errorf("name: %q must be letters, digits, '.', '_' or '-' (at most 128, not starting with '.' or '-'), so that its log file stays in the log folder", s.Name)
	case s.Command == "":
		return fmt.Errorf("command: required")
	case s.Shell && len(s.Args) > 0:
		return fmt.Errorf("args: not allowed with shell: true (put them in command)")
	case s.GPUs < 0:
		return fmt.Errorf("gpus: must be >= 0, got %d", s.GPUs)
	case s.GPUMilli < 0 || s.GPUMilli >= hwmodel.MilliPerGPU:
		return fmt.Errorf("gpu_milli: must be in 1..999 (a time-sliced share of one GPU), got %d", s.GPUMilli)
	case s.GPUMilli > 0 && s.GPUs > 0:
		return fmt.Errorf("gpu_milli: give either gpus or gpu_milli, not both")
	case s.MIGProfile != "" && (s.GPUs > 0 || s.GPUMilli > 0):
		return fmt.Errorf("mig_profile: give one of gpus, gpu_milli or mig_profile")
	case s.CPUMilli < 0:
		return fmt.Errorf("cpu_milli: must be >= 0, got %d", s.CPUMilli)
	case s.MemoryMiB < 0:
		return fmt.Errorf("memory_mib: must be >= 0, got %d", s.MemoryMiB)
	case s.Retries < 0 || s.Retries > MaxRetries:
		return fmt.Errorf("retries: must be in 0..%d, got %d", MaxRetries, s.Retries)
	}
	for _, f := range []struct{ name, v string }{{"estimate", s.Estimate}, {"deadline", s.Deadline}} {
		if f.v == "" {
			continue
		}
		d, err := hwmodel.ParseDuration(f.v)
		if err != nil {
			return fmt.Errorf("%s: %v", f.name, err)
		}
		if d <= 0 {
			return fmt.Errorf("%s: must be > 0, got %q", f.name, f.v)
		}
	}
	for k := range s.Env {
		if k == "" || k == "CUDA_VISIBLE_DEVICES" {
			return fmt.Errorf("env: %q may not be set (the driver sets CUDA_VISIBLE_DEVICES)", k)
		}
	}
	return nil
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
