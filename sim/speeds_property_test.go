package sim_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// runWith runs w on an all-H100 cluster of gpus GPUs with every invariant
// checked, under speeds when table is set (durations measured on A100).
func runWith(t *testing.T, w *workloads.Workload, spec string, gpus int, table *hwmodel.SpeedTable) *sim.Result {
	t.Helper()
	c, err := runner.BenchCluster(gpus)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := policies.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.New()
	if err != nil {
		t.Fatal(err)
	}
	a100, _ := hwmodel.LookupModel("A100-80GB")
	opt := runner.Options{CheckInvariants: true, Speeds: table, SpeedReference: a100.ID}.ForPolicy(ps)
	prep, err := runner.Prepare(c, w, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A cluster that runs every job twice as fast as it was measured is the
// same cluster running jobs half as long: with even durations and
// estimates, every policy, backfill included, must make the same
// decisions at the same instants. A rate that leaked into a computation
// that should not see it, or one left out of an expected end, shows here.
func TestSpeedTwiceAsFastIsHalfTheWork(t *testing.T) {
	table, err := hwmodel.ReadSpeedTable(strings.NewReader("class,gpu_model,speed\n*,A100-80GB,1\n*,H100-80GB,2\n"), "speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"fcfs", "sjf", "priority", "fair", "fcfs+bf", "sjf+bf", "fair+bf/bestfit", "sjf+oracle+bf"} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", spec, seed), func(t *testing.T) {
				w := smallWorkload(t, seed, 300)
				half := &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: w.Tenants}
				for i := range w.Jobs {
					w.Jobs[i].Duration *= 2
					w.Jobs[i].Estimate *= 2
				}
				fast := runWith(t, w, spec, 64, table)
				plain := runWith(t, half, spec, 64, nil)
				if len(fast.Jobs) != len(plain.Jobs) {
					t.Fatalf("%d outcomes, want %d", len(fast.Jobs), len(plain.Jobs))
				}
				for i := range fast.Jobs {
					a, b := fast.Jobs[i], plain.Jobs[i]
					if a.State != b.State || a.Start != b.Start || a.End != b.End || a.Run != b.Run || a.Attempts != b.Attempts || !reflect.DeepEqual(a.Placement, b.Placement) {
						t.Fatalf("job %s: at twice the speed %s %v..%v run %v on %v; at half the work %s %v..%v run %v on %v",
							w.Jobs[i].Name, a.State, a.Start, a.End, a.Run, a.Placement, b.State, b.Start, b.End, b.Run, b.Placement)
					}
				}
			})
		}
	}
}
