package results

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

const sec = hwmodel.Second

type obs struct {
	at hwmodel.Time
	s  State
}

func feed(tl *Timeline, steps []obs, end hwmodel.Time) *Timeline {
	for _, o := range steps {
		tl.Observe(o.at, o.s)
	}
	tl.Close(end)
	return tl
}

func TestTimelineStepFunction(t *testing.T) {
	// A hand-worked step function, 10 s buckets, 4 GPUs:
	//   [ 5,15)  Q2 R1 S3 A1000   (10 s)
	//   [15,30)  Q1 R2 S3 A2000   (15 s; the state observed at 15 s with Q0
	//                              is overridden at the same instant)
	//   [30,40)  all zero         (10 s)
	steps := []obs{
		{5 * sec, State{Queued: 2, Running: 1, InSystem: 3, AllocatedMilli: 1000}},
		{15 * sec, State{Queued: 0, Running: 2, InSystem: 2, AllocatedMilli: 2000}},
		{15 * sec, State{Queued: 1, Running: 2, InSystem: 3, AllocatedMilli: 2000}},
		{30 * sec, State{}},
	}
	tl := feed(NewTimeline(10*sec, 4000), steps, 40*sec)

	if got, want := tl.Integrals(), (Integrals{
		QueuedJobSeconds:         2*10 + 1*15,
		RunningJobSeconds:        1*10 + 2*15,
		InSystemJobSeconds:       3*10 + 3*15,
		AllocatedMilliGPUSeconds: 1000*10 + 2000*15,
	}); got != want {
		t.Errorf("Integrals = %+v, want %+v", got, want)
	}
	// Q0 and S2 held for no time, so they do not lower anything; maxima
	// come from states that held.
	if got, want := tl.Max(), (State{Queued: 2, Running: 2, InSystem: 3, AllocatedMilli: 2000}); got != want {
		t.Errorf("Max = %+v, want %+v", got, want)
	}
	if tl.Start() != 5*sec || tl.End() != 40*sec || !tl.Closed() {
		t.Errorf("window [%d, %d] closed=%v, want [5 s, 40 s] closed", tl.Start(), tl.End(), tl.Closed())
	}
	want := []Bucket{
		{Start: 0, Width: 10 * sec, Covered: 5 * sec, QueueLength: 2, RunningJobs: 1, GPUUtilisation: 0.25},
		// [10,15) Q2 R1 A1000, [15,20) Q1 R2 A2000
		{Start: 10 * sec, Width: 10 * sec, Covered: 10 * sec, QueueLength: 1.5, RunningJobs: 1.5, GPUUtilisation: 0.375},
		{Start: 20 * sec, Width: 10 * sec, Covered: 10 * sec, QueueLength: 1, RunningJobs: 2, GPUUtilisation: 0.5},
		{Start: 30 * sec, Width: 10 * sec, Covered: 10 * sec},
	}
	got := tl.Buckets()
	if len(got) != len(want) {
		t.Fatalf("got %d buckets, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTimelineMerge(t *testing.T) {
	// With room for 4 buckets of 10 s, a run to 100 s merges twice, to 40 s:
	//   [ 0,30) Q1 A500, [30,50) Q3 A1000, [50,100) zero; capacity 1 GPU.
	steps := []obs{
		{0, State{Queued: 1, InSystem: 1, AllocatedMilli: 500}},
		{30 * sec, State{Queued: 3, InSystem: 3, AllocatedMilli: 1000}},
		{50 * sec, State{}},
	}
	tl := feed(newTimeline(10*sec, 1000, 4), steps, 100*sec)
	if tl.BucketWidth() != 40*sec {
		t.Fatalf("width = %d, want 40 s", tl.BucketWidth())
	}
	want := []Bucket{
		// Q: 1×30 + 3×10 = 60 over 40 s; A: 500×30 + 1000×10 = 25000 over 40×1000
		{Start: 0, Width: 40 * sec, Covered: 40 * sec, QueueLength: 1.5, GPUUtilisation: 0.625},
		{Start: 40 * sec, Width: 40 * sec, Covered: 40 * sec, QueueLength: 0.75, GPUUtilisation: 0.25},
		{Start: 80 * sec, Width: 40 * sec, Covered: 20 * sec},
	}
	got := tl.Buckets()
	if len(got) != len(want) {
		t.Fatalf("got %d buckets, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if q := tl.Integrals().QueuedJobSeconds; q != 90 {
		t.Errorf("∫Queued = %v, want 90", q)
	}
}

// A merged Timeline must equal one built at the final width from the start:
// merging is exact, not an approximation.
func TestTimelineMergeMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var steps []obs
	now := hwmodel.Time(r.Int64N(int64(hwmodel.Hour)))
	for range 5000 {
		steps = append(steps, obs{now, State{
			Queued: r.IntN(50), Running: r.IntN(20), InSystem: r.IntN(80), AllocatedMilli: r.Int64N(64000),
		}})
		now += hwmodel.Time(r.Int64N(int64(10 * hwmodel.Minute)))
	}
	merged := feed(newTimeline(sec, 64000, 16), steps, now)
	direct := feed(newTimeline(merged.BucketWidth(), 64000, 1<<20), steps, now)
	if merged.Integrals() != direct.Integrals() || merged.Max() != direct.Max() {
		t.Fatalf("totals differ: %+v %+v vs %+v %+v", merged.Integrals(), merged.Max(), direct.Integrals(), direct.Max())
	}
	a, b := merged.Buckets(), direct.Buckets()
	if len(a) != len(b) || len(a) > 16 || len(a) < 8 {
		t.Fatalf("bucket counts %d vs %d (want 8..16)", len(a), len(b))
	}
	var q float64
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("bucket %d: merged %+v, direct %+v", i, a[i], b[i])
		}
		q += a[i].QueueLength * float64(a[i].Covered)
	}
	// The buckets' time-weighted means add back up to the integral.
	if want := merged.Integrals().QueuedJobSeconds * float64(sec); math.Abs(q-want) > 1e-9*want {
		t.Errorf("Σ bucket mean × covered = %v, want %v", q, want)
	}
}

func TestTimelineLargeIntegralsDoNotOverflow(t *testing.T) {
	// 10,000 GPUs fully allocated for a year: 10^7 milli × 3.15×10^13 µs is
	// past int64, but the 128-bit sums stay exact.
	const year = 365 * hwmodel.Day
	tl := NewTimeline(hwmodel.Hour, 10_000_000)
	tl.Observe(0, State{Running: 1 << 20, InSystem: 1 << 20, AllocatedMilli: 10_000_000})
	tl.Close(year)
	want := 1e7 * year.Seconds()
	if got := tl.Integrals().AllocatedMilliGPUSeconds; got != want {
		t.Errorf("∫alloc = %v, want %v", got, want)
	}
	for _, b := range tl.Buckets() {
		if b.GPUUtilisation != 1 || b.RunningJobs != 1<<20 {
			t.Fatalf("bucket %+v, want utilisation 1 and %d running", b, 1<<20)
		}
	}
	if n := len(tl.Buckets()); n > MaxBuckets || n < MaxBuckets/2 {
		t.Errorf("%d buckets, want %d..%d", n, MaxBuckets/2, MaxBuckets)
	}
}

func TestTimelineEmpty(t *testing.T) {
	tl := NewTimeline(0, 0)
	tl.Close(7 * sec)
	if tl.Start() != 7*sec || tl.End() != 7*sec || tl.Buckets() != nil || tl.Integrals() != (Integrals{}) {
		t.Errorf("empty timeline: start %d end %d buckets %v integrals %+v", tl.Start(), tl.End(), tl.Buckets(), tl.Integrals())
	}
	if tl.BucketWidth() != DefaultBucket {
		t.Errorf("width %d, want DefaultBucket", tl.BucketWidth())
	}
	tl.Close(7 * sec) // same end: no-op
}

func TestTimelineMisusePanics(t *testing.T) {
	cases := []struct {
		name string
		f    func(tl *Timeline)
	}{
		{"backwards", func(tl *Timeline) { tl.Observe(10, State{}); tl.Observe(9, State{}) }},
		{"negative time", func(tl *Timeline) { tl.Observe(-1, State{}) }},
		{"negative count", func(tl *Timeline) { tl.Observe(0, State{Queued: -1}) }},
		{"observe after close", func(tl *Timeline) { tl.Close(5); tl.Observe(5, State{}) }},
		{"close before last observe", func(tl *Timeline) { tl.Observe(10, State{}); tl.Close(9) }},
		{"close twice at different ends", func(tl *Timeline) { tl.Close(5); tl.Close(6) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			c.f(NewTimeline(sec, 1000))
		})
	}
}

func TestTimelineObserveDoesNotAllocate(t *testing.T) {
	tl := NewTimeline(sec, 8000)
	var now hwmodel.Time
	i := 0
	allocs := testing.AllocsPerRun(100000, func() {
		i++
		now += hwmodel.Time(i%7) * 300 * hwmodel.Millisecond // crosses buckets, forces merges
		tl.Observe(now, State{Queued: i % 5, Running: i % 3, InSystem: i%5 + i%3, AllocatedMilli: int64(i%8) * 1000})
	})
	if allocs != 0 {
		t.Errorf("Observe: %v allocs per call, want 0", allocs)
	}
	if tl.BucketWidth() == sec {
		t.Errorf("the run never merged; the test does not cover merging")
	}
}

func BenchmarkTimelineObserve(b *testing.B) {
	tl := NewTimeline(sec, 8000)
	var now hwmodel.Time
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now += hwmodel.Time(i%7) * 300 * hwmodel.Millisecond
		tl.Observe(now, State{Queued: i % 5, Running: i % 3, InSystem: i%5 + i%3, AllocatedMilli: int64(i%8) * 1000})
	}
}

func TestTimelineFragmentation(t *testing.T) {
	s := hwmodel.Second
	tl := NewTimeline(20*s, 2000)
	tl.Observe(0, State{Running: 1, AllocatedMilli: 1000, FragmentedMilli: 500})
	tl.Observe(10*s, State{})
	tl.Close(20 * s)
	if got := tl.Integrals().FragmentedMilliGPUSeconds; got != 5000 {
		t.Fatalf("∫frag = %v milli-GPU·s, want 500 × 10 = 5000", got)
	}
	b := tl.Buckets()
	if len(b) != 1 {
		t.Fatalf("%d buckets, want 1", len(b))
	}
	// Idle: 2000 × 20 − 1000 × 10 = 30000 milli-GPU·s, of which 5000 fragmented.
	if got, want := b[0].GPUFragmentation, 5000.0/30000; math.Abs(got-want) > 1e-12 {
		t.Fatalf("bucket fragmentation = %v, want %v", got, want)
	}
	if tl.Max().FragmentedMilli != 500 {
		t.Fatalf("max fragmentation %d, want 500", tl.Max().FragmentedMilli)
	}
}
