package workloads

import (
	"io"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

var brigadeColumns = []column{
	{"name", true},
	{"submit_s", true},
	{"duration_s", true},
	{"gpus", true},
	{"tenant", false},
	{"priority", false},
	{"estimate_s", false},
	{"gpu_milli", false},
	{"cpu_milli", false},
	{"memory_mib", false},
	{"gpu_models", false},
	{"deps", false},
	{"dag", false},
	{"retries", false},
	{"failed_attempts", false},
	{"deadline_s", false},
	{"checkpoint_every_s", false},
	{"checkpoint_cost_s", false},
	{"mig_profile", false},
	{"mig_min_slices", false},
	{"mig_min_memory_gb", false},
	{"gpu_demand_milli", false},
	{"class", false},
	{"measured_on", false},
	{"dataset", false},
}

// DefaultTenant is the tenant of a job in a Brigade CSV file without one.
const DefaultTenant = "default"

// ReadBrigade reads Brigade's own CSV trace format, documented in
// docs/trace-format.md: a header naming the columns in any order, then one
// job per line. Required columns: name, submit_s, duration_s, gpus.
// Optional: tenant, priority, estimate_s, gpu_milli, cpu_milli,
// memory_mib, gpu_models, deps, dag, retries, failed_attempts,
// deadline_s, checkpoint_every_s, checkpoint_cost_s, mig_profile,
// mig_min_slices, mig_min_memory_gb (a MIG job), gpu_demand_milli, class
// (the job's class in the speed table), measured_on (the GPU model its
// duration was measured on) and dataset (the dataset it reads). An empty
// cell in an optional column takes its default. Lines starting with '#'
// are comments; an unknown column is an error, and so is a file with no
// job after the header. Submit times are used as written (not shifted).
// file names the input in errors and in Job.Source.
func ReadBrigade(r io.Reader, file string) (*Workload, error) {
	t, err := openTable(r, file, brigadeColumns, true, true)
	if err != nil {
		return nil, err
	}
	var jobRows chunks[Job]
	var deps [][]string // nil until a job has dependencies
	var classes classBook
	datasets := classBook{check: CheckDatasetName}
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		d, err := brigadeRow(t, jobRows.next(), &classes, &datasets)
		if err != nil {
			return nil, err
		}
		if len(d) > 0 && deps == nil {
			deps = make([][]string, jobRows.len()-1)
		}
		if deps != nil {
			deps = append(deps, d)
		}
	}
	jobs := jobRows.slice()
	if len(jobs) == 0 {
		return nil, t.noJobs("")
	}
	w, err := build(jobs, deps, nil, file, true)
	if err != nil {
		return nil, err
	}
	w.Classes, w.Datasets = classes.names, datasets.names
	return w, nil
}

// brigadeRow reads the current row into j and returns the names of its
// dependencies.
func brigadeRow(t *table, j *Job, classes, datasets *classBook) ([]string, error) {
	*j = Job{Name: t.get("name"), Source: t.source(), Tenant: t.get("tenant"), DAG: t.get("dag")}
	if j.Name == "" {
		return nil, t.errorf("name", "want a job name, found an empty cell")
	}
	if strings.ContainsAny(j.Name, ";") {
		return nil, t.errorf("name", "want a name without ';' (it separates names in deps), found %q", j.Name)
	}
	if j.Tenant == "" {
		j.Tenant = DefaultTenant
	}
	submit, err := t.seconds("submit_s", 0)
	if err != nil {
		return nil, err
	}
	j.Submit = hwmodel.FromSeconds(submit)
	if j.Duration, err = t.positiveSeconds("duration_s"); err != nil {
		return nil, err
	}
	if t.get("estimate_s") != "" {
		e, err := t.seconds("estimate_s", 0)
		if err != nil {
			return nil, err
		}
		j.Estimate = hwmodel.FromSeconds(e)
	}
	prio, err := t.optInteger("priority", -1<<31, 1<<31-1, 0)
	if err != nil {
		return nil, err
	}
	j.Priority = int(prio)

	gpus, err := t.integer("gpus", 0, maxGPUs)
	if err != nil {
		return nil, err
	}
	j.Req.GPUs = int(gpus)
	switch {
	case gpus == 0:
		if _, err := t.optInteger("gpu_milli", 0, 0, 0); err != nil {
			return nil, t.errorf("gpu_milli", "want 0 or empty for a job with 0 GPUs, found %q", t.get("gpu_milli"))
		}
	case gpus == 1:
		m, err := t.optInteger("gpu_milli", 1, hwmodel.MilliPerGPU, hwmodel.MilliPerGPU)
		if err != nil {
			return nil, err
		}
		j.Req.GPUMilli = int32(m)
	default:
		if _, err := t.optInteger("gpu_milli", hwmodel.MilliPerGPU, hwmodel.MilliPerGPU, hwmodel.MilliPerGPU); err != nil {
			return nil, t.errorf("gpu_milli", "want 1000 or empty for a job with %d GPUs (only a 1-GPU job may share a GPU), found %q", gpus, t.get("gpu_milli"))
		}
		j.Req.GPUMilli = hwmodel.MilliPerGPU
	}
	if t.get("gpu_demand_milli") != "" {
		if j.Req.GPUs != 1 || j.Req.GPUMilli >= hwmodel.MilliPerGPU {
			return nil, t.errorf("gpu_demand_milli", "only a job sharing one GPU (gpus 1, gpu_milli < 1000) has a compute demand, found %q", t.get("gpu_demand_milli"))
		}
		d, err := t.optInteger("gpu_demand_milli", 1, hwmodel.MilliPerGPU, 0)
		if err != nil {
			return nil, err
		}
		j.DemandMilli = int32(d)
	}
	if j.Req.CPUMilli, err = t.optInteger("cpu_milli", 0, maxResource, 0); err != nil {
		return nil, err
	}
	if j.Req.MemoryMiB, err = t.optInteger("memory_mib", 0, maxResource, 0); err != nil {
		return nil, err
	}
	if s := t.get("gpu_models"); s != "" {
		if j.Req.Models, err = hwmodel.ParseModelSet(s); err != nil {
			return nil, t.errorf("gpu_models", "want GPU model names separated by '|': %v", err)
		}
	}
	if err := brigadeMIG(t, j); err != nil {
		return nil, err
	}
	if j.Class, err = classes.id(strings.TrimSpace(t.get("class"))); err != nil {
		return nil, t.errorf("class", "%v", err)
	}
	if j.Dataset, err = datasets.id(strings.TrimSpace(t.get("dataset"))); err != nil {
		return nil, t.errorf("dataset", "%v", err)
	}
	if s := strings.TrimSpace(t.get("measured_on")); s != "" {
		m, ok := hwmodel.LookupModel(s)
		if !ok {
			return nil, t.errorf("measured_on", "want the GPU model the duration was measured on, found %q (known: %s)", s, hwmodel.ModelNames())
		}
		j.MeasuredOn = uint8(m.ID) + 1
	}
	n, err := t.optInteger("retries", 0, maxCount, 0)
	if err != nil {
		return nil, err
	}
	j.MaxRetries = int(n)
	if n, err = t.optInteger("failed_attempts", 0, maxCount, 0); err != nil {
		return nil, err
	}
	j.FailedAttempts = int(n)
	for _, f := range []struct {
		name string
		to   *hwmodel.Time
	}{{"deadline_s", &j.Deadline}, {"checkpoint_every_s", &j.Checkpoint.Every}, {"checkpoint_cost_s", &j.Checkpoint.Cost}} {
		if t.get(f.name) == "" {
			continue
		}
		v, err := t.seconds(f.name, 0)
		if err != nil {
			return nil, err
		}
		*f.to = hwmodel.FromSeconds(v)
	}

	var deps []string
	list := t.get("deps")
	if list == "" {
		return nil, nil
	}
	for _, d := range strings.Split(list, ";") {
		if d = strings.TrimSpace(d); d != "" {
			deps = append(deps, d)
		}
	}
	return deps, nil
}
