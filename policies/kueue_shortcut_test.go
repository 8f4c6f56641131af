package policies_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/policies/policytest"
)

// The kueue order's memo of failed heads and its cached head places
// change no decision: random scenarios under BestEffortFIFO and
// StrictFIFO queues that preempt decide the same with and without them.
func TestKueueShortcutsDecideTheSame(t *testing.T) {
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	quota := func(f int, gpus int64) policies.Quota {
		q := policies.Quota{Flavor: f}
		for r := range policies.NumRes {
			q.BorrowingLimit[r], q.LendingLimit[r] = policies.NoLimit, policies.NoLimit
		}
		q.Covered[policies.ResGPU] = true
		q.Nominal[policies.ResGPU] = gpus * hwmodel.MilliPerGPU
		return q
	}
	pre := policies.Preemption{WithinClusterQueue: policies.PreemptLowerPriority, ReclaimWithinCohort: policies.PreemptLowerPriority,
		BorrowWithinCohort: policies.PreemptLowerPriority}
	for _, strategy := range []string{policies.BestEffortFIFO, policies.StrictFIFO} {
		cfg := &policies.Kueue{
			Flavors: []policies.KueueFlavor{{Name: "h100", Model: h100.ID}, {Name: "a100", Model: a100.ID}},
			Queues: []policies.ClusterQueue{
				{Name: "x", Cohort: "org", Strategy: strategy, Preemption: pre, Weight: 1, Flavors: []policies.Quota{quota(0, 6), quota(1, 1)}},
				{Name: "y", Cohort: "org", Strategy: strategy, Preemption: pre, Weight: 2, Flavors: []policies.Quota{quota(0, 6), quota(1, 1)}},
				{Name: "z", Cohort: "org", Strategy: strategy, Preemption: pre, Weight: 1, Flavors: []policies.Quota{quota(1, 2), quota(0, 4)}},
			},
			Local:       []policies.LocalQueue{{Name: "x", Queue: 0}, {Name: "y", Queue: 1}, {Name: "z", Queue: 2}},
			FairSharing: true,
		}
		for seed := uint64(1); seed <= 20; seed++ {
			sc := policytest.RandomScenario(seed)
			var logs [2]string
			for k := range logs {
				p := policies.Spec{Order: "kueue", Options: policies.Options{Kueue: cfg}}.MustNew()
				if k == 1 {
					policies.KueuePlain(p)
				}
				c := policytest.Wrap(p, policytest.CheckerOptions{})
				if _, err := policytest.Reference(sc, c); err != nil {
					t.Fatalf("%s seed %d: %v", strategy, seed, err)
				}
				if err := c.Err(); err != nil {
					t.Fatalf("%s seed %d: %v", strategy, seed, err)
				}
				logs[k] = c.Log()
			}
			if logs[0] != logs[1] {
				t.Fatalf("%s seed %d: the shortcuts changed a decision", strategy, seed)
			}
		}
	}
}
