package policies

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// overloaded is a steady-state harness: a 512-GPU cluster kept full by a
// queue of about n jobs. Each step ends the oldest running job, queues it
// again as a new arrival, and runs one scheduling point, so the queue
// length stays near n while jobs keep flowing.
type overloaded struct {
	v    *fakeView
	p    Policy
	ring []JobID // running jobs, oldest first
	head int
	size int
}

func newOverloaded(tb testing.TB, name string, opt Options, n int) *overloaded {
	nodes := make([]hwmodel.Node, 64)
	for i := range nodes {
		nodes[i] = node(model(tb, "V100-32GB"), 8, 64000, 512<<10)
	}
	tenants := make([]Tenant, 15)
	for i := range tenants {
		tenants[i] = Tenant{Name: fmt.Sprint("t", i), Weight: float64(1 + i%3)}
	}
	o := &overloaded{v: newFakeView(tb, newCluster(tb, nodes...), tenants...), p: mustNew(tb, name, opt)}
	sizes := [...]int{1, 2, 1, 4, 1, 8, 2, 1, 16}
	for i := 0; i < n+512; i++ {
		o.v.add(Job{
			Submit: Time(i), Tenant: i % 15, Priority: i % 5,
			Estimate: Time(1+i%13) * hwmodel.Hour, Req: whole(sizes[i%len(sizes)]),
		})
	}
	o.ring = make([]JobID, 1024)
	o.v.now = hwmodel.Hour
	o.record(o.v.callNoCopy(o.p))
	if o.size == 0 {
		tb.Fatal("nothing started")
	}
	return o
}

func (o *overloaded) record(ds []Decision) {
	for _, d := range ds {
		if d.Kind == Start && o.v.running[d.Job] {
			o.ring[(o.head+o.size)%len(o.ring)] = d.Job
			o.size++
		}
	}
}

func (o *overloaded) step() {
	id := o.ring[o.head]
	o.head = (o.head + 1) % len(o.ring)
	o.size--
	o.v.now += hwmodel.Second
	o.v.end(id)
	o.v.requeue(id)
	o.record(o.v.callNoCopy(o.p))
}

// BenchmarkScheduleOverloaded measures one scheduling point on a full
// cluster with ~n queued jobs: the cost should not grow with n.
//
//	go test -run '^$' -bench ScheduleOverloaded -benchmem ./policies
func BenchmarkScheduleOverloaded(b *testing.B) {
	for _, name := range NonPreemptiveNames() {
		for _, bf := range []bool{false, true} {
			for _, n := range []int{10_000, 100_000} {
				opt := Options{Backfill: bf}
				label := mustNew(b, name, opt).Name()
				b.Run(fmt.Sprintf("%s/queued=%d", label, n), func(b *testing.B) {
					benchOverloaded(b, name, opt, n)
				})
			}
		}
	}
}

// BenchmarkKueueOverloaded is BenchmarkScheduleOverloaded for the kueue
// order: the 15 tenants' LocalQueues on three ClusterQueues of one
// cohort, whose nominal quotas (160, 160, 192) add up to the 512 GPUs,
// reclaiming from each other. The cost per call should not grow with
// the queue (StrictFIFO stops at a blocked head, BestEffortFIFO passes
// over at most DefaultBackfillDepth per queue).
//
//	go test -run '^$' -bench KueueOverloaded -benchmem ./policies
func BenchmarkKueueOverloaded(b *testing.B) {
	v100 := model(b, "V100-32GB")
	for _, strategy := range []string{StrictFIFO, BestEffortFIFO} {
		cfg := &Kueue{Flavors: []KueueFlavor{{"v100", v100}}}
		for i, gpus := range []int64{160, 160, 192} {
			q := gpuQuota(0, gpus, -1, -1)
			cfg.Queues = append(cfg.Queues, ClusterQueue{Name: fmt.Sprint("q", i), Cohort: "all", Strategy: strategy, Weight: 1,
				Flavors: []Quota{q}, Preemption: Preemption{ReclaimWithinCohort: PreemptAny}})
		}
		for t := range 15 {
			cfg.Local = append(cfg.Local, LocalQueue{Name: fmt.Sprint("t", t), Queue: t % 3})
		}
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/queued=%d", strategy, n), func(b *testing.B) {
				benchOverloaded(b, "kueue", Options{Kueue: cfg}, n)
			})
		}
	}
}

// benchOverloaded measures calls of policy name on a queue of n jobs
// kept overloaded, reporting the starts a call makes.
func benchOverloaded(b *testing.B, name string, opt Options, n int) {
	o := newOverloaded(b, name, opt, n)
	started := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := o.size
		o.step()
		started += o.size - before + 1
	}
	b.ReportMetric(float64(started)/float64(b.N), "starts/call")
}
