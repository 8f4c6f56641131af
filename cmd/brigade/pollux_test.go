package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPolluxGolden holds brigade pollux's table: every workload and load
// of the artifact's Tiresias and Optimus runs, every job exactly equal to
// the published JCT.
func TestPolluxGolden(t *testing.T) {
	code, stdout, stderr := brigade(t, "pollux")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "pollux.golden.txt", []byte(stdout))
	if !strings.Contains(stdout, "\n12800 jobs of 12800 exactly equal") {
		t.Errorf("not every job is exact:\n%s", stdout)
	}
}

func TestPolluxFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"pollux", "--load", "3.0"}, exitUsage, `--load: want loads among 0.5, 1.0, 1.5, 2.0, got "3.0"`},
		{[]string{"pollux", "--load", "0.5", "--policy", "nosuch"}, exitError, "nosuch"},
		{[]string{"pollux", "--load", "0.5", "--policy", "fcfs/mostfree"}, exitOK, "0.5   mean of 8"},
		{[]string{"pollux", "--baseline", "pollux"}, exitUsage, `--baseline: want baselines among tiresias, optimus, got "pollux"`},
		{[]string{"pollux", "--baseline", "optimus", "--load", "1.0"}, exitOK, "1280 jobs of 1280 exactly equal"},
	} {
		code, stdout, stderr := brigade(t, c.args...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%v: exit %d, output %q%q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.want)
		}
	}
}

// TestSimPolluxFlags runs an artifact workload through brigade sim with
// the flags docs/pollux.md shows: tiresias/mostfree and optimus give the
// published mean JCTs of workload-1 at load 1.0 (2473.65 s and 4087.06 s),
// and las/mostfree runs under the same engine options beside them.
func TestSimPolluxFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--out", out,
		"--trace", "../../pollux/data/workloads/1.0/workload-1.csv", "--cluster", "../../examples/pollux-cluster.yaml",
		"--apps", "../../pollux/data/apps", "--interval", "60s", "--startup-delay", "30s", "--save-on-preempt",
		"--policy", "tiresias/mostfree,las/mostfree,optimus")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(out, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range recs[1:] {
		jct, err := strconv.ParseFloat(r[col["jct_s"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum[r[col["policy"]]] += jct
		n[r[col["policy"]]]++
	}
	if n["tiresias/mostfree"] != 160 || n["las/mostfree"] != 160 || n["optimus"] != 160 {
		t.Fatalf("jobs per policy: %v, want 160 each", n)
	}
	for policy, want := range map[string]string{"tiresias/mostfree": "2473.65", "optimus": "4087.06"} {
		if got := fmt.Sprintf("%.2f", sum[policy]/160); got != want {
			t.Errorf("%s mean JCT %s s, want the published %s s", policy, got, want)
		}
	}
	// run.json names the application model's files among the inputs.
	runJSON, err := os.ReadFile(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(runJSON), `"role": "apps"`) || !strings.Contains(string(runJSON), "imagenet/placements.csv") {
		t.Errorf("run.json does not list the application model's files:\n%s", runJSON)
	}
	code, _, stderr = brigade(t, "sim", "--quiet", "--no-plots", "--out", filepath.Join(t.TempDir(), "o"),
		"--trace", "../../pollux/data/workloads/1.0/workload-1.csv", "--cluster", "../../examples/pollux-cluster.yaml")
	if code != exitError || !strings.Contains(stderr, "needs an application model") {
		t.Errorf("without --apps: exit %d, %s; want an error asking for an application model", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "nosuch")
	code, _, stderr = brigade(t, "sim", "--quiet", "--no-plots", "--out", filepath.Join(t.TempDir(), "o"), "--apps", missing,
		"--trace", "../../pollux/data/workloads/1.0/workload-1.csv", "--cluster", "../../examples/pollux-cluster.yaml")
	if code == 0 || !strings.Contains(stderr, missing+": open apps.csv") {
		t.Errorf("--apps of a missing folder: exit %d, %s; want an error naming the folder and its apps.csv", code, stderr)
	}
}
