package sim

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// EASY backfill's extra counts every running job that ends by the shadow
// time, ties included (Lifka 1995; Mu'alem and Feitelson 2001). One node
// of 4 GPUs, every job submitted at 0 with an exact estimate: X, A and B
// start; H (2 GPUs) is blocked, and A's end at 100 s meets its need, so
// the shadow time is 100 s. B ends at 100 s too: at the shadow time 3
// GPUs are idle, 1 more than H needs. Y (1 GPU, 500 s) cannot end by the
// shadow time but fits in that extra GPU, which is idle now: it starts at
// 0. Counting releases only up to A's would leave the extra at 0 and
// start Y at 100 s.
func TestEASYExtraCountsTiedEnds(t *testing.T) {
	w := jobsWorkload(t,
		oneJob("X", 0, 1000*sec, 1), oneJob("A", 0, 100*sec, 1), oneJob("B", 0, 100*sec, 1),
		oneJob("H", 0, 100*sec, 2), oneJob("Y", 0, 500*sec, 1))
	res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, 4), Workload: w, Policy: policies.MustParseSpec("fcfs+bf").MustNew()})
	want := map[string]hwmodel.Time{"X": 0, "A": 0, "B": 0, "H": 100 * sec, "Y": 0}
	for i, o := range res.Jobs {
		if name := w.Jobs[i].Name; o.Start != want[name] {
			t.Errorf("%s starts at %v, want %v", name, o.Start, want[name])
		}
	}
}
