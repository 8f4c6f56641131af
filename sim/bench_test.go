package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/brigadesim/brigade/runner"
)

// BenchmarkEngine reports events per wall second and per CPU second
// (process CPU time over the run, from getrusage: the garbage collector's
// too) and allocations per event for every queue order, without and with
// EASY backfill, on synthetic workloads. load=0.9 is a busy cluster;
// load=20 is the overloaded case, where the queue grows to ~90% of the
// jobs (about 900, 9k, 90k and 900k pending at 1k to 1M jobs). Only the
// event loop is timed. Run one size, or the 1M-job cases, with e.g.
//
//	go test ./sim -run '^$' -bench 'Engine/fcfs/gpus=1000$/jobs=100000$/load=20$' -benchtime 5x
//	go test ./sim -run '^$' -bench 'Engine/.*/jobs=1000000' -benchtime 1x
func BenchmarkEngine(b *testing.B) {
	for _, policy := range []string{"fcfs", "sjf", "priority", "fair", "fcfs+bf", "sjf+bf", "priority+bf", "fair+bf",
		"tiresias", "las", "srtf", "priority+preempt", "gandiva", "gavel", "gavel+objective=ftf"} {
		for _, gpus := range []int{1000, 10000} {
			for _, jobs := range []int{1000, 10000, 100000, 1000000} {
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
	var cpu time.Duration
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
		cpu += r.CPU
		maxQueued = r.MaxQueued
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	}
	b.ReportMetric(float64(allocs)/float64(events), "allocs/event")
	b.ReportMetric(float64(maxQueued), "max-queued")
}
