package policies

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

const h = hwmodel.Hour

// bigCluster has room for every job of the order tests at once, so one call
// starts them all and the decisions come out in queue order.
func bigCluster(tb testing.TB) *hwmodel.Cluster {
	return newCluster(tb, node(0, 64, 1_000_000, 1<<30))
}

func TestOrders(t *testing.T) {
	type tc struct {
		name    string
		policy  string
		opt     Options
		now     Time
		tenants []Tenant
		jobs    []Job
		want    []JobID
		cluster func(testing.TB) *hwmodel.Cluster
	}
	cases := []tc{
		{
			name: "fcfs by submit time, ties by ID", policy: "fcfs",
			jobs: []Job{{Submit: 30}, {Submit: 10}, {Submit: 20}, {Submit: 10}},
			want: []JobID{1, 3, 2, 0},
		},
		{
			name: "sjf by estimate, then submit, then ID", policy: "sjf",
			jobs: []Job{{Submit: 1, Estimate: 3 * h}, {Submit: 2, Estimate: h}, {Submit: 0, Estimate: 2 * h},
				{Submit: 1, Estimate: h}, {Submit: 1, Estimate: h}},
			want: []JobID{3, 4, 1, 2, 0},
		},
		{
			name: "sjf with the oracle uses true durations where revealed", policy: "sjf", opt: Options{UseOracle: true},
			jobs: []Job{{Estimate: 3 * h, Oracle: h / 2}, {Estimate: h}, {Estimate: 2 * h, Oracle: 4 * h}},
			want: []JobID{0, 1, 2},
		},
		{
			name: "sjf without the oracle ignores it", policy: "sjf",
			jobs: []Job{{Estimate: 3 * h, Oracle: h / 2}, {Estimate: h}, {Estimate: 2 * h, Oracle: 4 * h}},
			want: []JobID{1, 2, 0},
		},
		{
			name: "priority: higher first before aging tells", policy: "priority", now: 2 * h,
			jobs: []Job{{Priority: 1, Queued: 0}, {Priority: 5, Queued: 2 * h}},
			want: []JobID{1, 0},
		},
		{
			name: "priority: a long wait overtakes a higher priority", policy: "priority", now: 6 * h,
			jobs: []Job{{Priority: 1, Queued: 0}, {Priority: 5, Queued: 6 * h}},
			want: []JobID{0, 1},
		},
		{
			name: "priority: equal scores tie by ID", policy: "priority", now: 4 * h,
			jobs: []Job{{Priority: 5, Queued: 4 * h}, {Priority: 1, Queued: 0}},
			want: []JobID{0, 1},
		},
		{
			name: "priority: weights scale the terms", policy: "priority", now: 6 * h,
			opt:  Options{PriorityWeight: 2, WaitWeightPerHour: 0.5}, // 2·1+0.5·6=5 < 2·5=10
			jobs: []Job{{Priority: 1, Queued: 0}, {Priority: 5, Queued: 6 * h}},
			want: []JobID{1, 0},
		},
		{
			name: "priority: aging off", policy: "priority", now: 100 * h,
			opt:  Options{WaitWeightPerHour: -1},
			jobs: []Job{{Priority: 1, Queued: 0}, {Priority: 2, Queued: 99 * h}, {Priority: 2, Queued: 0}},
			want: []JobID{1, 2, 0},
		},
		{
			name: "fair: weight 2 tenant gets two starts for each of weight 1", policy: "fair",
			tenants: []Tenant{{Name: "a", Weight: 2}, {Name: "b", Weight: 1}},
			cluster: func(tb testing.TB) *hwmodel.Cluster { return newCluster(tb, node(0, 6, 1_000_000, 1<<30)) },
			jobs: []Job{
				{Tenant: 1, Submit: 0}, {Tenant: 1, Submit: 1}, {Tenant: 1, Submit: 2}, {Tenant: 1, Submit: 3},
				{Tenant: 0, Submit: 5}, {Tenant: 0, Submit: 6}, {Tenant: 0, Submit: 7}, {Tenant: 0, Submit: 8}, {Tenant: 0, Submit: 9},
			},
			// a (0/2) ties b (0/1): a first by index; then b; a; a and b
			// tie at 1/6, a; b; a — and the cluster is full.
			want: []JobID{4, 0, 5, 6, 1, 7},
		},
		{
			name: "fair: current allocation counts, FCFS within a tenant", policy: "fair",
			tenants: []Tenant{
				{Name: "a", Weight: 1, AllocatedMilliGPU: 2000},
				{Name: "b", Weight: 1},
				{Name: "c", Weight: 1, AllocatedCPUMilli: 500_000}, // dominant: CPU, half the cluster
			},
			cluster: func(tb testing.TB) *hwmodel.Cluster { return newCluster(tb, node(0, 8, 1_000_000, 1<<30)) },
			jobs: []Job{
				{Tenant: 0, Submit: 0}, {Tenant: 2, Submit: 0}, {Tenant: 1, Submit: 9}, {Tenant: 1, Submit: 8}, {Tenant: 1, Submit: 7},
			},
			// b: 0, then 1/8, 2/8 = a's; a (index 0) first, then b, then c (1/2) last.
			want: []JobID{4, 3, 0, 2, 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mk := bigCluster
			if tc.cluster != nil {
				mk = tc.cluster
			}
			v := newFakeView(t, mk(t), slices.Clone(tc.tenants)...)
			v.now = tc.now
			for _, j := range tc.jobs {
				j.Req = whole(1)
				v.add(j)
			}
			got := ids(v.call(mustNew(t, tc.policy, tc.opt)))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("started %v, want %v", got, tc.want)
			}
		})
	}
}

// Over calls, fair share follows what tenants hold now: with equal weights
// and the oldest job ending at each call, the tenants take turns even
// though tenant a has many more jobs queued (and queued earlier).
func TestFairShareAlternatesOverCalls(t *testing.T) {
	c := newCluster(t, node(0, 2, 64000, 1<<20))
	v := newFakeView(t, c, Tenant{Name: "a", Weight: 1}, Tenant{Name: "b", Weight: 1})
	for i := 0; i < 20; i++ {
		v.add(Job{Tenant: 0, Submit: Time(i), Req: whole(1)})
	}
	for i := 0; i < 5; i++ {
		v.add(Job{Tenant: 1, Submit: Time(100 + i), Req: whole(1)})
	}
	p := mustNew(t, "fair", Options{})
	var running []JobID
	var tenants []int
	for call := 0; call < 7; call++ {
		if call > 0 {
			v.end(running[0])
			running = running[1:]
		}
		for _, d := range v.call(p) {
			running = append(running, d.Job)
			tenants = append(tenants, v.jobs[d.Job].Tenant)
		}
	}
	if want := []int{0, 1, 0, 1, 0, 1, 0, 1}; !slices.Equal(tenants, want) {
		t.Fatalf("tenants started %v, want %v", tenants, want)
	}
}

func TestStrictBlocksBehindHead(t *testing.T) {
	for _, name := range NonPreemptiveNames() {
		t.Run(name, func(t *testing.T) {
			v := newFakeView(t, newCluster(t, node(0, 4, 64000, 1<<20)))
			p := mustNew(t, name, Options{})
			v.add(Job{Req: whole(2), Estimate: 10 * h})
			if got := ids(v.call(p)); !slices.Equal(got, []JobID{0}) {
				t.Fatalf("setup: %v", got)
			}
			v.add(Job{Submit: 1, Req: whole(4), Estimate: h / 60}) // the head in every order
			v.add(Job{Submit: 2, Req: whole(1), Estimate: 2 * h})
			v.add(Job{Submit: 3, Req: cpuOnly(1000), Estimate: 2 * h})
			if got := v.call(p); len(got) != 0 {
				t.Fatalf("strict %s started %v behind a blocked head", name, ids(got))
			}
		})
	}
}

func TestEASYBackfill(t *testing.T) {
	// One node, 4 GPUs, 8 CPUs. A running job holds 2 GPUs until 10h.
	setup := func(t *testing.T, name string, headGPUs int) (*fakeView, Policy) {
		c := newCluster(t, node(0, 4, 8000, 1<<20))
		v := newFakeView(t, c)
		p := mustNew(t, name, Options{Backfill: true})
		v.add(Job{Req: whole(2), Estimate: 10 * h})
		if got := ids(v.call(p)); !slices.Equal(got, []JobID{0}) {
			t.Fatalf("setup: %v", got)
		}
		v.now = h
		v.add(Job{Submit: h, Req: whole(headGPUs)}) // 1: blocked head
		return v, p
	}
	type cand struct {
		req   hwmodel.Request
		est   Time
		start bool
	}
	cases := []struct {
		name     string
		headGPUs int
		cands    []cand
	}{
		{"short job ending before the shadow starts; a long one would delay the head", 4, []cand{
			{whole(1), 20 * h, false}, // ends after the shadow (10h), extra is 0
			{whole(1), 2 * h, true},   // ends at 3h <= 10h
			{whole(1), 9 * h, true},   // ends exactly at 10h
			{whole(1), h, false},      // no idle GPU left
		}},
		{"a long job may use the extra GPUs, once", 3, []cand{
			{whole(1), 20 * h, true},  // extra = 4 - 3 = 1
			{whole(1), 20 * h, false}, // extra used up
		}},
		{"with every GPU taken, GPU jobs are skipped but cpu-only ones still start", 4, []cand{
			{whole(2), 2 * h, true},
			{whole(1), h, false},
			{cpuOnly(1000), 100 * h, true},
		}},
		{"cpu-only jobs use none of the reserved GPUs", 4, []cand{
			{cpuOnly(1000), 100 * h, true},
			{whole(1), 20 * h, false},
			{cpuOnly(1000), 100 * h, true},
		}},
	}
	for _, tc := range cases {
		for _, name := range []string{"fcfs", "priority"} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				v, p := setup(t, name, tc.headGPUs)
				var want []JobID
				for k, cd := range tc.cands {
					id := v.add(Job{Submit: h + Time(k+1), Queued: h, Req: cd.req, Estimate: cd.est})
					if cd.start {
						want = append(want, id)
					}
				}
				got := ids(v.call(p))
				if !slices.Equal(got, want) {
					t.Fatalf("backfilled %v, want %v", got, want)
				}
				// At the shadow time, once the running job and the short
				// backfilled ones have ended, the head starts first.
				v.now = 10 * h
				v.end(0)
				for _, id := range got {
					if v.jobs[id].Start+v.jobs[id].Estimate <= v.now {
						v.end(id)
					}
				}
				got = ids(v.call(p))
				if len(got) == 0 || got[0] != 1 {
					t.Fatalf("after the shadow time started %v, want the head (1) first", got)
				}
			})
		}
	}
}

func TestEASYBackfillCPUOnlyHead(t *testing.T) {
	c := newCluster(t, node(0, 2, 8000, 1<<20))
	v := newFakeView(t, c)
	p := mustNew(t, "fcfs", Options{Backfill: true})
	v.add(Job{Req: cpuOnly(6000), Estimate: 10 * h})
	v.call(p)
	v.now = h
	v.add(Job{Submit: h, Req: cpuOnly(7000)})                                                         // 1: blocked; shadow 10h, extra 1000 CPU
	long := v.add(Job{Submit: h + 1, Req: cpuOnly(500), Estimate: 50 * h})                            // fits the extra
	v.add(Job{Submit: h + 2, Req: cpuOnly(1000), Estimate: 50 * h})                                   // over the extra
	short := v.add(Job{Submit: h + 3, Req: cpuOnly(1000), Estimate: 2 * h})                           // ends before the shadow
	gpu := v.add(Job{Submit: h + 4, Req: hwmodel.Request{GPUs: 1, GPUMilli: 1000}, Estimate: 50 * h}) // no CPU
	if got, want := ids(v.call(p)), []JobID{long, short, gpu}; !slices.Equal(got, want) {
		t.Fatalf("backfilled %v, want %v", got, want)
	}
}

func TestBackfillDepth(t *testing.T) {
	c := newCluster(t, node(0, 4, 64000, 1<<20))
	v := newFakeView(t, c)
	p := mustNew(t, "fcfs", Options{Backfill: true, BackfillDepth: 2})
	v.add(Job{Req: whole(2), Estimate: 10 * h})
	v.call(p)
	v.add(Job{Submit: 1, Req: whole(4)})
	v.add(Job{Submit: 2, Req: whole(3), Estimate: h}) // does not fit now
	v.add(Job{Submit: 3, Req: whole(3), Estimate: h}) // does not fit now
	v.add(Job{Submit: 4, Req: whole(1), Estimate: h}) // would fit, but is 3 deep
	if got := v.call(p); len(got) != 0 {
		t.Fatalf("started %v beyond the depth", ids(got))
	}
}

func TestRejectedStartIsRequeued(t *testing.T) {
	for _, name := range NonPreemptiveNames() {
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, node(0, 2, 64000, 1<<20))
			v := newFakeView(t, c)
			p := mustNew(t, name, Options{})
			a := v.add(Job{Submit: 0, Req: whole(1)})
			b := v.add(Job{Submit: 1, Req: whole(1)})
			v.reject = map[JobID]bool{a: true}
			if got := ids(v.call(p)); !slices.Equal(got, []JobID{a, b}) {
				t.Fatalf("first call %v", got)
			}
			if len(v.events.Rejected) != 1 {
				t.Fatalf("the driver should have rejected %d", a)
			}
			if got := ids(v.call(p)); !slices.Equal(got, []JobID{a}) {
				t.Fatalf("after the rejection started %v, want [%d]", got, a)
			}
			if got := v.call(p); len(got) != 0 {
				t.Fatalf("nothing left to start, got %v", ids(got))
			}
		})
	}
}

// Jobs that end and come back (failure, preemption) are queued again.
func TestRequeueAfterEnd(t *testing.T) {
	c := newCluster(t, node(0, 1, 64000, 1<<20))
	v := newFakeView(t, c)
	p := mustNew(t, "fcfs", Options{Backfill: true})
	a := v.add(Job{Req: whole(1)})
	b := v.add(Job{Submit: 1, Req: whole(1)})
	if got := ids(v.call(p)); !slices.Equal(got, []JobID{a}) {
		t.Fatalf("got %v", got)
	}
	v.now = 5
	v.end(a)
	v.requeue(a) // back at the end of the queue (Submit is reset by the test driver)
	if got := ids(v.call(p)); !slices.Equal(got, []JobID{b}) {
		t.Fatalf("got %v", got)
	}
	v.end(b)
	if got := ids(v.call(p)); !slices.Equal(got, []JobID{a}) {
		t.Fatalf("got %v", got)
	}
}

// randomRun drives a policy through a random workload with the fake view,
// calling Schedule at every event time, and returns a hash of every
// decision. It also checks the cluster's books and that all jobs finish.
func randomRun(t *testing.T, name string, opt Options, seed uint64) uint64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v100, a100 := model(t, "V100-16GB"), model(t, "A100-80GB")
	c := newCluster(t,
		node(v100, 8, 32000, 256<<10), node(v100, 8, 32000, 256<<10), node(v100, 4, 16000, 128<<10),
		node(a100, 8, 64000, 512<<10), node(a100, 8, 64000, 512<<10), node(0, 0, 32000, 64<<10))
	v := newFakeView(t, c, Tenant{Name: "a", Weight: 1}, Tenant{Name: "b", Weight: 2}, Tenant{Name: "c", Weight: 0.5})
	p := mustNew(t, name, opt)
	const n = 300
	type arrival struct {
		at  Time
		job Job
	}
	var arrivals []arrival
	at := Time(0)
	for i := 0; i < n; i++ {
		at += Time(rng.ExpFloat64() * float64(10*hwmodel.Minute))
		var req hwmodel.Request
		switch k := rng.IntN(10); {
		case k < 4:
			req = whole(1 << rng.IntN(4))
		case k < 6:
			req = frac(int32(100 * (1 + rng.IntN(9))))
		case k < 7:
			req = whole(9 + rng.IntN(8)) // a gang
		case k < 8:
			req = cpuOnly(int64(1000 * (1 + rng.IntN(16))))
		default:
			req = whole(1 + rng.IntN(4))
			req.Models = hwmodel.Of(a100)
		}
		if err := c.Satisfiable(req); err != nil {
			t.Fatalf("bad test job %+v: %v", req, err)
		}
		oracle := Time(1 + rng.ExpFloat64()*float64(2*h))
		est := max(1, oracle*Time(1+rng.IntN(3))/2)
		arrivals = append(arrivals, arrival{at, Job{Submit: at, Tenant: rng.IntN(3), Priority: rng.IntN(5), Estimate: est, Oracle: oracle, Req: req}})
	}
	hash := fnv.New64a()
	ends := map[JobID]Time{}
	next, done := 0, 0
	for done < n {
		// The next event time: an arrival or an end.
		tNext := Time(1<<62 - 1)
		if next < n {
			tNext = arrivals[next].at
		}
		for _, e := range ends {
			tNext = min(tNext, e)
		}
		v.now = tNext
		var ending []JobID
		for id, e := range ends {
			if e == tNext {
				ending = append(ending, id)
			}
		}
		slices.Sort(ending)
		for _, id := range ending {
			v.end(id)
			delete(ends, id)
			done++
		}
		for next < n && arrivals[next].at == tNext {
			v.add(arrivals[next].job)
			next++
		}
		for _, d := range v.call(p) {
			j := &v.jobs[d.Job]
			if v.running[d.Job] {
				ends[d.Job] = v.now + j.Oracle
			}
			fmt.Fprintf(hash, "%d %d %v|", v.now, d.Job, d.Placement)
		}
		if err := c.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if s := p.(*scheduler); s.q.len() != v.queued {
			t.Fatalf("policy queues %d jobs, driver %d", s.q.len(), v.queued)
		}
		if next == n && len(ends) == 0 && done < n {
			t.Fatalf("%s stalled with %d jobs queued and nothing running", p.Name(), n-done)
		}
	}
	if v.rejects != 0 {
		t.Fatalf("%d decisions rejected", v.rejects)
	}
	return hash.Sum64()
}

func TestDeterminism(t *testing.T) {
	for _, name := range NonPreemptiveNames() {
		for _, opt := range []Options{{}, {Backfill: true}, {Placement: "bestfit"}, {Backfill: true, Placement: "bestfit", UseOracle: true}} {
			p := mustNew(t, name, opt)
			t.Run(p.Name(), func(t *testing.T) {
				a := randomRun(t, name, opt, 1)
				b := randomRun(t, name, opt, 1)
				if a != b {
					t.Fatalf("same events, different decisions: %x vs %x", a, b)
				}
				if c := randomRun(t, name, opt, 2); c == a {
					t.Fatalf("different workloads gave the same hash")
				}
			})
		}
	}
}

func TestNamesAndLabels(t *testing.T) {
	if got, want := Names(), []string{"fair", "fcfs", "gandiva", "gavel", "kueue", "las", "multifactor", "optimus", "priority", "seed", "sjf", "srtf", "tiresias"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if got, want := NonPreemptiveNames(), []string{"fair", "fcfs", "multifactor", "priority", "seed", "sjf"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("NonPreemptiveNames() = %v, want %v", got, want)
	}
	for _, n := range Names() {
		if Describe(n) == "" {
			t.Errorf("no description for %s", n)
		}
	}
	for _, tc := range []struct {
		name  string
		opt   Options
		label string
	}{
		{"fcfs", Options{}, "fcfs"},
		{"sjf", Options{Backfill: true}, "sjf+bf"},
		{"fair", Options{Placement: "bestfit"}, "fair/bestfit"},
		{"priority", Options{Placement: "firstfit", Backfill: true}, "priority+bf"},
		{"fcfs", Options{Placement: "bestfit", Backfill: true}, "fcfs+bf/bestfit"},
		{"sjf", Options{UseOracle: true}, "sjf+oracle"},
		{"fcfs", Options{UseOracle: true}, "fcfs"},
		{"fair", Options{UseOracle: true, Backfill: true}, "fair+bf+oracle"},
	} {
		if got := mustNew(t, tc.name, tc.opt).Name(); got != tc.label {
			t.Errorf("%s %+v: Name() = %q, want %q", tc.name, tc.opt, got, tc.label)
		}
	}
	for _, tc := range []struct {
		name string
		opt  Options
		msg  string
	}{
		{"lifo", Options{}, "known: fair, fcfs, gandiva, gavel, kueue, las, multifactor, optimus, priority, seed, sjf, srtf, tiresias"},
		{"fcfs", Options{Placement: "worstfit"}, "known: bestfit, clustering, consolidate, dotprod, fgd, firstfit, mostfree, packing, random"},
		{"fcfs", Options{BackfillDepth: -1}, "backfill depth"},
	} {
		if _, err := New(tc.name, tc.opt); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("New(%q, %+v) error %v, want one mentioning %q", tc.name, tc.opt, err, tc.msg)
		}
	}
}

// In steady state a call allocates nothing but (rarely) a placement slab.
func TestScheduleSteadyStateAllocations(t *testing.T) {
	for _, name := range NonPreemptiveNames() {
		for _, bf := range []bool{false, true} {
			b := newOverloaded(t, name, Options{Backfill: bf}, 2000)
			if got := testing.AllocsPerRun(2000, b.step); got != 0 {
				t.Errorf("%s: %v allocations per call", b.p.Name(), got)
			}
		}
	}
}

// A driver that reports things out of the usual order must not corrupt the
// policy's indexes.
func TestAbsorbSurprises(t *testing.T) {
	for _, name := range NonPreemptiveNames() {
		t.Run(name, func(t *testing.T) {
			v := newFakeView(t, newCluster(t, node(0, 4, 64000, 1<<20)))
			p := mustNew(t, name, Options{Backfill: true})
			s := p.(*scheduler)
			check := func(queued, running int) {
				t.Helper()
				if s.q.len() != queued || s.running.len() != running {
					t.Fatalf("queue %d running %d, want %d and %d", s.q.len(), s.running.len(), queued, running)
				}
			}
			blocker := busy(t, v.cluster, 0, 0b1, 1000, 0)
			a := v.add(Job{Submit: 0, Req: whole(4), Estimate: h / 60})
			b := v.add(Job{Submit: 1, Req: whole(1)})
			v.events.Queued = append(v.events.Queued, a, -1) // a duplicate and a bad ID
			v.events.Ended = append(v.events.Ended, b, 77)   // not running; unknown
			if got := v.call(p); len(got) != 0 {
				t.Fatalf("started %v", ids(got))
			}
			check(2, 0)
			// The driver starts a itself, without a decision.
			v.cluster.Release(blocker)
			all := hwmodel.Placement{{Node: 0, GPUs: 0xf, Milli: 1000, CPUMilli: 4000, MemoryMiB: 4096}}
			if err := v.cluster.Allocate(all); err != nil {
				t.Fatal(err)
			}
			v.events.Started = append(v.events.Started, a)
			if got := v.call(p); len(got) != 0 {
				t.Fatalf("started %v on a full cluster", ids(got))
			}
			check(1, 1)
			// a comes back to the queue without an Ended (say, preempted).
			v.cluster.Release(all)
			v.events.Queued = append(v.events.Queued, a)
			if got := ids(v.call(p)); !slices.Equal(got, []JobID{a}) {
				t.Fatalf("started %v, want [%d]", got, a)
			}
			check(1, 1)
		})
	}
}

func TestFailMemo(t *testing.T) {
	a100 := hwmodel.Of(5)
	both := hwmodel.Of(5, 6)
	for _, tc := range []struct {
		name   string
		failed hwmodel.Request
		r      hwmodel.Request
		doomed bool
	}{
		{"more GPUs", whole(2), whole(3), true},
		{"fewer GPUs", whole(2), whole(1), false},
		{"more CPU per job", whole(2), hwmodel.Request{GPUs: 2, GPUMilli: 1000, CPUMilli: 2001, MemoryMiB: 2048}, true},
		{"less CPU", whole(2), hwmodel.Request{GPUs: 2, GPUMilli: 1000, CPUMilli: 1999, MemoryMiB: 2048}, false},
		{"whole after fractional", frac(300), hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 500, MemoryMiB: 512}, true},
		{"fractional after whole", whole(1), frac(300), false},
		{"narrower models", hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: both}, hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: a100}, true},
		{"wider models", hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: a100}, hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: both}, false},
		{"any after some", hwmodel.Request{GPUs: 1, GPUMilli: 1000, Models: a100}, hwmodel.Request{GPUs: 1, GPUMilli: 1000}, false},
		{"cpu-only dooms anything needing more CPU", cpuOnly(1000), whole(4), true},
		{"gpu failure does not doom cpu-only", whole(1), cpuOnly(8000), false},
	} {
		if got := dooms(tc.failed, tc.r); got != tc.doomed {
			t.Errorf("%s: dooms(%+v, %+v) = %v", tc.name, tc.failed, tc.r, got)
		}
	}
}

// The reservation sits on the GPU model where the blocked job's need is met
// first; jobs on other models do not eat into it.
func TestEASYBackfillPerModel(t *testing.T) {
	v100, a100 := model(t, "V100-16GB"), model(t, "A100-80GB")
	on := func(m hwmodel.ModelID, g int) hwmodel.Request {
		r := whole(g)
		r.Models = hwmodel.Of(m)
		return r
	}
	v := newFakeView(t, newCluster(t, node(v100, 4, 64000, 1<<20), node(a100, 4, 64000, 1<<20)))
	p := mustNew(t, "fcfs", Options{Backfill: true})
	r1 := v.add(Job{Req: on(v100, 2), Estimate: 10 * h})
	r2 := v.add(Job{Submit: 1, Req: on(a100, 2), Estimate: 5 * h})
	if got := ids(v.call(p)); !slices.Equal(got, []JobID{r1, r2}) {
		t.Fatalf("setup: %v", got)
	}
	v.now = h
	head := v.add(Job{Submit: h, Req: whole(4)}) // idle: 2 V100, 2 A100; A100 has 4 at 5h
	c1 := v.add(Job{Submit: h + 1, Req: on(v100, 1), Estimate: 50 * h})
	c2 := v.add(Job{Submit: h + 2, Req: whole(1), Estimate: 50 * h}) // first fit puts it on the V100 node
	v.add(Job{Submit: h + 3, Req: on(a100, 1), Estimate: 50 * h})    // would delay the head
	c4 := v.add(Job{Submit: h + 4, Req: on(a100, 1), Estimate: 3 * h})
	if got, want := ids(v.call(p)), []JobID{c1, c2, c4}; !slices.Equal(got, want) {
		t.Fatalf("backfilled %v, want %v", got, want)
	}
	v.now = 5 * h
	v.end(r2)
	v.end(c4)
	if got := v.call(p); len(got) == 0 || got[0].Job != head || got[0].Placement[0].Node != 1 {
		t.Fatalf("at the shadow time got %+v, want the head on the A100 node", got)
	}
}

func TestOnlyOn(t *testing.T) {
	v100, a100, h100 := model(t, "V100-16GB"), model(t, "A100-80GB"), model(t, "H100-80GB")
	var tot clusterTotals
	tot.update(newCluster(t, node(v100, 8, 1, 1), node(a100, 8, 1, 1), node(0, 0, 1, 1)).View())
	for _, tc := range []struct {
		a, b hwmodel.ModelSet
		want bool
	}{
		{hwmodel.AnyModel, hwmodel.AnyModel, true},
		{hwmodel.AnyModel, hwmodel.Of(a100), false},
		{hwmodel.AnyModel, hwmodel.Of(a100, v100), true}, // every model the cluster has
		{hwmodel.Of(a100, h100), hwmodel.Of(a100), true}, // no H100 in the cluster
		{hwmodel.Of(v100), hwmodel.Of(a100), false},
	} {
		if got := tot.onlyOn(tc.a, tc.b); got != tc.want {
			t.Errorf("onlyOn(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
