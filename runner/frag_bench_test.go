package runner_test

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
)

// BenchmarkFragTracking measures what fragmentation tracking
// (Options.FragTarget, on in every brigade sim, sweep and scenario run)
// adds to a run: the same FCFS case with it off and on, on 1,000 and
// 10,000 nodes of 8 GPUs. Compare the pairs' ns/op, e.g.
//
//	go test ./runner -run '^$' -bench 'FragTracking/nodes=10000' -count 6
func BenchmarkFragTracking(b *testing.B) {
	for _, c := range []runner.BenchCase{
		{Jobs: 20000, GPUs: 8000, Policy: "fcfs", Load: 0.9, Seed: 1},
		{Jobs: 100000, GPUs: 80000, Policy: "fcfs", Load: 0.9, Seed: 1},
	} {
		w, err := c.BenchWorkload()
		if err != nil {
			b.Fatal(err)
		}
		reqs := make([]hwmodel.Request, len(w.Jobs))
		for i := range w.Jobs {
			reqs[i] = w.Jobs[i].Req
		}
		target := policies.TargetFromRequests(reqs)
		for _, frag := range []bool{false, true} {
			b.Run(fmt.Sprintf("nodes=%d/jobs=%d/frag=%v", c.GPUs/8, c.Jobs, frag), func(b *testing.B) {
				var events int64
				for b.Loop() {
					b.StopTimer()
					cluster, err := runner.BenchCluster(c.GPUs)
					if err != nil {
						b.Fatal(err)
					}
					spec, err := policies.ParseSpec(c.Policy)
					if err != nil {
						b.Fatal(err)
					}
					p, err := spec.New()
					if err != nil {
						b.Fatal(err)
					}
					opt := runner.Options{}.ForPolicy(spec)
					if frag {
						opt.FragTarget = &target
					}
					prep, err := runner.Prepare(cluster, w, p, opt)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					r, err := runner.Measure(prep)
					if err != nil {
						b.Fatal(err)
					}
					events += r.Events
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
