package sim_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// elasticApps is tinyApps' x with iteration counts (which optimus reads
// for the work left): at batch 2, 5 iterations by the end of epoch 0 and
// 10 by the end of epoch 1. A job of batch 2 iterates in 8 s on one GPU
// (per-GPU batch 1, one accumulation step: 0.125 a second) and in 4 s on
// two GPUs of one node (0.25 a second).
func elasticApps(t *testing.T) *hwmodel.AppModel {
	t.Helper()
	return loadApps(t, map[string]string{
		"apps.csv":           "app,max_epochs,max_local_bsz\nx,2,\n",
		"x/placements.csv":   "placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n2,1,4,0\n2,2,8,0\n",
		"x/validation-1.csv": "progress,iteration,grad_sqr,grad_var\n10,10,1,0\n20,20,1,0\n",
		"x/validation-2.csv": "progress,iteration,grad_sqr,grad_var\n10,5,1,0\n20,10,1,0\n",
	})
}

// TestAppsElastic runs jobs of batch 2 that ask for one GPU on a node of
// two under optimus, which resizes them, on a 60 s grid with 30 s of
// restart. The engine times each attempt at its placement's GPU count.
func TestAppsElastic(t *testing.T) {
	const s = hwmodel.Second
	job := func(name string, submit hwmodel.Time) workloads.Job {
		j := appJob(name, submit, 1)
		j.BatchSize = 2
		return j
	}
	cases := []struct {
		name    string
		policy  string
		jobs    []workloads.Job
		end     []hwmodel.Time
		preempt []int
		gpus    []int // of the last attempt
	}{
		{
			// As requested: one GPU from 0, trains from 30 at 0.125 a
			// second: 160 s.
			name: "fcfs keeps the request", policy: "fcfs", jobs: []workloads.Job{job("a", 0)},
			end: []hwmodel.Time{190 * s}, preempt: []int{0}, gpus: []int{1},
		},
		{
			// Alone, a gets both GPUs at 0 (gain (8-4)·5 > 0), trains
			// from 30 at 0.25 a second: 80 s.
			name: "optimus grows a job", policy: "optimus", jobs: []workloads.Job{job("a", 0)},
			end: []hwmodel.Time{110 * s}, preempt: []int{0}, gpus: []int{2},
		},
		{
			// At 60 a (7.5 done) shrinks to one GPU and restarts, b gets
			// the other: a trains from 90, epoch 0 ends at 110, done at
			// 190. b trains from 90, epoch 0 ends at 170, has 18.75 at
			// 240, when it grows to both GPUs (its last epoch: gain
			// (8-4)·1) and restarts: from 270, 1.25 left at 0.25: 275.
			name: "optimus shrinks and regrows", policy: "optimus", jobs: []workloads.Job{job("a", 0), job("b", 10*s)},
			end: []hwmodel.Time{190 * s, 275 * s}, preempt: []int{1, 1}, gpus: []int{1, 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 2}})
			if err != nil {
				t.Fatal(err)
			}
			w, err := workloads.Build(tc.jobs, nil, nil, "test")
			if err != nil {
				t.Fatal(err)
			}
			spec, err := policies.ParseSpec(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			p, err := spec.New()
			if err != nil {
				t.Fatal(err)
			}
			e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, Apps: elasticApps(t), Interval: 60 * s,
				StartupDelay: 30 * s, SaveOnPreempt: true, CheckInvariants: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run()
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range res.Jobs {
				if o.State != sim.Succeeded || o.End != tc.end[i] || o.Preemptions != tc.preempt[i] || o.Placement.GPUCount() != tc.gpus[i] {
					t.Errorf("job %s: %s, end %v, %d preemptions, %d GPUs; want succeeded at %v after %d, on %d",
						w.Jobs[i].Name, o.State, o.End, o.Preemptions, o.Placement.GPUCount(), tc.end[i], tc.preempt[i], tc.gpus[i])
				}
			}
		})
	}
}
