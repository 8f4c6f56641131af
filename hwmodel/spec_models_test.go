package hwmodel

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// These tests are in package hwmodel so that each can put the catalogue
// back as it found it: a custom model stays registered for the life of
// the process, and other tests (the default speed table's, the docs')
// walk every model the catalogue holds.

// restoreCatalogue puts the catalogue back as it is now when t ends.
func restoreCatalogue(t *testing.T) {
	t.Helper()
	saved := current.Load()
	t.Cleanup(func() { current.Store(saved) })
}

// specProblems lists the *SpecError values joined in err.
func specProblems(err error) []*SpecError {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*SpecError
		for _, e := range j.Unwrap() {
			out = append(out, specProblems(e)...)
		}
		return out
	}
	var se *SpecError
	if errors.As(err, &se) {
		return []*SpecError{se}
	}
	return nil
}

// customFleet declares a custom model and uses it beside a catalogue one.
const customFleet = `name: custom-fleet
gpu_models:
  - name: SpecTest-X1
    memory_mib: 49152
    vendor: acme
    speed: 1.7
    speeds:
      - class: bert
        speed: 2.5
      - class: resnet50
        speed: 0.8
node_groups:
  - name_prefix: x1
    count: 2
    gpu_model: spectest-x1
    gpus_per_node: 8
nodes:
  - name: a100-box
    gpu_model: A100-80GB
    gpus: 4
`

// TestSpecCustomModel: a spec's custom model is registered when the spec
// is read, its nodes have it, and YAML renders it back. Bugs it catches:
// nodes built before the model is registered (unknown model), the
// memory or vendor dropped on registration, and YAML leaving gpu_models
// out (the rendered spec then names a model it does not declare).
func TestSpecCustomModel(t *testing.T) {
	restoreCatalogue(t)
	before := NumModels()
	spec, err := ParseClusterSpec([]byte(customFleet), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := LookupModel("SpecTest-X1")
	if !ok {
		t.Fatal("reading the spec did not register SpecTest-X1")
	}
	if !IsCustom(m.ID) || NumModels() != before+1 || m.MemoryMiB != 49152 || m.Vendor != "acme" {
		t.Errorf("registered %+v (custom %v, %d models, was %d); want a custom model of 49152 MiB by acme", m, IsCustom(m.ID), NumModels(), before)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	a100, _ := LookupModel("A100-80GB")
	wantModels := []ModelID{m.ID, m.ID, a100.ID}
	if c.NumNodes() != len(wantModels) {
		t.Fatalf("%d nodes, want %d", c.NumNodes(), len(wantModels))
	}
	for i, w := range wantModels {
		if got := c.Node(i).Model; got != w {
			t.Errorf("node %d (%s) has %s, want %s", i, c.Node(i).Name, Model(got).Name, Model(w).Name)
		}
	}
	if got := c.GPUsOfModel(m.ID); got != 16 {
		t.Errorf("GPUsOfModel(SpecTest-X1) = %d, want 16", got)
	}
	if got := c.ModelsPresent(); got != Of(m.ID, a100.ID) {
		t.Errorf("ModelsPresent = %v, want SpecTest-X1|A100-80GB", got)
	}

	y, err := spec.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "gpu_models:\n  - name: SpecTest-X1\n    memory_mib: 49152\n") {
		t.Errorf("YAML lacks the custom model:\n%s", y)
	}
	back, err := ParseClusterSpec(y, "rendered.yaml")
	if err != nil {
		t.Fatalf("the rendered spec does not read: %v\n%s", err, y)
	}
	back.Source, spec.Source = "", ""
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("round trip changed the spec:\n got %+v\nwant %+v\n%s", back, spec, y)
	}
	if again, _ := LookupModel("SpecTest-X1"); !reflect.DeepEqual(again, m) || NumModels() != before+1 {
		t.Errorf("reading the spec again registered %+v (%d models); want the same model, once", again, NumModels())
	}
}

// TestSpecCustomModelErrors: a bad declaration is reported at its file,
// line and field, and registers nothing. Bugs it catches: a speed of 0
// or below accepted (every rate on the model 0 or negative: jobs never
// end), a class given twice silently taking the last, a custom model
// shadowing a catalogue one, and a problem reported without its line.
func TestSpecCustomModelErrors(t *testing.T) {
	restoreCatalogue(t)
	model := func(body string) string {
		return "name: bad\ngpu_models:\n" + body + "nodes:\n  - name: n0\n    gpu_model: A100-80GB\n    gpus: 1\n"
	}
	tests := []struct {
		name, yaml string
		line       int
		field      string
		want       []string
		registers  int // models the refused spec registers (none: a refused spec leaves the catalogue as it was)
	}{
		{"memory 0", model("  - name: SpecTest-M0\n    memory_mib: 0\n    speed: 1\n"), 4, "gpu_models[0].memory_mib", []string{"must be in 1..", "got 0"}, 0},
		{"memory negative", model("  - name: SpecTest-Mneg\n    memory_mib: -5\n    speed: 1\n"), 4, "gpu_models[0].memory_mib", []string{"got -5"}, 0},
		{"memory missing", model("  - name: SpecTest-Mnone\n    speed: 1\n"), 3, "gpu_models[0].memory_mib", []string{"required"}, 0},
		{"speed 0", model("  - name: SpecTest-S0\n    memory_mib: 1024\n    speed: 0\n"), 5, "gpu_models[0].speed", []string{"finite number > 0", "got 0"}, 0},
		{"speed negative", model("  - name: SpecTest-Sneg\n    memory_mib: 1024\n    speed: -2\n"), 5, "gpu_models[0].speed", []string{"finite number > 0", "got -2"}, 0},
		// The decoder refuses .inf itself and Check sees the zero value
		// left behind; the refused spec still registers nothing.
		{"speed infinite", model("  - name: SpecTest-Sinf\n    memory_mib: 1024\n    speed: .inf\n"), 5, "gpu_models[0].speed", []string{"want a finite number", ".inf"}, 0},
		{"class twice", model("  - name: SpecTest-C2\n    memory_mib: 1024\n    speed: 1\n    speeds:\n      - class: bert\n        speed: 2\n      - class: bert\n        speed: 3\n"),
			9, "gpu_models[0].speeds[1].class", []string{"class bert is given twice", "first at speeds[0]"}, 0},
		{"class speed 0", model("  - name: SpecTest-CS0\n    memory_mib: 1024\n    speed: 1\n    speeds:\n      - class: bert\n        speed: 0\n"),
			8, "gpu_models[0].speeds[0].speed", []string{"finite number > 0", "got 0"}, 0},
		{"class *", model("  - name: SpecTest-Cstar\n    memory_mib: 1024\n    speed: 1\n    speeds:\n      - class: \"*\"\n        speed: 2\n"),
			7, "gpu_models[0].speeds[0].class", []string{"generic class"}, 0},
		{"class with a space", model("  - name: SpecTest-Csp\n    memory_mib: 1024\n    speed: 1\n    speeds:\n      - class: res net\n        speed: 2\n"),
			7, "gpu_models[0].speeds[0].class", []string{"want letters, digits"}, 0},
		{"catalogue name", model("  - name: H100\n    memory_mib: 81920\n    speed: 2\n"), 3, "gpu_models[0].name", []string{`custom GPU model "H100"`, "the catalogue already has H100-80GB"}, 0},
		{"catalogue name, other spelling", model("  - name: h100_80gb\n    memory_mib: 81920\n    speed: 2\n"), 3, "gpu_models[0].name", []string{"the catalogue already has H100-80GB"}, 0},
		{"second model bad", model("  - name: SpecTest-OK\n    memory_mib: 1024\n    speed: 1\n  - name: SpecTest-Bad2\n    memory_mib: 1024\n    speed: -1\n"), 8, "gpu_models[1].speed", []string{"got -1"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := NumModels()
			spec, err := ParseClusterSpec([]byte(tc.yaml), "bad.yaml")
			if err == nil {
				t.Fatalf("accepted %+v", spec)
			}
			found := false
			for _, e := range specProblems(err) {
				found = found || e.File == "bad.yaml" && e.Line == tc.line && e.Field == tc.field
			}
			if !found {
				t.Errorf("no problem at bad.yaml:%d field %q in %q", tc.line, tc.field, err)
			}
			if !strings.Contains(err.Error(), "bad.yaml:") {
				t.Errorf("error %q does not name the file", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// A declaration with a problem of its own is not registered.
			if NumModels() != before+tc.registers {
				t.Errorf("%d models after the refused spec, %d before; want %d more", NumModels(), before, tc.registers)
			}
		})
	}

	// The same custom name in two specs: the same memory is the same
	// model; another memory is an error in the second spec.
	first := "name: one\ngpu_models:\n  - name: SpecTest-Twice\n    memory_mib: 1024\n    speed: 1\nnodes:\n  - name: n0\n    gpu_model: SpecTest-Twice\n    gpus: 1\n"
	if _, err := ParseClusterSpec([]byte(first), "one.yaml"); err != nil {
		t.Fatal(err)
	}
	m, _ := LookupModel("SpecTest-Twice")
	same := strings.Replace(first, "name: one", "name: same", 1)
	if _, err := ParseClusterSpec([]byte(same), "same.yaml"); err != nil {
		t.Errorf("the same declaration in a second spec: %v", err)
	}
	if again, _ := LookupModel("SpecTest-Twice"); again.ID != m.ID {
		t.Errorf("the same declaration twice gave IDs %d and %d", m.ID, again.ID)
	}
	other := strings.Replace(strings.Replace(first, "name: one", "name: two", 1), "memory_mib: 1024", "memory_mib: 2048", 1)
	_, err := ParseClusterSpec([]byte(other), "two.yaml")
	if err == nil {
		t.Fatal("a second spec declaring SpecTest-Twice with another memory was accepted")
	}
	found := false
	for _, e := range specProblems(err) {
		found = found || e.File == "two.yaml" && e.Line == 3 && e.Field == "gpu_models[0].name"
	}
	if !found {
		t.Errorf("no problem at two.yaml:3 field gpu_models[0].name in %q", err)
	}
	if !strings.Contains(err.Error(), "declared twice, with memory_mib 1024 and 2048") {
		t.Errorf("error %q does not give both memories", err)
	}
	if got, _ := LookupModel("SpecTest-Twice"); got.MemoryMiB != 1024 {
		t.Errorf("the refused declaration changed the model's memory to %d", got.MemoryMiB)
	}
}

// TestWithModelSpeeds: the spec's custom models get their speeds in a
// copy of the table; the table itself is unchanged. Bugs it catches: the
// generic speed or a class's speed not added (Check then refuses the
// cluster, or the class runs at the generic speed), and the caller's
// table changed in place (the next run with another spec sees its rows).
func TestWithModelSpeeds(t *testing.T) {
	restoreCatalogue(t)
	spec, err := ParseClusterSpec([]byte(customFleet), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base, err := ReadSpeedTable(strings.NewReader("class,gpu_model,speed\n*,A100-80GB,1\nbert,A100-80GB,1\n"), "base.csv")
	if err != nil {
		t.Fatal(err)
	}
	x1, _ := LookupModel("SpecTest-X1")
	a100, _ := LookupModel("A100-80GB")
	if err := base.Check(Of(a100.ID, x1.ID)); err == nil || !strings.Contains(err.Error(), "SpecTest-X1") {
		t.Fatalf("Check of the table alone = %v, want it to name SpecTest-X1", err)
	}
	out, err := spec.WithModelSpeeds(base)
	if err != nil {
		t.Fatal(err)
	}
	if out == base {
		t.Fatal("WithModelSpeeds returned the table itself for a spec with custom models")
	}
	if err := out.Check(Of(a100.ID, x1.ID)); err != nil {
		t.Errorf("Check after WithModelSpeeds: %v", err)
	}
	for _, c := range []struct {
		class string
		want  float64
	}{{AnyClass, 1.7}, {"bert", 2.5}, {"resnet50", 0.8}} {
		if v, ok := out.Speed(c.class, x1.ID); !ok || v != c.want {
			t.Errorf("Speed(%s, SpecTest-X1) = %v, %v; want %v", c.class, v, ok, c.want)
		}
		if _, ok := base.Speed(c.class, x1.ID); ok {
			t.Errorf("WithModelSpeeds changed the table it was given: it has a row %s, SpecTest-X1", c.class)
		}
	}
	for _, r := range out.Rows() {
		if r.Model == x1.ID && r.Source != "fleet.yaml: gpu_models SpecTest-X1" {
			t.Errorf("row %+v: source %q, want it to name the spec and model", r, r.Source)
		}
	}
	rates := out.Compile([]string{"bert", "gpt"})
	if got := rates.Rate(1, a100.ID, x1.ID); got != 2.5 {
		t.Errorf("bert on SpecTest-X1 vs A100 = %v, want 2.5", got)
	}
	if got := rates.Rate(2, a100.ID, x1.ID); got != 1.7 {
		t.Errorf("an unknown class on SpecTest-X1 vs A100 = %v, want the generic 1.7", got)
	}

	// No custom models: the table itself.
	plain, err := ParseClusterSpec([]byte("name: plain\nnodes:\n  - name: n0\n    gpu_model: A100-80GB\n    gpus: 1\n"), "plain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := plain.WithModelSpeeds(base); err != nil || got != base {
		t.Errorf("WithModelSpeeds without custom models = %p, %v; want the table itself (%p)", got, err, base)
	}
	// A spec built in Go and not validated has not registered its model.
	unchecked := &ClusterSpec{Name: "go", GPUModels: []GPUModelSpec{{Name: "SpecTest-Unregistered", MemoryMiB: 1024, Speed: 1}}}
	if _, err := unchecked.WithModelSpeeds(base); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("WithModelSpeeds of an unvalidated spec = %v, want an error saying the model is not registered", err)
	}
}
