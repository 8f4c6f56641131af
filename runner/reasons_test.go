package runner_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// The words are written out here rather than taken from results' constants,
// so that a swapped or renamed word fails this test as well as the
// results package's.
func TestFailReasonWords(t *testing.T) {
	for r, want := range map[sim.FailReason]string{
		sim.FailNone:             "",
		sim.FailRetriesExhausted: "retries_exhausted",
		sim.FailDeadline:         "deadline",
		sim.FailDependency:       "dependency_failed",
		sim.FailUnsatisfiable:    "unsatisfiable",
	} {
		if got := runner.FailReason(r); got != want {
			t.Errorf("FailReason(%v) = %q, want %q", r, got, want)
		}
	}
	for e, want := range map[sim.AttemptEnd]string{
		sim.AttemptSucceeded: "succeeded",
		sim.AttemptFailed:    "failed",
		sim.AttemptPreempted: "preempted",
		sim.AttemptHardware:  "hardware_failure",
		sim.AttemptRunning:   "running",
	} {
		if got := runner.AttemptEnd(e); got != want {
			t.Errorf("AttemptEnd(%q) = %q, want %q", e, got, want)
		}
	}
	for name, f := range map[string]func(){
		"FailReason": func() { runner.FailReason(sim.FailReason(200)) },
		"AttemptEnd": func() { runner.AttemptEnd("vanished") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of an unknown value did not panic", name)
				}
			}()
			f()
		}()
	}
}

// A run with a failing DAG parent, its child, a job no node can hold and a
// job that succeeds: the records and jobs.csv carry each job's reason and
// detail, and the attempts no exit code.
func TestRecordsCarryReasons(t *testing.T) {
	job := func(name string, gpus int) workloads.Job {
		return workloads.Job{Name: name, Tenant: "t", Duration: 10 * hwmodel.Second, Estimate: 10 * hwmodel.Second,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU}}
	}
	train, eval, big, ok := job("train", 1), job("eval", 1), job("big", 16), job("ok", 1)
	train.FailedAttempts, train.MaxRetries = 2, 1
	w, err := workloads.Build([]workloads.Job{train, eval, big, ok}, [][]string{nil, {"train"}, nil, nil}, nil, "test")
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
	want := map[string][2]string{
		"train": {"retries_exhausted", "attempt 2 failed, no retries left"},
		"eval":  {"dependency_failed", "dependency train failed"},
		"big":   {"unsatisfiable", "unsatisfiable: "}, // a prefix
		"ok":    {"", ""},
	}
	for _, j := range runs[0].Jobs {
		wr, detail := want[j.Name][0], want[j.Name][1]
		okDetail := j.ReasonDetail == detail || (strings.HasSuffix(detail, ": ") && strings.HasPrefix(j.ReasonDetail, detail) && len(j.ReasonDetail) > len(detail))
		if j.Reason != wr || !okDetail {
			t.Errorf("job %s: reason %q, detail %q; want %q, %q", j.Name, j.Reason, j.ReasonDetail, wr, detail)
		}
		if (j.Reason == "") != (j.State == "succeeded") {
			t.Errorf("job %s is %s with reason %q", j.Name, j.State, j.Reason)
		}
		for k, a := range j.AttemptLog {
			if a.ExitCode != -1 {
				t.Errorf("job %s attempt %d: exit code %d, want -1 (the simulator runs no process)", j.Name, k+1, a.ExitCode)
			}
		}
	}
	dir := t.TempDir()
	if err := runner.Write(dir, runs); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	detail := map[string]string{}
	for _, j := range runs[0].Jobs {
		detail[j.Name] = j.ReasonDetail
	}
	for _, r := range recs[1:] {
		name := r[col["name"]]
		if got := r[col["reason"]]; got != want[name][0] {
			t.Errorf("jobs.csv: job %s reason %q, want %q", name, got, want[name][0])
		}
		if got := r[col["reason_detail"]]; got != detail[name] {
			t.Errorf("jobs.csv: job %s reason_detail %q, want %q", name, got, detail[name])
		}
	}
}
