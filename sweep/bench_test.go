package sweep

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkSweep runs testdata/bench.yaml (40 runs; BRIGADE_SWEEP_SEEDS
// overrides the seed range, e.g. 1-400) on BRIGADE_SWEEP_WORKERS workers
// (default GOMAXPROCS) and reports runs per second and the largest live
// heap (runtime.MemStats.HeapAlloc after a GC, sampled after every run) in
// the first and the second half of the sweep: it stays flat as the number
// of runs grows, since only per-run summaries are kept. (The runs per
// second include these GCs.)
func BenchmarkSweep(b *testing.B) {
	g, err := LoadGrid("testdata/bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if s := os.Getenv("BRIGADE_SWEEP_SEEDS"); s != "" {
		if g.Seeds, err = ParseSeeds(s); err != nil {
			b.Fatal(err)
		}
	}
	workers, _ := strconv.Atoi(os.Getenv("BRIGADE_SWEEP_WORKERS"))
	runs := len(g.Runs())
	var firstHalf, secondHalf uint64
	b.ResetTimer()
	for range b.N {
		dir := b.TempDir()
		_, err := Sweep(g, dir, Options{Workers: workers, Progress: func(done, total int) {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if done <= total/2 {
				firstHalf = max(firstHalf, ms.HeapAlloc)
			} else {
				secondHalf = max(secondHalf, ms.HeapAlloc)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(runs*b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(firstHalf)/(1<<20), "heap-1st-half-MiB")
	b.ReportMetric(float64(secondHalf)/(1<<20), "heap-2nd-half-MiB")
	b.ReportMetric(0, "ns/op")
}
