package sim_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// propApps is an application model with two applications whose paces
// differ by placement: y is measured on one node (1, 2 GPUs) and across
// two (1+1), z on one node only, and its gain varies by epoch.
func propApps(t *testing.T) *hwmodel.AppModel {
	t.Helper()
	return loadApps(t, map[string]string{
		"apps.csv":           "app,max_epochs,max_local_bsz\ny,3,\nz,4,4\n",
		"y/placements.csv":   "placement,local_bsz,step_time,sync_time\n1,1,3.3,0.1\n1,4,7.1,0.2\n2,1,3.5,0.4\n2,4,7.7,0.9\n11,1,4.1,1.3\n11,4,9.3,2.2\n",
		"y/validation-1.csv": "progress,grad_sqr,grad_var\n7.5,1,0.5\n15,1,0.5\n22.5,1,0.5\n",
		"y/validation-8.csv": "progress,grad_sqr,grad_var\n8,0.8,0.6\n16,0.7,0.7\n24,0.6,0.9\n",
		"z/placements.csv":   "placement,local_bsz,step_time,sync_time\n1,1,1.7,0\n1,4,2.9,0.1\n2,1,1.9,0.3\n2,4,3.3,0.5\n",
		"z/validation-2.csv": "progress,grad_sqr,grad_var\n5,2,1\n9,1.5,1.5\n14,1,2\n20,0.5,3\n",
		"z/validation-4.csv": "progress,grad_sqr,grad_var\n5.5,2,1\n9.5,1.5,1\n15,1,1\n21,0.5,1\n",
	})
}

// appWorkload draws n jobs of y and z (1 or 2 GPUs) over about an hour.
func appWorkload(t *testing.T, seed uint64, n int) *workloads.Workload {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 41))
	jobs := make([]workloads.Job, n)
	at := hwmodel.Time(0)
	for i := range jobs {
		at += hwmodel.Time(r.Int64N(int64(90 * hwmodel.Second)))
		gpus := 1 + r.IntN(2)
		app, batch := "y", []int{1, 2, 4, 8}[r.IntN(4)]
		if gpus == 1 && r.IntN(2) == 0 {
			app, batch = "z", []int{2, 3, 4}[r.IntN(3)]
		}
		if gpus == 2 && app == "y" {
			batch = []int{2, 4, 8}[r.IntN(3)]
		}
		jobs[i] = workloads.Job{Name: fmt.Sprintf("j%d", i), Tenant: "t", Submit: at, App: app, BatchSize: batch,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU}}
	}
	w, err := workloads.Build(jobs, nil, nil, "prop")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestAppsProperty runs random application workloads on three nodes of
// two GPUs under preemptive and plain policies, on and off the decision
// grid, with invariants checked after every event: every job succeeds,
// on the grid every decision (start or preemption) is at a grid point,
// the run is deterministic, and stepping it with RunUntil gives the same
// Result.
func TestAppsProperty(t *testing.T) {
	apps := propApps(t)
	for _, spec := range []string{"fcfs/mostfree", "las+thresholds=2m/mostfree", "tiresias+thresholds=5m/mostfree", "srtf/mostfree"} {
		for _, interval := range []hwmodel.Time{0, 60 * hwmodel.Second} {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("%s/interval=%v/seed=%d", spec, interval, seed), func(t *testing.T) {
					w := appWorkload(t, seed, 40)
					run := func(stepped bool) *sim.Result {
						c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 2}, {Name: "n1", GPUs: 2}, {Name: "n2", GPUs: 2}})
						if err != nil {
							t.Fatal(err)
						}
						s, err := policies.ParseSpec(spec)
						if err != nil {
							t.Fatal(err)
						}
						p, err := s.New()
						if err != nil {
							t.Fatal(err)
						}
						e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, Apps: apps, Interval: interval,
							StartupDelay: 30 * hwmodel.Second, SaveOnPreempt: seed != 2, CheckInvariants: true})
						if err != nil {
							t.Fatal(err)
						}
						if stepped {
							r := rand.New(rand.NewPCG(seed, 9))
							limit := hwmodel.Time(0)
							for !e.Snapshot().Done {
								limit += hwmodel.Time(r.Int64N(int64(5 * hwmodel.Minute)))
								if err := e.RunUntil(limit); err != nil {
									t.Fatal(err)
								}
							}
						}
						res, err := e.Run()
						if err != nil {
							t.Fatal(err)
						}
						return res
					}
					res := run(false)
					if testing.Verbose() {
						n := 0
						for _, o := range res.Jobs {
							n += o.Preemptions
						}
						t.Logf("%d preemptions", n)
					}
					for i, o := range res.Jobs {
						if o.State != sim.Succeeded {
							t.Fatalf("job %s: %s (%s)", w.Jobs[i].Name, o.State, o.Reason)
						}
						if o.End < o.Start || o.Start < o.Submit {
							t.Errorf("job %s: submit %v, start %v, end %v", w.Jobs[i].Name, o.Submit, o.Start, o.End)
						}
						if interval == 0 {
							continue
						}
						for _, a := range o.Log() {
							if a.Start%interval != 0 || (a.Ended == sim.AttemptPreempted && a.End%interval != 0) {
								t.Errorf("job %s: attempt %v-%v (%s) off the grid", w.Jobs[i].Name, a.Start, a.End, a.Ended)
							}
						}
					}
					if again := run(false); !reflect.DeepEqual(again, res) {
						t.Error("two runs of the same inputs differ")
					}
					if stepped := run(true); !reflect.DeepEqual(stepped, res) {
						t.Error("a run stepped by RunUntil differs from Run's")
					}
				})
			}
		}
	}
}
