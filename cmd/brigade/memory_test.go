package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
)

var memoryJobs = flag.Int("jobs", 0, "BenchmarkMemoryPerJob: measure this many jobs only")

// BenchmarkMemoryPerJob attributes brigade sim's memory to its owners,
// stage by stage, on synthetic workloads of 100,000 and 1,000,000 jobs on
// the dgx-h100x64 cluster under fcfs, running brigade sim's own
// runner.Simulate with the plots:
//
//	go test ./cmd/brigade -run '^$' -bench MemoryPerJob -benchtime 1x -v
//
// It logs, per job, the live heap (after a collection) each owner adds
// and the peak heap of each stage above what was live before it (sampled
// every millisecond), then the process's maximum resident size. With
// -jobs N it measures N jobs only. docs/speed.md ("Memory") has its
// numbers.
func BenchmarkMemoryPerJob(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if *memoryJobs > 0 {
		sizes = []int{*memoryJobs}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			for b.Loop() {
				measureMemory(b, n)
			}
		})
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.Logf("process maxrss %.0f MiB (Linux reports KiB)", float64(ru.Maxrss)/1024)
	}
}

// liveHeap is the heap's live bytes after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // and what sync.Pools kept through the first
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// peakSampler records the largest heap-object bytes it sees between start
// and stop.
type peakSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func startPeak() *peakSampler {
	p := &peakSampler{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		p.peak = max(p.peak, sample[0].Value.Uint64())
	}
	read()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return p
}

func (p *peakSampler) end() uint64 {
	close(p.stop)
	p.wg.Wait()
	return p.peak
}

// measureMemory runs brigade sim --synthetic n --policy fcfs in-process
// and samples the heap at its hooks: Started (the workload is made),
// the last Progress (every job has ended: the engine's state and the
// outcomes are live), Extra (the runs, their records and summaries are
// done: what the runs keep is live), the plots, and the rest of the
// folder.
func measureMemory(t testing.TB, n int) {
	per := func(b uint64, base uint64) string {
		return fmt.Sprintf("%6.0f B/job", (float64(b)-float64(base))/float64(n))
	}
	var (
		base, started, ended, kept uint64
		runPeak, handPeak, plots   uint64
		peak                       *peakSampler
	)
	c := runner.Comparison{
		Synthetic: n, Cluster: "dgx-h100x64", Policies: []policies.Spec{policies.MustParseSpec("fcfs")}, Seed: 1,
		Out: filepath.Join(t.TempDir(), "out"), Command: []string{"bench"}, Parallel: 1,
		Started: func(*runner.Simulation) {
			started = liveHeap()
			peak = startPeak()
		},
		Progress: func(done, total int) {
			if done == total {
				runPeak = peak.end()
				ended = liveHeap()
				peak = startPeak()
			}
		},
		Extra: func(dir string, runs []runner.PolicyRun) error {
			handPeak = peak.end()
			kept = liveHeap()
			peak = startPeak()
			err := simPlots(dir, runs)
			plots = peak.end()
			liveHeap() // the plots' garbage is not the files'
			peak = startPeak()
			return err
		},
	}
	base = liveHeap()
	if _, err := runner.Simulate(c); err != nil {
		t.Fatal(err)
	}
	files := peak.end()
	t.Logf("%d jobs: workload (workloads.Job slice, names)          %s", n, per(started, base))
	t.Logf("%d jobs: engine run, peak above live before it           %s", n, per(runPeak, started))
	t.Logf("%d jobs: engine state and outcomes, live after the run   %s", n, per(ended, started))
	t.Logf("%d jobs: records to their files, peak above live before  %s", n, per(handPeak, ended))
	t.Logf("%d jobs: kept after the runs (JobStats or records, timeline) %s", n, per(kept, base))
	t.Logf("%d jobs: plots, peak above live before them             %s", n, per(plots, kept))
	t.Logf("%d jobs: results files, peak above live before them     %s", n, per(files, kept))
	top := max(runPeak, handPeak, plots, files)
	t.Logf("%d jobs: the command's heap peak                         %s", n, per(top, base))
	t.Logf("%d jobs: of which engine and results (less the workload) %s", n, per(top-(started-base), base))
	t.Logf("%d jobs: live at the end                                %s", n, per(liveHeap(), base))
}
