package runner_test

import (
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// Records copies each job's CPU and memory request from the workload and
// names its dependencies (Job.Deps are indices into the workload; the
// records name them, in the workload's order), for the cpu_milli,
// memory_mib and deps columns.
func TestRecordsCarryRequestAndDeps(t *testing.T) {
	job := func(name string, gpus int, cpu, mem int64) workloads.Job {
		milli := int32(hwmodel.MilliPerGPU)
		if gpus == 0 {
			milli = 0
		}
		return workloads.Job{Name: name, Tenant: "t", Duration: 10 * hwmodel.Second,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: milli, CPUMilli: cpu, MemoryMiB: mem}}
	}
	jobs := []workloads.Job{job("etl", 0, 4000, 1024), job("fit", 1, 0, 0), job("report", 1, 500, 0), job("lone", 2, 0, 2048)}
	w, err := workloads.Build(jobs, [][]string{nil, {"etl"}, {"fit", "etl"}, nil}, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: "test", ClusterName: "one-node",
		NewCluster: func() (*hwmodel.Cluster, error) {
			return hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 8, CPUMilli: 64000, MemoryMiB: 1 << 20}})
		},
		Policies: []policies.Spec{policies.MustParseSpec("fcfs")}, Options: runner.Options{CheckInvariants: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		cpu, mem int64
		deps     []string
	}{
		"etl": {4000, 1024, nil}, "fit": {0, 0, []string{"etl"}}, "report": {500, 0, []string{"fit", "etl"}}, "lone": {0, 2048, nil},
	}
	for _, j := range runs[0].Jobs {
		wj := want[j.Name]
		if j.CPUMilli != wj.cpu || j.MemoryMiB != wj.mem || !slices.Equal(j.Deps, wj.deps) {
			t.Errorf("job %s: cpu %d mem %d deps %q; want %d %d %q", j.Name, j.CPUMilli, j.MemoryMiB, j.Deps, wj.cpu, wj.mem, wj.deps)
		}
		if j.State != "succeeded" {
			t.Errorf("job %s %s", j.Name, j.State)
		}
	}
}
