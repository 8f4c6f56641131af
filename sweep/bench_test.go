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
// heap seen after any run (runtime.MemStats.HeapAlloc after a GC), which
// stays flat as the number of runs grows: only per-run summaries are kept.
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
	var peak uint64
	b.ResetTimer()
	for range b.N {
		dir := b.TempDir()
		_, err := Sweep(g, dir, Options{Workers: workers, Progress: func(done, total int) {
			if done%10 == 0 || done == total {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(runs*b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(0, "ns/op")
}
