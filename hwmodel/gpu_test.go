package hwmodel_test

import (
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestLookupModel(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical name; "" = unknown
	}{
		{"P100", "P100"},
		{"V100M32", "V100-32GB"},
		{"v100m32", "V100-32GB"},
		{" V100M16 ", "V100-16GB"},
		{"V100", "V100-16GB"},
		{"v100_sxm2_32gb", "V100-32GB"},
		{"Tesla T4", "T4"},
		{"A100", "A100-40GB"},
		{"a100 sxm4 80gb", "A100-80GB"},
		{"H100", "H100-80GB"},
		{"h200", "H200-141GB"},
		{"B200", "B200-180GB"},
		{"mi300x", "MI300X-192GB"},
		{"Tesla K80", "K80"},
		{"Z900", ""},
		{"", ""},
		{"A100-80", ""},
	}
	for _, tc := range tests {
		m, ok := hwmodel.LookupModel(tc.in)
		switch {
		case tc.want == "" && ok:
			t.Errorf("LookupModel(%q) = %s, want unknown", tc.in, m.Name)
		case tc.want != "" && (!ok || m.Name != tc.want):
			t.Errorf("LookupModel(%q) = %q, %v; want %q", tc.in, m.Name, ok, tc.want)
		}
	}
}

func TestCatalogue(t *testing.T) {
	seen := map[string]string{}
	for i, m := range hwmodel.Models() {
		if int(m.ID) != i {
			t.Errorf("%s has ID %d at position %d", m.Name, m.ID, i)
		}
		if hwmodel.Model(m.ID).Name != m.Name {
			t.Errorf("Model(%d) = %s, want %s", m.ID, hwmodel.Model(m.ID).Name, m.Name)
		}
		if m.MemoryMiB <= 0 && !strings.HasPrefix(m.Vendor, "anonymised") {
			t.Errorf("%s: memory %d", m.Name, m.MemoryMiB)
		}
		for _, name := range append([]string{m.Name}, m.Aliases...) {
			key := strings.ToUpper(name)
			if prev, dup := seen[key]; dup {
				t.Errorf("name %q is used by both %s and %s", name, prev, m.Name)
			}
			seen[key] = m.Name
			if got, ok := hwmodel.LookupModel(name); !ok || got.ID != m.ID {
				t.Errorf("LookupModel(%q) = %s, %v; want %s", name, got.Name, ok, m.Name)
			}
		}
	}
	// Models returns a copy: changing it changes nothing.
	ms := hwmodel.Models()
	ms[0].Name = "changed"
	if hwmodel.Models()[0].Name == "changed" {
		t.Error("Models exposes the catalogue")
	}
}

func TestParseModelSet(t *testing.T) {
	p100, v16, v32, t4, a40, a80 := modelID(t, "P100"), modelID(t, "V100-16GB"), modelID(t, "V100-32GB"), modelID(t, "T4"), modelID(t, "A100-40GB"), modelID(t, "A100-80GB")
	tests := []struct {
		in      string
		want    hwmodel.ModelSet
		wantErr string
	}{
		{"", hwmodel.AnyModel, ""},
		{"any", hwmodel.AnyModel, ""},
		{"ANY", hwmodel.AnyModel, ""},
		{"nan", hwmodel.AnyModel, ""},
		{"V100M32", hwmodel.Of(v32), ""},
		{"V100M16|V100M32", hwmodel.Of(v16, v32), ""},
		{"P100, T4", hwmodel.Of(p100, t4), ""},
		{"A100|A100-80GB", hwmodel.Of(a40, a80), ""},
		{"T4|T4", hwmodel.Of(t4), ""},
		{"T4|", hwmodel.Of(t4), ""},
		{"Z900", 0, `unknown GPU model "Z900"`},
		{"T4|Z900", 0, `unknown GPU model "Z900"`},
	}
	for _, tc := range tests {
		got, err := hwmodel.ParseModelSet(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseModelSet(%q) = %v, %v; want error %q", tc.in, got, err, tc.wantErr)
				continue
			}
			for _, m := range hwmodel.Models() {
				if !strings.Contains(err.Error(), m.Name) {
					t.Errorf("ParseModelSet(%q) error %q does not list %s", tc.in, err, m.Name)
				}
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseModelSet(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestModelSet(t *testing.T) {
	t4, h100 := modelID(t, "T4"), modelID(t, "H100")
	s := hwmodel.Of(t4, h100)
	if !s.Accepts(t4) || !s.Accepts(h100) || s.Accepts(modelID(t, "P100")) {
		t.Errorf("%v accepts the wrong models", s)
	}
	if s.String() != "T4|H100-80GB" {
		t.Errorf("String = %q", s.String())
	}
	for _, m := range hwmodel.Models() {
		if !hwmodel.AnyModel.Accepts(m.ID) {
			t.Errorf("AnyModel refuses %s", m.Name)
		}
	}
	if hwmodel.AnyModel.String() != "any" {
		t.Errorf("AnyModel.String = %q", hwmodel.AnyModel.String())
	}
	// String and ParseModelSet round-trip.
	if back, err := hwmodel.ParseModelSet(s.String()); err != nil || back != s {
		t.Errorf("ParseModelSet(%q) = %v, %v", s.String(), back, err)
	}
}
