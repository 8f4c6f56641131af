package results_test

import (
	"os"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
)

// Two policies run the same three one-GPU jobs on a two-GPU cluster. Each
// run's Timeline is fed the state after every batch of events, as the engine
// does, and each run is summarised and printed as one table row.
func ExampleSummarize() {
	const s = hwmodel.Second
	tenants := []policies.Tenant{{Name: "research", Weight: 1}, {Name: "prod", Weight: 1}}
	rec := func(id int32, tenant string, submit, start, end hwmodel.Time) results.JobRecord {
		return results.JobRecord{
			ID: id, Name: "job", Tenant: tenant, Submit: submit, Ready: submit, Start: start, End: end,
			Wait: start - submit, Run: end - start, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: results.Succeeded,
		}
	}
	type step struct {
		at hwmodel.Time
		st results.State
	}
	run := func(policy string, jobs []results.JobRecord, steps []step) results.Summary {
		tl := results.NewTimeline(hwmodel.Minute, 2000)
		for _, x := range steps {
			tl.Observe(x.at, x.st)
		}
		tl.Close(steps[len(steps)-1].at)
		return results.Summarize(results.RunInput{
			Policy: policy, Seed: 1, Cluster: "toy", Workload: "three-jobs", TotalGPUs: 2,
			Tenants: tenants, Jobs: jobs, Timeline: tl,
		})
	}

	// fcfs: the long job (2 h) and a short one start at once; the third short
	// job waits for the short one to end.
	fcfs := run("fcfs", []results.JobRecord{
		rec(0, "research", 0, 0, 7200*s),
		rec(1, "prod", 0, 0, 600*s),
		rec(2, "prod", 0, 600*s, 1200*s),
	}, []step{
		{0, results.State{Queued: 1, Running: 2, InSystem: 3, AllocatedMilli: 2000}},
		{600 * s, results.State{Running: 2, InSystem: 2, AllocatedMilli: 2000}},
		{1200 * s, results.State{Running: 1, InSystem: 1, AllocatedMilli: 1000}},
		{7200 * s, results.State{}},
	})
	// sjf: both short jobs first; the long job waits 10 minutes.
	sjf := run("sjf", []results.JobRecord{
		rec(0, "research", 0, 600*s, 7800*s),
		rec(1, "prod", 0, 0, 600*s),
		rec(2, "prod", 0, 0, 600*s),
	}, []step{
		{0, results.State{Queued: 1, Running: 2, InSystem: 3, AllocatedMilli: 2000}},
		{600 * s, results.State{Running: 1, InSystem: 1, AllocatedMilli: 1000}},
		{7800 * s, results.State{}},
	})

	if err := results.FormatTable(os.Stdout, []results.Summary{fcfs, sjf}); err != nil {
		panic(err)
	}
	// Output:
	// policy  jobs  wait            jct
	//         done  mean  p50  p99  mean  p99   bsld  util   starved  jain   little
	// fcfs    3/3   3.3m  0s   10m  50m   2.0h  1.33  58.3%  0        0.962  0.00%
	// sjf     3/3   3.3m  0s   10m  50m   2.2h  1.03  53.8%  0        0.998  0.00%
}
