package sim_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// stepConfig builds a run of w on the mixed-small preset under spec, with
// node faults when faulty, and records every Observe call into obs.
func stepConfig(t *testing.T, w *workloads.Workload, spec string, faulty bool, obs *[]string) sim.Config {
	t.Helper()
	cs, _ := hwmodel.Preset("mixed-small")
	c, err := cs.Build()
	if err != nil {
		t.Fatal(err)
	}
	p := policies.MustParseSpec(spec).MustNew()
	cfg := sim.Config{Cluster: c, Workload: w, Policy: p, CheckInvariants: true,
		Observe: func(now hwmodel.Time, o sim.Observation) {
			*obs = append(*obs, fmt.Sprintf("%d %d %d %d %d %d %v", now, o.Queued, o.Running, o.InSystem, o.AllocatedMilli, o.DownMilli, o.TenantMilli))
		}}
	if faulty {
		cfg.Faults = []hwmodel.Fault{
			{At: 2 * hwmodel.Hour, Node: 1, GPU: -1, Repair: 3 * hwmodel.Hour},
			{At: 5 * hwmodel.Hour, Node: 6, GPU: 2, Repair: hwmodel.Hour},
			{At: 9 * hwmodel.Hour, Node: 12, GPU: -1, Repair: 30 * hwmodel.Minute},
		}
		cfg.Retry = sim.RetryPolicy{Kind: sim.RetryFixed, Max: 3}
		cfg.RestartTime = 30 * hwmodel.Second
	}
	return cfg
}

// TestRunUntilIsRun steps runs to their end in random increments and checks
// that they are the runs Run makes: the same Result and the same
// observations, and between steps a state that agrees with itself.
func TestRunUntilIsRun(t *testing.T) {
	for _, spec := range []string{"fcfs", "sjf+bf/bestfit", "fair+bf", "priority/packing"} {
		for _, faulty := range []bool{false, true} {
			for seed := uint64(1); seed <= 2; seed++ {
				t.Run(fmt.Sprintf("%s/faults=%v/seed=%d", spec, faulty, seed), func(t *testing.T) {
					w := smallWorkload(t, seed, 80)
					var whole, stepped []string
					e1, err := sim.New(stepConfig(t, w, spec, faulty, &whole))
					if err != nil {
						t.Fatal(err)
					}
					want, err := e1.Run()
					if err != nil {
						t.Fatal(err)
					}
					e2, err := sim.New(stepConfig(t, w, spec, faulty, &stepped))
					if err != nil {
						t.Fatal(err)
					}
					r := rand.New(rand.NewPCG(seed, 7))
					var limit hwmodel.Time
					for steps := 0; ; steps++ {
						if steps > 100000 {
							t.Fatal("RunUntil makes no progress")
						}
						limit += hwmodel.Time(r.Int64N(int64(3 * hwmodel.Hour)))
						if err := e2.RunUntil(limit); err != nil {
							t.Fatal(err)
						}
						checkSnapshot(t, e2.Snapshot(), limit)
						if e2.Snapshot().Done {
							break
						}
					}
					got, err := e2.Run()
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("stepped run's Result differs from Run's: end %v vs %v, events %d vs %d, calls %d vs %d",
							got.End, want.End, got.Events, want.Events, got.Calls, want.Calls)
					}
					if !reflect.DeepEqual(stepped, whole) {
						t.Errorf("stepped run made %d observations, Run %d, or they differ", len(stepped), len(whole))
					}
				})
			}
		}
	}
}

// checkSnapshot checks what RunUntil(limit) promises and that the
// snapshot's counters agree with its jobs.
func checkSnapshot(t *testing.T, s sim.Snapshot, limit hwmodel.Time) {
	t.Helper()
	if !s.Done && s.Now != limit || s.Done && s.Now > limit {
		t.Fatalf("RunUntil(%v) left the clock at %v (done %v)", limit, s.Now, s.Done)
	}
	var queued, running, inSystem, terminal int
	var milli int64
	for i := range s.Jobs {
		j := &s.Jobs[i]
		switch {
		case j.State.Terminal():
			terminal++
			if j.End < 0 || j.End > s.Now {
				t.Fatalf("terminal job %s ends at %v, now %v", j.Name, j.End, s.Now)
			}
		case j.State == sim.Ready:
			queued++
			inSystem++
		case j.State == sim.Running:
			running++
			inSystem++
			milli += j.Placement.Milli()
			if n := len(j.Log()); n == 0 || j.Log()[n-1].Ended != sim.AttemptRunning {
				t.Fatalf("running job %s has no running attempt", j.Name)
			}
		case j.Submitted:
			inSystem++
		}
		if !j.State.Terminal() && j.End != -1 {
			t.Fatalf("job %s is %s with End %v", j.Name, j.State, j.End)
		}
	}
	if queued != s.Queued || running != s.Running || inSystem != s.InSystem || terminal != s.Terminal {
		t.Fatalf("counted %d %d %d %d, snapshot says %d %d %d %d", queued, running, inSystem, terminal, s.Queued, s.Running, s.InSystem, s.Terminal)
	}
	var tenants int64
	for _, tn := range s.Tenants {
		tenants += tn.AllocatedMilliGPU
	}
	if tenants != s.AllocatedMilli || milli != s.AllocatedMilli {
		t.Fatalf("tenants hold %d milli, running jobs %d, snapshot says %d", tenants, milli, s.AllocatedMilli)
	}
}

func TestRunUntilErrorsAndCopies(t *testing.T) {
	w := smallWorkload(t, 3, 30)
	var obs []string
	e, err := sim.New(stepConfig(t, w, "fcfs", false, &obs))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(10 * hwmodel.Hour); err != nil {
		t.Fatal(err)
	}
	if e.Now() == 0 {
		t.Fatal("RunUntil(10h) processed nothing")
	}
	if err := e.RunUntil(e.Now() - 1); err == nil || !strings.Contains(err.Error(), "already at") {
		t.Errorf("RunUntil before Now: got %v, want an error saying where the engine is", err)
	}
	// A snapshot is a copy: writing to it changes neither the engine nor
	// a later snapshot.
	s := e.Snapshot()
	k := -1
	for i := range s.Jobs {
		if len(s.Jobs[i].Placement) > 0 {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("no job has run by 10h")
	}
	before := s.Jobs[k].Placement[0].Node
	s.Jobs[k].Placement[0].Node = -5
	s.Jobs[k].Log()[0].Placement[0].Node = -5
	s.Nodes[0].GPUs[0].FreeMilli = -5
	s.Tenants[0].AllocatedMilliGPU = -5
	again := e.Snapshot()
	if again.Jobs[k].Placement[0].Node != before || again.Jobs[k].Log()[0].Placement[0].Node != before ||
		again.Nodes[0].GPUs[0].FreeMilli < 0 || again.Tenants[0].AllocatedMilliGPU < 0 {
		t.Error("writing to a Snapshot changed the engine's books")
	}
	if _, err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(e.Now() + hwmodel.Hour); err == nil {
		t.Error("RunUntil after Run: got no error")
	}
	if _, err := e.Run(); err == nil {
		t.Error("a second Run: got no error")
	}
	if _, ok := e.Next(); ok {
		t.Error("Next after the end of the run reports an instant")
	}
}

// ExampleEngine_RunUntil steps a run to a time and looks at it: at 7
// minutes the first job is still running and the 8-GPU job, submitted at
// 1 minute, waits for it.
func ExampleEngine_RunUntil() {
	h100, _ := hwmodel.LookupModel("H100")
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{{Name: "node-0", Model: h100.ID, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10}})
	gpus := func(n int) hwmodel.Request { return hwmodel.Request{GPUs: n, GPUMilli: hwmodel.MilliPerGPU} }
	w, err := workloads.Build([]workloads.Job{
		{Name: "a", Tenant: "t", Submit: 0, Duration: 10 * hwmodel.Minute, Req: gpus(4)},
		{Name: "b", Tenant: "t", Submit: hwmodel.Minute, Duration: 5 * hwmodel.Minute, Req: gpus(8)},
	}, nil, nil, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := sim.New(sim.Config{Cluster: cluster, Workload: w, Policy: policies.MustParseSpec("fcfs").MustNew()})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := eng.RunUntil(7 * hwmodel.Minute); err != nil {
		fmt.Println(err)
		return
	}
	s := eng.Snapshot()
	next, _ := eng.Next()
	fmt.Printf("now %v min, next instant %v min\n", s.Now/hwmodel.Minute, next/hwmodel.Minute)
	for _, j := range s.Jobs {
		fmt.Printf("%s: %s, waited %v min\n", j.Name, j.State, j.Wait/hwmodel.Minute)
	}
	res, err := eng.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("done at %v min\n", res.End/hwmodel.Minute)
	// Output:
	// now 7 min, next instant 10 min
	// a: running, waited 0 min
	// b: ready, waited 6 min
	// done at 15 min
}
