package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func brigade(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = mainWithArgs(args, &out, &errb)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/brigade -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is intended, run go test ./cmd/brigade -update and review the diff", name)
	}
}

func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	for _, f := range []string{"summary.json", "jobs.csv", "timeseries.csv", "jobs.parquet", "attempts.parquet", "timeseries.parquet", "tenants.csv", "tenants.parquet"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestSimEmbeddedDefault runs `brigade sim` with no arguments (but --out)
// and checks the comparison table and summary.json against golden files.
func TestSimEmbeddedDefault(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := brigade(t, "sim", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{"fcfs", "sjf", "priority", "fair"} {
		if !strings.Contains(stdout, "\n"+p+" ") {
			t.Errorf("table lacks a row for %s:\n%s", p, stdout)
		}
	}
	golden(t, "default-table.golden.txt", []byte(stdout))
	summary, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "default-summary.golden.json", summary)
}

// TestSimDeterministic: same inputs and seed give byte-identical outputs,
// with GOMAXPROCS 1 and 2 (policies run in parallel when there are cores).
func TestSimDeterministic(t *testing.T) {
	var hashes []string
	for _, procs := range []int{1, 2, 2} {
		prev := runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		code, _, stderr := brigade(t, "sim", "--quiet", "--out", dir, "--backfill", "--placement", "bestfit")
		runtime.GOMAXPROCS(prev)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		hashes = append(hashes, hashDir(t, dir))
	}
	if hashes[0] != hashes[1] || hashes[1] != hashes[2] {
		t.Fatalf("outputs differ between runs: %v", hashes)
	}
}

// TestSimBadTrace: a malformed trace gets an error naming file, line and
// field, exit code 1, and no results directory.
func TestSimBadTrace(t *testing.T) {
	dir := filepath.Join("..", "..", "workloads", "testdata")
	tests := []struct {
		file, format, want string
	}{
		{"brigade/bad-missing-column.csv", "brigade", `bad-missing-column.csv:1: field "duration_s"`},
		{"brigade/bad-number.csv", "brigade", `bad-number.csv:3: field "gpus"`},
		{"brigade/bad-negative-duration.csv", "brigade", `bad-negative-duration.csv:5: field "duration_s"`},
		{"brigade/bad-unknown-model.csv", "brigade", `bad-unknown-model.csv:2: field "gpu_models": want GPU model names`},
		{"brigade/bad-cycle.csv", "brigade", `bad-cycle.csv:2: field "deps": dependency cycle`},
		{"philly/bad-number.csv", "philly", `bad-number.csv:`},
		{"philly/bad-missing-column.csv", "philly", `bad-missing-column.csv:1: field`},
		{"swf/bad-number.swf", "auto", `bad-number.swf:2: field "run": want a number, found "12O" (field 4 of 18)`},
		{"swf/bad-fields.swf", "swf", `bad-fields.swf:3: want 18 whitespace-separated fields (an SWF record), found 17`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := brigade(t, "sim", "--quiet", "--trace", filepath.Join(dir, tc.file), "--format", tc.format, "--out", out)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("results directory %s exists after a failed run", out)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--policy", "lottery"}, "lottery"},
		{[]string{"sim", "--placement", "worstfit"}, "worstfit"},
		{[]string{"sim", "--bogus"}, "bogus"},
		{[]string{"sim", "--bucket", "-1h"}, "--bucket"},
		{[]string{"sim", "--cluster", "no-such-preset"}, "no-such-preset"},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append(tc.args[:len(tc.args):len(tc.args)], "--out", t.TempDir())
			if tc.args[0] == "frobnicate" {
				args = tc.args
			}
			code, _, stderr := brigade(t, args...)
			if code == exitOK {
				t.Fatalf("exit 0, want failure")
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", stderr, tc.want)
			}
		})
	}
}

// TestHelp: every command's --help exits 0 and shows every flag and at
// least one example.
func TestHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, _ := brigade(t, c.name, "--help")
			if code != exitOK {
				t.Fatalf("exit %d", code)
			}
			if !strings.Contains(stdout, "Examples:\n  brigade "+c.name) {
				t.Errorf("--help shows no example:\n%s", stdout)
			}
			if !strings.Contains(stdout, "Usage: brigade "+c.name) {
				t.Errorf("--help shows no usage line")
			}
		})
	}
	code, stdout, _ := brigade(t, "--help")
	if code != exitOK || !strings.Contains(stdout, "sim") || !strings.Contains(stdout, "bench") {
		t.Errorf("top-level help: exit %d\n%s", code, stdout)
	}
}

// TestSimSWFSkipped: an SWF trace, told by its header, runs, and the
// records it could not replay are one warning, even with --quiet: good.swf
// keeps 5 of its 12 records (workloads/swf_test.go says which and why).
func TestSimSWFSkipped(t *testing.T) {
	trace := filepath.Join("..", "..", "workloads", "testdata", "swf", "good.swf")
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := brigade(t, "sim", "--quiet", "--trace", trace, "--cluster", "dgx-a100x16", "--policy", "fcfs", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "brigade: warning: " + trace + ": 2 records skipped: part of a checkpointed or swapped job (status 2, 3 or 4), which the job's own record covers whole, the first on line 15; 1 record skipped: cancelled before starting"
	if strings.Count(stderr, "warning") != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "; 1 record skipped: processor count unknown (req_procs and alloc_procs both -1 or 0), the first on line 13\n") {
		t.Errorf("stderr %q, want one warning starting %q", stderr, want)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Job 2 failed (status 0) and job 9 was cancelled after it started
	// (status 5): both end Failed.
	for _, w := range []string{`"jobs_submitted": 5,`, `"jobs_succeeded": 3,`, `"jobs_failed": 2,`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("summary.json lacks %s", w)
		}
	}
}

// TestSimTenantWeights: weights from a file reach fair share and the
// summary, and change what fair share does.
func TestSimTenantWeights(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "weights.csv")
	if err := os.WriteFile(weights, []byte("tenant,weight\n6214e9,8\nnot-a-tenant,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(out string, extra ...string) string {
		args := append([]string{"sim", "--quiet", "--policy", "fair", "--out", out}, extra...)
		code, _, stderr := brigade(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plain := run(filepath.Join(dir, "plain"))
	code, _, stderr := brigade(t, "sim", "--quiet", "--policy", "fair", "--out", filepath.Join(dir, "w"), "--tenant-weights", weights)
	if code != exitOK || !strings.Contains(stderr, `"not-a-tenant"`) {
		t.Fatalf("exit %d, stderr %q: want success and a warning about the unknown tenant", code, stderr)
	}
	weighted := run(filepath.Join(dir, "w"), "--tenant-weights", weights)
	if !strings.Contains(weighted, "\"tenant\": \"6214e9\",\n        \"weight\": 8,") {
		t.Errorf("summary.json does not show weight 8 for tenant 6214e9")
	}
	if plain == weighted {
		t.Errorf("a weight of 8 for the largest tenant changed nothing under fair share")
	}
}

// TestSimOpenBReportsFragmentation: replaying an Alibaba pod list on an
// openb node list with fgd placement reports GPU fragmentation in the
// summary and the time series.
func TestSimOpenBReportsFragmentation(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := brigade(t, "sim", "--quiet", "--format", "openb",
		"--trace", openbPodsThatFit(t),
		"--cluster", filepath.Join("..", "..", "fill", "testdata", "nodes.csv"),
		"--policy", "fcfs", "--placement", "fgd", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		Policy       string  `json:"policy"`
		GPUFragRatio float64 `json:"gpu_frag_ratio"`
	}
	if err := json.Unmarshal(summary, &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Policy != "fcfs/fgd" || !(runs[0].GPUFragRatio > 0 && runs[0].GPUFragRatio < 1) {
		t.Fatalf("summary %+v: want one fcfs/fgd run with a fragmentation ratio in (0, 1)", runs)
	}
	series, err := os.ReadFile(filepath.Join(out, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(series), "bucket_start_s,policy,queue_length,running_jobs,gpu_utilisation,gpu_frag_ratio,mig_slice_utilisation,mig_fragmentation,down_gpus\n") {
		t.Fatalf("timeseries.csv header: %q", strings.SplitN(string(series), "\n", 2)[0])
	}
}
