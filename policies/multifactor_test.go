package policies

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// mfQueueOf is the multifactor queue inside policy p.
func mfQueueOf(tb testing.TB, p Policy) *mfQueue {
	tb.Helper()
	q, ok := p.(*scheduler).q.(*mfQueue)
	if !ok {
		tb.Fatalf("%s has no multifactor queue", p.Name())
	}
	return q
}

// mfRanked is the queue in order: job IDs and their priorities.
func mfRanked(q *mfQueue) (ids []JobID, prio []float64) {
	q.t.ascend(func(it qitem) bool {
		ids = append(ids, it.id)
		prio = append(prio, -it.f)
		return true
	})
	return ids, prio
}

// fullCluster is one node of 8 H100s, all of them taken by a placement no
// job holds (no tenant's books), with all its CPU, so that queued jobs
// stay queued.
func fullCluster(tb testing.TB) *hwmodel.Cluster {
	c := newCluster(tb, node(model(tb, "H100"), 8, 64000, 512*1024))
	busy(tb, c, 0, 0xff, hwmodel.MilliPerGPU, 64000)
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

// Each factor alone, then all four together, on jobs queued on a full
// 8-GPU cluster and ranked at the first call, at 24h.
func TestMultifactorPriorities(t *testing.T) {
	h := hwmodel.Hour
	jobs := []Job{
		{Queued: 0, Req: whole(2), Priority: 10},            // 0
		{Queued: 6 * h, Req: frac(500), Priority: 5},        // 1
		{Queued: 18 * h, Req: cpuOnly(1000), Priority: 0},   // 2
		{Queued: 24 * h, Req: whole(8), Priority: -10},      // 3
		{Queued: 12 * h, Req: whole(16), Priority: 0},       // 4: more than the cluster: size capped at 1
		{Queued: 24*h - 30*hwmodel.Minute, Req: whole(1)},   // 5
		{Queued: 0, Req: whole(4), Priority: 10, Tenant: 0}, // 6
	}
	for _, tc := range []struct {
		name string
		m    Multifactor
		want []float64 // by job ID
	}{
		// age = min(24h − Queued, 1d)/1d: 1, 18/24, 6/24, 0, 12/24, 0.5/24, 1.
		{"age", Multifactor{Age: 1000, MaxAge: 24 * h}, []float64{1000, 750, 250, 0, 500, 1000.0 / 48, 1000}},
		// MaxAge 12h: ages of 12h and more count 1.
		{"age capped", Multifactor{Age: 1000, MaxAge: 12 * h}, []float64{1000, 1000, 500, 0, 1000, 1000.0 / 24, 1000}},
		// One tenant, no usage yet: 2^0 = 1 for every job.
		{"fair share", Multifactor{Fairshare: 10000}, []float64{10000, 10000, 10000, 10000, 10000, 10000, 10000}},
		// GPU milli over 8,000: 2000, 500, 0, 8000, 16000 (capped), 1000, 4000.
		{"size", Multifactor{JobSize: 1000}, []float64{250, 62.5, 0, 1000, 1000, 125, 500}},
		{"size favouring small", Multifactor{JobSize: 1000, FavorSmall: true}, []float64{750, 937.5, 1000, 0, 0, 875, 500}},
		// Priorities range over [−10, 10]: (p + 10)/20.
		{"qos", Multifactor{QOS: 100}, []float64{100, 75, 50, 0, 50, 50, 100}},
		// All four: job 0 is 1000·1 + 10·1 + 100·0.25 + 20·1 = 1055;
		// job 1 is 750 + 10 + 6.25 + 15 = 781.25; job 2 250 + 10 + 0 + 10;
		// job 3 0 + 10 + 100 + 0; job 4 500 + 10 + 100 + 10; job 5
		// 1000/48 + 10 + 12.5 + 10; job 6 1000 + 10 + 50 + 20.
		{"combined", Multifactor{Age: 1000, Fairshare: 10, JobSize: 100, QOS: 20, MaxAge: 24 * h},
			[]float64{1055, 781.25, 270, 110, 620, 1000.0/48 + 32.5, 1080}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeView(t, fullCluster(t))
			f.SetNow(24 * h)
			for _, j := range jobs {
				f.add(j)
			}
			p := mustNew(t, "multifactor", Options{Multifactor: tc.m})
			if ds := f.call(p); len(ds) != 0 {
				t.Fatalf("started %v on a full cluster", ids(ds))
			}
			got, prio := mfRanked(mfQueueOf(t, p))
			byID := make([]float64, len(jobs))
			for i, id := range got {
				byID[id] = prio[i]
			}
			for id := range jobs {
				if !near(byID[id], tc.want[id]) {
					t.Errorf("job %d: priority %v, want %v", id, byID[id], tc.want[id])
				}
			}
			// The order is by priority, highest first, then by ID.
			want := slices.Clone(got)
			slices.SortStableFunc(want, func(a, b JobID) int {
				if tc.want[a] != tc.want[b] {
					if tc.want[a] > tc.want[b] {
						return -1
					}
					return 1
				}
				return int(a - b)
			})
			if !slices.Equal(got, want) {
				t.Errorf("order %v, want %v", got, want)
			}
		})
	}
}

// Usage integrates the GPUs held exactly and decays by the half-life; the
// fair-share factor is 2^(−U/S).
func TestMultifactorUsageAndFairShare(t *testing.T) {
	h := hwmodel.Hour
	for _, tc := range []struct {
		name     string
		halfLife Time
		// usage of tenant 0 after running 4 GPUs for 1h, then after a
		// further idle hour, in GPU-seconds.
		used, idle float64
	}{
		// No decay: 4 GPUs · 3600 s = 14,400, and it stays.
		{"no decay", -1, 14400, 14400},
		// Half-life 1h: ∫₀¹ʰ 4·2^(−(1h−s)/1h) ds = 4·3600/ln 2·(1 − ½)
		// = 7200/ln 2 ≈ 10,387.0; an idle half-life halves it.
		{"half-life 1h", h, 7200 / math.Ln2, 3600 / math.Ln2},
		// Half-life 2h: 4·7200/ln 2·(1 − 2^−½) ≈ 12,165.6; an idle hour
		// multiplies it by 2^−½.
		{"half-life 2h", 2 * h, 28800 / math.Ln2 * (1 - math.Sqrt2/2), 28800 / math.Ln2 * (1 - math.Sqrt2/2) * math.Sqrt2 / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, node(model(t, "H100"), 8, 64000, 512*1024))
			f := newFakeView(t, c, Tenant{Name: "a", Weight: 1}, Tenant{Name: "b", Weight: 3})
			p := mustNew(t, "multifactor", Options{Multifactor: Multifactor{Fairshare: 10000, HalfLife: tc.halfLife, CalcPeriod: -1}})
			q := mfQueueOf(t, p)
			a := f.add(Job{Tenant: 0, Req: whole(4)})
			if ds := f.call(p); len(ds) != 1 {
				t.Fatalf("decisions %v, want job a started", ids(ds))
			}
			f.SetNow(h)
			f.end(a)
			f.call(p)
			if !near(q.usage[0], tc.used) || q.usage[1] != 0 {
				t.Fatalf("usage after 1h %v, want [%v 0]", q.usage, tc.used)
			}
			f.SetNow(2 * h)
			f.add(Job{Tenant: 1, Req: cpuOnly(1000)}) // news, so a call
			f.call(p)
			if !near(q.usage[0], tc.idle) {
				t.Fatalf("usage after an idle hour %v, want %v", q.usage[0], tc.idle)
			}
			// Tenant a holds all the usage and a quarter of the weight:
			// 2^(−1/0.25) = 1/16; b used nothing: 1.
			if !near(q.fs[0], 1.0/16) || q.fs[1] != 1 {
				t.Errorf("fair-share factors %v, want [0.0625 1]", q.fs)
			}
		})
	}
}

// A tenant that used more goes behind, though its job came first; as its
// usage decays the order comes back. Half-life 1h, fair share weighs 1000
// and age 1000 over a max age of 8h.
func TestMultifactorFairShareOrder(t *testing.T) {
	h := hwmodel.Hour
	c := newCluster(t, node(model(t, "H100"), 8, 64000, 512*1024))
	f := newFakeView(t, c, Tenant{Name: "a", Weight: 1}, Tenant{Name: "b", Weight: 1})
	p := mustNew(t, "multifactor", Options{Multifactor: Multifactor{Age: 1000, Fairshare: 1000, MaxAge: 8 * h, HalfLife: h, CalcPeriod: -1}})
	q := mfQueueOf(t, p)
	hog := f.add(Job{Tenant: 0, Req: whole(8)})
	f.call(p)
	f.SetNow(h)
	// a's hog ran 8 GPUs for an hour: U_a = 1 of all usage, S_a = ½, so
	// F_a = 2^−2 = ¼ (250) and F_b = 1 (1000). Job 1 (a) comes before
	// job 2 (b) by 10 minutes: 1000·(10m/8h) ≈ 20.8 of age does not make
	// up 750 of fair share.
	first := f.add(Job{Tenant: 0, Submit: h - 10*hwmodel.Minute, Req: whole(8)})
	f.SetNow(h)
	second := f.add(Job{Tenant: 1, Submit: h, Req: whole(8)})
	f.end(hog)
	ds := f.call(p)
	if got := ids(ds); !slices.Equal(got, []JobID{second}) {
		t.Fatalf("started %v, want b's job %d ahead of a's %d", got, second, first)
	}
	if !near(q.fs[0], 0.25) || q.fs[1] != 1 {
		t.Fatalf("fair-share factors %v, want [0.25 1]", q.fs)
	}
	// b's job runs 8 GPUs for the next hour, one half-life: a's usage
	// halves while b's grows to what a's was, U_a = 8·3600/ln 2·½·½ and
	// U_b = 8·3600/ln 2·½, so U_a/ΣU = 1/3 and F_a = 2^(−(1/3)/½) =
	// 2^(−2/3) ≈ 0.630, F_b = 2^(−(2/3)/½) = 2^(−4/3) ≈ 0.397.
	f.SetNow(2 * h)
	f.end(second)
	if got := ids(f.call(p)); !slices.Equal(got, []JobID{first}) {
		t.Fatalf("started %v, want a's job %d", got, first)
	}
	if !near(q.fs[0], math.Exp2(-2.0/3)) || !near(q.fs[1], math.Exp2(-4.0/3)) {
		t.Fatalf("fair-share factors %v, want [2^(−2/3) 2^(−4/3)]", q.fs)
	}
}

// mfRun drives policy p through a stream of jobs on cluster c: arrivals
// at their Submit, each running its Estimate, a call at every instant
// with news. It returns the start order.
func mfRun(t *testing.T, p Policy, c *hwmodel.Cluster, jobs []Job) []JobID {
	f := newFakeView(t, c)
	var started []JobID
	ends := map[JobID]Time{}
	next := 0
	for now := Time(0); next < len(jobs) || len(ends) > 0; {
		f.SetNow(now)
		for next < len(jobs) && jobs[next].Submit == now {
			f.add(jobs[next])
			next++
		}
		for _, id := range slices.Sorted(mapKeys(ends)) {
			if ends[id] == now {
				f.end(id)
				delete(ends, id)
			}
		}
		for _, d := range f.call(p) {
			started = append(started, d.Job)
			ends[d.Job] = now + f.Job(d.Job).Estimate
		}
		// The next instant: an arrival or an end.
		nxt := Time(math.MaxInt64)
		if next < len(jobs) {
			nxt = jobs[next].Submit
		}
		for _, e := range ends {
			nxt = min(nxt, e)
		}
		if nxt == math.MaxInt64 {
			break
		}
		now = nxt
	}
	return started
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// With the age weight alone (default max age and calc period), the
// multifactor order starts jobs in exactly FCFS's order, backfill or not.
func TestMultifactorAgeOnlyIsFCFS(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var jobs []Job
	at := Time(0)
	for range 300 {
		at += Time(r.IntN(20)) * hwmodel.Minute
		jobs = append(jobs, Job{Submit: at, Estimate: Time(1+r.IntN(180)) * hwmodel.Minute, Req: whole(1 + r.IntN(8))})
	}
	for _, bf := range []bool{false, true} {
		cl := func() *hwmodel.Cluster { return newCluster(t, node(model(t, "H100"), 8, 64000, 512*1024)) }
		fcfs := mfRun(t, mustNew(t, "fcfs", Options{Backfill: bf}), cl(), jobs)
		mf := mfRun(t, mustNew(t, "multifactor", Options{Backfill: bf, Multifactor: Multifactor{Age: 1000}}), cl(), jobs)
		if len(fcfs) != len(jobs) || !slices.Equal(fcfs, mf) {
			t.Errorf("backfill %v: multifactor+age started %v\nFCFS started %v", bf, mf, fcfs)
		}
	}
}

// Priorities are recomputed only when the calc period has passed: between
// recomputations a waiting job keeps the priority of the last one, and a
// new job enters with age 0.
func TestMultifactorCalcPeriod(t *testing.T) {
	m := hwmodel.Minute
	f := newFakeView(t, fullCluster(t))
	p := mustNew(t, "multifactor", Options{Multifactor: Multifactor{Age: 1000, MaxAge: 100 * m}})
	q := mfQueueOf(t, p)
	f.SetNow(10 * m)
	f.add(Job{Queued: 0, Req: whole(1)})
	f.call(p) // a rebuild at 10m: job 0 has age 10/100
	f.SetNow(14 * m)
	f.add(Job{Queued: 14 * m, Req: whole(1)})
	f.call(p) // 4m later: no rebuild; job 1 gets its age as of 10m, 0
	if _, prio := mfRanked(q); !slices.Equal(prio, []float64{100, 0}) {
		t.Fatalf("priorities at 14m %v, want [100 0]", prio)
	}
	f.SetNow(15 * m)
	f.add(Job{Queued: 15 * m, Req: whole(1)})
	f.call(p) // 5m after the last: every priority as of 15m
	if _, prio := mfRanked(q); !slices.Equal(prio, []float64{150, 10, 0}) {
		t.Fatalf("priorities at 15m %v, want [150 10 0]", prio)
	}
}

// The usage books take back a start the driver rejected: the interval
// after the call counts only what really ran.
func TestMultifactorRejectedStartUsesNothing(t *testing.T) {
	c := newCluster(t, node(model(t, "H100"), 8, 64000, 512*1024))
	f := newFakeView(t, c)
	p := mustNew(t, "multifactor", Options{Multifactor: Multifactor{Fairshare: 1, HalfLife: -1, CalcPeriod: -1}})
	q := mfQueueOf(t, p)
	a := f.add(Job{Req: whole(2)})
	f.reject = map[JobID]bool{a: true}
	f.call(p) // a's start is refused
	f.SetNow(hwmodel.Hour)
	f.add(Job{Req: cpuOnly(1000)})
	f.call(p) // a starts now
	if q.usage[0] != 0 {
		t.Fatalf("usage %v after a rejected start, want 0", q.usage[0])
	}
	f.SetNow(2 * hwmodel.Hour)
	f.end(a)
	f.call(p)
	if q.usage[0] != 7200 { // 2 GPUs for an hour
		t.Fatalf("usage %v, want 7200", q.usage[0])
	}
}
