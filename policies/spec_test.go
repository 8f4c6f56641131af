package policies_test

import (
	"strings"
	"testing"

	"github.com/brigadesim/brigade/policies"
)

// Every built-in combination prints a label that parses back to the same
// policy, and the policy built from it carries that label as its name.
func TestSpecRoundTrip(t *testing.T) {
	specs := policies.AllSpecs()
	if len(specs) < 4*7*2 {
		t.Fatalf("AllSpecs gave %d specs, too few to cover orders × placements × backfill", len(specs))
	}
	labels := map[string]policies.Spec{}
	for _, s := range specs {
		label := s.String()
		back, err := policies.ParseSpec(label)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !back.Equal(s) {
			t.Errorf("%s parsed back as %+v, want %+v", label, back, s)
		}
		if got := back.String(); got != label {
			t.Errorf("%s printed back as %s", label, got)
		}
		if prev, dup := labels[label]; dup {
			t.Errorf("label %s names two policies: %+v and %+v", label, prev, s)
		}
		labels[label] = s
		if s.NeedsTarget() {
			continue // fgd is built with the trace's target workload
		}
		p, err := s.New()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if p.Name() != label {
			t.Errorf("policy built from %s is named %s", label, p.Name())
		}
	}
}

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct{ in, label string }{
		{"fcfs", "fcfs"},
		{" sjf+bf ", "sjf+bf"},
		{"sjf+oracle+bf", "sjf+bf+oracle"},
		{"fair/bestfit", "fair/bestfit"},
		{"fcfs/firstfit", "fcfs"},
		{"fcfs+bf=1000", "fcfs+bf"},
		{"fcfs+bf=40/packing", "fcfs+bf=40/packing"},
		{"fcfs+oracle", "fcfs"}, // the oracle changes nothing FCFS decides
		{"fcfs+bf+oracle", "fcfs+bf+oracle"},
		{"priority+wprio=1+wwait=1", "priority"},
		{"priority+wwait=0.5+wprio=2", "priority+wprio=2+wwait=0.5"},
		{"priority+wwait=0", "priority+wwait=0"},
		{"fcfs+wwait=3", "fcfs"}, // weights weigh only the priority order
		{"fcfs+mig=dynamic", "fcfs+mig=dynamic"},
		{"sjf+mig=convert+bf/bestfit", "sjf+bf+mig=convert/bestfit"},
		{"fcfs+mig=static", "fcfs"},
		{"multifactor+fs=10000+age=1000", "multifactor+age=1000+fs=10000"},
		{"multifactor+age=1000+maxage=7d+halflife=168h+calc=300", "multifactor+age=1000"}, // the defaults
		{"multifactor+age=0+fs=0+size=0+qos=0", "multifactor"},
		{"multifactor+small+size=2.5+qos=1e3+bf", "multifactor+bf+size=2.5+qos=1000+small"},
		{"multifactor+halflife=0+calc=0", "multifactor+halflife=0+calc=0"},
		{"multifactor+halflife=36h+maxage=90m+calc=1.5", "multifactor+maxage=90m+halflife=36h+calc=1.5s"},
		{"multifactor+halflife=1440m", "multifactor+halflife=1d"},
		{"fcfs+age=1000+fs=1+small+halflife=0", "fcfs"}, // multifactor options weigh only that order
	} {
		s, err := policies.ParseSpec(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := s.String(); got != tc.label {
			t.Errorf("%q: label %q, want %q", tc.in, got, tc.label)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no queue order"},
		{"lifo", `unknown queue order "lifo"`},
		{"sjff", `did you mean "sjf"?`},
		{"sjf+bff", `unknown option "bff"`},
		{"sjf+bff", `did you mean "bf"?`},
		{"sjf+bf=0", "option bf: want a backfill depth > 0"},
		{"sjf+bf=x", "option bf: want a backfill depth > 0"},
		{"sjf+bf+bf", `option "bf" given twice`},
		{"sjf+oracle=1", "option oracle: takes no value"},
		{"priority+wprio=-1", "want a finite weight >= 0"},
		{"priority+wwait=NaN", "want a finite weight >= 0"},
		{"priority+wwait=Inf", "want a finite weight >= 0"},
		{"fcfs+mig=on", "want static, dynamic or convert"},
		{"multifactor+age=-1", "option age: want a finite weight >= 0"},
		{"multifactor+fs=Inf", "option fs: want a finite weight >= 0"},
		{"multifactor+fs", "option fs: want a finite weight >= 0"},
		{"multifactor+small=yes", "option small: takes no value"},
		{"multifactor+maxage=0", "option maxage: want a duration > 0"},
		{"multifactor+halflife=-1h", "option halflife: want a duration >= 0"},
		{"multifactor+calc=soon", "option calc: want a duration >= 0"},
		{"multifactr", `did you mean "multifactor"?`},
		{"fcfs/worstfit", `unknown placement "worstfit"`},
		{"fcfs/", `unknown placement ""`},
	} {
		_, err := policies.ParseSpec(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "policy ") {
			t.Errorf("%q: err = %v, want one containing %q and naming the spec", tc.in, err, tc.want)
		}
	}
}

// The label's options change decisions: a priority order with aging off
// orders jobs differently from the default one, so they need two labels.
func TestSpecLabelsTellPoliciesApart(t *testing.T) {
	a := policies.MustParseSpec("priority")
	b := policies.MustParseSpec("priority+wwait=0")
	if a.Equal(b) || a.String() == b.String() {
		t.Fatalf("%s and %s compare equal", a, b)
	}
}
