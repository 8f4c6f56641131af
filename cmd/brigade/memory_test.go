package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/report"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
)

// BenchmarkMemoryPerJob attributes brigade sim's memory to its owners,
// stage by stage, on synthetic workloads of 100,000 and 1,000,000 jobs on
// the dgx-h100x64 cluster, as `brigade sim --synthetic N` runs it:
//
//	go test ./cmd/brigade -run '^$' -bench MemoryPerJob -benchtime 1x -v
//
// It logs, per job, the live heap (after a collection) each owner adds
// and the peak heap of each stage above what was live before it (sampled
// every millisecond), then the process's maximum resident size.
// docs/speed.md ("Memory") has its numbers.
func BenchmarkMemoryPerJob(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
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

func measureMemory(t testing.TB, n int) {
	per := func(b uint64, base uint64) string {
		return fmt.Sprintf("%6.0f B/job", (float64(b)-float64(base))/float64(n))
	}
	spec, err := hwmodel.ResolveCluster("dgx-h100x64")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	base := liveHeap()
	w, err := runner.SyntheticFor(cluster, n, 1, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	afterWorkload := liveHeap()
	t.Logf("%d jobs: workload (workloads.Job slice, names)      %s", n, per(afterWorkload, base))

	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	target := policies.TargetFromRequests(reqs)
	reqs = nil
	pspec, err := policies.ParseSpec("fcfs")
	if err != nil {
		t.Fatal(err)
	}
	pspec.Placer = policies.PlacerConfig{Seed: 1, Target: target}
	policy, err := pspec.New()
	if err != nil {
		t.Fatal(err)
	}
	opt := runner.Options{FragTarget: &target}.ForPolicy(pspec)
	beforeRun := liveHeap()
	prep, err := runner.Prepare(cluster, w, policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	peak := startPeak()
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	runPeak := peak.end()
	prep.Timeline.Close(res.End)
	tl, arrivals, name := prep.Timeline, prep.Arrivals(), policy.Name()
	withEngine := liveHeap()
	// As runner.Run does: the result points into the engine, so a copy
	// lets the engine and the policy go.
	own := *res
	res = &own
	afterRun := liveHeap()
	t.Logf("%d jobs: engine run, peak above live before it       %s", n, per(runPeak, beforeRun))
	t.Logf("%d jobs: engine and policy state, held by the result %s", n, per(withEngine, afterRun))
	t.Logf("%d jobs: outcomes, attempts, timeline after the run %s", n, per(afterRun, beforeRun))

	peak = startPeak()
	recs := runner.Records(w, cluster, res)
	recPeak := peak.end()
	gpus := cluster.TotalGPUs()
	withCluster := liveHeap()
	cluster = nil
	afterRecords := liveHeap()
	t.Logf("%d jobs: cluster state still held after the run     %s", n, per(withCluster, afterRecords))
	res.Jobs = nil // as runner.Run lets them go
	afterOutcomes := liveHeap()
	t.Logf("%d jobs: of which sim.Result.Jobs (outcomes, attempts) %s", n, per(afterRecords, afterOutcomes))
	afterRecords = afterOutcomes
	t.Logf("%d jobs: results.JobRecord slice (with attempts)    %s  (peak %s)", n, per(withCluster, afterRun), per(recPeak, afterRun))

	runs := []runner.PolicyRun{{Policy: name, TotalGPUs: gpus, Jobs: recs, Timeline: tl, Engine: res, Arrivals: arrivals}}
	peak = startPeak()
	runner.Summarize(runner.Spec{Workload: w, Seed: 1, ClusterName: spec.Name, WorkloadName: "synthetic"}, runs, runner.SharedStarvationThreshold(runs))
	sumPeak := peak.end()
	t.Logf("%d jobs: summary, peak above live                   %s", n, per(sumPeak, afterRecords))

	dir := t.TempDir()
	afterSummary := liveHeap()
	peak = startPeak()
	data := report.FromRecords([]results.Summary{runs[0].Summary}, [][]results.JobRecord{recs}, []*results.Timeline{tl})
	afterData := liveHeap()
	if err := report.WritePlots(filepath.Join(dir, "plots"), data); err != nil {
		t.Fatal(err)
	}
	plotPeak := peak.end()
	data = nil
	t.Logf("%d jobs: plot inputs (report.Data)                  %s", n, per(afterData, afterSummary))
	t.Logf("%d jobs: plots, peak above live before them         %s", n, per(plotPeak, afterSummary))

	live := liveHeap()
	peak = startPeak()
	if err := runner.WriteFiles(dir, runs, nil); err != nil {
		t.Fatal(err)
	}
	filesPeak := peak.end()
	t.Logf("%d jobs: results files, peak above live before them %s", n, per(filesPeak, live))

	t.Logf("%d jobs: live at the end (workload, records, timeline) %s", n, per(liveHeap(), base))
	runs[0].Timeline, tl = nil, nil
	t.Logf("%d jobs: of which the timeline                      %s", n, per(live, liveHeap()))
	runtime.KeepAlive(w)
	runtime.KeepAlive(runs)
}
