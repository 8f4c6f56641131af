package config_test

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/config"
)

// lab is a small config type with one field of each kind the decoder
// reads, and a Check that calls its parts' Checks.
type lab struct {
	Name  string  `json:"name" config:"required"`
	Seed  uint64  `json:"seed"`
	Nodes []node  `json:"nodes" config:"max=20"`
	Ratio float64 `json:"ratio"`
	Shape *shape  `json:"shape"`

	dir string // not a field of the file
}

type node struct {
	Name   string            `json:"name" config:"required"`
	GPUs   int               `json:"gpus" config:"required"`
	CPU    *int64            `json:"cpu_milli"`
	Shared bool              `json:"shared"`
	Milli  int16             `json:"milli"`
	Env    map[string]string `json:"env"`
	Tags   []string          `json:"tags"`
}

// shape is written as "RxC" or as {rows, cols}.
type shape struct{ Rows, Cols int }

func (s *shape) UnmarshalConfig(v config.Value) {
	if text, ok := v.String(); ok {
		r, c, found := strings.Cut(text, "x")
		var err1, err2 error
		s.Rows, err1 = strconv.Atoi(r)
		s.Cols, err2 = strconv.Atoi(c)
		if !found || err1 != nil || err2 != nil {
			v.Fail("want ROWSxCOLS such as \"4x8\", got %q", text)
		}
		return
	}
	if !v.IsMapping() {
		v.Fail("want \"ROWSxCOLS\" or {rows, cols}, got %s", v.Describe())
		return
	}
	var m struct {
		Rows int `json:"rows" config:"required"`
		Cols int `json:"cols" config:"required"`
	}
	v.Decode(&m)
	s.Rows, s.Cols = m.Rows, m.Cols
}

func (l *lab) Check(e *config.Errors) {
	if strings.ContainsRune(l.Name, ' ') {
		e.Add("name", "%q contains a space", l.Name)
	}
	if l.Ratio < 0 || l.Ratio > 1 {
		e.Add("ratio", "want 0 to 1, got %g", l.Ratio)
	}
	seen := map[string]int{}
	for i := range l.Nodes {
		l.Nodes[i].Check(e.Index("nodes", i))
		if j, dup := seen[l.Nodes[i].Name]; dup {
			e.Add(fmt.Sprintf("nodes[%d].name", i), "%q is already nodes[%d]'s", l.Nodes[i].Name, j)
		}
		seen[l.Nodes[i].Name] = i
	}
	if len(l.Nodes) == 0 {
		e.Add("", "no nodes")
	}
}

func (n *node) Check(e *config.Errors) {
	if n.GPUs < 0 || n.GPUs > 8 {
		e.Add("gpus", "want 0 to 8 GPUs, got %d", n.GPUs)
	}
	if n.CPU != nil && *n.CPU < 0 {
		e.Add("cpu_milli", "want >= 0, got %d", *n.CPU)
	}
}

func decodeLab(t *testing.T, text string) (*lab, error) {
	t.Helper()
	var l lab
	err := config.Decode([]byte(text), "lab.yaml", &l)
	return &l, err
}

func cpu(v int64) *int64 { return &v }

func TestDecodeGood(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       lab
	}{
		{"block", `
name: small
seed: 7
ratio: 0.5
shape: 2x4
nodes:
  - name: a
    gpus: 8.0
    cpu_milli: 1e3
    shared: yes
    milli: 0x10
    env: {A: "1", B: two}
    tags: [x, "on"]
  - name: b
    gpus: 1
    milli: 1_000
    shared: false
`, lab{Name: "small", Seed: 7, Ratio: 0.5, Shape: &shape{2, 4}, Nodes: []node{
			{Name: "a", GPUs: 8, CPU: cpu(1000), Shared: true, Milli: 16, Env: map[string]string{"A": "1", "B": "two"}, Tags: []string{"x", "on"}},
			{Name: "b", GPUs: 1, Milli: 1000},
		}}},
		{"json", `{"name": "j", "ratio": 1, "shape": {"rows": 3, "cols": 1}, "nodes": [{"name": "a", "gpus": 0}]}`,
			lab{Name: "j", Ratio: 1, Shape: &shape{3, 1}, Nodes: []node{{Name: "a"}}}},
		{"nulls are absent", "name: nn\nseed: ~\nshape:\nnodes: [{name: a, gpus: 1, cpu_milli: null}]\n",
			lab{Name: "nn", Nodes: []node{{Name: "a", GPUs: 1}}}},
		{"anchors, aliases, merges", `
base: &b {gpus: 2, shared: on}
name: m
nodes:
  - {<<: *b, name: a}
  - &c {name: c, gpus: 3}
  - *c
`, lab{}}, // base is unknown: checked below
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeLab(t, tc.text)
			if tc.name == "anchors, aliases, merges" {
				// "base" is an unknown field; the rest reads.
				if err == nil || !strings.Contains(err.Error(), "lab.yaml:2: base: unknown field") {
					t.Fatalf("err = %v", err)
				}
				want := []node{{Name: "a", GPUs: 2, Shared: true}, {Name: "c", GPUs: 3}, {Name: "c", GPUs: 3}}
				if !reflect.DeepEqual(got.Nodes, want) {
					t.Fatalf("nodes = %+v, want %+v", got.Nodes, want)
				}
				if !strings.Contains(err.Error(), `lab.yaml:7: nodes[2].name: "c" is already nodes[1]'s`) {
					t.Fatalf("the repeated name is not reported at the alias: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestDecodeProblems(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string // the problems, in order, as Error() formats them
	}{
		{"unknown field with hint", "name: a\nnodes:\n  - name: x\n    gpu: 1\n    gpus: 1\n",
			[]string{`lab.yaml:4: nodes[0].gpu: unknown field (known fields: name, gpus, cpu_milli, shared, milli, env, tags); did you mean "gpus"?`}},
		{"case and dashes", "Name: a\nnodes: [{name: x, gpus: 1, CPU-Milli: 2}]\n",
			[]string{`lab.yaml:1: Name: unknown field (known fields: name, seed, nodes, ratio, shape); did you mean "name"?`,
				`lab.yaml:2: nodes[0].CPU-Milli: unknown field (known fields: name, gpus, cpu_milli, shared, milli, env, tags); did you mean "cpu_milli"?`}},
		{"no hint", "name: a\nzzz: 1\nnodes: [{name: x, gpus: 1}]\n",
			[]string{`lab.yaml:2: zzz: unknown field (known fields: name, seed, nodes, ratio, shape)`}},
		{"twice", "name: a\nseed: 1\nnodes: [{name: x, gpus: 1}]\nseed: 2\n",
			[]string{`lab.yaml:4: seed: appears twice (also on line 2)`}},
		{"merge then override", "x: &x {name: nn, gpus: 1}\nname: a\nnodes:\n  - <<: *x\n    gpus: 2\n",
			[]string{`lab.yaml:1: x: unknown field (known fields: name, seed, nodes, ratio, shape)`,
				`lab.yaml:5: nodes[0].gpus: appears twice (also on line 1)`}},
		{"string for int", "name: a\nnodes: [{name: x, gpus: eight}]\n",
			[]string{`lab.yaml:2: nodes[0].gpus: want a whole number, got "eight"`}},
		{"fraction", "name: a\nnodes: [{name: x, gpus: 2.5}]\n", []string{`lab.yaml:2: nodes[0].gpus: want a whole number, got 2.5`}},
		{"int range", "name: a\nnodes: [{name: x, gpus: 1, milli: 40000}]\n", []string{`lab.yaml:2: nodes[0].milli: number 40000 is out of range`}},
		{"int64 range", "name: a\nnodes: [{name: x, gpus: 1, cpu_milli: 99999999999999999999}]\n",
			[]string{`lab.yaml:2: nodes[0].cpu_milli: number 99999999999999999999 is out of range`}},
		{"negative uint", "name: a\nseed: -1\nnodes: [{name: x, gpus: 1}]\n", []string{`lab.yaml:2: seed: want a whole number >= 0, got number -1`}},
		{"nan", "name: a\nratio: .nan\nnodes: [{name: x, gpus: 1}]\n", []string{`lab.yaml:2: ratio: want a finite number, got .nan`}},
		{"bool word for string", "name: yes\nnodes: [{name: x, gpus: 1}]\n",
			[]string{`lab.yaml:1: name: want a string, got yes, which YAML 1.1 reads as a boolean; put it in quotes`}},
		{"number for string", "name: 2024\nnodes: [{name: x, gpus: 1}]\n", []string{`lab.yaml:1: name: want a string, got number 2024; put it in quotes`}},
		{"bool", "name: a\nnodes: [{name: x, gpus: 1, shared: 1}]\n", []string{`lab.yaml:2: nodes[0].shared: want true or false, got number 1`}},
		{"list", "name: a\nnodes: {name: x}\n", []string{`lab.yaml:2: nodes: want a list, got a mapping`}},
		{"mapping", "name: a\nnodes: [x]\n", []string{`lab.yaml:2: nodes[0]: want a mapping with fields name, gpus, cpu_milli, shared, milli, env, tags, got "x"`}},
		{"too long", "name: a\nnodes: [" + strings.Repeat("{name: x, gpus: 1}, ", 21) + "]\n",
			[]string{`lab.yaml:2: nodes: lists 21 entries; at most 20 are allowed`}},
		{"root", "- a\n", []string{`lab.yaml:1: want a mapping with fields name, seed, nodes, ratio, shape, got a list`}},
		{"empty", "# nothing\n", []string{`lab.yaml: the file is empty; want a mapping with fields name, seed, nodes, ratio, shape`}},
		{"second document", "name: a\nnodes: [{name: x, gpus: 1}]\n---\nname: b\n", []string{`lab.yaml:3: a second YAML document; want one`}},
		{"syntax, block", "name: a\nnodes:\n  - name: x\n    gpus: 1\n   shared: true\n", []string{`lab.yaml:5: YAML syntax: did not find expected '-' indicator`}},
		{"syntax, flow", "{\n  \"name\": \"a\",\n  \"nodes\": [\n    {\"name\": \"x\", \"gpus\": 1}\n    {\"name\": \"y\", \"gpus\": 1}\n  ]\n}\n",
			[]string{`lab.yaml:5: YAML syntax: did not find expected ',' or ']'`}},
		{"unmarshaler", "name: a\nshape: 4by8\nnodes: [{name: x, gpus: 1}]\n", []string{`lab.yaml:2: shape: want ROWSxCOLS such as "4x8", got "4by8"`}},
		{"unmarshaler decodes", "name: a\nshape: {rows: 2}\nnodes: [{name: x, gpus: 1}]\n", []string{`lab.yaml:2: shape.cols: required field is missing`}},
		{"map key", "name: a\nnodes: [{name: x, gpus: 1, env: {1: a}}]\n", []string{`lab.yaml:2: nodes[0].env.1: want a string key, got number 1; put it in quotes`}},
		{"check", "name: a b\nnodes:\n  - name: x\n    gpus: 9\n", []string{`lab.yaml:1: name: "a b" contains a space`, `lab.yaml:4: nodes[0].gpus: want 0 to 8 GPUs, got 9`}},
		{"valid", "name: a\nnodes: [{name: x, gpus: 1}]\n", nil},
		{"a field that failed is not checked again", "name: a\nratio: high\nnodes:\n  - name: x\n    gpus: -1x\n",
			[]string{`lab.yaml:2: ratio: want a number, got "high"`, `lab.yaml:5: nodes[0].gpus: want a whole number, got "-1x"`}},
		{"a check above a failed field is dropped", "name: a\nnodes: 3\n", []string{`lab.yaml:2: nodes: want a list, got number 3`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeLab(t, tc.text)
			got := problems(err)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("problems\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// problems lists what err reports, one string per problem.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// TestEveryProblemAtOnce: two mistakes give two problems, twelve give
// ten and a count of the other two, all in line order.
func TestEveryProblemAtOnce(t *testing.T) {
	two := "name: lab\nnodes:\n  - {name: a, gpus: 1}\n  - {name: b, gpus: eight}\n  - {name: c, gpus: 1, cpus: 4}\n"
	got := problems(mustFail(t, two))
	want := []string{
		`lab.yaml:4: nodes[1].gpus: want a whole number, got "eight"`,
		`lab.yaml:5: nodes[2].cpus: unknown field (known fields: name, gpus, cpu_milli, shared, milli, env, tags); did you mean "cpu_milli"?`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("two mistakes:\n  %q\nwant\n  %q", got, want)
	}

	var b strings.Builder
	b.WriteString("name: lab\nnodes:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  - {name: n%d, gpus: %d}\n", 11-i, 20+i) // gpus 20..31: all over 8
	}
	err := mustFail(t, b.String())
	got = problems(err)
	if len(got) != config.MaxReported+1 || got[config.MaxReported] != "lab.yaml: and 2 more problems" {
		t.Fatalf("twelve mistakes gave %d lines, last %q", len(got), got[len(got)-1])
	}
	for i := range config.MaxReported {
		want := fmt.Sprintf("lab.yaml:%d: nodes[%d].gpus: want 0 to 8 GPUs, got %d", 3+i, i, 20+i)
		if got[i] != want {
			t.Errorf("problem %d = %q, want %q", i, got[i], want)
		}
	}
	var one *config.Error
	if !errors.As(err, &one) || one.File != "lab.yaml" || one.Line != 3 || one.Field != "nodes[0].gpus" {
		t.Errorf("errors.As gives %+v", one)
	}
	// Eleven: ten and "1 more problem".
	b.Reset()
	b.WriteString("name: lab\nnodes:\n")
	for i := range 11 {
		fmt.Fprintf(&b, "  - {name: n%d, gpus: 9}\n", i)
	}
	if got := problems(mustFail(t, b.String())); got[len(got)-1] != "lab.yaml: and 1 more problem" {
		t.Errorf("eleven mistakes: last line %q", got[len(got)-1])
	}
}

func mustFail(t *testing.T, text string) error {
	t.Helper()
	_, err := decodeLab(t, text)
	if err == nil {
		t.Fatalf("accepted\n%s", text)
	}
	return err
}

// A value built in Go is checked by the same Check, without lines.
func TestValidateBuiltInGo(t *testing.T) {
	l := &lab{Name: "x y", Nodes: []node{{Name: "a", GPUs: 12}, {Name: "a"}}}
	got := problems(config.Validate(`lab "x y"`, l))
	want := []string{`lab "x y": name: "x y" contains a space`, `lab "x y": nodes[0].gpus: want 0 to 8 GPUs, got 12`, `lab "x y": nodes[1].name: "a" is already nodes[0]'s`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if err := config.Validate("", &lab{Name: "ok", Nodes: []node{{Name: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if got := problems(config.Validate("", &lab{Name: "none"})); !reflect.DeepEqual(got, []string{"no nodes"}) {
		t.Fatalf("got %q", got)
	}
}

// An alias bomb, merges of merges that expand to 10^9 keys, is refused
// without exhausting time or memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bomb\nnodes:\n  - &a0 {gpus: 1, name: a}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  - &a%d {<<: [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]}\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	err := mustFail(t, b.String())
	if !strings.Contains(err.Error(), "YAML nodes; are aliases nested?") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/big.yaml"
	if err := os.WriteFile(path, []byte(strings.Repeat("#", 2<<20+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.ReadFile(path, "lab file", 2<<20)
	if err == nil || err.Error() != path+": file is larger than 2 MiB; is it a lab file?" {
		t.Fatalf("err = %v", err)
	}
	if _, err := config.ReadFile(dir+"/missing.yaml", "lab file", 0); err == nil || !strings.HasPrefix(err.Error(), "lab file: open ") {
		t.Fatalf("err = %v", err)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"name", "health", "count", "gpus_per_node", "cpu_milli", "replica", "replicas", "node_mtbf", "node_repair"}
	for key, want := range map[string]string{
		"Count": "count", "gpus-per-node": "gpus_per_node", "cpus": "cpu_milli", "cpu": "cpu_milli",
		"replicaz": "replica", "node_mtfb": "node_mtbf", "gpus_per_nodes": "gpus_per_node", "nmae": "",
		"xyz": "", "cuont": "", "repliac": "replica", "coutn_x": "count", "helth": "health", "gpu": "gpus_per_node",
	} {
		if got := config.Suggest(key, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"count", "cuont", 2}, {strings.Repeat("a", 65), "a", 64}} {
		if got := config.EditDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

// FuzzDecode: no input makes the decoder panic; every problem names the
// file; an accepted value passes its own Check again; the same input
// gives the same problems.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"name: a\nnodes: [{name: x, gpus: 1}]\n", "", "- 1", "name: [", "a: &a [*a]", "name: a\nnodes: [{<<: {gpus: 1}, name: x}]\n",
		"{\"name\": \"j\", \"nodes\": [{\"name\": \"a\", \"gpus\": 1e300}]}", "name: a\nshape: {rows: 1, cols: 2}\nnodes: [{name: x, gpus: 1, env: {a: b}}]\n",
		"name: a\nnodes:\n  - name: x\n    gpus: 1\n   shared: true\n", "name: a\n---\nname: b\n", "? [a]\n: 1\n", "name: !!binary aGk=\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var l lab
		err := config.Decode(data, "f.yaml", &l)
		if err == nil {
			if err := config.Validate("f.yaml", &l); err != nil {
				t.Fatalf("decoded, then invalid: %v", err)
			}
			return
		}
		for _, p := range problems(err) {
			if !strings.HasPrefix(p, "f.yaml") {
				t.Fatalf("a problem without the file: %q", p)
			}
		}
		var again lab
		if err2 := config.Decode(data, "f.yaml", &again); err2 == nil || err2.Error() != err.Error() {
			t.Fatalf("not deterministic:\n%v\n%v", err, err2)
		}
	})
}

func TestTopKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"services: []\nhorizon: 1h\n", []string{"services", "horizon"}},
		{`{"cluster": "x", "policy": "fcfs"}`, []string{"cluster", "policy"}},
		{"- a\n- b\n", nil},
		{"", nil},
		{"a: [\n", nil},
		{"just words", nil},
	} {
		got := config.TopKeys([]byte(tc.in))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || (got == nil) != (tc.want == nil) {
			t.Errorf("TopKeys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
