package policies

import (
	"testing"
)

// TestOptimusSpecs: the options parse, label and refuse as the other
// preemptive orders' do; round's default is the artifact's interval.
func TestOptimusSpecs(t *testing.T) {
	for _, tc := range []struct {
		in, label, err string
		round          Time
	}{
		{"optimus", "optimus", "", DefaultOptimusRound},
		{"optimus+round=1m", "optimus", "", DefaultOptimusRound},
		{"optimus+round=2m", "optimus+round=2m", "", 2 * DefaultOptimusRound},
		{"optimus/mostfree", "optimus/mostfree", "", DefaultOptimusRound},
		{"optimus+round=0", "", "want a duration such as 6m", 0},
		{"optimus+bf", "", "EASY backfill (bf) does not combine with the preemptive order optimus", 0},
		{"optimus+fastest", "", "the fastest option does not combine", 0},
	} {
		if s, ok := checkSpec(t, tc.in, tc.label, tc.err); ok {
			p, err := s.New()
			if err != nil {
				t.Fatalf("%s: %v", tc.in, err)
			}
			if o := p.(*optimus); o.round != tc.round || o.Name() != tc.label {
				t.Errorf("%s: round %v, name %q; want %v, %q", tc.in, o.round, o.Name(), tc.round, tc.label)
			}
		}
	}
	if !Preemptive("optimus", Options{}) {
		t.Error("optimus is not preemptive")
	}
}
