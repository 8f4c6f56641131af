package sim_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

const s = hwmodel.Second

// frac is a job sharing one GPU: milli of it, compute demand (0: milli).
func frac(name string, submit, d hwmodel.Time, milli, demand int32) workloads.Job {
	return workloads.Job{Name: name, Tenant: "t", Submit: submit, Duration: d, Estimate: d, DemandMilli: demand,
		Req: hwmodel.Request{GPUs: 1, GPUMilli: milli}}
}

func runShared(t *testing.T, sharing bool, startup hwmodel.Time, jobs ...workloads.Job) []sim.Outcome {
	t.Helper()
	c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 1, CPUMilli: 1 << 30, MemoryMiB: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workloads.Build(jobs, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := policies.New("fcfs", policies.Options{})
	e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true, ProcessorSharing: sharing, StartupDelay: startup})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

// Hand-worked processor sharing on one GPU: rate = 1000 / max(1000, S),
// S the summed demand of the jobs on the GPU past their start-up.
func TestProcessorSharingHandWorked(t *testing.T) {
	for _, c := range []struct {
		name    string
		on      bool
		startup hwmodel.Time
		jobs    []workloads.Job
		ends    []hwmodel.Time
	}{
		// Two compute-bound jobs (demand 1000 each) on 500 milli each:
		// S = 2000, each at half speed: 100 s of work ends at 200 s (1.96x
		// was measured on an H200 under time-slicing).
		{"two compute-bound", true, 0, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 0, 100*s, 500, 1000)}, []hwmodel.Time{200 * s, 200 * s}},
		// Off (the default): the trace's durations are used as they are.
		{"off", false, 0, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 0, 100*s, 500, 1000)}, []hwmodel.Time{100 * s, 100 * s}},
		// Two light jobs (demand = their 500 milli): S = 1000, full speed.
		{"two light", true, 0, []workloads.Job{frac("a", 0, 100*s, 500, 0), frac("b", 0, 100*s, 500, 0)}, []hwmodel.Time{100 * s, 100 * s}},
		// Four compute-bound jobs on 250 milli each: S = 4000, quarter
		// speed: 10 s of work ends at 40 s (measured: 3.8x).
		{"four compute-bound", true, 0, []workloads.Job{frac("a", 0, 10*s, 250, 1000), frac("b", 0, 10*s, 250, 1000), frac("c", 0, 10*s, 250, 1000), frac("d", 0, 10*s, 250, 1000)},
			[]hwmodel.Time{40 * s, 40 * s, 40 * s, 40 * s}},
		// Unequal: b (50 s) ends at 100 s at half speed; a has 50 s of
		// work left, alone at full speed: ends at 150 s.
		{"unequal", true, 0, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 0, 50*s, 500, 1000)}, []hwmodel.Time{150 * s, 100 * s}},
		// b arrives at 50 s: a alone did 50 s, then both at half speed: a
		// ends at 150 s; b did 50 s by then, the rest alone: 200 s.
		{"arrival", true, 0, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 50*s, 100*s, 500, 1000)}, []hwmodel.Time{150 * s, 200 * s}},
		// Demands 700 + 600 = 1300: each at 1/1.3: 13 s.
		{"partial overlap", true, 0, []workloads.Job{frac("a", 0, 10*s, 500, 700), frac("b", 0, 10*s, 500, 600)}, []hwmodel.Time{13 * s, 13 * s}},
		// A 4 s start-up uses no GPU compute and runs at full speed:
		// 4 s + 200 s.
		{"start-up", true, 4 * s, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 0, 100*s, 500, 1000)}, []hwmodel.Time{204 * s, 204 * s}},
		// a starts up 0-4 s, then works alone 4-8 s while b (arriving at
		// 4 s) starts up; then both share: a's 96 s left take 192 s (ends
		// 200 s); b has done 96 s by then, 4 s left alone: 204 s.
		{"start-up staggered", true, 4 * s, []workloads.Job{frac("a", 0, 100*s, 500, 1000), frac("b", 4*s, 100*s, 500, 1000)}, []hwmodel.Time{200 * s, 204 * s}},
	} {
		out := runShared(t, c.on, c.startup, c.jobs...)
		for i, o := range out {
			if o.State != sim.Succeeded || o.End != c.ends[i] || o.Run != o.End-o.Start {
				t.Errorf("%s: job %s ends %v (state %s, run %v), want %v", c.name, c.jobs[i].Name, o.End, o.State, o.Run, c.ends[i])
			}
		}
	}
}

// With processor sharing on, random workloads (30% fractional jobs, random
// demands, trace failures and retries, DAGs) under every policy keep every
// engine invariant after every event, finish every job, are deterministic,
// and a succeeded job's successful attempt takes at least its duration
// (exactly, for a whole-GPU job).
func TestProcessorSharingProperty(t *testing.T) {
	spec, _ := hwmodel.Preset("mixed-small")
	slowed := 0
	for seed := uint64(1); seed <= 6; seed++ {
		w := smallWorkload(t, seed, 200)
		r := rand.New(rand.NewPCG(seed, 7))
		for i := range w.Jobs {
			if j := &w.Jobs[i]; j.Req.GPUs == 1 && j.Req.GPUMilli < hwmodel.MilliPerGPU && r.IntN(2) == 0 {
				j.DemandMilli = int32(1 + r.IntN(1000))
			}
		}
		for _, name := range policies.StandaloneNames() {
			run := func() *sim.Result {
				c, err := spec.Build()
				if err != nil {
					t.Fatal(err)
				}
				p, err := policies.New(name, policies.Options{Backfill: seed%2 == 0})
				if err != nil {
					t.Fatal(err)
				}
				prep, err := runner.Prepare(c, w, p, runner.Options{CheckInvariants: true, ProcessorSharing: true, StartupDelay: hwmodel.Time(seed%3) * s})
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
				if !o.State.Terminal() {
					t.Fatalf("seed %d %s: job %s ended %s", seed, name, j.Name, o.State)
				}
				if o.State != sim.Succeeded || o.Attempts == 0 {
					continue
				}
				a := o.Log()[len(o.Log())-1]
				d := a.End - a.Start - hwmodel.Time(seed%3)*s
				if d > j.Duration {
					slowed++
				}
				if d < j.Duration || j.Req.GPUMilli == hwmodel.MilliPerGPU && !j.Req.WantsMIG() && d != j.Duration {
					t.Fatalf("seed %d %s: job %s (%d milli) succeeded after %v of work time, duration %v", seed, name, j.Name, j.Req.GPUMilli, d, j.Duration)
				}
			}
			if again := run(); !reflect.DeepEqual(res.Jobs, again.Jobs) {
				t.Fatalf("seed %d %s: two runs differ", seed, name)
			}
		}
	}
	if slowed == 0 {
		t.Error("no job was ever slowed down: the workloads never shared a GPU beyond its compute")
	}
	t.Logf("%d successful attempts slowed by sharing", slowed)
}

// Processor sharing under random node and GPU faults, retries and
// checkpoints: invariants after every event, every job ends, runs are
// deterministic, no job's lost or checkpoint time is negative, and a
// successful job ran at least its duration (sharing only slows work down;
// checkpoints only add).
func TestProcessorSharingWithFaults(t *testing.T) {
	spec, _ := hwmodel.Preset("mixed-small")
	hit := 0
	for seed := uint64(1); seed <= 8; seed++ {
		w := smallWorkload(t, seed, 200)
		for _, name := range []string{"fcfs", "sjf", "fair"} {
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
				prep, err := runner.Prepare(c, w, p, runner.Options{CheckInvariants: true, ProcessorSharing: true,
					Faults: &fs.opt, FaultSchedule: fs.faults, StartupDelay: hwmodel.Time(seed%3) * s})
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
				if !o.State.Terminal() {
					t.Fatalf("seed %d %s: job %s ended %s", seed, name, j.Name, o.State)
				}
				hit += o.HardwareFailures
				if o.LostTime < 0 || o.CheckpointTime < 0 {
					t.Fatalf("seed %d %s: job %s lost %v, checkpointed %v", seed, name, j.Name, o.LostTime, o.CheckpointTime)
				}
				if o.State == sim.Succeeded && o.Run-o.LostTime < j.Duration {
					t.Fatalf("seed %d %s: job %s succeeded after %v of kept run time, shorter than its duration %v", seed, name, j.Name, o.Run-o.LostTime, j.Duration)
				}
			}
			if again := run(); !reflect.DeepEqual(res.Jobs, again.Jobs) {
				t.Fatalf("seed %d %s: two runs differ", seed, name)
			}
		}
	}
	if hit == 0 {
		t.Error("no attempt was ever lost to a fault")
	}
	t.Logf("%d attempts lost to faults", hit)
}

// Hand-worked: two compute-bound half-GPU jobs of 100 s share GPU 0 (200 s
// each); GPU 0 fails at 50 s. Neither makes progress after the fault; at
// detection both fail, retry (one retry each) on GPU 1 and, sharing it
// again, end 200 s after the detection.
func TestProcessorSharingGPUFault(t *testing.T) {
	c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 2, CPUMilli: 1 << 30, MemoryMiB: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := frac("a", 0, 100*s, 500, 1000), frac("b", 0, 100*s, 500, 1000)
	a.MaxRetries, b.MaxRetries = 1, 1
	w, err := workloads.Build([]workloads.Job{a, b}, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := policies.New("fcfs", policies.Options{})
	e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true, ProcessorSharing: true,
		Faults:    []hwmodel.Fault{{At: 50 * s, Node: 0, GPU: 0, Repair: hwmodel.Hour}},
		Heartbeat: sim.Heartbeat{Interval: 5 * s, Timeout: 15 * s}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	det := res.Faults[0].Detected
	if det < 50*s || det > 70*s {
		t.Fatalf("detected at %v", det)
	}
	for i, o := range res.Jobs {
		if o.State != sim.Succeeded || o.Attempts != 2 || o.HardwareFailures != 1 {
			t.Fatalf("job %d: %s after %d attempts, %d hardware failures", i, o.State, o.Attempts, o.HardwareFailures)
		}
		first, second := o.Log()[0], o.Log()[1]
		if first.End != det || first.Ended != sim.AttemptHardware || second.Start != det || second.End != det+200*s {
			t.Errorf("job %d attempts %+v, %+v: want the first to end at the detection %v and the second to take 200 s on GPU 1", i, first, second, det)
		}
		if second.Placement[0].GPUs != 1<<1 {
			t.Errorf("job %d retried on GPUs %b, want GPU 1", i, second.Placement[0].GPUs)
		}
	}
}

// Hand-worked checkpoints under sharing: two compute-bound half-GPU jobs
// of 100 s with a checkpoint every 20 s of progress (free) share GPU 0, so
// they progress at half speed and complete checkpoints at 40 s and 80 s of
// wall time. GPU 0 fails at 90 s (45 s of progress): each keeps 40 s, loses
// the wall time since 80 s, and at detection reruns the remaining 60 s on
// GPU 1, sharing it again: 120 s.
func TestProcessorSharingCheckpoints(t *testing.T) {
	c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 2, CPUMilli: 1 << 30, MemoryMiB: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := frac("a", 0, 100*s, 500, 1000), frac("b", 0, 100*s, 500, 1000)
	a.MaxRetries, b.MaxRetries = 1, 1
	a.Checkpoint = workloads.Checkpoint{Every: 20 * s}
	b.Checkpoint = a.Checkpoint
	w, err := workloads.Build([]workloads.Job{a, b}, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := policies.New("fcfs", policies.Options{})
	e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true, ProcessorSharing: true,
		Faults:    []hwmodel.Fault{{At: 90 * s, Node: 0, GPU: 0, Repair: hwmodel.Hour}},
		Heartbeat: sim.Heartbeat{Interval: 7 * s, Timeout: 15 * s}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	det := res.Faults[0].Detected
	if det <= 90*s || det > 100*s {
		t.Fatalf("detected at %v", det)
	}
	for i, o := range res.Jobs {
		if o.State != sim.Succeeded || o.Attempts != 2 {
			t.Fatalf("job %d: %s after %d attempts", i, o.State, o.Attempts)
		}
		if second := o.Log()[1]; second.Start != det || second.End != det+120*s {
			t.Errorf("job %d: second attempt %v..%v, want %v..%v", i, second.Start, second.End, det, det+120*s)
		}
		if o.LostTime != det-80*s {
			t.Errorf("job %d: lost %v, want %v (from the second checkpoint at 80 s to the detection)", i, o.LostTime, det-80*s)
		}
	}
}
