package sim_test

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/runner"
)

// BenchmarkEngine reports events per second and allocations per event for
// FCFS and fair share on synthetic workloads. load=0.9 is a busy cluster;
// load=20 is the overloaded case, where the queue grows to ~90% of the jobs
// (about 90k pending at 100k jobs). Run the 1M-job cases with
//
//	go test ./sim -run '^$' -bench 'Engine/.*/jobs=1000000' -benchtime 1x
func BenchmarkEngine(b *testing.B) {
	for _, policy := range []string{"fcfs", "fair"} {
		for _, gpus := range []int{1000, 10000} {
			for _, jobs := range []int{10000, 100000, 1000000} {
				for _, load := range []float64{0.9, 20} {
					c := runner.BenchCase{Jobs: jobs, GPUs: gpus, Policy: policy, Load: load, Seed: 1}
					b.Run(fmt.Sprintf("%s/gpus=%d/jobs=%d/load=%g", policy, gpus, jobs, load), func(b *testing.B) {
						benchCase(b, c)
					})
				}
			}
		}
	}
}

func benchCase(b *testing.B, c runner.BenchCase) {
	w, err := c.BenchWorkload()
	if err != nil {
		b.Fatal(err)
	}
	var events, allocs int64
	var maxQueued int
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		prep, err := c.Prepare(w)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		r, err := runner.Measure(prep)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
		allocs += int64(r.Allocs)
		maxQueued = r.MaxQueued
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(allocs)/float64(events), "allocs/event")
	b.ReportMetric(float64(maxQueued), "max-queued")
}
