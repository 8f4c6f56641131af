package policies

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// gpuQuota is flavor f's quota of whole GPUs (limits < 0: unset), other
// resources not covered.
func gpuQuota(f int, nominal, borrowing, lending int64) Quota {
	q := Quota{Flavor: f}
	for r := range NumRes {
		q.BorrowingLimit[r], q.LendingLimit[r] = NoLimit, NoLimit
	}
	q.Covered[ResGPU] = true
	q.Nominal[ResGPU] = nominal * hwmodel.MilliPerGPU
	if borrowing >= 0 {
		q.BorrowingLimit[ResGPU] = borrowing * hwmodel.MilliPerGPU
	}
	if lending >= 0 {
		q.LendingLimit[ResGPU] = lending * hwmodel.MilliPerGPU
	}
	return q
}

// kueueOf is a configuration whose LocalQueues are named as its
// ClusterQueues, over flavors "h100" and "a100".
func kueueOf(tb testing.TB, cqs ...ClusterQueue) *Kueue {
	k := &Kueue{Flavors: []KueueFlavor{{"h100", model(tb, "H100-80GB")}, {"a100", model(tb, "A100-80GB")}}, Queues: cqs}
	for i, q := range cqs {
		k.Local = append(k.Local, LocalQueue{Namespace: "ns", Name: q.Name, Queue: i})
	}
	return k
}

// kjob is one job of a script: its tenant (= LocalQueue), whole GPUs and
// priority.
type kjob struct {
	tenant   string
	gpus     int
	priority int
}

// kstep is one scheduling point of a script: at time at, the jobs named
// in end end, those in submit arrive (IDs in the order of the whole
// script), then the policy is called; want is its decisions, e.g.
// "start j2 h100" or "preempt j1".
type kstep struct {
	at     Time
	end    []JobID
	submit []kjob
	want   string
}

// runKueue plays a script on two 8-GPU H100 nodes and one 8-GPU A100
// node; Preempt decisions are carried out (the job goes back to the
// queue).
func runKueue(t *testing.T, cfg *Kueue, steps []kstep) {
	t.Helper()
	h100, a100 := model(t, "H100-80GB"), model(t, "A100-80GB")
	c := newCluster(t, node(h100, 8, 64000, 512<<10), node(h100, 8, 64000, 512<<10), node(a100, 8, 64000, 512<<10))
	var tenants []Tenant
	for _, q := range cfg.Queues {
		tenants = append(tenants, Tenant{Name: q.Name, Weight: 1})
	}
	f := newFakeView(t, c, tenants...)
	p := mustNew(t, "kueue", Options{Kueue: cfg})
	for k, st := range steps {
		f.SetNow(st.at)
		for _, id := range st.end {
			f.end(id)
		}
		for _, j := range st.submit {
			ti := slices.IndexFunc(tenants, func(x Tenant) bool { return x.Name == j.tenant })
			f.add(Job{Name: fmt.Sprintf("j%d", len(f.placed)), Tenant: ti, Priority: j.priority, Submit: st.at, Req: whole(j.gpus)})
		}
		var got []string
		ds := f.Schedule(p, func(d Decision) string {
			switch d.Kind {
			case Start:
				return f.apply(d)
			case Preempt:
				f.end(d.Job)
				f.requeue(d.Job)
				return ""
			}
			return "unsupported"
		})
		for _, d := range ds {
			s := d.Kind.String() + " " + f.Job(d.Job).Name
			if d.Kind == Start {
				s += " " + strings.ToLower(strings.Split(hwmodel.Model(c.Node(d.Placement[0].Node).Model).Name, "-")[0])
			}
			got = append(got, s)
		}
		if g := strings.Join(got, ", "); g != st.want {
			t.Fatalf("step %d at %v: got %q, want %q", k, st.at, g, st.want)
		}
	}
}

func TestKueueAdmission(t *testing.T) {
	s := Time(hwmodel.Second)
	lo := Preemption{}
	reclaim := Preemption{ReclaimWithinCohort: PreemptAny}
	within := Preemption{WithinClusterQueue: PreemptLowerPriority}
	cq := func(name, cohort, strategy string, pre Preemption, qs ...Quota) ClusterQueue {
		return ClusterQueue{Name: name, Cohort: cohort, Strategy: strategy, Preemption: pre, Flavors: qs, Weight: 1}
	}
	four := []kjob{{"a", 4, 0}, {"a", 4, 0}, {"a", 4, 0}}
	cases := []struct {
		name  string
		cqs   []ClusterQueue
		steps []kstep
	}{
		// a and b each have 8 H100s nominal in one cohort. a's three
		// 4-GPU jobs: 4+4 fit a's nominal 8; the third borrows 4 of
		// b's unused 8 (cohort pool 16, in use 8 → 8 left).
		{"nominal then borrowing", []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{{at: 0, submit: four, want: "start j0 h100, start j1 h100, start j2 h100"}}},
		// a's borrowing limit of 2 stops the third 4-GPU job (8 + 2 <
		// 12); BestEffortFIFO lets the 2-GPU job behind it in (8 + 2 ≤
		// 10).
		{"borrowing limit", []ClusterQueue{
			cq("a", "org", BestEffortFIFO, lo, gpuQuota(0, 8, 2, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{{at: 0, submit: append(four, kjob{"a", 2, 0}), want: "start j0 h100, start j1 h100, start j3 h100"}}},
		// b lends at most 2: the pool is a's 8 + b's 2 = 10, a uses 8 of
		// it, so a 4-GPU job cannot borrow but a 2-GPU one can.
		{"lending limit", []ClusterQueue{
			cq("a", "org", BestEffortFIFO, lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, 2))},
			[]kstep{{at: 0, submit: append(four, kjob{"a", 2, 0}), want: "start j0 h100, start j1 h100, start j3 h100"}}},
		// a borrows 4 of b's GPUs (j2, admitted last). b's 8-GPU job
		// fits b's nominal 8 but the pool has only 16 − 12 = 4 left: b
		// reclaims by preempting a's most recently admitted workload,
		// j2. One victim is enough (a then uses 8, the pool has 8
		// left), so j1 and j0 stay. The next call starts b's job on the
		// freed GPUs.
		{"reclaim preempts the borrower", []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", reclaim, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: four[:2], want: "start j0 h100, start j1 h100"},
				{at: 5 * s, submit: four[:1], want: "start j2 h100"},
				{at: 10 * s, submit: []kjob{{"b", 8, 0}}, want: "preempt j2"},
				{at: 11 * s, want: "start j3 h100"},
			}},
		// The same without reclaimWithinCohort: b's job waits.
		{"no reclaim", []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: four, want: "start j0 h100, start j1 h100, start j2 h100"},
				{at: 10 * s, submit: []kjob{{"b", 8, 0}}, want: ""},
			}},
		// withinClusterQueue LowerPriority: a (no cohort, 8 GPUs) runs
		// j0 (admitted at 0) and j1 (at 5 s), both priority 0; j2 of
		// priority 5 needs 4 more: the most recently admitted, j1, goes.
		{"within cluster queue", []ClusterQueue{cq("a", "", "", within, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: 5 * s, submit: []kjob{{"a", 4, 0}}, want: "start j1 h100"},
				{at: 10 * s, submit: []kjob{{"a", 4, 5}}, want: "preempt j1"},
				{at: 11 * s, want: "start j2 h100"},
			}},
		// Equal priority is not lower: no preemption.
		{"within cluster queue, equal priority", []ClusterQueue{cq("a", "", "", within, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}, {"a", 4, 0}}, want: "start j0 h100, start j1 h100"},
				{at: 10 * s, submit: []kjob{{"a", 4, 0}}, want: ""},
			}},
		// StrictFIFO: the 8-GPU head does not fit beside the running 4
		// and blocks the 2-GPU job behind it.
		{"StrictFIFO", []ClusterQueue{cq("a", "", StrictFIFO, lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"a", 8, 0}, {"a", 2, 0}}, want: ""},
				{at: 2 * s, end: []JobID{0}, want: "start j1 h100"},
			}},
		// BestEffortFIFO: the 2-GPU job goes past the inadmissible head.
		{"BestEffortFIFO", []ClusterQueue{cq("a", "", BestEffortFIFO, lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"a", 8, 0}, {"a", 2, 0}}, want: "start j2 h100"},
			}},
		// Flavors in order: 4 H100s, then 8 A100s; the second 4-GPU job
		// goes to the A100s, the third does not fit either.
		{"flavor order", []ClusterQueue{cq("a", "", "", lo, gpuQuota(0, 4, -1, -1), gpuQuota(1, 8, -1, -1))},
			[]kstep{{at: 0, submit: []kjob{{"a", 4, 0}, {"a", 4, 0}, {"a", 4, 0}, {"a", 4, 0}}, want: "start j0 h100, start j1 a100, start j2 a100"}}},
		// Priority orders a queue: the priority-3 job submitted last
		// starts first, and the head of a StrictFIFO queue is it.
		{"priority order", []ClusterQueue{cq("a", "", StrictFIFO, lo, gpuQuota(0, 8, -1, -1))},
			[]kstep{{at: 0, submit: []kjob{{"a", 8, 0}, {"a", 8, 3}}, want: "start j1 h100"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runKueue(t, kueueOf(t, tc.cqs...), tc.steps) })
	}
}
