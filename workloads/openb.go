package workloads

import (
	"io"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

var openbColumns = []column{
	{"name", true},
	{"cpu_milli", true},
	{"memory_mib", true},
	{"num_gpu", true},
	{"gpu_milli", true},
	{"gpu_spec", false},
	{"qos", true},
	{"pod_phase", true},
	{"creation_time", true},
	{"deletion_time", true},
	{"scheduled_time", true},
}

// OpenBPriority maps an openb QoS class to a job priority: LS (latency
// sensitive) 2, Burstable 1, BE (best effort) and anything else 0.
func OpenBPriority(qos string) int {
	switch strings.ToUpper(qos) {
	case "LS":
		return 2
	case "BURSTABLE":
		return 1
	}
	return 0
}

// ReadOpenB reads an Alibaba GPU cluster trace v2023 ("openb") pod list:
// a header, then one pod per line with the columns name, cpu_milli,
// memory_mib, num_gpu (0..8), gpu_milli (0..1000), gpu_spec (optional),
// qos, pod_phase, creation_time, deletion_time and scheduled_time (times
// in seconds). Other columns are ignored. The five-column multigpu pod
// lists have no times and are rejected with a missing-column error.
//
// Each pod becomes one job named after the pod:
//   - Submit is creation_time less the earliest creation_time of the pods
//     kept, so the run starts at 0.
//   - Duration is deletion_time less the start, where the start is
//     scheduled_time, or creation_time when scheduled_time is empty or 0.
//     A deletion at or before the start is an error. For pods still
//     Running when the trace ended, the duration runs to their recorded
//     deletion time (a lower bound on the real one).
//   - Pods in phase Pending never ran (in the shipped lists they are
//     exactly the pods with an empty scheduled_time) and have no running
//     time to replay, so they are skipped.
//   - Pods in phase Failed get FailedAttempts 1 and MaxRetries 0: they run
//     for their duration and then end Failed, as in the trace.
//   - num_gpu 0 is a CPU-only pod (gpu_milli must be 0). num_gpu 1 with
//     gpu_milli 1..999 shares one GPU; gpu_milli 1000, or 0, with num_gpu
//     >= 1 asks for whole GPUs, and num_gpu >= 2 allows nothing else.
//   - gpu_spec ("V100M16|V100M32") is the set of acceptable GPU models;
//     empty or "nan" means any. Names must be in the hwmodel catalogue.
//   - The tenant is the qos class ("unknown" when empty) and the priority
//     is OpenBPriority(qos).
//
// file names the input in errors and in Job.Source.
func ReadOpenB(r io.Reader, file string) (*Workload, error) {
	t, err := openTable(r, file, openbColumns, false, false)
	if err != nil {
		return nil, err
	}
	var jobs []Job
	var created []hwmodel.Time
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		phase := t.get("pod_phase")
		var failed bool
		switch strings.ToLower(phase) {
		case "pending":
			continue
		case "failed":
			failed = true
		case "succeeded", "running":
		default:
			return nil, t.errorf("pod_phase", "want one of Succeeded, Running, Failed, Pending, found %q", phase)
		}
		name := t.get("name")
		if name == "" {
			return nil, t.errorf("name", "want a pod name, found an empty one")
		}
		cpu, err := t.integer("cpu_milli", 0, maxResource)
		if err != nil {
			return nil, err
		}
		mem, err := t.integer("memory_mib", 0, maxResource)
		if err != nil {
			return nil, err
		}
		ngpu, err := t.integer("num_gpu", 0, 8)
		if err != nil {
			return nil, err
		}
		milli, err := t.integer("gpu_milli", 0, hwmodel.MilliPerGPU)
		if err != nil {
			return nil, err
		}
		req := hwmodel.Request{GPUs: int(ngpu), GPUMilli: int32(milli), CPUMilli: cpu, MemoryMiB: mem}
		switch {
		case ngpu == 0 && milli != 0:
			return nil, t.errorf("gpu_milli", "want 0 for a pod with num_gpu 0, found %d", milli)
		case ngpu >= 1 && milli == 0:
			req.GPUMilli = hwmodel.MilliPerGPU
		case ngpu >= 2 && milli != hwmodel.MilliPerGPU:
			return nil, t.errorf("gpu_milli", "want 1000 or 0 (whole GPUs) for a pod with num_gpu %d, found %d; only single-GPU pods may share a GPU", ngpu, milli)
		}
		spec := t.get("gpu_spec")
		models, merr := hwmodel.ParseModelSet(spec)
		if merr != nil {
			return nil, t.errorf("gpu_spec", "want GPU model names separated by '|', or empty or nan for any: %v", merr)
		}
		req.Models = models

		createdS, err := t.seconds("creation_time", -maxSeconds)
		if err != nil {
			return nil, err
		}
		deleted, err := t.seconds("deletion_time", -maxSeconds)
		if err != nil {
			return nil, err
		}
		start, startField := createdS, "creation_time"
		if t.get("scheduled_time") != "" {
			s, err := t.seconds("scheduled_time", -maxSeconds)
			if err != nil {
				return nil, err
			}
			if s != 0 {
				start, startField = s, "scheduled_time"
			}
		}
		dur := hwmodel.FromSeconds(deleted) - hwmodel.FromSeconds(start)
		if dur <= 0 {
			return nil, t.errorf("deletion_time", "want a deletion time after the %s %s, found %s", startField, t.get(startField), t.get("deletion_time"))
		}
		if dur > maxTime {
			return nil, t.errorf("deletion_time", "want a running time of at most %g s, found %g s", float64(maxSeconds), dur.Seconds())
		}
		qos := t.get("qos")
		tenant := qos
		if tenant == "" {
			tenant = "unknown"
		}
		j := Job{
			Name:     name,
			Tenant:   tenant,
			Priority: OpenBPriority(qos),
			Duration: dur,
			Req:      req,
			Source:   t.source(),
		}
		if failed {
			j.FailedAttempts = 1
		}
		jobs = append(jobs, j)
		created = append(created, hwmodel.FromSeconds(createdS))
	}
	if len(created) > 0 {
		first := created[0]
		for _, c := range created {
			first = min(first, c)
		}
		for i := range jobs {
			jobs[i].Submit = created[i] - first
			if jobs[i].Submit > maxTime {
				return nil, jobError(&jobs[i], file, "creation_time", "want creation times spanning at most 1e12 s")
			}
		}
	}
	return Build(jobs, nil, nil, file)
}
