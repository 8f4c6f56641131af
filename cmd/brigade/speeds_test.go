package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mixedCluster writes a cluster spec of A100 and H100 nodes, so that a
// speed table changes how fast jobs run, and returns its path.
func mixedCluster(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mixed.yaml")
	spec := "name: mixed\nnode_groups:\n" +
		"  - name_prefix: a100\n    count: 2\n    gpu_model: A100-80GB\n    gpus_per_node: 8\n" +
		"  - name_prefix: h100\n    count: 2\n    gpu_model: H100-80GB\n    gpus_per_node: 8\n"
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimSpeedsTableLacksModel: a speed table whose generic rows lack a
// model of the cluster stops the run before it starts, naming the file
// and the model, and writes no results. Bugs it catches: the run going
// ahead with rate 0 (or NaN) on the missing model, and a message that
// leaves the user to guess which file or model.
func TestSimSpeedsTableLacksModel(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "my-speeds.csv")
	if err := os.WriteFile(table, []byte("class,gpu_model,speed\n*,A100-80GB,1\nbert,H100-80GB,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := brigade(t, "sim", "--quiet", "--synthetic", "50", "--cluster", mixedCluster(t), "--policy", "fcfs", "--speeds", table, "--out", out)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, w := range []string{table, "H100-80GB", "class *"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not name %q", stderr, w)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results directory %s exists after a refused run", out)
	}

	// A bad row is reported at its line.
	bad := filepath.Join(dir, "bad-speeds.csv")
	if err := os.WriteFile(bad, []byte("class,gpu_model,speed\n*,A100-80GB,1\n*,H100-80GB,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = brigade(t, "sim", "--quiet", "--synthetic", "50", "--cluster", mixedCluster(t), "--policy", "fcfs", "--speeds", bad, "--out", out)
	if code != exitError || !strings.Contains(stderr, bad+`:3: field "speed"`) {
		t.Errorf("a speed of 0: exit %d, stderr %q; want exit %d naming %s:3 and the speed field", code, stderr, exitError, bad)
	}
}

// TestSpeedsUsageErrors: speed and class flags that cannot work together
// are usage errors (exit 2) naming the flag. Bugs they catch: a
// --speed-reference silently ignored without --speeds (the user thinks
// the durations are rescaled), a negative or unreadable class weight
// taken as 0 or 1, and a plan whose answer depends on a reference model
// it guessed.
func TestSpeedsUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"sim", "--synthetic", "50", "--speed-reference", "A100-80GB"}, []string{"--speed-reference", "needs --speeds"}},
		{[]string{"sim", "--synthetic", "50", "--classes", "bert=-1"}, []string{"--classes", "finite weight >= 0", `"bert=-1"`}},
		{[]string{"sim", "--synthetic", "50", "--classes", "bert=two,resnet50"}, []string{"--classes", `"bert=two"`}},
		{[]string{"sim", "--synthetic", "50", "--classes", "bert=0"}, []string{"--classes", "positive finite sum"}},
		{[]string{"sim", "--synthetic", "50", "--speeds", "default", "--speed-reference", "Z900"}, []string{"--speed-reference", `"Z900"`}},
		{[]string{"plan", "--target", "wait_s.p99<=3600", "--gpu-models", "h100", "--speeds", "default"}, []string{"--speeds needs --speed-reference"}},
		{[]string{"plan", "--target", "wait_s.p99<=3600", "--gpu-models", "h100", "--speed-reference", "A100-80GB"}, []string{"--speed-reference needs --speeds"}},
		{[]string{"plan", "--target", "wait_s.p99<=3600", "--gpu-models", "h100", "--speeds", "default", "--speed-reference", "Z900"}, []string{"--speed-reference", `"Z900"`}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := brigade(t, append(tc.args, "--quiet", "--out", out)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage); stderr %q", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("results directory %s exists after a usage error", out)
			}
		})
	}
}

// TestSimSpeedsDeterministic: a small synthetic run with the default
// speed table and classes succeeds, writes the same summary.json twice,
// and a different one from the run without speeds. Bugs it catches:
// map-ordered or time-seeded draws of classes, and speeds silently
// ignored on a cluster of two models.
func TestSimSpeedsDeterministic(t *testing.T) {
	cluster := mixedCluster(t)
	run := func(extra ...string) []byte {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"sim", "--quiet", "--no-plots", "--synthetic", "300", "--seed", "3", "--cluster", cluster, "--policy", "fcfs,fcfs+fastest", "--out", out}, extra...)
		code, _, stderr := brigade(t, args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	speeds := []string{"--speeds", "default", "--classes", "bert,resnet50=2"}
	a, b := run(speeds...), run(speeds...)
	if !bytes.Equal(a, b) {
		t.Error("two runs with --speeds default wrote different summary.json")
	}
	if plain := run(); bytes.Equal(a, plain) {
		t.Error("--speeds default on A100 and H100 nodes changed nothing in summary.json")
	}
}
