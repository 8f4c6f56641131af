package runner_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// TestRecordsReady: a job's record is ready when it was first queued; a
// job that never was (its parent failed, no node can hold it) is NotReady
// rather than ready at 0.
func TestRecordsReady(t *testing.T) {
	s := hwmodel.Second
	job := func(name string, gpus int) workloads.Job {
		return workloads.Job{Name: name, Tenant: "t", Duration: 10 * s, Estimate: 10 * s,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU}}
	}
	train, eval, big, ok, after := job("train", 1), job("eval", 1), job("big", 16), job("ok", 1), job("after", 1)
	train.FailedAttempts = 1
	w, err := workloads.Build([]workloads.Job{train, eval, big, ok, after}, [][]string{nil, {"train"}, nil, nil, {"ok"}}, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: "test", ClusterName: "one-node",
		NewCluster: func() (*hwmodel.Cluster, error) {
			return hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 8, CPUMilli: 1 << 40, MemoryMiB: 1 << 40}})
		},
		Policies: []policies.Spec{policies.MustParseSpec("fcfs")}, Options: runner.Options{CheckInvariants: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hwmodel.Time{
		"train": 0,
		"eval":  results.NotReady, // train failed
		"big":   results.NotReady, // 16 GPUs on a node of 8
		"ok":    0,
		"after": 10 * s, // when ok succeeded
	}
	for _, j := range runs[0].Jobs {
		if j.Ready != want[j.Name] {
			t.Errorf("%s: Ready %v, want %v", j.Name, j.Ready, want[j.Name])
		}
	}
}
