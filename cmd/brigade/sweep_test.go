package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/sweep"
)

func TestResolveShard(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flag  string
		n     int
		env   map[string]string
		want  sweep.Shard
		error string
	}{
		{name: "none", want: sweep.Shard{}},
		{name: "flag", flag: "2/5", want: sweep.Shard{I: 2, N: 5}},
		{name: "flag wins", flag: "1/2", env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, want: sweep.Shard{I: 1, N: 2}},
		{name: "bad flag", flag: "5/5", error: "--shard: want i/n with 0 <= i < n"},
		{name: "k8s", n: 4, env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, want: sweep.Shard{I: 3, N: 4}},
		{name: "k8s env count", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "BRIGADE_SHARDS": "2"}, want: sweep.Shard{I: 0, N: 2}},
		{name: "k8s no count", env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, error: "--shards n or BRIGADE_SHARDS"},
		{name: "k8s out of range", n: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, error: "want i/n"},
		{name: "slurm", env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, want: sweep.Shard{I: 2, N: 3}},
		{name: "slurm from 1", env: map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, want: sweep.Shard{I: 2, N: 3}},
		{name: "slurm no count", env: map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, error: "SLURM_ARRAY_TASK_COUNT"},
		{name: "slurm gap", env: map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "3"}, error: "contiguous array"},
		{name: "shards alone", n: 3, error: "--shards needs JOB_COMPLETION_INDEX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveShard(tc.flag, tc.n, func(k string) string { return tc.env[k] })
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Errorf("error %v, want %q", err, tc.error)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSweepCommand(t *testing.T) {
	root := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := mainWithArgs(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, stderr := run("sweep", "../../examples/sweep.yaml", "--quiet", "--workers", "2", "--out", filepath.Join(root, "one"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" || !strings.Contains(out, "synthetic:300 on mixed-small, load 0.7: 5 seeds (mean ± 95% CI)") || !strings.Contains(out, "sjf+bf") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	// Two shards, the index from the environment as in a Kubernetes
	// Indexed Job and a Slurm array, then merged: the same bytes.
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	if code, _, stderr := run("sweep", "../../examples/sweep.yaml", "--quiet", "--shards", "2", "--out", filepath.Join(root, "shard-{shard}")); code != exitOK {
		t.Fatalf("shard 0: exit %d: %s", code, stderr)
	}
	os.Unsetenv("JOB_COMPLETION_INDEX")
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "2")
	if code, _, stderr := run("sweep", "../../examples/sweep.yaml", "--quiet", "--out", filepath.Join(root, "shard-{shard}")); code != exitOK {
		t.Fatalf("shard 1: exit %d: %s", code, stderr)
	}
	code, mout, stderr := run("sweep", "merge", "--quiet", "--out", filepath.Join(root, "merged"), filepath.Join(root, "shard-0"), filepath.Join(root, "shard-1"))
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if mout != out {
		t.Errorf("merge printed another table:\n%s", mout)
	}
	for _, f := range append([]string{sweep.GridFile}, sweep.Files...) {
		a, _ := os.ReadFile(filepath.Join(root, "one", f))
		b, err := os.ReadFile(filepath.Join(root, "merged", f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("merged %s differs from the unsharded one (%v)", f, err)
		}
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", "../../examples/sweep.yaml"}, exitUsage, "--out is required"},
		{[]string{"sweep", "--out", root}, exitUsage, "want one grid file"},
		{[]string{"sweep", "../../examples/sweep.yaml", "--out", root, "--shard", "2/2"}, exitUsage, "--shard: want i/n"},
		{[]string{"sweep", "nope.yaml", "--out", root}, exitError, "nope.yaml"},
		{[]string{"sweep", "merge", "--out", root}, exitUsage, "want at least one shard folder"},
		{[]string{"sweep", "merge", "--out", filepath.Join(root, "m2"), filepath.Join(root, "shard-0")}, exitError, "10 of 20 runs are in no shard"},
	} {
		code, _, stderr := run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if code, out, _ := run("sweep", "--help"); code != exitOK || !strings.Contains(out, "brigade sweep merge --out DIR SHARD_DIR...") || !strings.Contains(out, "Examples:") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
