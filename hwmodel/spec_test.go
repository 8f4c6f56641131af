package hwmodel_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func capacity(v int64) *int64 { return &v }

// goodSpec is what testdata/spec/good.yaml and good.json both say.
var goodSpec = hwmodel.ClusterSpec{
	Name:        "test-lab",
	Description: "groups, explicit nodes, a CPU-only node, unmodelled CPU",
	NodeGroups: []hwmodel.NodeGroupSpec{
		{NamePrefix: "dgx-a100", Count: 2, GPUModel: "a100_sxm4_80gb", GPUsPerNode: 8, CPUMilli: capacity(256000), MemoryMiB: capacity(2097152)},
		{NamePrefix: "t4", Count: 3, GPUModel: "T4", GPUsPerNode: 4},
	},
	Nodes: []hwmodel.NodeSpec{
		{Name: "big-v100", GPUModel: "V100M32", GPUs: 2, CPUMilli: capacity(0), MemoryMiB: capacity(65536)},
		{Name: "cpu-only-1", GPUs: 0, CPUMilli: capacity(64000), MemoryMiB: capacity(262144)},
	},
}

func withoutSource(s *hwmodel.ClusterSpec) hwmodel.ClusterSpec {
	c := *s
	c.Source = ""
	return c
}

func TestParseGoodSpecs(t *testing.T) {
	for _, file := range []string{"testdata/spec/good.yaml", "testdata/spec/good.json"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			spec, err := hwmodel.LoadClusterSpec(file)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Source != file {
				t.Errorf("Source = %q, want %q", spec.Source, file)
			}
			if got := withoutSource(spec); !reflect.DeepEqual(got, goodSpec) {
				t.Fatalf("parsed\n %+v\nwant\n %+v", got, goodSpec)
			}
			c, err := spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			checkRedLine(t, c)
			a100, t4, v32 := modelID(t, "A100-80GB"), modelID(t, "T4"), modelID(t, "V100-32GB")
			U := hwmodel.UnlimitedCapacity
			want := []hwmodel.Node{
				{Name: "dgx-a100-000", Model: a100, GPUs: 8, CPUMilli: 256000, MemoryMiB: 2097152},
				{Name: "dgx-a100-001", Model: a100, GPUs: 8, CPUMilli: 256000, MemoryMiB: 2097152},
				{Name: "t4-000", Model: t4, GPUs: 4, CPUMilli: U, MemoryMiB: U},
				{Name: "t4-001", Model: t4, GPUs: 4, CPUMilli: U, MemoryMiB: U},
				{Name: "t4-002", Model: t4, GPUs: 4, CPUMilli: U, MemoryMiB: U},
				{Name: "big-v100", Model: v32, GPUs: 2, CPUMilli: 0, MemoryMiB: 65536},
				{Name: "cpu-only-1", GPUs: 0, CPUMilli: 64000, MemoryMiB: 262144},
			}
			if c.NumNodes() != len(want) {
				t.Fatalf("%d nodes, want %d", c.NumNodes(), len(want))
			}
			for i, w := range want {
				if got := c.Node(i); !reflect.DeepEqual(got, w) {
					t.Errorf("node %d = %+v, want %+v", i, got, w)
				}
			}
			if c.TotalGPUs() != 30 || spec.NumGPUs() != 30 || spec.NumNodes() != 7 {
				t.Errorf("TotalGPUs %d, NumGPUs %d, NumNodes %d; want 30, 30, 7", c.TotalGPUs(), spec.NumGPUs(), spec.NumNodes())
			}
			nodes, err := spec.NodeList()
			if err != nil || !reflect.DeepEqual(nodes, want) {
				t.Errorf("NodeList = %v, %v", nodes, err)
			}
		})
	}
}

// TestUnmodelledCapacity checks the CPU and memory default: a node whose
// spec leaves them out takes any request, and an explicit 0 takes only
// requests for none.
func TestUnmodelledCapacity(t *testing.T) {
	spec, err := hwmodel.LoadClusterSpec("testdata/spec/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	t4 := modelID(t, "T4")
	// Huge CPU and memory fit on an unmodelled T4 node ...
	big := hwmodel.Request{GPUs: 4, GPUMilli: 1000, CPUMilli: 1 << 30, MemoryMiB: 1 << 30, Models: hwmodel.Of(t4)}
	if err := c.Satisfiable(big); err != nil {
		t.Errorf("unmodelled node refuses a big request: %v", err)
	}
	if err := c.Allocate(hwmodel.Placement{{Node: 2, GPUs: 0xf, Milli: 1000, CPUMilli: 1 << 30, MemoryMiB: 1 << 30}}); err != nil {
		t.Errorf("Allocate on an unmodelled node: %v", err)
	}
	// ... zero-CPU requests fit the explicit-zero node, others do not.
	if err := c.Allocate(hwmodel.Placement{{Node: 5, GPUs: 1, Milli: 1000}}); err != nil {
		t.Errorf("zero-CPU request on a 0-CPU node: %v", err)
	}
	if err := c.Allocate(hwmodel.Placement{{Node: 5, GPUs: 2, Milli: 1000, CPUMilli: 1}}); !errors.Is(err, hwmodel.ErrCapacity) {
		t.Errorf("1 milli-CPU on a 0-CPU node: %v, want ErrCapacity", err)
	}
	checkRedLine(t, c)
	// Sums over the largest allowed cluster cannot overflow.
	if hwmodel.UnlimitedCapacity > (1<<63-1)/hwmodel.MaxSpecNodes {
		t.Error("UnlimitedCapacity × MaxSpecNodes overflows int64")
	}
}

func TestParseBadSpecs(t *testing.T) {
	models := strings.Split(hwmodel.ModelNames(), ", ")
	tests := []struct {
		file  string
		line  int      // the line of the problem at field (0: the whole file)
		field string   // the SpecError's field path ("" for whole-file problems)
		want  []string // substrings of the error
	}{
		{"unknown_model.yaml", 9, "node_groups[1].gpu_model", append([]string{`unknown GPU model "Z900"`}, models...)},
		{"count_zero.yaml", 4, "node_groups[0].count", []string{"1..100000", "got 0"}},
		{"count_negative.yaml", 8, "node_groups[1].count", []string{"got -3"}},
		{"count_fraction.yaml", 4, "node_groups[0].count", []string{"whole number", "2.5"}},
		{"count_string.yaml", 4, "node_groups[0].count", []string{"whole number", `"four"`}},
		{"gpus_per_node_65.yaml", 6, "node_groups[0].gpus_per_node", []string{"0..64", "got 65"}},
		{"gpus_negative.yaml", 8, "nodes[1].gpus", []string{"0..64", "got -1"}},
		{"gpus_missing.yaml", 3, "node_groups[0].gpus_per_node", []string{"required"}},
		{"model_missing.yaml", 3, "nodes[0].gpu_model", append([]string{"required"}, models...)},
		{"duplicate_nodes.yaml", 6, "nodes[1].name", []string{`"gpu-box" repeats nodes[0]`}},
		{"duplicate_group_node.yaml", 8, "nodes[0].name", []string{`"t4-003" repeats node_groups[0] node 3`}},
		{"duplicate_prefix.yaml", 7, "node_groups[1].name_prefix", []string{`"t4-000"`, "repeats node_groups[0]"}},
		{"unknown_field.yaml", 7, "node_groups[0].cpus", []string{"unknown field", `did you mean "cpu_milli"`}},
		{"unknown_field_case.yaml", 4, "node_groups[0].Count", []string{"unknown field", `did you mean "count"`}},
		{"unknown_top_field.yaml", 2, "node_group", []string{"unknown field", `did you mean "node_groups"`}},
		{"unknown_field.json", 5, "nodes[1].gpu_models", []string{"unknown field", `did you mean "gpu_model"`}},
		{"syntax.yaml", 5, "", []string{"YAML syntax: did not find expected '-' indicator"}},
		{"syntax.json", 5, "", []string{"YAML syntax: did not find expected ',' or ']'"}},
		{"duplicate_key.yaml", 6, "node_groups[0].count", []string{`node_groups[0].count: appears twice (also on line 4)`, `:8: node_groups[0].gpus_per_node: appears twice (also on line 7)`}},
		{"empty.yaml", 0, "", []string{"empty"}},
		{"no_nodes.yaml", 1, "", []string{"no nodes"}},
		{"not_a_list.yaml", 3, "node_groups", []string{"want a list"}},
		{"not_a_mapping.yaml", 1, "", []string{"want a mapping", "got a list"}},
		{"name_space.yaml", 3, "nodes[0].name", []string{"space"}},
		{"name_bool.yaml", 1, "name", []string{"want a string", "boolean"}},
		{"name_missing.yaml", 1, "name", []string{"required"}},
		{"cpu_negative.yaml", 6, "nodes[0].cpu_milli", []string{"got -1000", "leave it out for unlimited"}},
		{"memory_huge.yaml", 6, "nodes[0].memory_mib", []string{"out of range"}},
		{"memory_too_big.yaml", 6, "nodes[0].memory_mib", []string{"0..1099511627776"}},
		{"too_many_nodes.yaml", 1, "", []string{"120000 nodes", "at most 100000"}},
		{"too_many_gpus.yaml", 1, "", []string{"1280000 GPUs"}},
		{"mig_overlap.yaml", 6, "nodes[0].mig[1]", []string{`MIG layout "4g.20gb@0,3g.20gb@0" for GPU 1: instance 1 (3g.20gb@0) overlaps instance 0 (4g.20gb@0) at memory slice 0`}},
		{"mig_bad_start.yaml", 7, "nodes[0].mig[0]", []string{"GPU 0", "3g.20gb cannot start at memory slice 2 (valid starts: 0, 4)"}},
		{"mig_count.yaml", 7, "node_groups[0].mig", []string{"lists 3 layouts for 8 GPUs"}},
		{"mig_not_capable.yaml", 7, "node_groups[0].mig", []string{"T4 does not support MIG"}},
		{"mig_type.yaml", 7, "node_groups[0].mig", []string{"want a MIG layout string", "balanced", "got number 3"}},
		{"mig_item_type.yaml", 6, "nodes[0].mig[1]", []string{"want a layout string", "number 7"}},
		{"mig_unknown_profile.yaml", 7, "node_groups[0].mig", []string{`profile "3g.40gb" does not exist on H200-141GB`, "1g.18gb,"}},
		{"mig_no_model.yaml", 5, "nodes[0].mig", []string{"needs gpu_model"}},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.file] = true
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata/spec/bad", tc.file)
			spec, err := hwmodel.LoadClusterSpec(path)
			if err == nil {
				t.Fatalf("accepted: %+v", spec)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("error %q does not start with the file name", msg)
			}
			var se *hwmodel.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %q is not a *SpecError", msg)
			}
			found := false
			for _, e := range allSpecErrors(err) {
				found = found || e.Field == tc.field && e.Line == tc.line
			}
			if !found {
				t.Errorf("no problem reported at line %d, field %q in %q", tc.line, tc.field, msg)
			}
			if tc.field != "" && !strings.Contains(msg, ": "+tc.field+": ") {
				t.Errorf("error %q does not name the field %q", msg, tc.field)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
	// Every bad file is in the table.
	files, _ := filepath.Glob("testdata/spec/bad/*")
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s has no test case", f)
		}
	}
}

func allSpecErrors(err error) []*hwmodel.SpecError {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*hwmodel.SpecError
		for _, e := range j.Unwrap() {
			out = append(out, allSpecErrors(e)...)
		}
		return out
	}
	var se *hwmodel.SpecError
	if errors.As(err, &se) {
		return []*hwmodel.SpecError{se}
	}
	return nil
}

func TestSpecErrorsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: many\nnodes:\n")
	for range 30 {
		b.WriteString("  - name: x\n    gpu_model: Z900\n    gpus: 1\n")
	}
	_, err := hwmodel.ParseClusterSpec([]byte(b.String()), "many.yaml")
	if err == nil {
		t.Fatal("accepted 30 bad nodes")
	}
	errs := allSpecErrors(err)
	if len(errs) != 11 || !strings.Contains(errs[10].Msg, "and 20 more problems") {
		t.Fatalf("got %d problems, last %q; want 10 and a count of the rest", len(errs), errs[len(errs)-1].Msg)
	}
}

// TestSpecReportsEveryProblem: a file with two mistakes reports both, with
// their lines; one with twelve reports ten and counts the other two.
func TestSpecReportsEveryProblem(t *testing.T) {
	two := `name: lab
nodes:
  - name: a
    gpus: eight
    gpu_model: T4
  - name: b
    gpu_model: Z900
    gpus: 1
`
	_, err := hwmodel.ParseClusterSpec([]byte(two), "cluster.yaml")
	var got []string
	for _, e := range allSpecErrors(err) {
		got = append(got, e.Error())
	}
	want := []string{
		`cluster.yaml:4: nodes[0].gpus: want a whole number, got "eight"`,
		`cluster.yaml:7: nodes[1].gpu_model: unknown GPU model "Z900"; want one of: ` + hwmodel.ModelNames() + ` (or an alias, see docs/cluster.md)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("two mistakes:\n got %q\nwant %q", got, want)
	}

	var b strings.Builder
	b.WriteString("name: lab\nnodes:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  - {name: n%02d, gpu_model: T4, gpus: %d}\n", i, 65+i)
	}
	_, err = hwmodel.ParseClusterSpec([]byte(b.String()), "cluster.yaml")
	errs := allSpecErrors(err)
	if len(errs) != 11 || errs[10].Error() != "cluster.yaml: and 2 more problems" {
		t.Fatalf("twelve mistakes: %v", err)
	}
	for i, e := range errs[:10] {
		if e.Line != 3+i || e.Field != fmt.Sprintf("nodes[%d].gpus", i) || e.Msg != fmt.Sprintf("must be in 0..64, got %d", 65+i) {
			t.Errorf("problem %d: %v", i, e)
		}
	}
}

func TestValidateProgrammaticSpec(t *testing.T) {
	s := &hwmodel.ClusterSpec{Name: "in-code", Nodes: []hwmodel.NodeSpec{{Name: "a", GPUModel: "T4", GPUs: 99}}}
	_, err := s.Build()
	if err == nil || !strings.HasPrefix(err.Error(), `cluster "in-code": nodes[0].gpus: `) {
		t.Fatalf("Build: %v", err)
	}
	s.Nodes[0].GPUs = 4
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Nodes[0].GPUModel = ""
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "nodes[0].gpu_model: required") {
		t.Fatalf("Validate without a model: %v", err)
	}
	s.Nodes[0].GPUs = 0 // a CPU-only node needs no model
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestGroupNodeNames(t *testing.T) {
	tests := []struct {
		count       int
		first, last string
	}{
		{1, "g-000", "g-000"},
		{1000, "g-000", "g-999"},
		{1001, "g-0000", "g-1000"},
		{10001, "g-00000", "g-10000"},
	}
	for _, tc := range tests {
		s := &hwmodel.ClusterSpec{Name: "n", NodeGroups: []hwmodel.NodeGroupSpec{{NamePrefix: "g", Count: tc.count}}}
		c, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		if f, l := c.Node(0).Name, c.Node(c.NumNodes()-1).Name; f != tc.first || l != tc.last {
			t.Errorf("count %d: names %s..%s, want %s..%s", tc.count, f, l, tc.first, tc.last)
		}
	}
}

func TestSpecYAMLRoundTrip(t *testing.T) {
	odd := &hwmodel.ClusterSpec{
		Name:        "yes",
		Description: "quotes \" and \\ backslash, colon: hash # tab\t newline\n unicode é ✓ \u2028 <&>",
		NodeGroups: []hwmodel.NodeGroupSpec{
			{NamePrefix: "123", Count: 2, GPUModel: "on", GPUsPerNode: 0},
			{NamePrefix: "-dash", Count: 1, GPUModel: "tesla t4", GPUsPerNode: 1, CPUMilli: capacity(0)},
			{NamePrefix: "a:b", Count: 1, GPUModel: "T4", GPUsPerNode: 1},
		},
		Nodes: []hwmodel.NodeSpec{
			{Name: "null", GPUs: 0, MemoryMiB: capacity(hwmodel.UnlimitedCapacity)},
			{Name: "~", GPUs: 0},
			{Name: "[x]", GPUs: 0},
			{Name: "'q'", GPUs: 0},
			{Name: "0x10", GPUs: 0},
			{Name: "*star", GPUs: 0},
			{Name: "NO", GPUs: 0},
		},
	}
	// "on" is not a model; CPU-only groups may name none, so use a real one.
	odd.NodeGroups[0].GPUModel = "P100"
	for _, s := range []*hwmodel.ClusterSpec{odd, &goodSpec} {
		y, err := s.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := hwmodel.ParseClusterSpec(y, "rendered.yaml")
		if err != nil {
			t.Fatalf("rendering does not parse: %v\n%s", err, y)
		}
		if got := withoutSource(back); !reflect.DeepEqual(got, withoutSource(s)) {
			t.Fatalf("round trip changed the spec:\n got %+v\nwant %+v\n%s", got, *s, y)
		}
	}
	if _, err := (&hwmodel.ClusterSpec{Name: "x"}).YAML(); err == nil {
		t.Error("YAML rendered a spec with no nodes")
	}
}

func TestResolveCluster(t *testing.T) {
	spec, err := hwmodel.ResolveCluster("dgx-a100x16")
	if err != nil || spec.Name != "dgx-a100x16" || spec.NumGPUs() != 128 {
		t.Fatalf("preset: %+v, %v", spec, err)
	}
	if spec.Source != `preset "dgx-a100x16"` {
		t.Errorf("Source = %q", spec.Source)
	}
	spec, err = hwmodel.ResolveCluster("testdata/spec/good.yaml")
	if err != nil || spec.Name != "test-lab" {
		t.Fatalf("file: %+v, %v", spec, err)
	}
	// A file of a preset's name wins over the preset.
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/spec/good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "philly-like"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	spec, err = hwmodel.ResolveCluster("philly-like")
	if err != nil || spec.Name != "test-lab" || spec.Source != "philly-like" {
		t.Fatalf("file named like a preset: %+v, %v", spec, err)
	}
	spec, err = hwmodel.ResolveCluster("philly-sample")
	if err != nil || spec.Name != "philly-sample" {
		t.Fatalf("preset with a file of another name present: %+v, %v", spec, err)
	}
	for _, arg := range []string{"no-such-cluster", "", "."} {
		_, err := hwmodel.ResolveCluster(arg)
		if err == nil {
			t.Fatalf("ResolveCluster(%q) succeeded", arg)
		}
		for _, p := range hwmodel.Presets() {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("ResolveCluster(%q) error %q does not list preset %s", arg, err, p)
			}
		}
	}
	if _, err := hwmodel.ResolveCluster("missing.yaml"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestExampleClusterFile(t *testing.T) {
	spec, err := hwmodel.LoadClusterSpec("../examples/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkRedLine(t, c)
	if c.NumNodes() != spec.NumNodes() || c.TotalGPUs() != spec.NumGPUs() || c.TotalGPUs() == 0 {
		t.Errorf("built %d nodes / %d GPUs, spec says %d / %d", c.NumNodes(), c.TotalGPUs(), spec.NumNodes(), spec.NumGPUs())
	}
}

func TestSpecMIG(t *testing.T) {
	data := []byte(`name: mig
node_groups:
  - name_prefix: h
    count: 2
    gpu_model: H200
    gpus_per_node: 2
    mig: 3g.71gb,3g.71gb
  - name_prefix: w
    count: 1
    gpu_model: H200
    gpus_per_node: 1
    mig: ""
nodes:
  - name: a
    gpu_model: A100-80GB
    gpus: 3
    mig: [all-1g, "", "4g.40gb,3g.40gb"]
  - name: b
    gpu_model: A100-80GB
    gpus: 2
    mig: ["", ""]
`)
	spec, err := hwmodel.ParseClusterSpec(data, "mig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkRedLine(t, c)
	h, a := modelID(t, "H200"), modelID(t, "A100-80GB")
	want := []struct {
		node, gpu int
		layout    string
		m         hwmodel.ModelID
	}{
		{0, 0, "3g.71gb@0,3g.71gb@4", h}, {1, 1, "3g.71gb@0,3g.71gb@4", h}, {2, 0, "", h},
		{3, 0, "1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6", a},
		{3, 1, "", a}, {3, 2, "4g.40gb@0,3g.40gb@4", a}, {4, 0, "", a}, {4, 1, "", a},
	}
	for _, w := range want {
		if got := c.MIGLayoutOf(w.node, w.gpu).String(w.m); got != w.layout || c.IsMIG(w.node, w.gpu) != (w.layout != "") {
			t.Errorf("node %d GPU %d: layout %q, want %q", w.node, w.gpu, got, w.layout)
		}
	}
	if c.Node(2).MIG != nil || c.Node(4).MIG != nil {
		t.Error("a node without MIG GPUs got layouts")
	}
	if c.NumMIGGPUs() != 6 || c.FreeWholeGPUs(3) != 1 {
		t.Errorf("MIG GPUs %d, node a whole %d", c.NumMIGGPUs(), c.FreeWholeGPUs(3))
	}
	// Renders and reads back, layout strings as written.
	y, err := spec.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := hwmodel.ParseClusterSpec(y, "rendered.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if !reflect.DeepEqual(withoutSource(back), withoutSource(spec)) {
		t.Fatalf("round trip changed the spec:\n%s", y)
	}
	if !strings.Contains(string(y), "mig: \"3g.71gb,3g.71gb\"") || !strings.Contains(string(y), "      - all-1g") {
		t.Errorf("rendering:\n%s", y)
	}
	// A programmatic spec is validated the same way.
	bad := &hwmodel.ClusterSpec{Name: "x", Nodes: []hwmodel.NodeSpec{{Name: "n", GPUModel: "H100", GPUs: 1, MIG: &hwmodel.MIGSpec{All: "7g.80gb,1g.10gb"}}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "nodes[0].mig: MIG layout") || !strings.Contains(err.Error(), "8 compute slices") {
		t.Errorf("Validate: %v", err)
	}
}

func TestExampleMIGClusterFile(t *testing.T) {
	spec, err := hwmodel.LoadClusterSpec("../examples/mig-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	checkRedLine(t, c)
	if c.NumMIGGPUs() == 0 || c.NumMIGGPUs() == c.TotalGPUs() {
		t.Errorf("%d of %d GPUs MIG-enabled; the example should mix MIG and whole GPUs", c.NumMIGGPUs(), c.TotalGPUs())
	}
}
