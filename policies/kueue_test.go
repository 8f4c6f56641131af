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
	borrowLow := Preemption{ReclaimWithinCohort: PreemptLowerPriority, BorrowWithinCohort: PreemptLowerPriority}
	weighted := func(q ClusterQueue, w float64) ClusterQueue { q.Weight = w; return q }
	cases := []struct {
		name  string
		cqs   []ClusterQueue
		steps []kstep
		fair  bool
	}{
		// a and b each have 8 H100s nominal in one cohort. a's three
		// 4-GPU jobs: 4+4 fit a's nominal 8; the third borrows 4 of
		// b's unused 8 (cohort pool 16, in use 8 → 8 left).
		{name: "nominal then borrowing", cqs: []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{{at: 0, submit: four, want: "start j0 h100, start j1 h100, start j2 h100"}}},
		// a's borrowing limit of 2 stops the third 4-GPU job (8 + 2 <
		// 12); BestEffortFIFO lets the 2-GPU job behind it in (8 + 2 ≤
		// 10).
		{name: "borrowing limit", cqs: []ClusterQueue{
			cq("a", "org", BestEffortFIFO, lo, gpuQuota(0, 8, 2, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{{at: 0, submit: append(four, kjob{"a", 2, 0}), want: "start j0 h100, start j1 h100, start j3 h100"}}},
		// b lends at most 2: the pool is a's 8 + b's 2 = 10, a uses 8 of
		// it, so a 4-GPU job cannot borrow but a 2-GPU one can.
		{name: "lending limit", cqs: []ClusterQueue{
			cq("a", "org", BestEffortFIFO, lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, 2))},
			steps: []kstep{{at: 0, submit: append(four, kjob{"a", 2, 0}), want: "start j0 h100, start j1 h100, start j3 h100"}}},
		// a borrows 4 of b's GPUs (j2, admitted last). b's 8-GPU job
		// fits b's nominal 8 but the pool has only 16 − 12 = 4 left: b
		// reclaims by preempting a's most recently admitted workload,
		// j2. One victim is enough (a then uses 8, the pool has 8
		// left), so j1 and j0 stay. The next call starts b's job on the
		// freed GPUs.
		{name: "reclaim preempts the borrower", cqs: []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", reclaim, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: four[:2], want: "start j0 h100, start j1 h100"},
				{at: 5 * s, submit: four[:1], want: "start j2 h100"},
				{at: 10 * s, submit: []kjob{{"b", 8, 0}}, want: "preempt j2"},
				{at: 11 * s, want: "start j3 h100"},
			}},
		// The same without reclaimWithinCohort: b's job waits.
		{name: "no reclaim", cqs: []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 8, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: four, want: "start j0 h100, start j1 h100, start j2 h100"},
				{at: 10 * s, submit: []kjob{{"b", 8, 0}}, want: ""},
			}},
		// withinClusterQueue LowerPriority: a (no cohort, 8 GPUs) runs
		// j0 (admitted at 0) and j1 (at 5 s), both priority 0; j2 of
		// priority 5 needs 4 more: the most recently admitted, j1, goes.
		{name: "within cluster queue", cqs: []ClusterQueue{cq("a", "", "", within, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: 5 * s, submit: []kjob{{"a", 4, 0}}, want: "start j1 h100"},
				{at: 10 * s, submit: []kjob{{"a", 4, 5}}, want: "preempt j1"},
				{at: 11 * s, want: "start j2 h100"},
			}},
		// Equal priority is not lower: no preemption.
		{name: "within cluster queue, equal priority", cqs: []ClusterQueue{cq("a", "", "", within, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}, {"a", 4, 0}}, want: "start j0 h100, start j1 h100"},
				{at: 10 * s, submit: []kjob{{"a", 4, 0}}, want: ""},
			}},
		// StrictFIFO: the 8-GPU head does not fit beside the running 4
		// and blocks the 2-GPU job behind it.
		{name: "StrictFIFO", cqs: []ClusterQueue{cq("a", "", StrictFIFO, lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"a", 8, 0}, {"a", 2, 0}}, want: ""},
				{at: 2 * s, end: []JobID{0}, want: "start j1 h100"},
			}},
		// BestEffortFIFO: the 2-GPU job goes past the inadmissible head.
		{name: "BestEffortFIFO", cqs: []ClusterQueue{cq("a", "", BestEffortFIFO, lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"a", 8, 0}, {"a", 2, 0}}, want: "start j2 h100"},
			}},
		// Flavors in order: 4 H100s, then 8 A100s; the second 4-GPU job
		// goes to the A100s, the third does not fit either.
		{name: "flavor order", cqs: []ClusterQueue{cq("a", "", "", lo, gpuQuota(0, 4, -1, -1), gpuQuota(1, 8, -1, -1))},
			steps: []kstep{{at: 0, submit: []kjob{{"a", 4, 0}, {"a", 4, 0}, {"a", 4, 0}, {"a", 4, 0}}, want: "start j0 h100, start j1 a100, start j2 a100"}}},
		// Priority orders a queue: the priority-3 job submitted last
		// starts first, and the head of a StrictFIFO queue is it.
		{name: "priority order", cqs: []ClusterQueue{cq("a", "", StrictFIFO, lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{{at: 0, submit: []kjob{{"a", 8, 0}, {"a", 8, 3}}, want: "start j1 h100"}}},
	}
	cases = append(cases, []struct {
		name  string
		cqs   []ClusterQueue
		steps []kstep
		fair  bool
	}{
		// Quota is not room. b (8 GPUs, alone) runs j0 on 6 of n0's 8; a
		// (16, alone) runs j1 on 6 of n1's. a's j2 (8 GPUs) fits a's
		// quota (6 + 8 ≤ 16) and is admitted, but no node has 8 free: it
		// waits, holding its quota, so a's j3 (3 GPUs: 14 + 3 > 16) is
		// not admitted although it would fit on the nodes. When j0 ends,
		// j2 starts on n0.
		{name: "admitted, waiting for room", cqs: []ClusterQueue{
			cq("a", "", BestEffortFIFO, lo, gpuQuota(0, 16, -1, -1)), cq("b", "", "", lo, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"b", 6, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"a", 6, 0}}, want: "start j1 h100"},
				{at: 2 * s, submit: []kjob{{"a", 8, 0}, {"a", 3, 0}}, want: ""},
				{at: 3 * s, end: []JobID{0}, want: "start j2 h100"},
			}},
		// borrowWithinCohort: a, b and c have 4 GPUs each (pool 12). b
		// runs j0 and j1 (4 each), borrowing c's 4. a's j2 (8 GPUs,
		// priority 5) must borrow 4: the pool has 12 − 8 = 4 left.
		// Preempting b's most recent j1 (priority 0 ≤ threshold 4)
		// leaves b at its nominal 4 and 8 in the pool: j2 fits.
		{name: "borrowWithinCohort", cqs: []ClusterQueue{
			cq("a", "org", "", borrowLow, gpuQuota(0, 4, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 4, -1, -1)), cq("c", "org", "", lo, gpuQuota(0, 4, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"b", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"b", 4, 0}}, want: "start j1 h100"},
				{at: 2 * s, submit: []kjob{{"a", 8, 5}}, want: "preempt j1"},
				{at: 3 * s, want: "start j2 h100"},
			}},
		// Without it, a job that must borrow preempts only in its own
		// queue: j2 waits.
		{name: "borrowWithinCohort off", cqs: []ClusterQueue{
			cq("a", "org", "", Preemption{ReclaimWithinCohort: PreemptLowerPriority}, gpuQuota(0, 4, -1, -1)), cq("b", "org", "", lo, gpuQuota(0, 4, -1, -1)), cq("c", "org", "", lo, gpuQuota(0, 4, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"b", 4, 0}}, want: "start j0 h100"},
				{at: s, submit: []kjob{{"b", 4, 0}}, want: "start j1 h100"},
				{at: 2 * s, submit: []kjob{{"a", 8, 5}}, want: ""},
			}},
		// LowerOrNewerEqualPriority: j0 and j1 fill a's 8; j2, of equal
		// priority, may preempt only equal-priority jobs that entered
		// the queue after it, and both running jobs entered before:
		// nothing happens.
		{name: "LowerOrNewerEqualPriority, older victims", cqs: []ClusterQueue{
			cq("a", "", "", Preemption{WithinClusterQueue: PreemptLowerOrNewerEqualPriority}, gpuQuota(0, 8, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}, {"a", 4, 0}}, want: "start j0 h100, start j1 h100"},
				{at: 10 * s, submit: []kjob{{"a", 4, 0}}, want: ""},
			}},
		// Fair sharing: a and b each run 4 (their nominal) and both
		// want to borrow c's idle 4 at once. Share once admitted: a
		// 4/12 ÷ 1 = 0.33, b 4/12 ÷ 2 = 0.17: b's j3 goes first, and
		// then the pool is used up. Without fair sharing a's j2 goes
		// first (same priority and time, a listed first).
		{name: "fair sharing by weight", fair: true, cqs: []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 4, -1, -1)), weighted(cq("b", "org", "", lo, gpuQuota(0, 4, -1, -1)), 2), cq("c", "org", "", lo, gpuQuota(0, 4, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}, {"b", 4, 0}}, want: "start j0 h100, start j1 h100"},
				{at: s, submit: []kjob{{"a", 4, 0}, {"b", 4, 0}}, want: "start j3 h100"},
			}},
		{name: "no fair sharing", cqs: []ClusterQueue{
			cq("a", "org", "", lo, gpuQuota(0, 4, -1, -1)), weighted(cq("b", "org", "", lo, gpuQuota(0, 4, -1, -1)), 2), cq("c", "org", "", lo, gpuQuota(0, 4, -1, -1))},
			steps: []kstep{
				{at: 0, submit: []kjob{{"a", 4, 0}, {"b", 4, 0}}, want: "start j0 h100, start j1 h100"},
				{at: s, submit: []kjob{{"a", 4, 0}, {"b", 4, 0}}, want: "start j2 h100"},
			}},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kueueOf(t, tc.cqs...)
			cfg.FairSharing = tc.fair
			runKueue(t, cfg, tc.steps)
		})
	}
}
