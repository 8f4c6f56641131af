package sim_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// smallWorkload generates a contended workload with DAG tasks, shared GPUs,
// failing attempts and retries, from one seed.
func smallWorkload(t testing.TB, seed uint64, jobs int) *workloads.Workload {
	t.Helper()
	cfg := workloads.DefaultSyntheticConfig()
	cfg.Jobs = jobs
	cfg.Arrival.RatePerHour = 400
	cfg.Duration.Max = 2 * hwmodel.Day
	cfg.SharedFraction = 0.3
	cfg.DAG = workloads.DAGConfig{Probability: 0.3, Shape: "chain", Tasks: 3}
	if seed%2 == 1 {
		cfg.DAG.Shape = "forkjoin"
	}
	w, err := workloads.Generate(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for i := range w.Jobs {
		if r.IntN(5) == 0 {
			w.Jobs[i].FailedAttempts = 1 + r.IntN(2)
			w.Jobs[i].MaxRetries = r.IntN(3)
		}
	}
	w.FillEstimates()
	return w
}

// runChecked runs w with every invariant checked after every event, on an
// all-H100 cluster of gpus GPUs, or on the heterogeneous mixed-small preset
// (three GPU models, CPU and memory modelled) when gpus is 0.
func runChecked(t testing.TB, w *workloads.Workload, policy string, opt policies.Options, gpus int) (*sim.Result, *results.Timeline) {
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
	p, err := policies.New(policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := runner.Prepare(c, w, p, runner.Options{RevealOracle: opt.UseOracle, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	tl := prep.Timeline
	tl.Close(res.End)
	return res, tl
}

// checkOutcomes asserts what must hold of any run's outcomes, whatever the
// policy: every job terminal, times in order, run time equal to the
// attempts' durations, dependants of failed jobs failed without running,
// and Little's law between the timeline and the job records.
func checkOutcomes(t testing.TB, w *workloads.Workload, res *sim.Result, tl *results.Timeline) {
	t.Helper()
	if res.Rejections != 0 {
		t.Errorf("%d decisions rejected; built-in policies must only propose what fits", res.Rejections)
	}
	for i, o := range res.Jobs {
		j := &w.Jobs[i]
		if !o.State.Terminal() {
			t.Fatalf("job %s ended %s", j.Name, o.State)
		}
		if o.Start < o.Submit || o.End < o.Start || o.Wait < 0 {
			t.Fatalf("job %s: submit %d start %d end %d wait %d out of order", j.Name, o.Submit, o.Start, o.End, o.Wait)
		}
		if o.Preemptions > 0 {
			// A preempted attempt ran part of the job, all of it lost
			// (this run keeps no checkpoints).
			if kept := o.Run - o.LostTime - o.CheckpointTime; o.State == sim.Succeeded && kept != j.Duration {
				t.Fatalf("job %s: ran %d, %d of it lost, over %d attempts (%d preempted) of %d", j.Name, o.Run, o.LostTime, o.Attempts, o.Preemptions, j.Duration)
			}
		} else if o.Run != hwmodel.Time(o.Attempts)*j.Duration {
			t.Fatalf("job %s: ran %d over %d attempts of %d", j.Name, o.Run, o.Attempts, j.Duration)
		}
		wantOK := int(o.Attempts)-o.Preemptions == j.FailedAttempts+1
		if (o.State == sim.Succeeded) != wantOK {
			t.Fatalf("job %s: %s after %d attempts with %d failing and %d retries", j.Name, o.State, o.Attempts, j.FailedAttempts, j.MaxRetries)
		}
		for _, d := range j.Deps {
			dep := res.Jobs[d]
			if dep.State == sim.Failed && (o.State != sim.Failed || o.Attempts != 0) {
				t.Fatalf("job %s ran (%s) although dependency %s failed", j.Name, o.State, w.Jobs[d].Name)
			}
			if o.Attempts > 0 && o.Start < dep.End {
				t.Fatalf("job %s started at %d before dependency %s ended at %d", j.Name, o.Start, w.Jobs[d].Name, dep.End)
			}
		}
	}
	checkAttemptLog(t, w, res)
	recs := make([]results.JobRecord, len(res.Jobs))
	for i, o := range res.Jobs {
		recs[i] = results.JobRecord{ID: int32(i), Tenant: w.Jobs[i].Tenant, Submit: o.Submit, Start: o.Start, End: o.End,
			Wait: o.Wait, Run: o.Run, Attempts: int(o.Attempts), State: results.Succeeded}
	}
	sum := results.Summarize(results.RunInput{Policy: "p", TotalGPUs: 1, Jobs: recs, Timeline: tl})
	if e := sum.LittlesLaw.RelError; e > 1e-9 {
		t.Errorf("Little's law: L=%g, λW=%g (rel error %g)", sum.LittlesLaw.MeanInSystem,
			sum.LittlesLaw.ThroughputPerS*sum.LittlesLaw.MeanTimeInSystemS, e)
	}
}

func TestEngineInvariantsUnderEveryPolicy(t *testing.T) {
	for _, name := range policies.NonPreemptiveNames() {
		for _, opt := range []policies.Options{{}, {Backfill: true, Placement: "bestfit"}} {
			for seed := uint64(1); seed <= 3; seed++ {
				for _, gpus := range []int{64, 0} {
					t.Run(fmt.Sprintf("%s/bf=%v/seed=%d/gpus=%d", name, opt.Backfill, seed, gpus), func(t *testing.T) {
						w := smallWorkload(t, seed, 300)
						res, tl := runChecked(t, w, name, opt, gpus)
						checkOutcomes(t, w, res, tl)
					})
				}
			}
		}
	}
}

func TestEngineIsDeterministic(t *testing.T) {
	w := smallWorkload(t, 7, 400)
	a, _ := runChecked(t, w, "fair", policies.Options{Backfill: true}, 64)
	b, _ := runChecked(t, w, "fair", policies.Options{Backfill: true}, 64)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same workload and policy differ")
	}
}

// FuzzEngine drives the engine with generated workloads; every run must
// keep the invariants (checked after every event) and the outcome rules.
func FuzzEngine(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42} {
		f.Add(s, uint8(0), uint8(40), false, false)
		f.Add(s, uint8(3), uint8(60), true, true)
	}
	f.Fuzz(func(t *testing.T, seed uint64, policyIdx, jobs uint8, backfill, mixed bool) {
		names := policies.StandaloneNames()
		w := smallWorkload(t, seed, 1+int(jobs))
		gpus := 32
		if mixed {
			gpus = 0
		}
		name := names[int(policyIdx)%len(names)]
		// The preemptive orders take no backfill.
		res, tl := runChecked(t, w, name, policies.Options{Backfill: backfill && !policies.Preemptive(name, policies.Options{})}, gpus)
		checkOutcomes(t, w, res, tl)
	})
}

// TestEngineAllocatesLittlePerEvent guards the hot path: in steady state the
// engine, the policy and the timeline allocate nothing per event; what is
// left is amortised growth (heap, slabs of placements, btree nodes).
func TestEngineAllocatesLittlePerEvent(t *testing.T) {
	for _, policy := range []string{"fcfs", "fair"} {
		c := runner.BenchCase{Jobs: 20000, GPUs: 512, Policy: policy, Load: 3, Seed: 1}
		w, err := c.BenchWorkload()
		if err != nil {
			t.Fatal(err)
		}
		prep, err := c.Prepare(w)
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.Measure(prep)
		if err != nil {
			t.Fatal(err)
		}
		if r.AllocsPerEvent > 0.2 {
			t.Errorf("%s: %.2f allocations per event over %d events, want < 0.2", policy, r.AllocsPerEvent, r.Events)
		}
	}
}

// TestHeterogeneousGangsNeverStrand: on a cluster of three GPU models with
// 32 GPUs each, a 40-GPU gang can never be placed (a gang uses one model),
// so it must fail at submission instead of blocking a strict queue for ever,
// while 24-GPU gangs run.
func TestHeterogeneousGangsNeverStrand(t *testing.T) {
	spec, ok := hwmodel.Preset("mixed-small")
	if !ok {
		t.Fatal("no mixed-small preset")
	}
	var jobs []workloads.Job
	for i, g := range []int{40, 24, 8, 1, 24, 4} {
		jobs = append(jobs, workloads.Job{Name: fmt.Sprintf("j%d", i), Tenant: "t", Submit: hwmodel.Time(i) * hwmodel.Minute,
			Duration: hwmodel.Hour, Req: hwmodel.Request{GPUs: g, GPUMilli: hwmodel.MilliPerGPU}})
	}
	w, err := workloads.Build(jobs, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	for _, name := range policies.NonPreemptiveNames() {
		c, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		p, _ := policies.New(name, policies.Options{})
		prep, err := runner.Prepare(c, w, p, runner.Options{CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := prep.Engine.Run()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, o := range res.Jobs {
			wantFail := jobs[i].Req.GPUs == 40
			if (o.State == sim.Failed) != wantFail {
				t.Errorf("%s: job of %d GPUs ended %s (%s)", name, jobs[i].Req.GPUs, o.State, o.Reason)
			}
		}
	}
}
