package workloads

import (
	"io"
	"math"
	"strconv"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
)

// phillyTimeLayout is the layout of the timestamp column, in UTC.
const phillyTimeLayout = "2006-01-02 15:04:05"

var phillyColumns = []column{
	{"timestamp", true},
	{"duration", true},
	{"num_gpus", true},
	{"gpu_time", false},
	{"cluster", true},
}

// ReadPhilly reads the per-job Philly trace as the Pollux artifact prepared
// it (philly.csv): a header, then one job per line with the columns
// timestamp ("2006-01-02 15:04:05", UTC), duration (seconds, > 0),
// num_gpus (an integer >= 1), gpu_time (ignored) and cluster. Other
// columns are ignored; blank lines are skipped; a file with no job after
// the header is an error.
//
// Submit is the timestamp less the file's earliest timestamp, so the run
// starts at 0. The tenant is the cluster ("unknown" when empty). The job on
// line n is named "philly-n". Jobs ask for num_gpus whole GPUs of any model
// and no CPU or memory, have priority 0 and no estimate. file names the
// input in errors and in Job.Source.
func ReadPhilly(r io.Reader, file string) (*Workload, error) {
	w, rest := phillyFast(r, file)
	if w != nil {
		return w, nil
	}
	return readPhilly(rest, file)
}

// readPhilly is ReadPhilly's general reader: every form encoding/csv and
// time.Parse accept, and every error.
func readPhilly(r io.Reader, file string) (*Workload, error) {
	t, err := openTable(r, file, phillyColumns, false, false)
	if err != nil {
		return nil, err
	}
	var jobRows chunks[Job]
	var stampRows chunks[int64] // Unix microseconds per job
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		ts := t.get("timestamp")
		at, perr := time.Parse(phillyTimeLayout, ts)
		if perr != nil {
			return nil, t.errorf("timestamp", "want a UTC time like 2017-10-03 14:05:09, found %q", ts)
		}
		dur, err := t.positiveSeconds("duration")
		if err != nil {
			return nil, err
		}
		gpus, err := t.integer("num_gpus", 1, maxGPUs)
		if err != nil {
			return nil, err
		}
		tenant := t.get("cluster")
		if tenant == "" {
			tenant = "unknown"
		}
		jobRows.add(Job{
			Name:     "philly-" + strconv.Itoa(t.line),
			Tenant:   tenant,
			Duration: dur,
			Req:      hwmodel.Request{GPUs: int(gpus), GPUMilli: hwmodel.MilliPerGPU},
			Source:   t.source(),
		})
		stampRows.add(at.UnixMicro())
	}
	jobs, stamps := jobRows.slice(), stampRows.slice()
	if len(jobs) == 0 {
		return nil, t.noJobs("")
	}
	first := int64(math.MaxInt64)
	for _, s := range stamps {
		first = min(first, s)
	}
	for i, s := range stamps {
		// Parsed years are 0000..9999 (a fractional second is accepted),
		// so the span stays below 3.2e17 microseconds.
		jobs[i].Submit = hwmodel.Time(s - first)
	}
	return build(jobs, nil, nil, file, true)
}
