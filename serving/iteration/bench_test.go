package iteration

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// poisson is a deterministic stand-in for BLIS's workload spec when the
// reference trace is absent: Poisson arrivals at rate per second for n
// requests, gaussian token counts clipped as the spec says (input mean
// 1024, sd 512, 16..8192; output mean 256, sd 128, 8..2048).
func poisson(rate float64, n int, seed uint64) []TraceReq {
	rng := rand.New(rand.NewPCG(seed, 1))
	g := func(mean, sd, lo, hi float64) int32 {
		return int32(math.Round(min(max(mean+sd*rng.NormFloat64(), lo), hi)))
	}
	out := make([]TraceReq, n)
	t := 0.0
	for k := range out {
		t += rng.ExpFloat64() / rate * 1e6
		out[k] = TraceReq{Arrive: int64(t), In: g(1024, 512, 16, 8192), Out: g(256, 128, 8, 2048), First: -1, Last: -1}
	}
	return out
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkReplayRate14 replays BLIS's rate-14 hour (50,400 requests; a
// generated stand-in of the same spec when the reference is absent) and
// reports requests per CPU-second, the figure BLIS's runs give as about
// 1,400 to 1,800.
func BenchmarkReplayRate14(b *testing.B) {
	p, lat := qwenH100(b)
	reqs := poisson(14, 50400, 42)
	if rs, err := ReadBLISTrace(filepath.Join(refDir, "r14_requests.csv.gz")); err == nil {
		reqs = rs
	} else if !os.IsNotExist(err) {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cpuSeconds()
	for range b.N {
		if _, err := Replay(p, lat, reqs); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuSeconds() - cpu
	if cpu > 0 {
		b.ReportMetric(float64(len(reqs)*b.N)/cpu, "req/CPU-s")
	}
}
