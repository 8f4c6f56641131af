package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplePagesCurrent: the worked examples' pages and plots in docs/
// are what brigade run renders from examples/*.yaml now.
func TestExamplePagesCurrent(t *testing.T) {
	t.Chdir("../..")
	code, stdout, stderr := brigade(t, "run", "--check", "examples/mig.yaml", "examples/failures.yaml", "examples/capacity-planning.yaml", "examples/serving.yaml", "examples/serving-faults.yaml", "examples/quotas.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n(refresh them with: go run ./cmd/brigade run --page examples/mig.yaml examples/failures.yaml examples/capacity-planning.yaml examples/serving.yaml examples/serving-faults.yaml examples/quotas.yaml)", code, stderr)
	}
	for _, want := range []string{"mig-dynamic", "no-checkpoints", "cheapest cluster meeting every target", "autoscale+eject", "faults+eject+autoscale", "moved-no-borrowing"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tables lack %q:\n%s", want, stdout)
		}
	}
}

// smallMIG is examples/mig.yaml at 300 jobs, its page and plot in dir.
func smallMIG(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/mig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "jobs: 4000", "jobs: 300", 1)
	s = strings.Replace(s, "page: ../docs/mig.md", "page: page/mig.md", 1)
	s = strings.Replace(s, "plot: ../docs/mig-example.png", "plot: page/mig.png", 1)
	if s == string(src) || !strings.Contains(s, "page/mig.png") {
		t.Fatal("examples/mig.yaml changed shape; update smallMIG")
	}
	if err := os.MkdirAll(filepath.Join(dir, "page"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mig.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunScenario runs a small MIG scenario twice: the same table, page,
// plot and results files, byte for byte; --check then passes, and fails
// once the page is edited; without --page nothing outside --out is
// written, and --page refuses overrides.
func TestRunScenario(t *testing.T) {
	dir := t.TempDir()
	file := smallMIG(t, dir)
	var tables []string
	var pages, plots, summaries [][]byte
	for k := range 2 {
		out := filepath.Join(dir, "out"+string(rune('a'+k)))
		code, stdout, stderr := brigade(t, "run", "--page", "--check-invariants", "--quiet", "--out", out, file)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		tables = append(tables, stdout)
		for _, x := range []struct {
			path string
			to   *[][]byte
		}{{filepath.Join(dir, "page/mig.md"), &pages}, {filepath.Join(dir, "page/mig.png"), &plots}, {filepath.Join(out, "summary.json"), &summaries}} {
			b, err := os.ReadFile(x.path)
			if err != nil {
				t.Fatal(err)
			}
			*x.to = append(*x.to, b)
		}
	}
	if tables[0] != tables[1] || !bytes.Equal(pages[0], pages[1]) || !bytes.Equal(plots[0], plots[1]) || !bytes.Equal(summaries[0], summaries[1]) {
		t.Fatal("two runs of one file differ")
	}
	if !bytes.HasPrefix(plots[0], []byte("\x89PNG")) {
		t.Error("the plot is not a PNG")
	}
	for _, want := range []string{"| mig-dynamic | 300/300 |", "## The scenario file", "jobs: 300", "[" + filepath.ToSlash(file) + "](../mig.yaml)"} {
		if !bytes.Contains(pages[0], []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Every setup is a row of summary.json, named as in the file.
	for _, name := range []string{`"whole"`, `"mig-static"`, `"mig-dynamic"`, `"convert"`} {
		if !bytes.Contains(summaries[0], []byte(`"policy": `+name)) {
			t.Errorf("summary.json lacks setup %s", name)
		}
	}
	if code, _, stderr := brigade(t, "run", "--check", "--quiet", file); code != exitOK {
		t.Fatalf("--check on a fresh page: exit %d: %s", code, stderr)
	}
	page := filepath.Join(dir, "page/mig.md")
	if err := os.WriteFile(page, append(pages[0], "edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := brigade(t, "run", "--check", "--quiet", file); code != exitError || !strings.Contains(stderr, page) {
		t.Errorf("--check on an edited page: exit %d, stderr %q; want exit 1 naming %s", code, stderr, page)
	}
	// Without --page, a run (here with an override) writes its results
	// folder and nothing else: the page stays as it is.
	code, stdout, stderr := brigade(t, "run", "--seed", "2", "--quiet", "--out", filepath.Join(dir, "seed2"), file)
	if code != exitOK || stdout == tables[0] {
		t.Fatalf("--seed 2: exit %d, same table %v: %s", code, stdout == tables[0], stderr)
	}
	if b, _ := os.ReadFile(page); !bytes.HasSuffix(b, []byte("edited\n")) {
		t.Error("a run without --page rewrote the page")
	}
	if code, _, stderr := brigade(t, "run", "--page", "--seed", "2", file); code != exitUsage || !strings.Contains(stderr, "--page") {
		t.Errorf("--page --seed: exit %d, %q; want a usage error", code, stderr)
	}
}

// TestRunErrors: bad files and command lines get a clear error naming the
// file, line and field, or the flag; nothing is written.
func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", `cluster: h200x8
policy: fcfs+bakfill
workload:
  synthetic: {jobs: 10, rate_per_hour: 60}
setups:
  - name: a
    polcy: sjf
columns:
  - {header: x, value: wait_s.p98}
`)
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"run"}, exitUsage, []string{"want at least one scenario file"}},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, exitError, []string{"missing.yaml"}},
		{[]string{"run", "--out", filepath.Join(dir, "o"), bad}, exitError, []string{
			bad + ":2: policy:", bad + ":7: setups[0].polcy: unknown field", `did you mean "policy"`,
			bad + ":9: columns[0].value:", `did you mean "wait_s.p9`,
		}},
		{[]string{"run", "--check", "--seed", "3", bad}, exitUsage, []string{"--check"}},
	} {
		code, _, stderr := brigade(t, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tc.args, w, stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); !os.IsNotExist(err) {
		t.Errorf("a failed run left its results folder: %v", err)
	}
}

// TestRunServingExperiment: brigade run takes a serving experiment file as
// brigade serve does, and refuses what only scenario files have.
func TestRunServingExperiment(t *testing.T) {
	dir := t.TempDir()
	file := "../../examples/serving/faults.yaml"
	code, viaRun, stderr := brigade(t, "run", "--quiet", "--out", filepath.Join(dir, "a"), file)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, viaServe, stderr := brigade(t, "serve", "--quiet", "--out", filepath.Join(dir, "b"), file)
	if code != exitOK {
		t.Fatalf("serve: exit %d: %s", code, stderr)
	}
	if viaRun != viaServe || !strings.Contains(viaRun, "llm-70b") {
		t.Errorf("run and serve print different tables:\n%s\n%s", viaRun, viaServe)
	}
	for _, flag := range []string{"--check", "--policy=sjf"} {
		if code, _, stderr := brigade(t, "run", flag, file); code != exitUsage || !strings.Contains(stderr, "serving experiment") {
			t.Errorf("run %s on a serving file: exit %d, %q", flag, code, stderr)
		}
	}
}
