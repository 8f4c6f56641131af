package hwmodel_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

var migModels = []string{"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB"}

func TestMIGTableShape(t *testing.T) {
	for _, name := range migModels {
		m := modelID(t, name)
		ps := hwmodel.MIGProfiles(m)
		if len(ps) != 7 {
			t.Fatalf("%s: %d profiles", name, len(ps))
		}
		compute, memory := hwmodel.MIGSlices(m)
		if compute != 7 || memory != 8 {
			t.Errorf("%s: MIGSlices %d, %d", name, compute, memory)
		}
		for i, p := range ps {
			if !strings.HasPrefix(p.Name, fmt.Sprintf("%dg.", p.Slices)) {
				t.Errorf("%s: profile %s has %d slices", name, p.Name, p.Slices)
			}
			for _, st := range p.Starts {
				if st < 0 || st+p.MemorySlices > memory {
					t.Errorf("%s %s: start %d runs past %d memory slices", name, p.Name, st, memory)
				}
			}
			if p.MemoryMiB <= 0 || p.MemoryMiB > hwmodel.Model(m).MemoryMiB {
				t.Errorf("%s %s: memory %d MiB outside the GPU's %d", name, p.Name, p.MemoryMiB, hwmodel.Model(m).MemoryMiB)
			}
			idx, q, ok := hwmodel.LookupMIGProfile(m, strings.ToUpper(p.Name))
			if !ok || idx != i || q.Name != p.Name {
				t.Errorf("%s: LookupMIGProfile(%s) = %d, %v, %v", name, p.Name, idx, q.Name, ok)
			}
		}
		// The table is a copy: changing it changes nothing.
		ps[0].Starts[0] = 99
		ps[0].Name = "x"
		if again := hwmodel.MIGProfiles(m); again[0].Starts[0] != 0 || again[0].Name == "x" {
			t.Fatalf("%s: MIGProfiles returned the table itself", name)
		}
	}
	for _, name := range []string{"P100", "V100-32GB", "T4", "A10", "G2"} {
		m := modelID(t, name)
		if hwmodel.MIGProfiles(m) != nil || hwmodel.MIGCapable(m) {
			t.Errorf("%s has MIG profiles", name)
		}
		if c, mem := hwmodel.MIGSlices(m); c != 0 || mem != 0 {
			t.Errorf("%s: MIGSlices %d, %d", name, c, mem)
		}
		if _, _, ok := hwmodel.LookupMIGProfile(m, "1g.10gb"); ok {
			t.Errorf("%s: LookupMIGProfile found a profile", name)
		}
	}
}

func TestMIGMilli(t *testing.T) {
	h := modelID(t, "H200")
	want := []int32{143, 143, 143, 286, 429, 571, 1000}
	for i, w := range want {
		if got := hwmodel.MIGMilli(h, i); got != w {
			t.Errorf("MIGMilli(H200, %d) = %d, want %d", i, got, w)
		}
	}
	if hwmodel.MIGMilli(h, 7) != 0 || hwmodel.MIGMilli(h, -1) != 0 || hwmodel.MIGMilli(modelID(t, "T4"), 0) != 0 {
		t.Error("MIGMilli of a missing profile is not 0")
	}
}

func TestMIGRequestMatches(t *testing.T) {
	h := modelID(t, "H200")
	a := modelID(t, "A100-40GB")
	idx := func(m hwmodel.ModelID, name string) int {
		i, _, ok := hwmodel.LookupMIGProfile(m, name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		return i
	}
	tests := []struct {
		r     hwmodel.MIGRequest
		m     hwmodel.ModelID
		prof  string
		match bool
	}{
		{hwmodel.MIGRequest{Profile: "3g.71gb"}, h, "3g.71gb", true},
		{hwmodel.MIGRequest{Profile: "3G.71GB"}, h, "3g.71gb", true},
		{hwmodel.MIGRequest{Profile: "3g.71gb"}, h, "4g.71gb", false},
		{hwmodel.MIGRequest{Profile: "3g.71gb"}, a, "3g.20gb", false},
		{hwmodel.MIGRequest{Profile: "3g.71gb", MinSlices: 4}, h, "3g.71gb", false},
		{hwmodel.MIGRequest{MinSlices: 2}, h, "1g.35gb", false},
		{hwmodel.MIGRequest{MinSlices: 2}, h, "2g.35gb", true},
		{hwmodel.MIGRequest{MinSlices: 2}, h, "7g.141gb", true},
		{hwmodel.MIGRequest{MinMemoryMiB: 20000}, h, "1g.35gb", true},
		{hwmodel.MIGRequest{MinMemoryMiB: 20000}, h, "1g.18gb", false},
		{hwmodel.MIGRequest{MinMemoryMiB: 20000}, a, "3g.20gb", false}, // 19968 MiB
		{hwmodel.MIGRequest{MinSlices: 1, MinMemoryMiB: 16384}, h, "1g.18gb+me", true},
		{hwmodel.MIGRequest{}, h, "1g.18gb", false},
	}
	for _, tt := range tests {
		if got := tt.r.Matches(tt.m, idx(tt.m, tt.prof)); got != tt.match {
			t.Errorf("%v matches %s %s = %v, want %v", tt.r, hwmodel.Model(tt.m).Name, tt.prof, got, tt.match)
		}
	}
	if (hwmodel.MIGRequest{MinSlices: 1}).Matches(h, 99) || (hwmodel.MIGRequest{MinSlices: 1}).Matches(modelID(t, "T4"), 0) {
		t.Error("matched a profile that does not exist")
	}
}

func TestParseMIGLayout(t *testing.T) {
	tests := []struct {
		model, in, want string // want: the layout's String
	}{
		{"H200", "3g.71gb,2g.35gb,1g.18gb,1g.18gb", "3g.71gb@4,2g.35gb@0,1g.18gb@2,1g.18gb@3"},
		{"H200", " 3g.71gb@4 , 2g.35gb@0,1g.18gb@2,1g.18gb@3 ", "3g.71gb@4,2g.35gb@0,1g.18gb@2,1g.18gb@3"},
		{"H200", "1g.18gb,1g.18gb,3g.71gb,2g.35gb", "1g.18gb@2,1g.18gb@3,3g.71gb@4,2g.35gb@0"},
		{"H200", "balanced", "3g.71gb@4,2g.35gb@0,1g.18gb@2,1g.18gb@3"},
		{"H200", "WHOLE", "7g.141gb@0"},
		{"H200", "7g.141gb", "7g.141gb@0"},
		{"H200", "", ""},
		{"H200", "   ", ""},
		{"H200", "1g.35gb,1g.35gb,1g.35gb,1g.35gb", "1g.35gb@0,1g.35gb@2,1g.35gb@4,1g.35gb@6"},
		{"H200", "1g.18gb+me,1g.18gb,1g.18gb,1g.18gb,1g.18gb,1g.18gb,1g.18gb", "1g.18gb+me@0,1g.18gb@1,1g.18gb@2,1g.18gb@3,1g.18gb@4,1g.18gb@5,1g.18gb@6"},
		{"H200", "4g.71gb,3g.71gb", "4g.71gb@0,3g.71gb@4"},
		{"H200", "3g.71gb,4g.71gb", "3g.71gb@4,4g.71gb@0"},
		{"H200", "2g.35gb,2g.35gb,2g.35gb,1g.18gb", "2g.35gb@0,2g.35gb@2,2g.35gb@4,1g.18gb@6"},
		{"H200", "3g.71gb@0,2g.35gb,1g.18gb", "3g.71gb@0,2g.35gb@4,1g.18gb@6"},
		{"A100-40GB", "3g.20gb,3g.20gb", "3g.20gb@0,3g.20gb@4"},
		{"A100-40GB", "4g.20gb,1g.10gb,1g.10gb", "4g.20gb@0,1g.10gb@4,1g.10gb@6"},
		{"A100-40GB", "all-1g", "1g.5gb@0,1g.5gb@1,1g.5gb@2,1g.5gb@3,1g.5gb@4,1g.5gb@5,1g.5gb@6"},
		{"A100-80GB", "1g.10gb@1,1g.20gb@2", "1g.10gb@1,1g.20gb@2"},
		{"A100-80GB", "halves", "3g.40gb@0,3g.40gb@4"},
		{"H100", "4g-3g", "4g.40gb@0,3g.40gb@4"},
		{"H100", "all-2g", "2g.20gb@0,2g.20gb@2,2g.20gb@4"},
	}
	for _, tt := range tests {
		m := modelID(t, tt.model)
		l, err := hwmodel.ParseMIGLayout(m, tt.in)
		if err != nil {
			t.Errorf("%s %q: %v", tt.model, tt.in, err)
			continue
		}
		if got := l.String(m); got != tt.want {
			t.Errorf("%s %q = %s, want %s", tt.model, tt.in, got, tt.want)
		}
		if err := hwmodel.ValidateMIGLayout(m, l); err != nil {
			t.Errorf("%s %q: parsed layout invalid: %v", tt.model, tt.in, err)
		}
		back, err := hwmodel.ParseMIGLayout(m, l.String(m))
		if err != nil || !slices.Equal(back, l) {
			t.Errorf("%s %q: String does not read back: %v, %v", tt.model, tt.in, back, err)
		}
	}
}

// TestParseMIGLayoutRejects covers each kind of invalid layout, including
// layouts real GPUs reject.
func TestParseMIGLayoutRejects(t *testing.T) {
	tests := []struct {
		model, in string
		want      []string // substrings of the error
	}{
		// NVML refuses these on a real A100.
		{"A100-40GB", "4g.20gb@0,3g.20gb@0", []string{"instance 1 (3g.20gb@0) overlaps instance 0 (4g.20gb@0)", "memory slice 0"}},
		{"A100-40GB", "3g.20gb@2", []string{"3g.20gb cannot start at memory slice 2", "valid starts: 0, 4"}},
		{"A100-40GB", "1g.10gb@1", []string{"1g.10gb cannot start at memory slice 1", "valid starts: 0, 2, 4, 6"}},
		{"A100-40GB", "1g.10gb@3", []string{"cannot start at memory slice 3"}},
		{"A100-40GB", "1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb", []string{"8 instances", "at most 7"}},
		{"A100-40GB", "4g.20gb,4g.20gb", []string{"profile 4g.20gb: 2 instances, a GPU holds at most 1"}},
		{"A100-40GB", "4g.20gb,2g.10gb,2g.10gb", []string{"8 compute slices, the GPU has 7"}},
		{"A100-40GB", "7g.40gb,1g.5gb", []string{"8 compute slices"}},
		{"A100-40GB", "1g.5gb+me,1g.5gb+me", []string{"1g.5gb+me: 2 instances, a GPU holds at most 1"}},
		{"A100-40GB", "3g.20gb@0,2g.10gb@2", []string{"overlaps"}},
		{"A100-40GB", "3g.20gb@0,2g.10gb,1g.5gb@4", []string{"no placement of 3g.20gb@0,2g.10gb,1g.5gb@4 fits"}},
		{"A100-40GB", "3g.40gb", []string{`profile "3g.40gb" does not exist on A100-40GB`, "profiles: 1g.5gb,"}},
		{"A100-40GB", "3g.20gb@8", []string{`start "8" is not a memory slice 0..7`}},
		{"A100-40GB", "3g.20gb@x", []string{`start "x"`}},
		{"A100-40GB", "3g.20gb,,1g.5gb", []string{"item 1", "is empty"}},
		{"A100-40GB", "halfs", []string{`profile "halfs" does not exist`, "named layouts: whole,"}},
		{"H200", "3g.71gb,3g.71gb,1g.18gb", []string{"no placement of 3g.71gb,3g.71gb,1g.18gb fits"}},
		{"H200", "1g.35gb,1g.35gb,1g.35gb,1g.35gb,1g.18gb", []string{"no placement"}},
		{"H200", "2g.35gb@1", []string{"cannot start at memory slice 1"}},
		{"H200", "1g.18gb@7", []string{"cannot start at memory slice 7"}},
		{"T4", "1g.5gb", []string{"T4 does not support MIG"}},
		{"T4", "whole", []string{"T4 does not support MIG"}},
	}
	for _, tt := range tests {
		m := modelID(t, tt.model)
		l, err := hwmodel.ParseMIGLayout(m, tt.in)
		if err == nil {
			t.Errorf("%s %q: accepted as %s", tt.model, tt.in, l.String(m))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q: error %q lacks %q", tt.model, tt.in, err, w)
			}
		}
	}
	if _, err := hwmodel.ParseMIGLayout(modelID(t, "H200"), strings.Repeat("1g.18gb,", 200)); err == nil {
		t.Error("a very long layout was accepted")
	}
}

func TestValidateMIGLayout(t *testing.T) {
	a := modelID(t, "A100-40GB")
	one, _, _ := hwmodel.LookupMIGProfile(a, "1g.5gb")
	three, _, _ := hwmodel.LookupMIGProfile(a, "3g.20gb")
	four, _, _ := hwmodel.LookupMIGProfile(a, "4g.20gb")
	big1, _, _ := hwmodel.LookupMIGProfile(a, "1g.10gb")
	tests := []struct {
		name string
		m    hwmodel.ModelID
		l    hwmodel.MIGLayout
		want string // "" = valid
	}{
		{"empty", a, nil, ""},
		{"empty on T4", modelID(t, "T4"), hwmodel.MIGLayout{}, ""},
		{"4g+3g", a, hwmodel.MIGLayout{{four, 0}, {three, 4}}, ""},
		{"overlapping 4g and 3g", a, hwmodel.MIGLayout{{four, 0}, {three, 0}}, "overlaps instance 0 (4g.20gb@0) at memory slice 0"},
		{"3g at 2", a, hwmodel.MIGLayout{{three, 2}}, "cannot start at memory slice 2"},
		{"1g.10gb at 1", a, hwmodel.MIGLayout{{big1, 1}}, "1g.10gb cannot start at memory slice 1"},
		{"8 × 1g", a, hwmodel.MIGLayout{{one, 0}, {one, 1}, {one, 2}, {one, 3}, {one, 4}, {one, 5}, {one, 6}, {one, 7}}, "cannot start at memory slice 7"},
		{"8 × 1g, all at legal starts", a, hwmodel.MIGLayout{{one, 0}, {one, 1}, {one, 2}, {one, 3}, {one, 4}, {one, 5}, {one, 6}, {one, 0}}, "overlaps"},
		{"profile index out of range", a, hwmodel.MIGLayout{{7, 0}}, "profile index 7 does not exist on A100-40GB"},
		{"negative profile", a, hwmodel.MIGLayout{{-1, 0}}, "profile index -1"},
		{"negative start", a, hwmodel.MIGLayout{{one, -1}}, "cannot start at memory slice -1"},
		{"MIG on T4", modelID(t, "T4"), hwmodel.MIGLayout{{0, 0}}, "T4 does not support MIG"},
		{"too many slices", a, hwmodel.MIGLayout{{four, 0}, {big1, 4}, {big1, 6}, {one, 7}}, "cannot start"},
	}
	for _, tt := range tests {
		err := hwmodel.ValidateMIGLayout(tt.m, tt.l)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && err == nil:
			t.Errorf("%s: accepted", tt.name)
		case tt.want != "" && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s: error %q lacks %q", tt.name, err, tt.want)
		}
	}
}

func TestNamedMIGLayouts(t *testing.T) {
	names := hwmodel.MIGLayoutNames()
	for _, must := range []string{"whole", "all-1g", "balanced", "halves"} {
		if !slices.Contains(names, must) {
			t.Errorf("no named layout %s", must)
		}
	}
	wantSlices := map[string][]int{"whole": {7}, "all-1g": {1, 1, 1, 1, 1, 1, 1}, "balanced": {3, 2, 1, 1}, "halves": {3, 3}}
	for _, model := range migModels {
		m := modelID(t, model)
		ps := hwmodel.MIGProfiles(m)
		for _, name := range names {
			l, err := hwmodel.NamedMIGLayout(m, name)
			if err != nil {
				t.Errorf("%s %s: %v", model, name, err)
				continue
			}
			if err := hwmodel.ValidateMIGLayout(m, l); err != nil {
				t.Errorf("%s %s: %v", model, name, err)
			}
			if hwmodel.MIGLayoutDescription(name) == "" {
				t.Errorf("%s: no description", name)
			}
			if want, ok := wantSlices[name]; ok {
				var got []int
				for _, in := range l {
					got = append(got, ps[in.Profile].Slices)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s: slices %v, want %v", model, name, got, want)
				}
			}
		}
	}
	if _, err := hwmodel.NamedMIGLayout(modelID(t, "H200"), "thirds"); err == nil || !strings.Contains(err.Error(), "unknown MIG layout name") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := hwmodel.NamedMIGLayout(modelID(t, "V100"), "whole"); err == nil {
		t.Error("named layout on a V100")
	}
}

func FuzzParseMIGLayout(f *testing.F) {
	for _, s := range []string{"3g.71gb,2g.35gb,1g.18gb,1g.18gb", "balanced", "3g.71gb@4,1g.18gb@0", "", "1g.35gb,1g.35gb,1g.35gb,1g.35gb",
		"7g.141gb@0", "1g.18gb+me@6", "4g.71gb,3g.71gb", ",@", "2g.35gb@-1", "1g.18gb@99999999999999999999"} {
		f.Add(uint8(8), s)
		f.Add(uint8(5), strings.ReplaceAll(s, "71gb", "20gb"))
	}
	f.Fuzz(func(t *testing.T, model uint8, s string) {
		m := hwmodel.ModelID(int(model) % len(hwmodel.Models()))
		l, err := hwmodel.ParseMIGLayout(m, s)
		if err != nil {
			if l != nil {
				t.Fatalf("error %v with a layout %v", err, l)
			}
			return
		}
		if err := hwmodel.ValidateMIGLayout(m, l); err != nil {
			t.Fatalf("%q parsed to an invalid layout %v: %v", s, l, err)
		}
		back, err := hwmodel.ParseMIGLayout(m, l.String(m))
		if err != nil || !slices.Equal(back, l) {
			t.Fatalf("%q: %s does not read back (%v, %v)", s, l.String(m), back, err)
		}
		// The layout fits one MIG GPU of a cluster.
		if len(l) > 0 {
			c, err := hwmodel.NewCluster([]hwmodel.Node{{Name: "n", Model: m, GPUs: 1, MIG: []hwmodel.MIGLayout{l}}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func ExampleParseMIGLayout() {
	h200, _ := hwmodel.LookupModel("H200-141GB")
	l, err := hwmodel.ParseMIGLayout(h200.ID, "3g.71gb,2g.35gb,1g.18gb,1g.18gb")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.String(h200.ID))
	for k, in := range l {
		p := hwmodel.MIGProfiles(h200.ID)[in.Profile]
		fmt.Printf("instance %d: %s at memory slice %d, %d MiB, %d milli-GPU\n", k, p.Name, in.Start, p.MemoryMiB, hwmodel.MIGMilli(h200.ID, in.Profile))
	}
	_, err = hwmodel.ParseMIGLayout(h200.ID, "3g.71gb@2")
	fmt.Println(err)
	// Output:
	// 3g.71gb@4,2g.35gb@0,1g.18gb@2,1g.18gb@3
	// instance 0: 3g.71gb at memory slice 4, 71424 MiB, 429 milli-GPU
	// instance 1: 2g.35gb at memory slice 0, 33280 MiB, 286 milli-GPU
	// instance 2: 1g.18gb at memory slice 2, 16384 MiB, 143 milli-GPU
	// instance 3: 1g.18gb at memory slice 3, 16384 MiB, 143 milli-GPU
	// instance 0 (3g.71gb@2): 3g.71gb cannot start at memory slice 2 (valid starts: 0, 4)
}
