package workloads

import (
	"io"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

var polluxColumns = []column{
	{"name", true},
	{"time", true},
	{"application", true},
	{"num_replicas", true},
	{"batch_size", true},
}

// ReadPollux reads a workload of the Pollux (OSDI'21) artifact
// (simulator/workloads*/workload-N.csv): a header, then one job per line
// with the columns name, time (submission, seconds >= 0), application
// (the application it trains, a folder of the application model),
// num_replicas (GPUs, an integer >= 1) and batch_size (its global batch
// size, an integer >= 1). Other columns are errors; a file with no job
// after the header is an error.
//
// The jobs have no duration (Duration 0): how long they train is the
// application model's to say (sim.Config.Apps), so a run of them needs
// one. Submit times are used as written. The tenant is DefaultTenant;
// jobs ask for whole GPUs of any model, have priority 0 and no estimate.
// file names the input in errors and in Job.Source.
func ReadPollux(r io.Reader, file string) (*Workload, error) {
	t, err := openTable(r, file, polluxColumns, true, false)
	if err != nil {
		return nil, err
	}
	var jobRows chunks[Job]
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		j := Job{Name: t.get("name"), Tenant: DefaultTenant, Source: t.source()}
		if j.Name == "" {
			return nil, t.errorf("name", "want a job name, found an empty one")
		}
		submit, err := t.seconds("time", 0)
		if err != nil {
			return nil, err
		}
		j.Submit = hwmodel.FromSeconds(submit)
		j.App = t.get("application")
		if j.App == "" || strings.ContainsAny(j.App, "/\\") || strings.HasPrefix(j.App, ".") {
			return nil, t.errorf("application", "want an application name (a folder of the application model), found %q", j.App)
		}
		gpus, err := t.integer("num_replicas", 1, maxGPUs)
		if err != nil {
			return nil, err
		}
		j.Req = hwmodel.Request{GPUs: int(gpus), GPUMilli: hwmodel.MilliPerGPU}
		b, err := t.integer("batch_size", 1, maxCount)
		if err != nil {
			return nil, err
		}
		j.BatchSize = int(b)
		*jobRows.next() = j
	}
	jobs := jobRows.slice()
	if len(jobs) == 0 {
		return nil, t.noJobs("")
	}
	return build(jobs, nil, nil, file, true)
}
