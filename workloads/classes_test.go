package workloads

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestBrigadeClasses: the class and measured_on columns read into
// Job.Class (interned, 1-based, 0 for an empty cell) and Job.MeasuredOn
// (ModelID+1, 0 for an empty cell). Bugs it catches: a class interned
// twice (each row its own class), Class 0-based (the first class reads as
// none), MeasuredOn without the +1 (P100, ID 0, reads as "not given"),
// and cells not trimmed.
func TestBrigadeClasses(t *testing.T) {
	in := "name,submit_s,duration_s,gpus,class,measured_on\n" +
		"a,0,10,1,bert,A100-80GB\n" +
		"b,1,10,1,resnet50,\n" +
		"c,2,10,1, bert ,h100\n" +
		"d,3,10,1,,P100\n" +
		"e,4,10,1,llama2-70b-lora, v100 \n"
	w, err := ReadBrigade(strings.NewReader(in), "classes.csv")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bert", "resnet50", "llama2-70b-lora"}; !reflect.DeepEqual(w.Classes, want) {
		t.Errorf("Classes = %q, want %q", w.Classes, want)
	}
	model := func(name string) uint8 {
		m, ok := hwmodel.LookupModel(name)
		if !ok {
			t.Fatalf("no model %s", name)
		}
		return uint8(m.ID) + 1
	}
	want := []struct {
		class      uint16
		name       string
		measuredOn uint8
	}{
		{1, "bert", model("A100-80GB")},
		{2, "resnet50", 0},
		{1, "bert", model("H100-80GB")},
		{0, "", model("P100")},
		{3, "llama2-70b-lora", model("V100-16GB")},
	}
	if len(w.Jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(w.Jobs), len(want))
	}
	for i, wj := range want {
		j := &w.Jobs[i]
		if j.Class != wj.class || w.ClassName(j) != wj.name || j.MeasuredOn != wj.measuredOn {
			t.Errorf("job %s: class %d %q, measured_on %d; want %d %q, %d", j.Name, j.Class, w.ClassName(j), j.MeasuredOn, wj.class, wj.name, wj.measuredOn)
		}
	}
	if model("P100") != 1 {
		t.Errorf("P100 is no longer model 0: the measured_on case above no longer tests the +1")
	}

	// Without the columns: no classes, nothing measured.
	w, err = ReadBrigade(strings.NewReader("name,submit_s,duration_s,gpus\na,0,10,1\n"), "plain.csv")
	if err != nil {
		t.Fatal(err)
	}
	if w.Classes != nil || w.Jobs[0].Class != 0 || w.Jobs[0].MeasuredOn != 0 || w.ClassName(&w.Jobs[0]) != "" {
		t.Errorf("a trace without class columns: Classes %q, job %+v", w.Classes, w.Jobs[0])
	}
}

// TestBrigadeClassErrors: a bad class or an unknown measured_on model is a
// ParseError at its file, line and field. Bugs it catches: the generic
// class * accepted as a job's class, a class name checked only the first
// time it is seen, and an unknown model read as "not given".
func TestBrigadeClassErrors(t *testing.T) {
	const head = "name,submit_s,duration_s,gpus,class,measured_on\n"
	const good = "ok,0,10,1,bert,A100-80GB\n"
	tests := []struct {
		name, data string
		c          badCase
	}{
		{"bad class", head + good + "x,1,10,1,res net,\n", badCase{line: 3, field: "class", msg: []string{"want letters, digits", `"res net"`}}},
		{"generic class", head + good + "x,1,10,1,*,\n", badCase{line: 3, field: "class", msg: []string{"* is the speed table's generic class"}}},
		{"long class", head + good + "x,1,10,1," + strings.Repeat("k", 65) + ",\n", badCase{line: 3, field: "class", msg: []string{"1 to 64 bytes"}}},
		{"after comment and blank", "# comment\n" + head + good + "\n" + "y,1,10,1,bert x,\n", badCase{line: 5, field: "class", msg: []string{`"bert x"`}}},
		{"unknown model", head + good + "x,1,10,1,bert,Z900\n", badCase{line: 3, field: "measured_on", msg: []string{`found "Z900"`, "A100-80GB", "H100-80GB"}}},
		{"unknown model, no class", head + "x,1,10,1,,G9\n", badCase{line: 2, field: "measured_on", msg: []string{`found "G9"`}}},
	}
	for _, tc := range tests {
		tc.c.file = "bad.csv"
		t.Run(tc.name, func(t *testing.T) {
			w, err := ReadBrigade(strings.NewReader(tc.data), "bad.csv")
			if w != nil {
				t.Errorf("got a workload along with error %v", err)
			}
			checkParseError(t, err, "bad.csv", tc.c)
			if err != nil && !strings.HasPrefix(err.Error(), "bad.csv:") {
				t.Errorf("error %q does not start with file:line", err)
			}
		})
	}
}

// classConfig is a small synthetic workload with every feature that draws
// from the random stream.
func classConfig() SyntheticConfig {
	c := DefaultSyntheticConfig()
	c.Jobs = 10000
	c.SharedFraction = 0.2
	c.DAG = DAGConfig{Probability: 0.05, Shape: "mixed", Tasks: 4}
	c.MIG = MIGConfig{Fraction: 0.1, Classes: DefaultMIGClasses()}
	return c
}

// TestDrawClasses: classes come from a stream of their own, so a workload
// with classes is the one without them, job for job, but for Class; the
// same seed draws the same classes; the frequencies follow the weights.
// Bugs it catches: classes drawn from the generator's stream (every later
// job changes), a class 0-based, weights read off by one, a weight-0
// class drawn, and w.Classes sharing the caller's slice.
func TestDrawClasses(t *testing.T) {
	const seed = 7
	plain := mustGenerate(t, classConfig(), seed)
	cfg := classConfig()
	cfg.Classes, cfg.ClassWeights = []string{"light", "heavy"}, []float64{1, 3}
	a, b := mustGenerate(t, cfg, seed), mustGenerate(t, cfg, seed)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed drew different workloads")
	}
	if !reflect.DeepEqual(a.Classes, cfg.Classes) {
		t.Errorf("Classes = %q, want %q", a.Classes, cfg.Classes)
	}
	if len(a.Jobs) != len(plain.Jobs) || !reflect.DeepEqual(a.Tenants, plain.Tenants) {
		t.Fatalf("%d jobs and tenants %v with classes, %d and %v without", len(a.Jobs), a.Tenants, len(plain.Jobs), plain.Tenants)
	}
	counts := make([]int, 3)
	for i := range a.Jobs {
		j := a.Jobs[i]
		if j.Class < 1 || int(j.Class) > len(a.Classes) {
			t.Fatalf("job %s has class %d, want 1..%d", j.Name, j.Class, len(a.Classes))
		}
		counts[j.Class]++
		j.Class = 0
		if !reflect.DeepEqual(j, plain.Jobs[i]) {
			t.Fatalf("job %d differs from the workload without classes but for its class:\n got %+v\nwant %+v", i, j, plain.Jobs[i])
		}
	}
	if heavy := float64(counts[2]) / float64(len(a.Jobs)); math.Abs(heavy-0.75) > 0.02 {
		t.Errorf("%d light and %d heavy jobs: heavy share %.3f, want 0.75 ± 0.02 (weights 1:3)", counts[1], counts[2], heavy)
	}

	// Drawing on the plain workload is what Generate does.
	drawn := mustGenerate(t, classConfig(), seed)
	names := []string{"light", "heavy"}
	DrawClasses(drawn, names, []float64{1, 3}, seed)
	if !reflect.DeepEqual(drawn, a) {
		t.Error("DrawClasses on the workload without classes differs from Generate with them")
	}
	names[0] = "changed"
	if drawn.Classes[0] != "light" {
		t.Error("the workload's Classes share the slice DrawClasses was given")
	}

	// Another seed draws other classes; nil weights are equal weights; a
	// weight of 0 is never drawn; no names draws nothing.
	other := mustGenerate(t, classConfig(), seed)
	DrawClasses(other, []string{"light", "heavy"}, []float64{1, 3}, seed+1)
	same := 0
	for i := range other.Jobs {
		if other.Jobs[i].Class == a.Jobs[i].Class {
			same++
		}
	}
	if same == len(a.Jobs) {
		t.Error("seeds 7 and 8 drew the same classes for every job")
	}
	for _, tc := range []struct {
		weights []float64
		share   []float64 // of each class
	}{
		{nil, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{[]float64{1, 1, 2}, []float64{0.25, 0.25, 0.5}},
		{[]float64{0, 1, 0}, []float64{0, 1, 0}},
		{[]float64{1, 0, 0}, []float64{1, 0, 0}},
		{[]float64{0, 0, 5}, []float64{0, 0, 1}},
	} {
		w := mustGenerate(t, classConfig(), seed)
		DrawClasses(w, []string{"x", "y", "z"}, tc.weights, seed)
		n := make([]float64, 4)
		for i := range w.Jobs {
			n[w.Jobs[i].Class]++
		}
		for k, want := range tc.share {
			got := n[k+1] / float64(len(w.Jobs))
			if math.Abs(got-want) > 0.02 || (want == 0) != (got == 0) {
				t.Errorf("weights %v: class %d drawn for %.3f of the jobs, want %.3f", tc.weights, k+1, got, want)
			}
		}
		if n[0] != 0 {
			t.Errorf("weights %v: %v jobs without a class", tc.weights, n[0])
		}
	}
	none := mustGenerate(t, classConfig(), seed)
	DrawClasses(none, nil, nil, seed)
	if !reflect.DeepEqual(none, plain) {
		t.Error("DrawClasses without names changed the workload")
	}
}

// TestParseClassList: CLASS[=WEIGHT],... with weights that default to 1.
// Bugs it catches: a negative, NaN or infinite weight accepted, weights
// all 0 accepted (nothing to draw from), a class given twice, the
// generic class * or an empty name accepted, and spaces kept.
func TestParseClassList(t *testing.T) {
	names, weights, err := ParseClassList(" bert = 2,resnet50, llama2-70b-lora=0.5 ,idle=0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bert", "resnet50", "llama2-70b-lora", "idle"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if want := []float64{2, 1, 0.5, 0}; !reflect.DeepEqual(weights, want) {
		t.Errorf("weights = %v, want %v", weights, want)
	}
	if names, weights, err := ParseClassList("solo"); err != nil || !reflect.DeepEqual(names, []string{"solo"}) || !reflect.DeepEqual(weights, []float64{1}) {
		t.Errorf(`ParseClassList("solo") = %q, %v, %v`, names, weights, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"bert=-1", "finite weight >= 0"},
		{"bert=x", `"bert=x"`},
		{"bert=", "finite weight >= 0"},
		{"bert=NaN", "finite weight >= 0"},
		{"bert=Inf", "finite weight >= 0"},
		{"bert=1e400", "finite weight >= 0"},
		{"bert=0", "positive finite sum"},
		{"bert=0,gpt=0", "positive finite sum"},
		{"bert=1e308,gpt=1e308", "positive finite sum"},
		{"bert,bert", `"bert" is given twice`},
		{"bert,resnet50=2,bert=3", `"bert" is given twice`},
		{"", "1 to 64 bytes"},
		{"bert,,gpt", "1 to 64 bytes"},
		{"=2", "1 to 64 bytes"},
		{"*", "generic class"},
		{"res net", "want letters, digits"},
		{strings.Repeat("c", 65), "1 to 64 bytes"},
	} {
		names, weights, err := ParseClassList(tc.in)
		if err == nil {
			t.Errorf("ParseClassList(%q) = %q, %v; want an error", tc.in, names, weights)
			continue
		}
		if names != nil || weights != nil {
			t.Errorf("ParseClassList(%q) returned %q, %v with its error", tc.in, names, weights)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseClassList(%q): error %q lacks %q", tc.in, err, tc.want)
		}
	}
}
