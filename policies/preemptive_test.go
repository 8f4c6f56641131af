package policies_test

import (
	"fmt"
	"testing"

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
