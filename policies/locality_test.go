package policies_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// dataHost is a Host on three 8-GPU nodes whose dataset d has a replica
// on node 2 only, with jobs that read it.
func dataHost(t *testing.T, jobs ...policies.Job) *policies.Host {
	t.Helper()
	spec, err := hwmodel.ParseClusterSpec([]byte(`name: d
storage: {read_gb_per_s: 1}
datasets:
  - {name: d, size_gb: 10, replicas: [x-002]}
node_groups:
  - {name_prefix: x, count: 3, gpu_model: H100, gpus_per_node: 8}
`), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := &policies.Host{}
	if err := h.Init(c, []policies.Tenant{{Name: "t", Weight: 1}}, jobs); err != nil {
		t.Fatal(err)
	}
	h.SetData(true)
	return h
}

// The local option sends a job to the node holding its dataset where
// first fit would take node 0; with a delay, a job whose local node is
// full waits until the delay has passed, then goes remote.
func TestLocalPlacementAndDelay(t *testing.T) {
	job := policies.Job{ID: 0, Dataset: 1, Estimate: hwmodel.Hour, Req: hwmodel.Request{GPUs: 4, GPUMilli: 1000}}
	for _, tc := range []struct {
		spec     string
		fillNode bool         // node 2 (the replica) is full
		now      hwmodel.Time // time of the call; the job was queued at 0
		want     int          // the node started on; -1 none
	}{
		{"fcfs", false, 0, 0},
		{"fcfs+local", false, 0, 2},
		{"fcfs+local", true, 0, 0},                       // no delay: remote at once
		{"fcfs+local=10m", true, 5 * hwmodel.Minute, -1}, // waits for node 2
		{"fcfs+local=10m", true, 10 * hwmodel.Minute, 0}, // the delay is over
	} {
		t.Run(tc.spec, func(t *testing.T) {
			h := dataHost(t, job)
			if tc.fillNode {
				h.AddJob(policies.Job{Req: hwmodel.Request{GPUs: 8, GPUMilli: 1000}})
				if err := h.Start(1, hwmodel.Placement{{Node: 2, GPUs: 0xff, Milli: 1000}}); err != nil {
					t.Fatal(err)
				}
			}
			h.Queue(0)
			h.SetNow(tc.now)
			p := policies.MustParseSpec(tc.spec).MustNew()
			got := -1
			h.Schedule(p, func(d policies.Decision) string {
				if d.Kind == policies.Start && d.Job == 0 {
					got = d.Placement[0].Node
				}
				return ""
			})
			if got != tc.want {
				t.Errorf("started on node %d, want %d", got, tc.want)
			}
		})
	}
}

// The seed order puts a job that can start on a node holding its data
// ahead of one that cannot, by w_d; with wdata=0 the term is off and job
// ID breaks the tie. Waiting raises a job's score (compensation for
// waiting): a job queued an hour earlier overtakes the locality bonus
// of 1 at w_w = 2.
func TestSeedScore(t *testing.T) {
	gang := policies.Job{ID: 0, Dataset: 1, Estimate: hwmodel.Hour, Req: hwmodel.Request{GPUs: 16, GPUMilli: 1000}}
	small := policies.Job{ID: 1, Dataset: 1, Estimate: hwmodel.Hour, Req: hwmodel.Request{GPUs: 4, GPUMilli: 1000}}
	for _, tc := range []struct {
		spec        string
		gangQueued  hwmodel.Time
		wantFirstID policies.JobID
	}{
		{"seed+bf", 0, 1},                     // small can start on the replica node: d = 1
		{"seed+bf+wdata=0", 0, 0},             // no locality term: job ID
		{"seed+bf+wwait=2", -hwmodel.Hour, 0}, // an hour's wait at 2 beats locality at 1
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g := gang
			g.Queued = tc.gangQueued
			h := dataHost(t, g, small)
			h.Queue(0)
			h.Queue(1)
			p := policies.MustParseSpec(tc.spec).MustNew()
			var first policies.JobID = -1
			h.Schedule(p, func(d policies.Decision) string {
				if d.Kind == policies.Start && first < 0 {
					first = d.Job
				}
				return ""
			})
			if first != tc.wantFirstID {
				t.Errorf("first start is job %d, want %d", first, tc.wantFirstID)
			}
		})
	}
}
