package main

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brigadesim/brigade/runner"
)

// TestMain lets a test run brigade in a process of its own (the test
// binary with BRIGADE_TEST_MAIN set), so that it can be killed midway.
func TestMain(m *testing.M) {
	if os.Getenv("BRIGADE_TEST_MAIN") == "1" {
		os.Exit(mainWithArgs(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// folderSeed reads the seed a results folder's run.json and summary.json
// record; it fails the test when the two disagree (a folder mixing runs).
func folderSeed(t *testing.T, dir string) uint64 {
	t.Helper()
	var info struct{ Seed uint64 }
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	var sums []struct{ Seed uint64 }
	b, err = os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sums); err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Seed != info.Seed {
			t.Fatalf("%s mixes runs: run.json says seed %d, summary.json seed %d", dir, info.Seed, s.Seed)
		}
	}
	return info.Seed
}

// entries lists a folder's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestSimOutWholeOrAbsent: a rerun whose write fails (the plots' writer
// fails, as on a full disk) leaves the earlier folder exactly as it was
// and nothing beside it; a rerun with --no-plots leaves no old plots.
func TestSimOutWholeOrAbsent(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	args := func(seed string, extra ...string) []string {
		return append([]string{"sim", "--quiet", "--synthetic", "80", "--cluster", "h200x8", "--policy", "fcfs,sjf", "--seed", seed, "--out", out}, extra...)
	}
	if code, _, stderr := brigade(t, args("1")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := hashDir(t, out)
	plotsBefore := entries(t, filepath.Join(out, "plots"))

	defer func(f func(string, []runner.PolicyRun) error) { simPlotter = f }(simPlotter)
	simPlotter = func(dir string, runs []runner.PolicyRun) error {
		if err := simPlots(dir, runs); err != nil {
			return err
		}
		return errors.New("write plots/wait-cdf.png: no space left on device")
	}
	code, _, stderr := brigade(t, args("2")...)
	if code != exitError || !strings.Contains(stderr, "no space left on device") {
		t.Fatalf("failed write: exit %d, %s", code, stderr)
	}
	if folderSeed(t, out) != 1 || hashDir(t, out) != before || !slices.Equal(entries(t, filepath.Join(out, "plots")), plotsBefore) {
		t.Errorf("a failed rerun changed the earlier results folder")
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside --out after a failed rerun: %v, want only out", got)
	}

	simPlotter = simPlots
	if code, _, stderr := brigade(t, args("2", "--no-plots")...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if folderSeed(t, out) != 2 {
		t.Errorf("the rerun did not replace the folder")
	}
	if _, err := os.Stat(filepath.Join(out, "plots")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--no-plots left the old run's plots: %v", err)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside --out: %v, want only out", got)
	}
}

// TestSimOutKilled: brigade sim killed with SIGKILL at random moments of a
// rerun, writing included, leaves --out as the earlier run's complete
// folder or the new run's, never a mix; the next run clears what the
// killed one left beside it.
func TestSimOutKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts brigade processes")
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	run := func(seed string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "sim", "--quiet", "--synthetic", "300", "--cluster", "h200x8", "--policy", "fcfs,sjf,fair", "--seed", seed, "--out", out)
		cmd.Env = append(os.Environ(), "BRIGADE_TEST_MAIN=1")
		return cmd
	}
	t0 := time.Now()
	if b, err := run("1").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	took := time.Since(t0)
	hashes := map[uint64]string{1: hashDir(t, out)}
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[uint64]bool{}
	for i := range 12 {
		seed := uint64(2 + i%2)
		cmd := run([]string{"", "", "2", "3"}[seed])
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took) * 5 / 4)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		got := folderSeed(t, out)
		h := hashDir(t, out)
		if want, ok := hashes[got]; ok && want != h {
			t.Fatalf("kill %d: --out says seed %d but its files are not that run's", i, got)
		}
		hashes[got] = h
		seen[got] = true
	}
	t.Logf("after the kills --out held the runs of seeds %v", seen)
	if b, err := run("4").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside --out after a run that followed the kills: %v, want only out", got)
	}
}

// TestOutCheckedFirst: an --out that cannot be written is refused before
// anything runs (no "N jobs from" line, no time spent), by sim and serve,
// and an --out of the user's is never replaced.
func TestOutCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	mine := filepath.Join(dir, "mine")
	os.Mkdir(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("keep"), 0o644)
	trace := filepath.Join(mine, "jobs.csv")
	os.WriteFile(trace, []byte("name,submit_s,duration_s,gpus\na,0,10,1\n"), 0o644)
	earlier := filepath.Join(dir, "earlier")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--trace", trace, "--cluster", "h200x8", "--policy", "fcfs", "--out", earlier); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--out", filepath.Join(file, "out")}, file + " is a file, not a folder"},
		{[]string{"sim", "--out", file}, "it is a file, not a folder"},
		{[]string{"sim", "--out", mine}, "it holds jobs.csv and no run.json"},
		{[]string{"sim", "--trace", filepath.Join(earlier, "jobs.csv"), "--out", earlier}, "which is inside it"},
		{[]string{"serve", "--out", filepath.Join(file, "out")}, file + " is a file, not a folder"},
		{[]string{"serve", "--out", mine}, "it holds jobs.csv and no run.json"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			start := time.Now()
			code, _, stderr := brigade(t, tc.args...)
			if code != exitError || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want a refusal containing %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, "jobs from") || strings.Contains(stderr, "variants") {
				t.Errorf("it started the run before refusing --out: %q", stderr)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "notes.txt")); string(b) != "keep" {
		t.Errorf("a folder of the user's was changed")
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("a file of the user's was changed")
	}
}

// TestServeOutReplaced: serve writes its folder whole with a run.json, so
// that a rerun replaces it (its --no-plots leaves no old plots).
func TestServeOutReplaced(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, extra := range [][]string{nil, {"--no-plots"}} {
		args := append([]string{"serve", "testdata/serve-small.yaml", "--quiet", "--out", out}, extra...)
		if code, _, stderr := brigade(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
	}
	got := entries(t, out)
	if slices.Contains(got, "plots") || !slices.Contains(got, "run.json") || !slices.Contains(got, "serving_summary.json") {
		t.Errorf("after a --no-plots rerun --out holds %v; want the serving files and run.json, no plots", got)
	}
}
