package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlan: on the embedded Philly sample the plan finds a size, writes its
// evidence and plots, and gives byte-identical output twice.
func TestPlan(t *testing.T) {
	var outs [2]string
	var csvs [2][]byte
	for i := range outs {
		dir := t.TempDir()
		code, stdout, stderr := brigade(t, "plan", "--quiet", "--target", "wait_s.p99<=3600", "--gpu-models", "p100", "--max-gpus", "1024", "--out", dir)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		outs[i] = stdout
		var err error
		if csvs[i], err = os.ReadFile(filepath.Join(dir, "plan.csv")); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"plan.png", "plan.svg"} {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	if outs[0] != outs[1] || string(csvs[0]) != string(csvs[1]) {
		t.Errorf("two plans differ:\n%s\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], "smallest cluster meeting every target: ") || !strings.Contains(outs[0], "(of 128 per model in range)") {
		t.Errorf("stdout:\n%s", outs[0])
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--target", "wait_s.p99=<1"}, exitUsage, "--target: target \"wait_s.p99=<1\": comparison"},
		{[]string{"--target", "wait.p99<=1"}, exitUsage, "unknown metric \"wait.p99\" (known: "},
		{[]string{"--target", "wait_s.p99<=1", "--gpu-models", "x999"}, exitUsage, "unknown model"},
		{[]string{"--target", "wait_s.p99<=1", "--prices", "h100=2"}, exitUsage, "no price for P100"},
		{[]string{"--target", "wait_s.p99<=60", "--max-gpus", "64"}, exitError, "no cluster in the allowed range meets every target; at the largest size, 8 × P100 (64 GPUs): target wait_s.p99<=60 fails: wait_s.p99 = "},
	} {
		args := append([]string{"plan", "--quiet", "--gpu-models", "p100", "--out", t.TempDir()}, tc.args...)
		code, _, stderr := brigade(t, args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// TestPlanOutWhole: --out is checked before anything runs, and a plan's
// folder is written whole with its run.json.
func TestPlanOutWhole(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := brigade(t, "plan", "--quiet", "--target", "wait_s.p99<=3600", "--gpu-models", "p100", "--out", filepath.Join(file, "plan"))
	if code != exitError || !strings.Contains(stderr, file) {
		t.Errorf("--out below a file: exit %d, %q", code, stderr)
	}
	out := filepath.Join(dir, "plan")
	code, _, stderr = brigade(t, "plan", "--quiet", "--target", "wait_s.p99<=36000", "--gpu-models", "p100", "--max-gpus", "512", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"plan.csv", "plan.png", "plan.svg", "run.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
