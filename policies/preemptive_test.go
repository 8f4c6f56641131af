package policies_test

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/policies/policytest"
)

// booksChecked runs CheckPreemptor after every call of its policy.
type booksChecked struct {
	policies.Policy
	err error
}

func (b *booksChecked) Schedule(v policies.View) []policies.Decision {
	ds := b.Policy.Schedule(v)
	if b.err == nil {
		if err := policies.CheckPreemptor(b.Policy, v); err != nil {
			b.err = fmt.Errorf("call at %v: %w", v.Now(), err)
		}
	}
	return ds
}

// TestPreemptorRunningBooks: over random scenarios, with thresholds and
// quanta short enough that keys change while jobs run, the preemptive
// orders keep their running jobs in the order of their keys now, with
// no key time missed.
func TestPreemptorRunningBooks(t *testing.T) {
	for _, s := range []string{"las+thresholds=5m:10m:20m", "tiresias+thresholds=10m:40m", "las+thresholds=5m+promote=2",
		"srtf", "priority+preempt", "gandiva+quantum=7m"} {
		spec, err := policies.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(6) {
			p, err := spec.New()
			if err != nil {
				t.Fatal(err)
			}
			b := &booksChecked{Policy: p}
			if _, err := policytest.Reference(policytest.RandomScenario(seed+1), policytest.Wrap(b, policytest.CheckerOptions{})); err != nil {
				t.Fatalf("%s seed %d: %v", s, seed, err)
			}
			if b.err != nil {
				t.Errorf("%s seed %d: %v", s, seed, b.err)
			}
		}
	}
}

// TestPreemptorStepsChangeNothing: stepping over queued jobs that cannot
// be admitted or fit, and stopping the walk early, decide exactly what
// the plain walk decides, on random scenarios and on an overloaded one
// with a short walk depth.
func TestPreemptorStepsChangeNothing(t *testing.T) {
	scenarios := []policytest.Scenario{overloaded()}
	for seed := range uint64(8) {
		scenarios = append(scenarios, policytest.RandomScenario(seed+1))
	}
	for _, s := range []string{"las+thresholds=5m:10m:20m", "tiresias+thresholds=10m:40m+promote=2", "srtf", "priority+preempt", "gandiva+quantum=7m"} {
		spec, err := policies.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scenarios {
			var logs [2]string
			for k := range logs {
				p, err := spec.New()
				if err != nil {
					t.Fatal(err)
				}
				if k == 1 {
					policies.PreemptorPlain(p)
				}
				c := policytest.Wrap(p, policytest.CheckerOptions{})
				if _, err := policytest.Reference(sc, c); err != nil {
					t.Fatalf("%s %s: %v", s, sc.Name, err)
				}
				logs[k] = c.Log()
			}
			if logs[0] != logs[1] {
				t.Errorf("%s %s: the decisions differ from the plain walk's", s, sc.Name)
			}
		}
	}
}

// overloaded is 300 jobs of 1 to 16 GPUs arriving within minutes on
// three 8-GPU nodes: a long queue of jobs of every size.
func overloaded() policytest.Scenario {
	sc := policytest.RandomScenario(99)
	sc.Name = "overloaded"
	sc.Jobs = sc.Jobs[:0]
	for i := range 300 {
		g := []int{1, 2, 3, 4, 8, 16}[i%6]
		d := policies.Time(600+97*i%5000) * policies.Time(hwmodel.Second)
		sc.Jobs = append(sc.Jobs, policytest.Job{
			Name: fmt.Sprintf("o%d", i), Tenant: i % 3, Priority: i % 4, Submit: policies.Time(i) * policies.Time(hwmodel.Second),
			Duration: d, Estimate: d, Req: hwmodel.Request{GPUs: g, GPUMilli: 1000, CPUMilli: int64(g) * 1000, MemoryMiB: int64(g) * 1024},
		})
	}
	return sc
}
