package sim

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

const sec = hwmodel.Second

func nodesCluster(t *testing.T, nodes, gpus int) *hwmodel.Cluster {
	t.Helper()
	var ns []hwmodel.Node
	for n := 0; n < nodes; n++ {
		ns = append(ns, hwmodel.Node{Name: fmt.Sprintf("n%d", n), Model: 0, GPUs: gpus, CPUMilli: 1 << 40, MemoryMiB: 1 << 40})
	}
	c, err := hwmodel.NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type obs struct {
	at hwmodel.Time
	o  Observation
}

func runFaults(t *testing.T, cfg Config) (*Result, []obs) {
	t.Helper()
	var seen []obs
	cfg.CheckInvariants = true
	if cfg.Policy == nil {
		cfg.Policy = &headFirst{}
	}
	cfg.Observe = func(now hwmodel.Time, o Observation) { seen = append(seen, obs{now, o}) }
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res, seen
}

func oneJob(name string, submit, dur hwmodel.Time, gpus int) workloads.Job {
	return workloads.Job{Name: name, Tenant: "t", Submit: submit, Duration: dur, Estimate: dur,
		Req: hwmodel.Request{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU}}
}

func jobsWorkload(t *testing.T, jobs ...workloads.Job) *workloads.Workload {
	t.Helper()
	w, err := workloads.Build(jobs, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A 20-day job on 8 GPUs checkpoints every 5 minutes at 10 s each; its
// node fails 12 days in. Worked by hand:
//   - cycles of 300 s work + 10 s checkpoint = 310 s; 12 d = 1,036,800 s =
//     3344·310 + 160, so 3344 checkpoints are complete (1,003,200 s of work
//     saved) and 160 s of work since the last one is lost;
//   - node 0's heartbeats are at multiples of 5 s (phase 0); its last one
//     before the fault is at 1,036,795 s, so it is declared dead 30 s later,
//     at 1,036,825 s: 25 s after the fault;
//   - the job restarts at once on node 1, spends the 60 s restart time,
//     then 724,800 s of remaining work and its 5759−3344 = 2415 remaining
//     checkpoints (24,150 s): it ends at 1,785,835 s.
//
// Lost: 160 s of work + 25 s of detection + 60 s of restart = 245 s, at
// most 5 min + detection + restart; the run is exactly that much longer
// than a fault-free one (1,728,000 + 5759·10 = 1,785,590 s).
func TestCheckpointLosesAtMostOneIntervalPlusDetectionAndRestart(t *testing.T) {
	j := oneJob("train", 0, 20*hwmodel.Day, 8)
	j.Checkpoint = workloads.Checkpoint{Every: 5 * hwmodel.Minute, Cost: 10 * sec}
	res, _ := runFaults(t, Config{
		Cluster: nodesCluster(t, 2, 8), Workload: jobsWorkload(t, j),
		Faults:      []hwmodel.Fault{{At: 12 * hwmodel.Day, Node: 0, GPU: -1, Repair: 2 * hwmodel.Hour}},
		Heartbeat:   Heartbeat{Interval: 5 * sec, Timeout: 30 * sec},
		Retry:       RetryPolicy{Kind: RetryFixed, Max: 3},
		RestartTime: 60 * sec,
	})
	o := res.Jobs[0]
	if o.State != Succeeded || o.Attempts != 2 || o.HardwareFailures != 1 {
		t.Fatalf("outcome %+v", o)
	}
	if want := (160 + 25 + 60) * sec; o.LostTime != want {
		t.Errorf("lost %v, want %v", o.LostTime, want)
	}
	if o.LostTime > 5*hwmodel.Minute+25*sec+60*sec {
		t.Errorf("lost %v: more than one checkpoint interval plus detection and restart", o.LostTime)
	}
	if want := 1_785_835 * sec; o.End != want || o.Run != want {
		t.Errorf("end %v run %v, want %v", o.End, o.Run, want)
	}
	if o.End-(20*hwmodel.Day+5759*10*sec) != o.LostTime {
		t.Errorf("end %v is not a fault-free run plus the lost time %v", o.End, o.LostTime)
	}
	if want := 5759 * 10 * sec; o.CheckpointTime != want {
		t.Errorf("checkpoint time %v, want %v", o.CheckpointTime, want)
	}
	want := FaultRecord{At: 12 * hwmodel.Day, Detected: 1_036_825 * sec, Repaired: 12*hwmodel.Day + 2*hwmodel.Hour, Node: 0, GPU: -1, JobsHit: 1}
	if len(res.Faults) != 1 || res.Faults[0] != want {
		t.Errorf("faults %+v, want %+v", res.Faults, want)
	}
}

// Without checkpoints the same fault loses all 12 days plus detection and
// restart.
func TestNoCheckpointLosesEverything(t *testing.T) {
	j := oneJob("train", 0, 20*hwmodel.Day, 8)
	res, _ := runFaults(t, Config{
		Cluster: nodesCluster(t, 2, 8), Workload: jobsWorkload(t, j),
		Faults:      []hwmodel.Fault{{At: 12 * hwmodel.Day, Node: 0, GPU: -1, Repair: 2 * hwmodel.Hour}},
		Retry:       RetryPolicy{Kind: RetryFixed, Max: 3},
		RestartTime: 60 * sec,
	})
	o := res.Jobs[0]
	if want := 12*hwmodel.Day + 25*sec + 60*sec; o.LostTime != want || o.End != 20*hwmodel.Day+want {
		t.Errorf("lost %v end %v, want %v and %v", o.LostTime, o.End, want, 20*hwmodel.Day+want)
	}
}

func TestDeadlineAttempts(t *testing.T) {
	for _, c := range []struct {
		remaining, avg hwmodel.Time
		max, want      int
	}{
		{60 * hwmodel.Minute, 30 * hwmodel.Minute, 5, 2}, // an hour left, 30 min per run: two more attempts
		{60 * hwmodel.Minute, 30 * hwmodel.Minute, 1, 1},
		{89 * hwmodel.Minute, 30 * hwmodel.Minute, 5, 2},
		{10 * hwmodel.Minute, 30 * hwmodel.Minute, 5, 1},
		{-hwmodel.Minute, 30 * hwmodel.Minute, 5, 1},
		{300 * hwmodel.Minute, 30 * hwmodel.Minute, 4, 4},
	} {
		if got := hwmodel.DeadlineAttempts(c.remaining, c.avg, c.max); got != c.want {
			t.Errorf("DeadlineAttempts(%v, %v, %d) = %d, want %d", c.remaining, c.avg, c.max, got, c.want)
		}
	}
}

// A 30-minute job (estimate 30 min) whose attempts all fail, with a 90-min
// deadline: its first attempt fails at 30 min, when 60 min remain, so it
// gets 2 more attempts (30–60, 60–90) and then no more: 3 in all. With a
// 50-min deadline only 20 min remain at the first failure: no attempt can
// finish in time, so it fails there for "deadline".
func TestDeadlineAwareRetry(t *testing.T) {
	for _, c := range []struct {
		deadline hwmodel.Time
		attempts int
		end      hwmodel.Time
		reason   string
	}{
		{90 * hwmodel.Minute, 3, 90 * hwmodel.Minute, "attempt 3 failed, no retries left"},
		{50 * hwmodel.Minute, 1, 30 * hwmodel.Minute, ReasonDeadline},
	} {
		j := oneJob("j", 0, 30*hwmodel.Minute, 1)
		j.FailedAttempts = 10
		j.Deadline = c.deadline
		res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j),
			Retry: RetryPolicy{Kind: RetryDeadline, Max: 5}})
		o := res.Jobs[0]
		if o.State != Failed || int(o.Attempts) != c.attempts || o.End != c.end || o.Reason != c.reason {
			t.Errorf("deadline %v: %s after %d attempts at %v (%q), want %d at %v (%q)", c.deadline, o.State, o.Attempts, o.End, o.Reason, c.attempts, c.end, c.reason)
		}
	}
}

// Three nodes with heartbeats every 10 s (phases 0, 3.333333 s, 6.666666 s)
// and a 45 s timeout. Node 1 fails at 100 s; its last heartbeat was at
// 93.333333 s, so its job is failed and restarted on node 2 at exactly
// 138.333333 s, although it would have finished at 120 s (a finish on dead
// hardware does not count).
func TestDeadNodeJobsRescheduledTimeoutAfterLastHeartbeat(t *testing.T) {
	w := jobsWorkload(t, oneJob("a", 0, 1000*sec, 8), oneJob("b", 0, 120*sec, 8))
	res, seen := runFaults(t, Config{
		Cluster: nodesCluster(t, 3, 8), Workload: w,
		Faults:    []hwmodel.Fault{{At: 100 * sec, Node: 1, GPU: -1, Repair: hwmodel.Hour}},
		Heartbeat: Heartbeat{Interval: 10 * sec, Timeout: 45 * sec},
		Retry:     RetryPolicy{Kind: RetryFixed, Max: 1},
	})
	lastHB := hwmodel.Time(3_333_333) + 9*10*sec
	detect := lastHB + 45*sec
	if detect != 138_333_333 {
		t.Fatalf("hand arithmetic: %d", detect)
	}
	b := res.Jobs[1]
	if b.State != Succeeded || b.Attempts != 2 || b.End != detect+120*sec || b.LostTime != detect || b.Placement[0].Node != 2 {
		t.Errorf("b: %+v", b)
	}
	if a := res.Jobs[0]; a.HardwareFailures != 0 || a.End != 1000*sec {
		t.Errorf("a was hit: %+v", a)
	}
	if f := res.Faults[0]; f.Detected != detect || f.JobsHit != 1 {
		t.Errorf("fault %+v", f)
	}
	// Until detection b still counts as running on node 1.
	for _, s := range seen {
		if s.at > 100*sec && s.at < detect && s.o.Running != 2 {
			t.Errorf("at %v: %d running, want 2", s.at, s.o.Running)
		}
	}
}

// A GPU fault is reported by the node's next heartbeat (at or after the
// fault) and kills only the job on that GPU; the GPU stays out of service
// until its repair, then returns.
func TestGPUFaultHitsOnlyItsJobs(t *testing.T) {
	var jobs []workloads.Job
	for k := 0; k < 8; k++ {
		jobs = append(jobs, oneJob(fmt.Sprintf("j%d", k), 0, 1000*sec, 1))
	}
	res, seen := runFaults(t, Config{
		Cluster: nodesCluster(t, 2, 8), Workload: jobsWorkload(t, jobs...),
		Faults:    []hwmodel.Fault{{At: 101 * sec, Node: 0, GPU: 3, Repair: 500 * sec}},
		Heartbeat: Heartbeat{Interval: 5 * sec, Timeout: 30 * sec},
		Retry:     RetryPolicy{Kind: RetryFixed, Max: 1},
	})
	for k, o := range res.Jobs {
		if k == 3 {
			if o.HardwareFailures != 1 || o.End != 105*sec+1000*sec || o.Placement[0].Node != 1 {
				t.Errorf("j3: %+v", o)
			}
			continue
		}
		if o.HardwareFailures != 0 || o.End != 1000*sec {
			t.Errorf("j%d was hit: %+v", k, o)
		}
	}
	want := FaultRecord{At: 101 * sec, Detected: 105 * sec, Repaired: 601 * sec, Node: 0, GPU: 3, JobsHit: 1}
	if res.Faults[0] != want {
		t.Errorf("fault %+v, want %+v", res.Faults[0], want)
	}
	for _, s := range seen {
		down := int64(0)
		if s.at >= 105*sec && s.at < 601*sec {
			down = hwmodel.MilliPerGPU
		}
		if s.o.DownMilli != down {
			t.Errorf("at %v: down %d, want %d", s.at, s.o.DownMilli, down)
		}
	}
}

// One node; its only job fails with it at 50 s, is detected at 75 s (last
// heartbeat 45 s + 30 s), and waits for the repair at 1050 s: the capacity
// is out of service (DownMilli 8000, AllocatedMilli 0) in between, and the
// repair returns it and makes a scheduling point.
func TestRepairReturnsCapacity(t *testing.T) {
	res, seen := runFaults(t, Config{
		Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, oneJob("a", 0, 100*sec, 8)),
		Faults: []hwmodel.Fault{{At: 50 * sec, Node: 0, GPU: -1, Repair: 1000 * sec}},
		Retry:  RetryPolicy{Kind: RetryFixed, Max: 1},
	})
	a := res.Jobs[0]
	if a.State != Succeeded || a.End != 1150*sec || a.Run != 175*sec || a.LostTime != 75*sec || a.Wait != 975*sec {
		t.Errorf("a: %+v", a)
	}
	if want := (FaultRecord{At: 50 * sec, Detected: 75 * sec, Repaired: 1050 * sec, Node: 0, GPU: -1, JobsHit: 1}); res.Faults[0] != want {
		t.Errorf("fault %+v, want %+v", res.Faults[0], want)
	}
	var sawDown, sawBack bool
	for _, s := range seen {
		switch {
		case s.at >= 75*sec && s.at < 1050*sec:
			sawDown = true
			if s.o.DownMilli != 8000 || s.o.AllocatedMilli != 0 {
				t.Errorf("at %v: %+v", s.at, s.o)
			}
		case s.at >= 1050*sec && s.at < 1150*sec:
			sawBack = true
			if s.o.DownMilli != 0 || s.o.AllocatedMilli != 8000 {
				t.Errorf("at %v: %+v", s.at, s.o)
			}
		}
	}
	if !sawDown || !sawBack {
		t.Errorf("observations %v", seen)
	}
}

// Exponential back-off: the k-th retry re-enters the queue
// BackoffBase·BackoffFactor^(k−1) after the failure: 10 s, 30 s, 90 s.
func TestRetryBackoff(t *testing.T) {
	j := oneJob("j", 0, 100*sec, 1)
	j.FailedAttempts = 3
	res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j),
		Retry: RetryPolicy{Kind: RetryFixed, Max: 3, BackoffBase: 10 * sec, BackoffFactor: 3}})
	o := res.Jobs[0]
	// 0–100 fails, 110–210 fails, 240–340 fails, 430–530 succeeds.
	if o.State != Succeeded || o.Attempts != 4 || o.End != 530*sec || o.Run != 400*sec || o.Wait != 0 {
		t.Errorf("%+v", o)
	}
	// Retry kinds "none" and "trace" on the same job.
	res, _ = runFaults(t, Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j), Retry: RetryPolicy{Kind: RetryNone}})
	if o := res.Jobs[0]; o.State != Failed || o.Attempts != 1 {
		t.Errorf("none: %+v", o)
	}
	j.MaxRetries = 2
	res, _ = runFaults(t, Config{Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, j)})
	if o := res.Jobs[0]; o.State != Failed || o.Attempts != 3 {
		t.Errorf("trace: %+v", o)
	}
}

func TestFaultConfigValidation(t *testing.T) {
	w := jobsWorkload(t, oneJob("a", 0, sec, 1))
	for _, c := range []Config{
		{Faults: []hwmodel.Fault{{At: 5, Node: 0, GPU: -1}, {At: 4, Node: 0, GPU: -1}}},
		{Faults: []hwmodel.Fault{{At: 5, Node: 2, GPU: -1}}},
		{Faults: []hwmodel.Fault{{At: 5, Node: 0, GPU: 8}}},
		{Faults: []hwmodel.Fault{{At: 5, Node: 0, GPU: -1}}, Heartbeat: Heartbeat{Interval: 10 * sec, Timeout: 5 * sec}},
		{Retry: RetryPolicy{Kind: "sometimes"}},
		{Retry: RetryPolicy{Kind: RetryFixed, Max: -1}},
		{RestartTime: -1},
		{DefaultCheckpoint: Checkpoint{Cost: sec}},
	} {
		c.Cluster, c.Workload, c.Policy = nodesCluster(t, 1, 8), w, &headFirst{}
		if _, err := New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// A repair due before detection blocks nothing: the job on the node keeps
// burning until detection (its finish at 40 s does not count), then
// fails; the queued job b starts at once on the repaired node.
func TestRepairBeforeDetection(t *testing.T) {
	res, seen := runFaults(t, Config{
		Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, oneJob("a", 0, 40*sec, 8), oneJob("b", 10*sec, 100*sec, 8)),
		Faults: []hwmodel.Fault{{At: 30 * sec, Node: 0, GPU: -1, Repair: 5 * sec}},
		Retry:  RetryPolicy{Kind: RetryFixed, Max: 1},
	})
	a, b := res.Jobs[0], res.Jobs[1]
	if a.State != Succeeded || a.End != 195*sec || a.Run != 95*sec || a.LostTime != 55*sec || a.HardwareFailures != 1 {
		t.Errorf("a: %+v", a)
	}
	if b.Start != 55*sec || b.End != 155*sec || b.HardwareFailures != 0 {
		t.Errorf("b: %+v", b)
	}
	if want := (FaultRecord{At: 30 * sec, Detected: 55 * sec, Repaired: 55 * sec, Node: 0, GPU: -1, JobsHit: 1}); res.Faults[0] != want {
		t.Errorf("fault %+v, want %+v", res.Faults[0], want)
	}
	for _, s := range seen {
		if s.o.DownMilli != 0 {
			t.Errorf("at %v: %d milli down", s.at, s.o.DownMilli)
		}
	}
}

// A job placed on a dead node before its death is known is lost too; a
// second fault on the node while it is out of service is known at once and
// only extends the repair, which then returns the node at 600 s.
func TestLostOnUndetectedNodeAndExtendedRepair(t *testing.T) {
	res, _ := runFaults(t, Config{
		Cluster: nodesCluster(t, 1, 8), Workload: jobsWorkload(t, oneJob("a", 0, 20*sec, 8), oneJob("b", 35*sec, 100*sec, 8)),
		Faults: []hwmodel.Fault{{At: 30 * sec, Node: 0, GPU: -1, Repair: 100 * sec}, {At: 100 * sec, Node: 0, GPU: -1, Repair: 500 * sec}},
		Retry:  RetryPolicy{Kind: RetryFixed, Max: 1},
	})
	a, b := res.Jobs[0], res.Jobs[1]
	if a.End != 20*sec || a.HardwareFailures != 0 {
		t.Errorf("a: %+v", a)
	}
	if b.State != Succeeded || b.HardwareFailures != 1 || b.LostTime != 20*sec || b.End != 700*sec {
		t.Errorf("b: %+v", b)
	}
	want := []FaultRecord{
		{At: 30 * sec, Detected: 55 * sec, Repaired: 130 * sec, Node: 0, GPU: -1, JobsHit: 1},
		{At: 100 * sec, Detected: 100 * sec, Repaired: 600 * sec, Node: 0, GPU: -1},
	}
	if !slicesEqual(res.Faults, want) {
		t.Errorf("faults %+v, want %+v", res.Faults, want)
	}
}

func slicesEqual(a, b []FaultRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
