package sim_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// faultSetup is a random fault schedule and fault settings, drawn from one
// seed in the test (not from a failure model), so the fuzzer explores odd
// cases: overlapping faults, faults on out-of-service hardware, repairs
// shorter than detection, GPU faults on dead nodes.
type faultSetup struct {
	faults []hwmodel.Fault
	opt    runner.Faults
}

func randomFaults(c *hwmodel.Cluster, w *workloads.Workload, seed uint64) faultSetup {
	r := rand.New(rand.NewPCG(seed, 0xfa17))
	horizon := hwmodel.Hour
	if n := len(w.Jobs); n > 0 {
		horizon += w.Jobs[n-1].Submit
	}
	var fs []hwmodel.Fault
	for k := r.IntN(16); k > 0; k-- {
		n := r.IntN(c.NumNodes())
		mig := false
		for g := 0; g < c.NodeGPUs(n); g++ {
			mig = mig || c.IsMIG(n, g)
		}
		if mig {
			continue
		}
		f := hwmodel.Fault{At: hwmodel.Time(r.Int64N(int64(horizon))), Node: n, GPU: -1,
			Repair: hwmodel.Time(r.Int64N(int64(4 * hwmodel.Hour)))}
		if c.NodeGPUs(n) > 0 && r.IntN(2) == 0 {
			f.GPU = r.IntN(c.NodeGPUs(n))
		}
		fs = append(fs, f)
	}
	slices.SortStableFunc(fs, func(a, b hwmodel.Fault) int { return cmp.Compare(a.At, b.At) })
	iv := hwmodel.Time(1+r.IntN(60)) * hwmodel.Second
	opt := runner.Faults{
		Named:             fs,
		HeartbeatInterval: iv,
		HeartbeatTimeout:  iv * hwmodel.Time(1+r.IntN(6)),
		Retry:             []string{"trace", "none", "fixed", "deadline"}[r.IntN(4)],
		MaxRetries:        r.IntN(4),
		RestartTime:       hwmodel.Time(r.IntN(120)) * hwmodel.Second,
	}
	if r.IntN(2) == 0 {
		opt.Backoff = hwmodel.Time(1+r.IntN(600)) * hwmodel.Second
		opt.BackoffFactor = 1 + r.Float64()*2
	}
	if r.IntN(2) == 0 {
		opt.CheckpointEvery = hwmodel.Time(1+r.IntN(60)) * hwmodel.Minute
		opt.CheckpointCost = hwmodel.Time(r.IntN(30)) * hwmodel.Second
	}
	return faultSetup{faults: fs, opt: opt}
}

// faultyWorkload is smallWorkload with some jobs given their own
// checkpoints and deadlines.
func faultyWorkload(t testing.TB, seed uint64, jobs int) *workloads.Workload {
	w := smallWorkload(t, seed, jobs)
	r := rand.New(rand.NewPCG(seed, 0xdead))
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if r.IntN(4) == 0 {
			j.Checkpoint = workloads.Checkpoint{Every: hwmodel.Time(1+r.IntN(120)) * hwmodel.Minute, Cost: hwmodel.Time(r.IntN(60)) * hwmodel.Second}
		}
		if r.IntN(3) == 0 {
			j.Deadline = j.Duration * hwmodel.Time(1+r.IntN(5))
		}
	}
	return w
}

func runFaulty(t testing.TB, w *workloads.Workload, policy string, opt policies.Options, gpus int, seed uint64) (*sim.Result, *results.Timeline, faultSetup) {
	t.Helper()
	var c *hwmodel.Cluster
	var err error
	if gpus == 0 {
		spec, _ := hwmodel.Preset("mixed-small")
		c, err = spec.Build()
	} else {
		c, err = runner.BenchCluster(gpus)
	}
	if err != nil {
		t.Fatal(err)
	}
	fs := randomFaults(c, w, seed)
	p, err := policies.New(policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := runner.Prepare(c, w, p, runner.Options{RevealOracle: opt.UseOracle, CheckInvariants: true,
		Faults: &fs.opt, FaultSchedule: fs.faults})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	prep.Timeline.Close(res.End)
	return res, prep.Timeline, fs
}

// checkFaultOutcomes asserts what holds of any run with faults: every job
// terminal, times in order, the time accounting (a job that succeeded ran
// its duration plus its lost and checkpoint time; one that failed ran at
// most that, less the progress it kept), the fault records, and Little's
// law.
func checkFaultOutcomes(t testing.TB, w *workloads.Workload, res *sim.Result, tl *results.Timeline, fs faultSetup) {
	t.Helper()
	if res.Rejections != 0 {
		t.Errorf("%d decisions rejected", res.Rejections)
	}
	for i, o := range res.Jobs {
		j := &w.Jobs[i]
		if !o.State.Terminal() {
			t.Fatalf("job %s ended %s", j.Name, o.State)
		}
		if o.Start < o.Submit || o.End < o.Start || o.Wait < 0 || o.LostTime < 0 || o.CheckpointTime < 0 {
			t.Fatalf("job %s: %+v out of order", j.Name, o)
		}
		kept := o.Run - o.LostTime - o.CheckpointTime
		switch {
		case o.State == sim.Succeeded && kept != j.Duration:
			t.Fatalf("job %s succeeded: ran %v = %v lost + %v checkpointing + %v, want duration %v", j.Name, o.Run, o.LostTime, o.CheckpointTime, kept, j.Duration)
		case o.State == sim.Failed && (kept < 0 || kept >= j.Duration):
			t.Fatalf("job %s failed: kept %v of %v", j.Name, kept, j.Duration)
		case o.HardwareFailures > int(o.Attempts):
			t.Fatalf("job %s: %d hardware failures in %d attempts", j.Name, o.HardwareFailures, o.Attempts)
		}
		for _, d := range j.Deps {
			if o.Attempts > 0 && o.Start < res.Jobs[d].End {
				t.Fatalf("job %s started before dependency %s ended", j.Name, w.Jobs[d].Name)
			}
		}
	}
	hit := 0
	for k, f := range res.Faults {
		if k >= len(fs.faults) || f.At != fs.faults[k].At || f.Node != fs.faults[k].Node || f.GPU != fs.faults[k].GPU {
			t.Fatalf("fault record %d %+v does not match the schedule", k, f)
		}
		if f.Detected >= 0 && (f.Detected < f.At || f.Repaired < f.Detected) {
			t.Fatalf("fault record %+v out of order", f)
		}
		hit += f.JobsHit
	}
	total := 0
	for _, o := range res.Jobs {
		total += o.HardwareFailures
	}
	if hit != total {
		t.Fatalf("fault records hit %d attempts, jobs count %d hardware failures", hit, total)
	}
	checkAttemptLog(t, w, res)
	for i, o := range res.Jobs {
		n := 0
		for _, a := range o.Log() {
			if a.Ended == sim.AttemptHardware {
				n++
			}
		}
		if n != o.HardwareFailures {
			t.Fatalf("job %s: %d attempts ended by hardware, %d hardware failures", w.Jobs[i].Name, n, o.HardwareFailures)
		}
	}
	recs := make([]results.JobRecord, len(res.Jobs))
	for i, o := range res.Jobs {
		recs[i] = results.JobRecord{ID: int32(i), Tenant: w.Jobs[i].Tenant, Submit: o.Submit, Start: o.Start, End: o.End,
			Wait: o.Wait, Run: o.Run, Attempts: int(o.Attempts), State: results.Succeeded}
	}
	sum := results.Summarize(results.RunInput{Policy: "p", TotalGPUs: 1, Jobs: recs, Timeline: tl})
	if e := sum.LittlesLaw.RelError; e > 1e-9 {
		t.Errorf("Little's law: rel error %g", e)
	}
}

func TestEngineInvariantsWithFaults(t *testing.T) {
	for _, name := range policies.NonPreemptiveNames() {
		for seed := uint64(1); seed <= 3; seed++ {
			for _, gpus := range []int{32, 0} {
				t.Run(fmt.Sprintf("%s/seed=%d/gpus=%d", name, seed, gpus), func(t *testing.T) {
					w := faultyWorkload(t, seed, 200)
					res, tl, fs := runFaulty(t, w, name, policies.Options{Backfill: seed == 2}, gpus, seed)
					checkFaultOutcomes(t, w, res, tl, fs)
				})
			}
		}
	}
}

func TestEngineWithFaultsIsDeterministic(t *testing.T) {
	w := faultyWorkload(t, 5, 300)
	a, _, fs := runFaulty(t, w, "fair", policies.Options{Backfill: true}, 32, 5)
	b, _, _ := runFaulty(t, w, "fair", policies.Options{Backfill: true}, 32, 5)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same faults differ")
	}
	if len(fs.faults) == 0 {
		t.Fatal("seed 5 draws no faults; pick another")
	}
}

// FuzzEngineFaults drives the engine with generated workloads and random
// fault schedules and settings; every run must keep the invariants
// (checked after every event: out-of-service capacity never used, books
// agree) and the outcome rules.
func FuzzEngineFaults(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s, uint8(0), uint8(40), false, false)
		f.Add(s, uint8(3), uint8(60), true, true)
	}
	f.Fuzz(func(t *testing.T, seed uint64, policyIdx, jobs uint8, backfill, mixed bool) {
		names := policies.StandaloneNames()
		w := faultyWorkload(t, seed, 1+int(jobs))
		gpus := 16
		if mixed {
			gpus = 0
		}
		name := names[int(policyIdx)%len(names)]
		res, tl, fs := runFaulty(t, w, name, policies.Options{Backfill: backfill && !policies.Preemptive(name, policies.Options{})}, gpus, seed)
		checkFaultOutcomes(t, w, res, tl, fs)
	})
}

// TestHeartbeatsCostNoEvents: on a 10,000-node cluster with 5 s heartbeats
// over a month, the engine handles at most three events per fault (the
// fault, its detection, its repair) besides arrivals and one finish event
// per attempt: heartbeats themselves cost nothing.
func TestHeartbeatsCostNoEvents(t *testing.T) {
	const nodes = 10000
	c, err := runner.BenchCluster(8 * nodes)
	if err != nil {
		t.Fatal(err)
	}
	w, err := runner.SyntheticAtLoad(2000, 3, 8*nodes, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	// Spread the arrivals over a month (scaling keeps their order).
	last := w.Jobs[len(w.Jobs)-1].Submit
	for i := range w.Jobs {
		w.Jobs[i].Submit = hwmodel.Time(float64(w.Jobs[i].Submit) / float64(last) * float64(30*hwmodel.Day))
	}
	span := 30 * hwmodel.Day
	r := rand.New(rand.NewPCG(3, 3))
	var fs []hwmodel.Fault
	for k := 0; k < 500; k++ {
		f := hwmodel.Fault{At: hwmodel.Time(r.Int64N(int64(span))), Node: r.IntN(nodes), GPU: -1, Repair: hwmodel.Time(r.Int64N(int64(4 * hwmodel.Hour)))}
		if k%2 == 0 {
			f.Node = r.IntN(20) // first fit fills the first nodes: hit jobs there
		}
		if r.IntN(2) == 0 {
			f.GPU = r.IntN(8)
		}
		fs = append(fs, f)
	}
	slices.SortStableFunc(fs, func(a, b hwmodel.Fault) int { return cmp.Compare(a.At, b.At) })
	p, _ := policies.New("fcfs", policies.Options{})
	prep, err := runner.Prepare(c, w, p, runner.Options{
		Faults:        &runner.Faults{Named: fs, HeartbeatInterval: 5 * hwmodel.Second, HeartbeatTimeout: 30 * hwmodel.Second, Retry: "fixed", MaxRetries: 5},
		FaultSchedule: fs})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	attempts, hit := 0, 0
	for _, o := range res.Jobs {
		attempts += int(o.Attempts)
		hit += o.HardwareFailures
	}
	if hit == 0 {
		t.Error("no fault hit a job")
	}
	if limit := int64(len(w.Jobs) + attempts + 3*len(res.Faults)); res.Events > limit {
		t.Errorf("%d events for %d jobs, %d attempts and %d faults: more than %d", res.Events, len(w.Jobs), attempts, len(res.Faults), limit)
	}
	t.Logf("%d events, %d jobs, %d attempts (%d lost to faults), %d faults over %v", res.Events, len(w.Jobs), attempts, hit, len(res.Faults), span)
}
