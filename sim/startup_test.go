package sim_test

import (
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// One GPU, fcfs, a 4 s start-up delay: a (10 s) runs 0-14 s, b (5 s),
// submitted at 1 s, waits for a and runs 14-23 s. Start-up is run time,
// not lost time, for an attempt that succeeds.
func TestStartupDelayHandWorked(t *testing.T) {
	c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 1, CPUMilli: 1 << 30, MemoryMiB: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string, submit, d hwmodel.Time) workloads.Job {
		return workloads.Job{Name: name, Tenant: "t", Submit: submit, Duration: d, Estimate: d,
			Req: hwmodel.Request{GPUs: 1, GPUMilli: hwmodel.MilliPerGPU}}
	}
	w, err := workloads.Build([]workloads.Job{job("a", 0, 10*hwmodel.Second), job("b", hwmodel.Second, 5*hwmodel.Second)}, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := policies.New("fcfs", policies.Options{})
	e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true, StartupDelay: 4 * hwmodel.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]hwmodel.Time{{0, 14, 14}, {14, 23, 9}}
	for i, o := range res.Jobs {
		if o.State != sim.Succeeded || o.Start != want[i][0]*hwmodel.Second || o.End != want[i][1]*hwmodel.Second ||
			o.Run != want[i][2]*hwmodel.Second || o.LostTime != 0 {
			t.Errorf("job %d: %+v, want start, end, run %v s and no lost time", i, o, want[i])
		}
	}
	if _, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, StartupDelay: -1}); err == nil {
		t.Error("a negative start-up delay was accepted")
	}
}

// With random faults, retries, checkpoints and a start-up delay, every
// engine invariant holds after every event, runs are deterministic, and
// the time accounting is exact: a succeeded job ran its duration plus one
// start-up delay (its successful attempt's) plus its lost and checkpoint
// time; interrupted attempts' start-ups are lost time.
func TestStartupDelayProperty(t *testing.T) {
	const delay = 4 * hwmodel.Second
	for seed := uint64(1); seed <= 12; seed++ {
		for _, name := range []string{"fcfs", "sjf", "fair", "priority"} {
			w := faultyWorkload(t, seed, 150)
			spec, _ := hwmodel.Preset("mixed-small")
			run := func() *sim.Result {
				c, err := spec.Build()
				if err != nil {
					t.Fatal(err)
				}
				fs := randomFaults(c, w, seed)
				p, err := policies.New(name, policies.Options{Backfill: seed%2 == 0})
				if err != nil {
					t.Fatal(err)
				}
				prep, err := runner.Prepare(c, w, p, runner.Options{CheckInvariants: true,
					Faults: &fs.opt, FaultSchedule: fs.faults, StartupDelay: delay})
				if err != nil {
					t.Fatal(err)
				}
				res, err := prep.Engine.Run()
				if err != nil {
					t.Fatalf("seed %d %s: %v", seed, name, err)
				}
				return res
			}
			res := run()
			for i, o := range res.Jobs {
				j := &w.Jobs[i]
				kept := o.Run - o.LostTime - o.CheckpointTime
				switch {
				case !o.State.Terminal():
					t.Fatalf("seed %d %s: job %s ended %s", seed, name, j.Name, o.State)
				case o.State == sim.Succeeded && kept != j.Duration+delay:
					t.Fatalf("seed %d %s: job %s succeeded: ran %v = %v lost + %v checkpointing + %v, want duration %v + start-up %v",
						seed, name, j.Name, o.Run, o.LostTime, o.CheckpointTime, kept, j.Duration, delay)
				case o.State == sim.Failed && (kept < 0 || kept >= j.Duration+delay):
					t.Fatalf("seed %d %s: job %s failed: kept %v of %v", seed, name, j.Name, kept, j.Duration)
				case o.Attempts > 0 && o.State == sim.Succeeded && o.Log()[len(o.Log())-1].End-o.Log()[len(o.Log())-1].Start < delay:
					t.Fatalf("seed %d %s: job %s's successful attempt is shorter than the start-up delay", seed, name, j.Name)
				}
			}
			if again := run(); !reflect.DeepEqual(res.Jobs, again.Jobs) {
				t.Fatalf("seed %d %s: two runs differ", seed, name)
			}
		}
	}
}
