package policies

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// The backfill walk's early stops and steps over hopeless jobs change no
// decision: on random heterogeneous clusters and workloads (fractional,
// CPU-only, gang and model-restricted requests, estimates both short and
// long, rejected starts), a policy with them and one that visits every
// job decide the same, call after call.
func TestBackfillShortcutsDecideTheSame(t *testing.T) {
	for _, order := range StandaloneNames() {
		for _, opt := range []Options{
			{Backfill: true},
			{Backfill: true, BackfillDepth: 7},
			{Backfill: true, Placement: "bestfit"},
			{Backfill: true, UseOracle: true},
		} {
			for seed := uint64(1); seed <= 4; seed++ {
				name := fmt.Sprintf("%s/%s/%d", order, mustNew(t, order, opt).Name(), seed)
				t.Run(name, func(t *testing.T) { compareShortcuts(t, order, opt, seed) })
			}
		}
	}
}

func compareShortcuts(t *testing.T, order string, opt Options, seed uint64) {
	v100, t4, a100 := model(t, "V100-32GB"), model(t, "T4"), model(t, "A100-80GB")
	build := func() *fakeView {
		nodes := []hwmodel.Node{node(0, 0, 32000, 64<<10)}
		for i := 0; i < 6; i++ {
			nodes = append(nodes, node(v100, 8, 64000, 256<<10), node(t4, 4, 16000, 64<<10))
		}
		nodes = append(nodes, node(a100, 8, 128000, 512<<10), node(a100, 8, 128000, 512<<10))
		tenants := []Tenant{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}, {Name: "c", Weight: 1}}
		return newFakeView(t, newCluster(t, nodes...), tenants...)
	}
	fast, slow := build(), build()
	pf, ps := mustNew(t, order, opt), mustNew(t, order, opt)
	ps.(*scheduler).everyJob = true
	r := rand.New(rand.NewPCG(seed, 99))
	models := []hwmodel.ModelSet{hwmodel.AnyModel, hwmodel.AnyModel, hwmodel.Of(v100), hwmodel.Of(t4), hwmodel.Of(a100), hwmodel.Of(v100) | hwmodel.Of(a100)}
	newJob := func(now Time) Job {
		var req hwmodel.Request
		switch k := r.IntN(20); {
		case k < 2:
			req = cpuOnly(int64(1+r.IntN(8)) * 1000)
		case k < 6:
			req = frac(int32(100 * (1 + r.IntN(9))))
		case k < 18:
			req = whole([]int{1, 1, 1, 2, 2, 4, 8}[r.IntN(7)])
		default:
			req = whole([]int{12, 16, 24}[r.IntN(3)])
		}
		if req.GPUs > 0 && req.GPUs <= 8 {
			req.Models = models[r.IntN(len(models))]
		}
		est := Time(1+r.IntN(240)) * hwmodel.Minute
		if r.IntN(4) == 0 {
			est = Time(1+r.IntN(60)) * hwmodel.Second
		}
		return Job{Submit: now, Tenant: r.IntN(3), Priority: r.IntN(4), Estimate: est, Oracle: Time(r.IntN(2)) * est / 2, Req: req}
	}
	var ends []struct {
		at Time
		id JobID
	}
	now := Time(0)
	for step := 0; step < 600; step++ {
		now += Time(1+r.IntN(120)) * hwmodel.Second
		fast.now, slow.now = now, now
		for k := r.IntN(4); k > 0; k-- {
			j := newJob(now)
			fast.add(j)
			slow.add(j)
		}
		// End the jobs due, in start order.
		kept := ends[:0]
		for _, e := range ends {
			if e.at <= now && fast.running[e.id] {
				fast.end(e.id)
				slow.end(e.id)
				if r.IntN(5) == 0 { // a failure: back to the queue
					fast.requeue(e.id)
					slow.requeue(e.id)
				}
				continue
			}
			kept = append(kept, e)
		}
		ends = kept
		if r.IntN(10) == 0 && fast.Job(JobID(r.IntN(fast.NumJobs()))) != nil {
			id := JobID(r.IntN(fast.NumJobs()))
			fast.reject = map[JobID]bool{id: true}
			slow.reject = map[JobID]bool{id: true}
		}
		df, ds := fast.call(pf), slow.call(ps)
		if !reflect.DeepEqual(df, ds) {
			t.Fatalf("step %d at %v: with shortcuts %v, without %v", step, now, ids(df), ids(ds))
		}
		for _, d := range df {
			if fast.running[d.Job] {
				j := fast.Job(d.Job)
				ends = append(ends, struct {
					at Time
					id JobID
				}{now + j.Estimate/2 + Time(r.IntN(int(j.Estimate))), d.Job})
			}
		}
	}
}
