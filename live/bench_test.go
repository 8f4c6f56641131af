package live

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkSchedulingCall measures a live scheduling call (the policy's
// Schedule and the application of its decisions through the host; the
// state file's fsync and the launches excluded) with 10,000 jobs queued
// on 8 GPUs: each iteration ends one running job, whose GPU the call
// gives to the next. It reports the calls' p50 and p99 in µs.
//
//	go test ./live -run '^$' -bench SchedulingCall -benchtime 2000x
func BenchmarkSchedulingCall(b *testing.B) {
	for _, spec := range []string{"fcfs", "sjf+bf", "fair/bestfit", "priority+bf/packing"} {
		b.Run(spec, func(b *testing.B) { benchCall(b, spec, 10_000) })
	}
}

func benchCall(b *testing.B, spec string, queued int) {
	dir := b.TempDir()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d, err := Open(Config{GPUs: FakeGPUs(8), Policy: spec, State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Clock: clock, Backoff: -1, Machine: Machine{CPUMilli: 64000, MemoryMiB: 1 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	procs := &fakeProcs{d: d, clock: clock,
		length: func(*Record) time.Duration { return 1000 * time.Hour }, // ended by the benchmark
		code:   func(*Record) int { return 0 }}
	d.launchFn = procs.launch
	specs := make([]JobSpec, queued+8)
	for i := range specs {
		specs[i] = JobSpec{Name: fmt.Sprintf("j%05d", i), Command: "true", GPUs: 1 + i%2, CPUMilli: 1000,
			Tenant: fmt.Sprintf("t%d", i%4), Priority: i % 3, Estimate: fmt.Sprintf("%dm", 1+i%50)}
	}
	if _, err := d.Submit(specs); err != nil {
		b.Fatal(err)
	}
	if err := d.round(); err != nil {
		b.Fatal(err)
	}
	d.Latencies = d.Latencies[:0]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(procs.running) == 0 {
			b.Fatalf("nothing runs after %d calls", i)
		}
		clock.t = clock.t.Add(time.Second)
		procs.running[0].end = clock.t
		if err := procs.deliver(); err != nil {
			b.Fatal(err)
		}
		for d.host.HasNews() || len(d.exits) > 0 {
			if err := d.round(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	lat := slices.Clone(d.Latencies)
	if len(lat) == 0 {
		return // a short run (the first, of one iteration) may decide nothing
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat))/float64(b.N), "calls/op")
	_ = os.RemoveAll(dir)
}
