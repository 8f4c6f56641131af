package workloads

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// openbColumns are the columns of a timed openb pod list. The first five
// are what every openb pod list has; the rest are required by ReadOpenB
// (checked there, for a clearer message about the five-column lists) and
// ignored by ReadOpenBPods.
var openbColumns = []column{
	{"name", true},
	{"cpu_milli", true},
	{"memory_mib", true},
	{"num_gpu", true},
	{"gpu_milli", true},
	{"gpu_spec", false},
	{"qos", false},
	{"pod_phase", false},
	{"creation_time", false},
	{"deletion_time", false},
	{"scheduled_time", false},
}

// openbTimedColumns are the columns ReadOpenB needs beyond the first five.
var openbTimedColumns = []string{"qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}

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
// lists have no times, so they cannot be replayed in time: they are
// rejected with an error at field "creation_time" of the header that says
// so (brigade fill reads them with ReadOpenBPods).
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
//     time to replay, so they are skipped. A list with no pod left, after
//     the header, is an error.
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
	if !t.has("creation_time") && !t.has("deletion_time") && !t.has("scheduled_time") {
		return nil, &ParseError{File: file, Line: t.hline, Field: "creation_time",
			Msg: fmt.Sprintf("this pod list has no times (header %q), so it cannot be replayed in time; the five-column openb lists (multigpu*) are for `brigade fill`, which needs no times", strings.Join(t.header, ","))}
	}
	for _, c := range openbTimedColumns {
		if !t.has(c) {
			return nil, &ParseError{File: file, Line: t.hline, Field: c,
				Msg: fmt.Sprintf("required column %q is missing from the header %q (required: %s)", c, strings.Join(t.header, ","), columnNames(openbColumns[:5], true)+", "+strings.Join(openbTimedColumns, ", "))}
		}
	}
	var jobRows chunks[Job]
	var createdRows chunks[hwmodel.Time]
	pending := 0
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
			pending++
			continue
		case "failed":
			failed = true
		case "succeeded", "running":
		default:
			return nil, t.errorf("pod_phase", "want one of Succeeded, Running, Failed, Pending, found %q", phase)
		}
		name, req, err := openbRequest(t)
		if err != nil {
			return nil, err
		}

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
		j := jobRows.next()
		*j = Job{
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
		createdRows.add(hwmodel.FromSeconds(createdS))
	}
	jobs, created := jobRows.slice(), createdRows.slice()
	switch {
	case len(jobs) == 0 && pending > 0:
		return nil, t.noJobs(hwmodel.Plural(pending, "pod", "pods") + " in phase Pending, skipped: they never ran")
	case len(jobs) == 0:
		return nil, t.noJobs("")
	}
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
	return build(jobs, nil, nil, file, true)
}

// openbRequest reads the name and the request columns of the current row
// (name, cpu_milli, memory_mib, num_gpu, gpu_milli and the optional
// gpu_spec), with the rules ReadOpenB documents.
func openbRequest(t *table) (string, hwmodel.Request, error) {
	var req hwmodel.Request
	name := t.get("name")
	if name == "" {
		return "", req, t.errorf("name", "want a pod name, found an empty one")
	}
	cpu, err := t.integer("cpu_milli", 0, maxResource)
	if err != nil {
		return "", req, err
	}
	mem, err := t.integer("memory_mib", 0, maxResource)
	if err != nil {
		return "", req, err
	}
	ngpu, err := t.integer("num_gpu", 0, 8)
	if err != nil {
		return "", req, err
	}
	milli, err := t.integer("gpu_milli", 0, hwmodel.MilliPerGPU)
	if err != nil {
		return "", req, err
	}
	req = hwmodel.Request{GPUs: int(ngpu), GPUMilli: int32(milli), CPUMilli: cpu, MemoryMiB: mem}
	switch {
	case ngpu == 0 && milli != 0:
		return "", req, t.errorf("gpu_milli", "want 0 for a pod with num_gpu 0, found %d", milli)
	case ngpu >= 1 && milli == 0:
		req.GPUMilli = hwmodel.MilliPerGPU
	case ngpu >= 2 && milli != hwmodel.MilliPerGPU:
		return "", req, t.errorf("gpu_milli", "want 1000 or 0 (whole GPUs) for a pod with num_gpu %d, found %d; only single-GPU pods may share a GPU", ngpu, milli)
	}
	models, merr := hwmodel.ParseModelSet(t.get("gpu_spec"))
	if merr != nil {
		return "", req, t.errorf("gpu_spec", "want GPU model names separated by '|', or empty or nan for any: %v", merr)
	}
	req.Models = models
	return name, req, nil
}

// OpenBPod is one row of an openb pod list as `brigade fill` uses it: what
// the pod asks for, without times or phase.
type OpenBPod struct {
	Name string
	Req  hwmodel.Request
	// GPUSpec is the gpu_spec cell with empty parts dropped ("" for any
	// model, including "nan"), e.g. "V100M16|V100M32": the model key the
	// FGD simulator groups its typical pods by.
	GPUSpec string
	Line    int // 1-based line in the file
}

// ReadOpenBPods reads every pod of an openb pod list, with or without
// times: the eleven-column lists and the five-column multigpu lists
// (name,cpu_milli,memory_mib,num_gpu,gpu_milli) alike. Requests follow the
// rules of ReadOpenB. Unlike ReadOpenB it keeps pods of every phase,
// Pending included, and ignores qos, pod_phase and the times: the FGD
// experiment (brigade fill) draws from all the pods a list holds. Names
// must be unique. Errors are *ParseError values naming file, line and
// field.
func ReadOpenBPods(r io.Reader, file string) ([]OpenBPod, error) {
	t, err := openTable(r, file, openbColumns, false, false)
	if err != nil {
		return nil, err
	}
	var pods []OpenBPod
	lines := map[string]int{}
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		name, req, err := openbRequest(t)
		if err != nil {
			return nil, err
		}
		if l, dup := lines[name]; dup {
			return nil, t.errorf("name", "pod name %q is already used on line %d; names must be unique", name, l)
		}
		lines[name] = t.line
		var parts []string
		for _, p := range strings.Split(t.get("gpu_spec"), "|") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		spec := strings.Join(parts, "|")
		if req.Models == hwmodel.AnyModel {
			spec = "" // "nan", "any"
		}
		pods = append(pods, OpenBPod{Name: name, Req: req, GPUSpec: spec, Line: t.line})
	}
	if len(pods) == 0 {
		return nil, &ParseError{File: file, Line: t.hline, Msg: "the pod list has a header but no pods"}
	}
	return pods, nil
}

// ReadOpenBPodsFile is ReadOpenBPods on a file; a path ending in ".gz" is
// decompressed on the fly.
func ReadOpenBPodsFile(path string) ([]OpenBPod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f, path)
	if err != nil {
		return nil, err
	}
	return ReadOpenBPods(r, path)
}
