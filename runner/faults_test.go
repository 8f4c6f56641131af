package runner_test

import (
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/runner"
)

// Every policy of a comparison faces the same failures, and the run is
// deterministic; fault metrics reach the summary.
func TestRunWithFaults(t *testing.T) {
	spec := defaultSpec(t, "fcfs", "sjf")
	spec.CheckInvariants = true
	spec.Seed = 3
	spec.Faults = &runner.Faults{
		Model: hwmodel.FailureModel{NodeMTBF: 2 * hwmodel.Day, NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: 2 * hwmodel.Hour}},
		Retry: "fixed", MaxRetries: 3, RestartTime: 2 * hwmodel.Minute,
		CheckpointEvery: 10 * hwmodel.Minute, CheckpointCost: 10 * hwmodel.Second,
	}
	runs, err := runner.Run(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, b := runs[0].Engine.Faults, runs[1].Engine.Faults
	if len(a) == 0 {
		t.Fatal("no faults happened")
	}
	// The same faults up to the shorter run's end.
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i].At != b[i].At || a[i].Node != b[i].Node || a[i].GPU != b[i].GPU {
			t.Fatalf("fault %d: fcfs %+v, sjf %+v", i, a[i], b[i])
		}
	}
	for _, r := range runs {
		s := r.Summary
		if s.Faults.Count != len(r.Engine.Faults) || s.Faults.JobsHit == 0 || s.LostGPUHours <= 0 ||
			s.CheckpointGPUHours <= 0 || !(s.Goodput > 0 && s.Goodput < 1) || s.DownGPUHours <= 0 {
			t.Errorf("%s: fault metrics %+v lost %v ckpt %v goodput %v down %v", s.Policy, s.Faults, s.LostGPUHours, s.CheckpointGPUHours, s.Goodput, s.DownGPUHours)
		}
		if s.Faults.DetectionDelayS.Max > 35 {
			t.Errorf("%s: detection delay max %v s beyond interval + timeout", s.Policy, s.Faults.DetectionDelayS.Max)
		}
	}
	again, err := runner.Run(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		if !reflect.DeepEqual(runs[i].Summary, again[i].Summary) || !reflect.DeepEqual(runs[i].Jobs, again[i].Jobs) {
			t.Errorf("%s: a second run differs", runs[i].Policy)
		}
	}
}

func TestFaultHorizon(t *testing.T) {
	spec := defaultSpec(t)
	var last, longest hwmodel.Time
	for _, j := range spec.Workload.Jobs {
		last, longest = max(last, j.Submit), max(longest, j.Duration)
	}
	if got := runner.FaultHorizon(spec.Workload); got != 10*(last+longest) {
		t.Errorf("horizon %v, want 10 × (%v + %v)", got, last, longest)
	}
}
