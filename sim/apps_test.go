package sim_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// tinyApps is an application model of one application, x: on one GPU at
// per-GPU batch 1 an iteration takes 4 s, and its gain is 1 (no gradient
// variance), so it progresses 0.25 a second; its two epochs end at
// progress 10 and 20, 40 s each. On two nodes it has no measured pace.
func tinyApps(t *testing.T) *hwmodel.AppModel {
	t.Helper()
	return loadApps(t, map[string]string{
		"apps.csv":           "app,max_epochs,max_local_bsz\nx,2,\n",
		"x/placements.csv":   "placement,local_bsz,step_time,sync_time\n1,1,4,0\n1,2,8,0\n2,1,4,0\n2,2,8,0\n",
		"x/validation-1.csv": "progress,grad_sqr,grad_var\n10,1,0\n20,1,0\n",
		"x/validation-2.csv": "progress,grad_sqr,grad_var\n10,1,0\n20,1,0\n",
	})
}

func appJob(name string, submit hwmodel.Time, gpus int) workloads.Job {
	return workloads.Job{Name: name, Tenant: "t", Submit: submit, App: "x", BatchSize: gpus,
		Req: hwmodel.Request{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU}}
}

// TestAppsOnTheGrid runs two jobs of x, a (submitted at 10 s) and b (at
// 20 s), on one GPU with a 30 s start-up, under several policies, with and
// without the 60 s decision grid. The expected times are worked out in
// each case's comment.
func TestAppsOnTheGrid(t *testing.T) {
	const s = hwmodel.Second
	cases := []struct {
		name     string
		policy   string
		interval hwmodel.Time
		// per job: end, number of preemptions
		end     [2]hwmodel.Time
		preempt [2]int
	}{
		{
			// a starts at 10 and trains from 40: 80 s, done at 120. b
			// starts at 120, trains from 150, done at 230.
			name: "fcfs, no grid", policy: "fcfs", end: [2]hwmodel.Time{120 * s, 230 * s},
		},
		{
			// Both are first seen at 60; a starts and trains from 90:
			// 7.5 by 120, epoch 1 at 130, done at 170, when nothing can
			// start: b starts at 180, trains from 210, epoch 1 at 250,
			// done at 290.
			name: "fcfs on a 60 s grid", policy: "fcfs", interval: 60 * s, end: [2]hwmodel.Time{170 * s, 290 * s},
		},
		{
			// las with one threshold of 60 s of service. a starts at 60
			// (trains from 90) and is demoted at 120 with 7.5 done; b,
			// in the top queue, is admitted, a preempted, b starts at
			// 120 (the call after the preemption) and trains from 150;
			// at 180 b is demoted behind a, and a resumes: from 210,
			// epoch 1 at 220, done at 260 (released at 300). b resumes
			// at 300 with its 7.5: from 330, epoch 1 at 340, done at 380.
			name: "las on a 60 s grid", policy: "las+thresholds=1m", interval: 60 * s,
			end: [2]hwmodel.Time{260 * s, 380 * s}, preempt: [2]int{1, 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", GPUs: 1}})
			if err != nil {
				t.Fatal(err)
			}
			w, err := workloads.Build([]workloads.Job{appJob("a", 10*s, 1), appJob("b", 20*s, 1)}, nil, nil, "test")
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
			e, err := sim.New(sim.Config{Cluster: c, Workload: w, Policy: p, Apps: tinyApps(t), Interval: tc.interval,
				StartupDelay: 30 * s, SaveOnPreempt: true, CheckInvariants: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run()
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range res.Jobs {
				if o.State != sim.Succeeded || o.End != tc.end[i] || o.Preemptions != tc.preempt[i] {
					t.Errorf("job %s: %s, end %v, %d preemptions; want succeeded at %v after %d", w.Jobs[i].Name, o.State, o.End, o.Preemptions, tc.end[i], tc.preempt[i])
				}
			}
		})
	}
}

func TestAppsErrors(t *testing.T) {
	const s = hwmodel.Second
	fcfs := func() policies.Policy { p, _ := policies.New("fcfs", policies.Options{}); return p }
	build := func(jobs ...workloads.Job) *workloads.Workload {
		w, err := workloads.Build(jobs, nil, nil, "jobs.csv")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	unknown := appJob("u", 0, 1)
	unknown.App = "y"
	cases := []struct {
		name     string
		w        *workloads.Workload
		apps     bool
		interval hwmodel.Time
		nodes    int
		newErr   string // from sim.New
		runErr   string // from Run
	}{
		{name: "no model", w: build(appJob("a", 0, 1)), newErr: `job "a" () trains application "x", which needs an application model`},
		{name: "unknown application", w: build(unknown), apps: true, newErr: `has no application "y"`},
		{name: "negative interval", w: build(appJob("a", 0, 1)), apps: true, interval: -s, newErr: "Interval must be >= 0"},
		{name: "no pace on two nodes", w: build(appJob("a", 0, 2)), apps: true, nodes: 2, runErr: `x: placement 11 (2 nodes, 2 GPUs, per-GPU batch 1) is neither measured nor in the interpolated table`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []hwmodel.Node{{Name: "n0", GPUs: 1}}
			if tc.nodes == 2 {
				nodes = append(nodes, hwmodel.Node{Name: "n1", GPUs: 1})
			}
			c, err := hwmodel.NewCluster(nodes)
			if err != nil {
				t.Fatal(err)
			}
			cfg := sim.Config{Cluster: c, Workload: tc.w, Policy: fcfs(), Interval: tc.interval}
			if tc.apps {
				cfg.Apps = tinyApps(t)
			}
			e, err := sim.New(cfg)
			if tc.newErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.newErr) {
					t.Fatalf("New: %v, want an error with %q", err, tc.newErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run()
			if err == nil || !strings.Contains(err.Error(), tc.runErr) {
				t.Fatalf("Run: %v, want an error with %q", err, tc.runErr)
			}
		})
	}
}

// loadApps loads an application model from files given by name.
func loadApps(t *testing.T, files map[string]string) *hwmodel.AppModel {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	m, err := hwmodel.LoadApps(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
