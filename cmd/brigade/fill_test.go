package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const (
	fillNodes = "../../fill/testdata/nodes.csv"
	fillPods  = "../../fill/testdata/pods.csv"
)

// TestFillSmall: brigade fill writes fill.csv, fill.png and fill.svg and
// prints a row per policy; fill.csv is byte-identical across runs and
// GOMAXPROCS.
func TestFillSmall(t *testing.T) {
	var csvs [][]byte
	for _, procs := range []int{2, 1} {
		prev := runtime.GOMAXPROCS(procs)
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := brigade(t, "fill", "--quiet", "--nodes", fillNodes, "--pods", fillPods, "--seeds", "1-3,7", "--out", out, "--reference", "none")
		runtime.GOMAXPROCS(prev)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "pods on nodes (6 nodes, 24 GPUs): load 1.3, seeds 1-3,7, policies fgd,bestfit,dotprod,packing,clustering,random\npolicy ") {
			t.Errorf("stdout:\n%s", stdout)
		}
		for _, p := range fillPolicies {
			if !strings.Contains(stdout, "\n"+p+" ") {
				t.Errorf("no row for %s:\n%s", p, stdout)
			}
		}
		for _, f := range []string{"fill.png", "fill.svg"} {
			if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() < 1000 {
				t.Errorf("%s: %v", f, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(out, "fill.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 + 6*4*131; strings.Count(string(b), "\n") != want {
			t.Errorf("fill.csv has %d lines, want %d", strings.Count(string(b), "\n"), want)
		}
		csvs = append(csvs, b)
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Error("fill.csv differs between GOMAXPROCS 2 and 1")
	}
}

// TestFillPublished: with published results for the trace, the summary
// shows them beside ours with the difference, and --markdown writes the
// comparison.
func TestFillPublished(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "fgd-atc23")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("workload,sc_policy,tune,seed,total_gpus")
	for k := 0; k <= 130; k++ {
		b.WriteString("," + strconv.Itoa(k))
	}
	b.WriteString("\n")
	for _, row := range []struct{ policy, seed, v string }{{"06-FGD", "1", "80"}, {"06-FGD", "2", "90"}, {"05-BestFit", "1", "70"}, {"06-FGD", "9", "0"}} {
		b.WriteString("pods," + row.policy + ",1.3," + row.seed + ",24" + strings.Repeat(","+row.v, 131) + "\n")
	}
	if err := os.WriteFile(filepath.Join(ref, "analysis_allo_discrete.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(t.TempDir(), "repro.md")
	code, stdout, stderr := brigade(t, "fill", "--quiet", "--nodes", fillNodes, "--pods", fillPods, "--policy", "fgd,bestfit,firstfit",
		"--seeds", "1,2", "--out", t.TempDir(), "--reference", filepath.Dir(ref), "--markdown", md)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.Contains(lines[1], "published  diff") {
		t.Fatalf("no published columns:\n%s", stdout)
	}
	// FGD: mean of seeds 1 and 2 (seed 9 is not ours) = 85; bestfit: only
	// seed 1 = 70; firstfit: nothing published.
	if f := strings.Fields(lines[2]); f[0] != "fgd" || f[2] != "85.00" || f[5] != "85.00" {
		t.Errorf("fgd row %q", lines[2])
	}
	if f := strings.Fields(lines[3]); f[0] != "bestfit" || f[2] != "70.00" {
		t.Errorf("bestfit row %q", lines[3])
	}
	if f := strings.Fields(lines[4]); f[0] != "firstfit" || f[2] != "-" {
		t.Errorf("firstfit row %q", lines[4])
	}
	if !strings.Contains(stdout, "mean over its seeds 1-2") {
		t.Errorf("no note on the published seeds:\n%s", stdout)
	}
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"brigade fill --nodes " + fillNodes + " --pods " + fillPods, "## pods", "| fgd |", "| 85.00 |"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("markdown lacks %q:\n%s", want, doc)
		}
	}
}

func TestFillUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--pods", fillPods}, "--nodes is required"},
		{[]string{"--nodes", fillNodes}, "give --pods FILE or --all-traces DIR"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--all-traces", "."}, "alternatives"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--policy", "lottery"}, `unknown placement "lottery"`},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--policy", "fgd,fgd"}, "named twice"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--seeds", "51-42"}, "a <= b"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--seeds", "1,,2"}, "empty item"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--seeds", "x"}, `found "x"`},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--seeds", "1,1"}, "twice"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--load", "0"}, "--load must be in (0, 10]"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--load", "NaN"}, "--load"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--bogus"}, "bogus"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := brigade(t, append([]string{"fill", "--out", out}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "Run 'brigade fill --help'") {
				t.Errorf("stderr %q does not mention %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("results directory exists after a usage error")
			}
		})
	}
}

// TestFillBadInput: malformed inputs fail with exit 1, naming file, line and
// field, before anything is written.
func TestFillBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badPods := write("bad-pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,1000\nb,1,1,nine,1000\n")
	badNodes := write("bad-nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,4,Z80\n")
	cpuPods := write("cpu-pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", fillNodes, "--pods", badPods}, `bad-pods.csv:3: field "num_gpu": want an integer in 0..8, found "nine"`},
		{[]string{"--nodes", badNodes, "--pods", fillPods}, `bad-nodes.csv:2: field "model": want a GPU model name, found "Z80"`},
		{[]string{"--nodes", fillNodes, "--pods", cpuPods}, "asks for a GPU"},
		{[]string{"--nodes", fillNodes, "--pods", filepath.Join(dir, "missing.csv")}, "no such file"},
		{[]string{"--nodes", fillNodes, "--all-traces", dir}, "no openb_pod_list_*.csv"},
		{[]string{"--nodes", fillNodes, "--pods", fillPods, "--reference", filepath.Join(dir, "nope")}, "no analysis_allo_discrete.csv"},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := brigade(t, append([]string{"fill", "--quiet", "--out", out}, tc.args...)...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: results directory exists after a failed run", tc.args)
		}
	}
}

// openbPods is the openb reader's test pod list; its pod-d asks for 8
// V100s, which no node of fillNodes has.
const openbPods = "../../workloads/testdata/openb/good.csv"

// openbPodsThatFit is openbPods without pod-d, written to a file.
func openbPodsThatFit(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(openbPods)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "pod-d,") {
			kept = append(kept, line)
		}
	}
	trace := filepath.Join(t.TempDir(), "pods.csv")
	if err := os.WriteFile(trace, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return trace
}

// TestSimOpenBNodes: brigade sim replays a timed openb pod list on an openb
// node list given by --nodes, under every placement (fgd gets the trace's
// requests as its target); a five-column pod list is refused for replay.
func TestSimOpenBNodes(t *testing.T) {
	// pod-d asks for 8 V100s, which no node of the list has: the run is
	// refused, naming it; without it every placement runs.
	code, _, stderr := brigade(t, "sim", "--quiet", "--format", "openb", "--nodes", fillNodes, "--trace", openbPods, "--out", t.TempDir())
	if code != exitError || !strings.Contains(stderr, `good.csv:5: job "pod-d" can never run`) {
		t.Errorf("pod-d: exit %d, %s", code, stderr)
	}
	trace := openbPodsThatFit(t)
	for _, placement := range []string{"firstfit", "fgd", "bestfit", "dotprod", "packing", "clustering", "random"} {
		code, stdout, stderr := brigade(t, "sim", "--quiet", "--format", "openb", "--nodes", fillNodes, "--trace", trace,
			"--policy", "fcfs", "--placement", placement, "--out", t.TempDir())
		if code != exitOK || !strings.Contains(stdout, "fcfs") {
			t.Errorf("--placement %s: exit %d\n%s%s", placement, code, stdout, stderr)
		}
	}
	code, _, stderr = brigade(t, "sim", "--nodes", fillNodes, "--cluster", "philly-like", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "give one") {
		t.Errorf("--nodes with --cluster: exit %d, %s", code, stderr)
	}
	code, _, stderr = brigade(t, "sim", "--quiet", "--format", "openb", "--nodes", fillNodes, "--trace", fillPods, "--out", filepath.Join(t.TempDir(), "o"))
	if code != exitError || !strings.Contains(stderr, `pods.csv:1: field "creation_time": this pod list has no times`) {
		t.Errorf("five-column list: exit %d, %s", code, stderr)
	}
}

// TestFillOutWhole: --out is checked before the fill runs, a folder that
// is not Brigade's is never replaced, and a finished fill's folder holds
// its run.json.
func TestFillOutWhole(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "mine")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := brigade(t, "fill", "--quiet", "--nodes", fillNodes, "--pods", fillPods, "--seeds", "1", "--out", foreign, "--reference", "none")
	if code != exitError || stdout != "" || !strings.Contains(stderr, foreign) {
		t.Errorf("--out a foreign folder: exit %d, stdout %q, stderr %q; want a refusal before any run", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "keep" {
		t.Error("the foreign folder was touched")
	}
	out := filepath.Join(dir, "out")
	for range 2 { // the second run replaces the first's folder
		if code, _, stderr := brigade(t, "fill", "--quiet", "--nodes", fillNodes, "--pods", fillPods, "--seeds", "1", "--out", out, "--reference", "none"); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	for _, f := range []string{"fill.csv", "fill.png", "fill.svg", "run.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
