package sim

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// headFirst is a minimal strict-FCFS, first-fit, single-node policy, so the
// engine's tests do not depend on the policies package.
type headFirst struct {
	queue []policies.JobID
	// overbook makes the policy propose its first start without checking
	// capacity, to exercise rejection.
	overbook bool
	rejected []policies.Rejection
}

func (p *headFirst) Name() string { return "head-first" }

func (p *headFirst) Schedule(v policies.View) []policies.Decision {
	ev := v.Events()
	p.queue = append(p.queue, ev.Queued...)
	for _, r := range ev.Rejected {
		p.rejected = append(p.rejected, r)
		p.queue = append([]policies.JobID{r.Decision.Job}, p.queue...)
	}
	var out []policies.Decision
	c := v.Cluster()
	for len(p.queue) > 0 {
		j := v.Job(p.queue[0])
		var pl hwmodel.Placement
		for n := 0; n < c.NumNodes() && pl == nil; n++ {
			if p.overbook {
				pl = hwmodel.Placement{{Node: n, GPUs: 1<<uint(j.Req.GPUs) - 1, Milli: j.Req.GPUMilli}}
			} else if c.FreeWholeGPUs(n) >= j.Req.GPUs && j.Req.Models.Accepts(c.Node(n).Model) {
				var mask uint64
				for g, k := 0, 0; k < j.Req.GPUs; g++ {
					if c.FreeMilli(n, g) == hwmodel.MilliPerGPU {
						mask |= 1 << uint(g)
						k++
					}
				}
				pl = hwmodel.Placement{{Node: n, GPUs: mask, Milli: j.Req.GPUMilli}}
			}
		}
		if pl == nil {
			break
		}
		if !p.overbook {
			if err := v.Reserve(pl); err != nil {
				break
			}
		}
		p.overbook = false
		p.queue = p.queue[1:]
		out = append(out, policies.Decision{Kind: policies.Start, Job: j.ID, Placement: pl})
	}
	return out
}

type jobSpec struct {
	name          string
	submit, dur   float64
	gpus          int
	deps          []string
	fails, retrys int
}

func buildWorkload(t *testing.T, specs []jobSpec) *workloads.Workload {
	t.Helper()
	w := &workloads.Workload{Tenants: []workloads.Tenant{{Name: "t", Weight: 1}}}
	idx := map[string]int{}
	for i, s := range specs {
		idx[s.name] = i
		j := workloads.Job{
			Name: s.name, Tenant: "t", Submit: hwmodel.FromSeconds(s.submit), Duration: hwmodel.FromSeconds(s.dur),
			Req:            hwmodel.Request{GPUs: s.gpus, GPUMilli: hwmodel.MilliPerGPU},
			FailedAttempts: s.fails, MaxRetries: s.retrys,
		}
		for _, d := range s.deps {
			j.Deps = append(j.Deps, idx[d])
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w
}

func oneNodeCluster(t *testing.T, gpus int) *hwmodel.Cluster {
	t.Helper()
	c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", Model: 0, GPUs: gpus, CPUMilli: 1 << 40, MemoryMiB: 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func run(t *testing.T, gpus int, specs []jobSpec, p policies.Policy) *Result {
	t.Helper()
	e, err := New(Config{Cluster: oneNodeCluster(t, gpus), Workload: buildWorkload(t, specs), Policy: p, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEngineHandWorked(t *testing.T) {
	s := hwmodel.Second
	tests := []struct {
		name  string
		gpus  int
		jobs  []jobSpec
		want  []Outcome // State, Start, End, Wait, Run, Attempts are compared
		wantR []string  // substrings of each job's Reason
	}{
		{
			name: "second job waits for the first",
			gpus: 1,
			jobs: []jobSpec{{name: "a", submit: 0, dur: 10, gpus: 1}, {name: "b", submit: 1, dur: 5, gpus: 1}},
			want: []Outcome{
				{State: Succeeded, Start: 0, End: 10 * s, Wait: 0, Run: 10 * s, Attempts: 1},
				{State: Succeeded, Start: 10 * s, End: 15 * s, Wait: 9 * s, Run: 5 * s, Attempts: 1},
			},
		},
		{
			name: "both fit side by side",
			gpus: 2,
			jobs: []jobSpec{{name: "a", submit: 0, dur: 10, gpus: 1}, {name: "b", submit: 1, dur: 5, gpus: 1}},
			want: []Outcome{
				{State: Succeeded, Start: 0, End: 10 * s, Run: 10 * s, Attempts: 1},
				{State: Succeeded, Start: 1 * s, End: 6 * s, Run: 5 * s, Attempts: 1},
			},
		},
		{
			name: "task waits for its dependency; ready time excludes dependency wait from Wait",
			gpus: 2,
			jobs: []jobSpec{{name: "a", submit: 0, dur: 10, gpus: 1}, {name: "b", submit: 2, dur: 5, gpus: 1, deps: []string{"a"}}},
			want: []Outcome{
				{State: Succeeded, Start: 0, End: 10 * s, Run: 10 * s, Attempts: 1},
				{State: Succeeded, Start: 10 * s, End: 15 * s, Wait: 0, Run: 5 * s, Attempts: 1},
			},
		},
		{
			name: "failed attempt is retried; its dependant runs after the success",
			gpus: 1,
			jobs: []jobSpec{{name: "a", submit: 0, dur: 10, gpus: 1, fails: 1, retrys: 1}, {name: "b", submit: 0, dur: 5, gpus: 1, deps: []string{"a"}}},
			want: []Outcome{
				{State: Succeeded, Start: 0, End: 20 * s, Run: 20 * s, Attempts: 2},
				{State: Succeeded, Start: 20 * s, End: 25 * s, Run: 5 * s, Attempts: 1},
			},
		},
		{
			name: "failure without retries fails the dependants transitively",
			gpus: 1,
			jobs: []jobSpec{
				{name: "a", submit: 0, dur: 10, gpus: 1, fails: 1},
				{name: "b", submit: 0, dur: 5, gpus: 1, deps: []string{"a"}},
				{name: "c", submit: 20, dur: 5, gpus: 1, deps: []string{"b"}},
			},
			want: []Outcome{
				{State: Failed, Start: 0, End: 10 * s, Run: 10 * s, Attempts: 1},
				{State: Failed, Start: 10 * s, End: 10 * s, Attempts: 0},
				{State: Failed, Start: 20 * s, End: 20 * s, Attempts: 0},
			},
			wantR: []string{"no retries left", "dependency a failed", "dependency b failed"},
		},
		{
			name: "a job larger than the cluster fails at submission",
			gpus: 2,
			jobs: []jobSpec{{name: "big", submit: 3, dur: 10, gpus: 4}, {name: "ok", submit: 4, dur: 1, gpus: 2}},
			want: []Outcome{
				{State: Failed, Start: 3 * s, End: 3 * s},
				{State: Succeeded, Start: 4 * s, End: 5 * s, Run: 1 * s, Attempts: 1},
			},
			wantR: []string{"unsatisfiable", ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, tc.gpus, tc.jobs, &headFirst{})
			for i, w := range tc.want {
				g := res.Jobs[i]
				if g.State != w.State || g.Start != w.Start || g.End != w.End || g.Wait != w.Wait || g.Run != w.Run || g.Attempts != w.Attempts {
					t.Errorf("job %s: got state=%s start=%v end=%v wait=%v run=%v attempts=%d, want %s %v %v %v %v %d",
						tc.jobs[i].name, g.State, g.Start, g.End, g.Wait, g.Run, g.Attempts, w.State, w.Start, w.End, w.Wait, w.Run, w.Attempts)
				}
				if tc.wantR != nil && !strings.Contains(g.Reason, tc.wantR[i]) {
					t.Errorf("job %s: reason %q, want it to contain %q", tc.jobs[i].name, g.Reason, tc.wantR[i])
				}
			}
		})
	}
}

func TestEngineRejectsOverCapacityAndReportsIt(t *testing.T) {
	p := &headFirst{overbook: true}
	// Job a holds the only GPU; the policy then proposes b on it anyway.
	jobs := []jobSpec{{name: "a", submit: 0, dur: 10, gpus: 1}, {name: "b", submit: 1, dur: 5, gpus: 1}}
	p.overbook = false
	e, err := New(Config{Cluster: oneNodeCluster(t, 1), Workload: buildWorkload(t, jobs), Policy: &overbookSecond{inner: p}, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejections != 1 {
		t.Fatalf("rejections = %d, want 1", res.Rejections)
	}
	if len(p.rejected) != 1 || !strings.Contains(p.rejected[0].Reason, "over capacity") {
		t.Fatalf("policy heard of rejections %+v, want one over-capacity rejection", p.rejected)
	}
	if b := res.Jobs[1]; b.State != Succeeded || b.Start != 10*hwmodel.Second {
		t.Fatalf("job b: %+v, want it to run once a finishes at 10s", b)
	}
}

// overbookSecond makes its inner policy overbook on the second call.
type overbookSecond struct {
	inner *headFirst
	calls int
}

func (o *overbookSecond) Name() string { return "overbook-second" }
func (o *overbookSecond) Schedule(v policies.View) []policies.Decision {
	o.calls++
	o.inner.overbook = o.calls == 2
	return o.inner.Schedule(v)
}

func TestEngineReserveIsUndoneAfterTheCall(t *testing.T) {
	// headFirst reserves each start; if the engine did not drop the
	// reservations before applying, every start would be rejected.
	res := run(t, 4, []jobSpec{{name: "a", dur: 1, gpus: 2}, {name: "b", dur: 1, gpus: 2}}, &headFirst{})
	if res.Rejections != 0 || res.Jobs[0].Start != 0 || res.Jobs[1].Start != 0 {
		t.Fatalf("rejections=%d starts=%v,%v; want both started at 0", res.Rejections, res.Jobs[0].Start, res.Jobs[1].Start)
	}
}

// stall never starts anything.
type stall struct{}

func (stall) Name() string                               { return "stall" }
func (stall) Schedule(policies.View) []policies.Decision { return nil }

func TestEngineReportsStrandedJobs(t *testing.T) {
	e, err := New(Config{Cluster: oneNodeCluster(t, 1), Workload: buildWorkload(t, []jobSpec{{name: "a", dur: 1, gpus: 1}}), Policy: stall{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(); err == nil || !strings.Contains(err.Error(), "1 jobs unfinished") {
		t.Fatalf("err = %v, want a report of 1 unfinished job", err)
	}
}

// The end of a successful attempt reads the first 64 bytes of its
// jobRun, which must stay one cache line of the engine's array: the
// record is jobRunSize bytes, and the fields that end reads lie before
// the placement's end at byte 64.
func TestJobRunLayout(t *testing.T) {
	if got := unsafe.Sizeof(jobRun{}); got != jobRunSize {
		t.Errorf("jobRun is %d bytes, want %d", got, jobRunSize)
	}
	var r jobRun
	if end := unsafe.Offsetof(r.placement) + unsafe.Sizeof(r.placement); end > 64 {
		t.Errorf("the fields the end of an attempt reads end at byte %d, past the first cache line", end)
	}
}

// TestDependants: each job's dependants, in job order, from the jobs'
// Deps; nothing at all for a workload without dependencies.
func TestDependants(t *testing.T) {
	jobs := []workloads.Job{{}, {Deps: []int{0}}, {Deps: []int{0}}, {Deps: []int{1, 0}}, {}}
	ds := newDependants(jobs, 4)
	want := [][]int32{{1, 2, 3}, {3}, {}, {}, {}}
	for i, w := range want {
		if got := ds.of(i); !slices.Equal(got, w) {
			t.Errorf("job %d: dependants %v, want %v", i, got, w)
		}
	}
	none := newDependants(make([]workloads.Job, 3), 0)
	if none.start != nil || none.list != nil || none.of(2) != nil {
		t.Errorf("no dependencies: %+v, want nothing held", none)
	}
}
