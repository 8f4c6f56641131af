package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
)

// TestSimSyntheticCount: a job count that cannot fit in memory, or that is
// not positive, is refused with a usage error before anything is made.
func TestSimSyntheticCount(t *testing.T) {
	for _, tc := range []struct {
		n, want string
	}{
		{"1000000000", "need about"},
		{"2000000000", "more than Brigade runs"},
		{"-5", "want a positive number of jobs, got -5"},
		{"0", "want a positive number of jobs, got 0"},
	} {
		code, _, stderr := brigade(t, "sim", "--synthetic", tc.n, "--out", filepath.Join(t.TempDir(), "o"))
		if code != exitUsage || !strings.Contains(stderr, "--synthetic") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--synthetic %s: exit %d, stderr %q; want a usage error containing %q", tc.n, code, stderr, tc.want)
		}
	}
	code, _, stderr := brigade(t, "bench", "--jobs", "0")
	if code != exitUsage || !strings.Contains(stderr, "--jobs") {
		t.Errorf("bench --jobs 0: exit %d, %q", code, stderr)
	}
}

// TestSimHelpDefaultCluster: the cluster sim --help names for --synthetic
// is the one a synthetic run uses.
func TestSimHelpDefaultCluster(t *testing.T) {
	_, help, _ := brigade(t, "sim", "--help")
	out := filepath.Join(t.TempDir(), "o")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--synthetic", "20", "--policy", "fcfs", "--out", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var info results.RunInfo
	b, _ := os.ReadFile(filepath.Join(out, "run.json"))
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	used := ""
	for _, in := range info.Inputs {
		if in.Role == "cluster" {
			used = in.Path
		}
	}
	synth := regexp.MustCompile(`--synthetic jobs[^\n]*(\n {20,}[^\n]*)*`).FindString(help)
	if used == "" || !strings.Contains(synth, "by default "+used) || !strings.Contains(help, used+" with --synthetic") {
		t.Errorf("a synthetic run uses cluster %q; --help says:\n%s", used, synth)
	}
}

// TestVersionCommand: brigade version prints the version and commit that
// run.json records.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := brigade(t, args...)
		if code != exitOK || !strings.HasPrefix(stdout, "brigade "+results.Version+"\ncommit ") || !strings.Contains(stdout, "go1.") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
}

// TestHelpCommand: brigade help CMD prints CMD's help, as CMD --help does.
func TestHelpCommand(t *testing.T) {
	for _, c := range []string{"sim", "serve", "version"} {
		code, got, _ := brigade(t, "help", c)
		_, want, _ := brigade(t, c, "--help")
		if code != exitOK || got != want || !strings.HasPrefix(got, "Usage: brigade "+c) {
			t.Errorf("help %s: exit %d, got %.80q", c, code, got)
		}
	}
	code, got, _ := brigade(t, "help")
	if code != exitOK || !strings.Contains(got, "Commands:") {
		t.Errorf("help: exit %d, %q", code, got)
	}
	// The command list lines up: every summary starts in one column.
	column := -1
	for _, line := range strings.Split(got, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "  "), " ")
		if !strings.HasPrefix(line, "  ") || !ok || strings.HasPrefix(name, "brigade") {
			continue
		}
		at := len(line) - len(strings.TrimLeft(rest, " "))
		if column < 0 {
			column = at
		} else if at != column {
			t.Errorf("misaligned: %q", line)
		}
	}
}

// TestSuggestions: a slip in a command or flag name gets the likeliest
// meant one.
func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simm"}, `unknown command "simm"; did you mean "sim"?`},
		{[]string{"sreve"}, `did you mean "serve"?`},
		{[]string{"help", "bnech"}, `did you mean "bench"?`},
		{[]string{"sim", "--polcy", "fcfs"}, "unknown flag: --polcy; did you mean --policy?"},
		{[]string{"sim", "--seeed", "3"}, "did you mean --seed?"},
		{[]string{"bench", "--job", "10"}, "did you mean --jobs?"},
		{[]string{"serve", "--no-plot"}, "did you mean --no-plots?"},
	} {
		code, _, stderr := brigade(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	code, _, stderr := brigade(t, "sim", "--xyzzy")
	if code != exitUsage || strings.Contains(stderr, "did you mean") {
		t.Errorf("--xyzzy: exit %d, %q; want no suggestion for a name far from every flag", code, stderr)
	}
}

// durationFlagNames are the duration flags of sim, bench and live.
var durationFlagNames = []string{"node-mtbf", "node-repair", "gpu-mtbf", "gpu-repair", "heartbeat-interval", "heartbeat-timeout",
	"backoff", "restart-time", "checkpoint-every", "checkpoint-cost", "mig-reconfig-time", "startup-delay", "bucket",
	"starvation-threshold", "tick", "grace"}

// TestDurationFlagsOneType: every duration flag of these commands shows as
// "duration" in --help, and takes the one syntax (90s, 2h, 7d).
func TestDurationFlagsOneType(t *testing.T) {
	for _, c := range []string{"sim", "bench", "live"} {
		_, help, _ := brigade(t, c, "--help")
		n := 0
		for _, line := range strings.Split(help, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !slices.Contains(durationFlagNames, strings.TrimPrefix(f[0], "--")) {
				continue
			}
			n++
			if f[1] != "duration" {
				t.Errorf("%s --help: %s shows as %q, not duration", c, f[0], f[1])
			}
		}
		if n < 2 {
			t.Errorf("%s --help shows %d duration flags", c, n)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--bucket", "-1h"}, `invalid argument "-1h" for "--bucket" flag: want a positive duration`},
		{[]string{"sim", "--startup-delay", "soon"}, `"--startup-delay" flag: duration "soon"`},
		{[]string{"live", "--jobs", "x", "--grace", "0"}, `"--grace" flag: want a positive duration`},
	} {
		code, _, stderr := brigade(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestQuietEverywhere: every command that prints progress takes --quiet.
func TestQuietEverywhere(t *testing.T) {
	for _, c := range []string{"sim", "bench", "fill", "report", "sweep", "plan", "live", "serve"} {
		if _, help, _ := brigade(t, c, "--help"); !strings.Contains(help, "--quiet") {
			t.Errorf("%s has no --quiet", c)
		}
	}
	code, stdout, stderr := brigade(t, "bench", "--quiet", "--jobs", "200", "--gpus", "16", "--policy", "fcfs")
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "fcfs") {
		t.Errorf("bench --quiet: exit %d, stderr %q", code, stderr)
	}
	_, _, stderr = brigade(t, "bench", "--jobs", "200", "--gpus", "16", "--policy", "fcfs")
	if !strings.Contains(stderr, "generating 200 jobs") {
		t.Errorf("bench says nothing while it generates the workload: %q", stderr)
	}
}

// TestSimJobThatNeverFits: a job larger than any node is an error naming
// the file, line and job, what it asks for and the largest node.
func TestSimJobThatNeverFits(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "jobs.csv")
	os.WriteFile(trace, []byte("name,submit_s,duration_s,gpus\nsmall,0,60,1\nhuge,10,60,64\nhuger,20,60,128\n"), 0o644)
	code, _, stderr := brigade(t, "sim", "--trace", trace, "--cluster", "h200x8", "--policy", "fcfs", "--out", filepath.Join(dir, "out"))
	for _, want := range []string{trace + `:3: job "huge" can never run on cluster h200x8`, "asks for 64 GPUs", "the largest node", "has 8 GPUs", "1 more job cannot either"} {
		if code != exitError || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q; want %q", code, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a results folder was written")
	}
}

// TestPlurals: counts printed to people agree with their nouns.
func TestPlurals(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.csv")
	os.WriteFile(one, []byte("name,submit_s,duration_s,gpus\nonly,0,60,1\n"), 0o644)
	_, _, stderr := brigade(t, "sim", "--trace", one, "--cluster", "h200x8", "--policy", "fcfs", "--no-plots", "--out", filepath.Join(dir, "o"))
	if !strings.Contains(stderr, "brigade: 1 job from one.csv") {
		t.Errorf("stderr %q; want \"1 job from\"", stderr)
	}
	for n, want := range map[int]string{0: "0 jobs", 1: "1 job", 2: "2 jobs"} {
		if got := hwmodel.Plural(n, "job", "jobs"); got != want {
			t.Errorf("Plural(%d) = %q", n, got)
		}
	}
	if bad := regexp.MustCompile(`\b1 (jobs|GPUs|policies|runs|files)\b`).FindString(stderr); bad != "" {
		t.Errorf("stderr says %q", bad)
	}
}

// TestBenchEveryPlacement: bench measures every placement, fgd (which
// needs the workload's target) included, on synthetic and trace
// workloads alike.
func TestBenchEveryPlacement(t *testing.T) {
	var specs []string
	for _, p := range policies.PlacementNames() {
		specs = append(specs, "fcfs/"+p)
	}
	list := strings.Join(specs, ",")
	for _, args := range [][]string{
		{"bench", "--quiet", "--jobs", "200", "--gpus", "64", "--policy", list},
		{"bench", "--quiet", "--trace", "../../examples/jobs.csv", "--policy", list},
	} {
		code, stdout, stderr := brigade(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, s := range specs {
			if !strings.Contains(stdout, s+" ") {
				t.Errorf("%v: no row for %s in\n%s", args, s, stdout)
			}
		}
		// bench/simpy/compare.sh reads the event loop's CPU time by this
		// header, two or more spaces from its neighbours.
		header, _, _ := strings.Cut(stdout, "\n")
		if !slices.Contains(regexp.MustCompile(` {2,}`).Split(strings.TrimSpace(header), -1), "cpu s") {
			t.Errorf("%v: no \"cpu s\" column in the header %q", args, header)
		}
	}
}
