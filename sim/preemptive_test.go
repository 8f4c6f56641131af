package sim

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// attemptSpan is one attempt's start and end, for the preemptive orders'
// hand-worked runs.
type attemptSpan struct{ start, end hwmodel.Time }

// The preemptive orders on the engine, each worked by hand (times in
// minutes unless said):
func TestPreemptiveOrders(t *testing.T) {
	const m = hwmodel.Minute
	withPrio := func(j workloads.Job, p int) workloads.Job { j.Priority = p; return j }
	for _, tc := range []struct {
		name string
		spec string
		gpus int
		save bool
		jobs []workloads.Job
		want map[string][]attemptSpan
	}{
		// tiresias, one threshold at 1 GPU-hour, 4 GPUs: A (4 GPUs, 2 h)
		// reaches 1 GPU-hour at 15 (4 GPU-minutes a minute) and drops to
		// the second queue; B (1 GPU, 30), which arrived at 10 behind A in
		// the first queue, then preempts it and runs 15..45. A (4 GPUs)
		// does not fit beside B and restarts at 45; it saved nothing, so
		// it runs its 2 h again: ends at 165.
		{"tiresias", "tiresias+thresholds=1h", 4, false,
			[]workloads.Job{oneJob("A", 0, 120*m, 4), oneJob("B", 10*m, 30*m, 1)},
			map[string][]attemptSpan{"A": {{0, 15 * m}, {45 * m, 165 * m}}, "B": {{15 * m, 45 * m}}}},
		// The same saving on preemption: A keeps its 15 and ends at
		// 45 + 105 = 150.
		{"tiresias, saving", "tiresias+thresholds=1h", 4, true,
			[]workloads.Job{oneJob("A", 0, 120*m, 4), oneJob("B", 10*m, 30*m, 1)},
			map[string][]attemptSpan{"A": {{0, 15 * m}, {45 * m, 150 * m}}, "B": {{15 * m, 45 * m}}}},
		// las counts wall time, with one threshold at 10: A reaches it as
		// B arrives, at 10, and B runs; at 20 B reaches it too and goes
		// to the second queue behind A, which resumes (keeping its 10)
		// and runs its remaining 110 to 130; B then finishes 130..150.
		{"las", "las+thresholds=10m", 4, true,
			[]workloads.Job{oneJob("A", 0, 120*m, 4), oneJob("B", 10*m, 30*m, 1)},
			map[string][]attemptSpan{"A": {{0, 10 * m}, {20 * m, 130 * m}}, "B": {{10 * m, 20 * m}, {130 * m, 150 * m}}}},
		// srtf on one GPU: at 50, A has 50 left and B (estimate 20) less:
		// B runs 50..70, then A its remaining 50: 70..120.
		{"srtf", "srtf", 1, true,
			[]workloads.Job{oneJob("A", 0, 100*m, 1), oneJob("B", 50*m, 20*m, 1)},
			map[string][]attemptSpan{"A": {{0, 50 * m}, {70 * m, 120 * m}}, "B": {{50 * m, 70 * m}}}},
		// priority+preempt on 2 GPUs: L1 and L2 (priority 0) start at 0
		// and 5; H (priority 5) at 10 evicts the more recently started,
		// L2, and runs 10..40; E (priority 0) at 20 evicts nobody of its
		// own priority and waits: L2 was queued first, so it restarts
		// when H ends at 40 (saved 5, ends 40 + 55 = 95), and E takes
		// its GPU at 95.
		{"priority+preempt", "priority+preempt", 2, true,
			[]workloads.Job{withPrio(oneJob("L1", 0, 100*m, 1), 0), withPrio(oneJob("L2", 5*m, 60*m, 1), 0),
				withPrio(oneJob("H", 10*m, 30*m, 1), 5), withPrio(oneJob("E", 20*m, 10*m, 1), 0)},
			map[string][]attemptSpan{"L1": {{0, 100 * m}}, "L2": {{5 * m, 10 * m}, {40 * m, 95 * m}},
				"H": {{10 * m, 40 * m}}, "E": {{95 * m, 105 * m}}}},
		// gandiva with a 10-minute quantum on one GPU: A (30) and B (30,
		// at 1) take turns: A 0..10, B 10..20, A 20..30, B 30..40, A
		// 40..50 (done), B 50..60 (done).
		{"gandiva", "gandiva+quantum=10m", 1, true,
			[]workloads.Job{oneJob("A", 0, 30*m, 1), oneJob("B", 1*m, 30*m, 1)},
			map[string][]attemptSpan{"A": {{0, 10 * m}, {20 * m, 30 * m}, {40 * m, 50 * m}},
				"B": {{10 * m, 20 * m}, {30 * m, 40 * m}, {50 * m, 60 * m}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := jobsWorkload(t, tc.jobs...)
			res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, tc.gpus), Workload: w,
				Policy: policies.MustParseSpec(tc.spec).MustNew(), SaveOnPreempt: tc.save})
			for i, o := range res.Jobs {
				name := w.Jobs[i].Name
				var got []attemptSpan
				for _, a := range o.Log() {
					got = append(got, attemptSpan{a.Start, a.End})
				}
				want := tc.want[name]
				if len(got) != len(want) {
					t.Errorf("%s: attempts %v, want %v", name, got, want)
					continue
				}
				for k := range got {
					if got[k] != want[k] {
						t.Errorf("%s: attempts %v, want %v", name, got, want)
						break
					}
				}
				if o.Preemptions != len(want)-1 {
					t.Errorf("%s: %d preemptions, want %d", name, o.Preemptions, len(want)-1)
				}
			}
		})
	}
}
