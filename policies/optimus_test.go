package policies

import (
	"strings"
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
		s, err := ParseSpec(tc.in)
		if err == nil {
			err = s.Check()
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.err == "" && s.String() != tc.label:
			t.Errorf("%s: label %q, want %q", tc.in, s.String(), tc.label)
		case tc.err == "":
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
