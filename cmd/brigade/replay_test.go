package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/results"
)

// jobsCSV writes a hand-made jobs.csv into dir: each row gives policy,
// name, submit, start, end, run, gpus, attempts, state and lost seconds;
// the other columns are derived or zero.
func jobsCSV(t *testing.T, dir string, rows [][]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(results.JobsCSVHeader)
	for i, r := range rows {
		get := map[string]string{
			"policy": r[0], "id": itoa(i), "name": r[1], "dag": "", "tenant": "t", "priority": "0",
			"submit_s": r[2], "ready_s": r[2], "start_s": r[3], "end_s": r[4], "wait_s": "0", "run_s": r[5],
			"jct_s": ftoa(atof(r[4]) - atof(r[2])), "bounded_slowdown": "", "gpus": r[6], "gpu_milli": "1000",
			"nodes": "n", "attempts": r[7], "state": r[8], "mig_profile": "", "hardware_failures": "0",
			"lost_s": r[9], "checkpoint_s": "0",
		}
		var rec []string
		for _, h := range results.JobsCSVHeader {
			rec = append(rec, get[h])
		}
		w.Write(rec)
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// liveFolder is a hand-made live run on one 8-GPU node under fcfs: a and b
// take the whole node one after the other, c failed once (8 s lost) before
// a 12 s successful attempt, d never ran.
func liveFolder(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "live")
	jobsCSV(t, dir, [][]string{
		{"fcfs", "a", "0", "0", "10", "10", "8", "1", "succeeded", "0"},
		{"fcfs", "b", "1", "10", "15", "5", "8", "1", "succeeded", "0"},
		{"fcfs", "c", "2", "15", "35", "20", "8", "2", "succeeded", "8"},
		{"fcfs", "d", "3", "3", "3", "0", "8", "0", "failed", "0"},
	})
	return dir
}

func readJobs(t *testing.T, dir string) map[string]results.JobRow {
	t.Helper()
	rows, err := readResultJobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]results.JobRow{}
	for _, r := range rows {
		m[r.Policy+"/"+r.Name] = r
	}
	return m
}

func TestReplayHandMadeFolder(t *testing.T) {
	live := liveFolder(t)
	out := filepath.Join(t.TempDir(), "replay")
	// No run.json: the cluster must be named.
	code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", live, "--out", out)
	if code == 0 || !strings.Contains(stderr, "no run.json") {
		t.Fatalf("want an error naming the missing run.json, got %d %q", code, stderr)
	}
	// run.json naming the preset: used without --cluster.
	info := `{"schema_version":2,"inputs":[{"role":"cluster","path":"h200x8","embedded":true}]}`
	if err := os.WriteFile(filepath.Join(live, "run.json"), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = brigade(t, "sim", "--no-plots", "--replay", live, "--out", out)
	if code != 0 {
		t.Fatalf("replay: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "1 job of") || !strings.Contains(stderr, "h200x8") {
		t.Errorf("want the never-run job warned about and the recorded cluster used, got %q", stderr)
	}
	got := readJobs(t, out)
	// c (no attempts.parquet) fails once and is retried: both attempts run
	// its successful attempt's 12 s (run_s − lost_s).
	want := map[string][3]float64{"fcfs/a": {0, 10, 1}, "fcfs/b": {10, 15, 1}, "fcfs/c": {15, 39, 2}}
	if len(got) != len(want) {
		t.Fatalf("replayed %d jobs, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if g := got[k]; g.StartS != w[0] || g.EndS != w[1] || g.State != "succeeded" || g.Attempts != int32(w[2]) {
			t.Errorf("%s: start %g end %g state %s attempts %d, want %g %g succeeded %g", k, g.StartS, g.EndS, g.State, g.Attempts, w[0], w[1], w[2])
		}
	}
	// The fidelity of the replay against the live run: same order, c's
	// JCT 4 s long (its failed attempt took 8 s live, 12 s replayed).
	rows, err := fidelity(live, out)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.Policy != "fcfs" || r.Jobs != 3 || !r.SameOrder || r.KendallTau != 1 || r.SamePosition != 1 {
		t.Errorf("order: %+v", r)
	}
	if r.StartErrP50 != 0 || r.StartErrP95 != 0 || r.JCTErrP50 != 0 || !near(r.JCTErrP95, 3.6) || r.JCTRelP50 != 0 {
		t.Errorf("errors: %+v", r)
	}
}

func TestReplayRoundTripOfASimRun(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--synthetic", "60", "--cluster", "h200x8", "--policy", "fcfs,fair", "--out", a); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--out", b); code != 0 {
		t.Fatal(stderr)
	}
	ja, jb := readJobs(t, a), readJobs(t, b)
	if len(ja) != len(jb) {
		t.Fatalf("%d jobs, replay %d", len(ja), len(jb))
	}
	for k, x := range ja {
		y := jb[k]
		if x.StartS != y.StartS || x.EndS != y.EndS || x.Name != y.Name {
			t.Errorf("%s: start %g end %g, replay %g %g", k, x.StartS, x.EndS, y.StartS, y.EndS)
		}
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 2 {
		t.Fatal(rows, err)
	}
	for _, r := range rows {
		if !r.SameOrder || r.JCTErrP95 != 0 || r.UtilSim != r.UtilLive {
			t.Errorf("%+v", r)
		}
	}
	if _, err := os.Stat(filepath.Join(b, "replay-jobs.csv")); err != nil {
		t.Error(err)
	}
}

func TestReplayErrors(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay", empty}, "neither jobs.parquet nor jobs.csv"},
		{[]string{"--replay", filepath.Join(empty, "nope")}, "not a results folder"},
		{[]string{"--replay", empty, "--synthetic", "5"}, "replaces --trace"},
	} {
		args := append([]string{"sim", "--quiet", "--no-plots", "--cluster", "h200x8", "--out", t.TempDir()}, c.args...)
		code, _, stderr := brigade(t, args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: want an error with %q, got %d %q", c.args, c.want, code, stderr)
		}
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "jobs.csv"), []byte("policy,id,name\nfcfs,0,a\n"), 0o644)
	code, _, stderr := brigade(t, "sim", "--quiet", "--replay", bad, "--cluster", "h200x8", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, `column "tenant" is missing`) {
		t.Errorf("want the missing column named, got %d %q", code, stderr)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// --startup-delay adds to every replayed attempt: the hand-made live run's
// three jobs, each attempt 4 s longer, run one after the other (c's two).
func TestReplayWithStartupDelay(t *testing.T) {
	live := liveFolder(t)
	out := filepath.Join(t.TempDir(), "replay")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", live, "--cluster", "h200x8", "--startup-delay", "4s", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	got := readJobs(t, out)
	for k, w := range map[string][2]float64{"fcfs/a": {0, 14}, "fcfs/b": {14, 23}, "fcfs/c": {23, 55}} {
		if g := got[k]; g.StartS != w[0] || g.EndS != w[1] {
			t.Errorf("%s: start %g end %g, want %g %g", k, g.StartS, g.EndS, w[0], w[1])
		}
	}
	code, _, stderr := brigade(t, "sim", "--quiet", "--startup-delay", "-1s", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--startup-delay") {
		t.Errorf("want a --startup-delay error, got %d %q", code, stderr)
	}
}

// --gpu-sharing processor on a trace with compute demands: two
// compute-bound half-GPU jobs on one GPU each take twice their duration;
// without it, their durations.
func TestSimGPUSharingProcessor(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "jobs.csv")
	os.WriteFile(trace, []byte("name,submit_s,duration_s,gpus,gpu_milli,gpu_demand_milli\na,0,100,1,500,1000\nb,0,100,1,500,1000\n"), 0o644)
	for _, c := range []struct {
		sharing string
		end     float64
	}{{"none", 100}, {"processor", 200}} {
		out := filepath.Join(dir, c.sharing)
		if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--trace", trace, "--cluster", "h200x8", "--policy", "fcfs", "--gpu-sharing", c.sharing, "--out", out); code != 0 {
			t.Fatal(stderr)
		}
		for k, g := range readJobs(t, out) {
			if g.EndS != c.end || g.Nodes != readJobs(t, out)["fcfs/a"].Nodes {
				t.Errorf("%s %s: end %g on %s, want %g", c.sharing, k, g.EndS, g.Nodes, c.end)
			}
		}
	}
	code, _, stderr := brigade(t, "sim", "--quiet", "--trace", trace, "--gpu-sharing", "mps", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--gpu-sharing") {
		t.Errorf("want a --gpu-sharing error, got %d %q", code, stderr)
	}
	os.WriteFile(trace, []byte("name,submit_s,duration_s,gpus,gpu_demand_milli\na,0,100,1,1000\n"), 0o644)
	code, _, stderr = brigade(t, "sim", "--quiet", "--trace", trace, "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "gpu_demand_milli") {
		t.Errorf("want an error naming gpu_demand_milli for a whole-GPU job, got %d %q", code, stderr)
	}
}

// A results folder's labels are specs: sim --replay reads them back to the
// same policies, options included, and so reproduces every start. The
// oracle makes SJF and backfill decide on true durations, which a replay
// reproduces exactly (the users' estimates are not in a sim folder), so a
// label that lost +oracle or +bf's depth would replay differently.
func TestReplayReadsBackEverySpecOption(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	specs := "sjf+oracle,priority+wwait=0,fcfs+bf=5+oracle/bestfit,fair+bf+oracle/packing"
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--synthetic", "200", "--cluster", "h200x8", "--policy", specs, "--backfill-depth", "7", "--out", a); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--out", b)
	if code != 0 {
		t.Fatal(stderr)
	}
	// --backfill-depth is shorthand applied to every spec that backfills.
	for _, label := range []string{"sjf+oracle ", "priority+wwait=0 ", "fcfs+bf=7+oracle/bestfit ", "fair+bf=7+oracle/packing "} {
		if !strings.Contains(stdout, "\n"+label) {
			t.Errorf("replay table has no row %q:\n%s", label, stdout)
		}
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 4 {
		t.Fatal(rows, err)
	}
	for _, r := range rows {
		if !r.SameOrder || r.JCTErrP95 != 0 {
			t.Errorf("%s: replay differs: %+v", r.Policy, r)
		}
	}
}

func TestPolicySpecHelpAndErrors(t *testing.T) {
	_, stdout, _ := brigade(t, "sim", "--help")
	for _, want := range []string{"Orders:", "    sjf ", "Placements:", "    /bestfit ", "+bf ", "+mig "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("sim --help lacks %q", want)
		}
	}
	code, _, stderr := brigade(t, "sim", "--policy", "sjf+bff")
	if code != exitUsage || !strings.Contains(stderr, `unknown option "bff"`) || !strings.Contains(stderr, `did you mean "bf"?`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// jobs.csv's reason columns are read by name; a jobs.csv written before
// they existed (schema version 2) reads with empty reasons.
func TestReadJobsCSVReasons(t *testing.T) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(results.JobsCSVHeader)
	row := make([]string, len(results.JobsCSVHeader))
	for i, h := range results.JobsCSVHeader {
		switch h {
		case "policy", "name", "tenant", "state", "reason", "reason_detail":
			row[i] = map[string]string{"policy": "fcfs", "name": "train", "tenant": "t", "state": "failed",
				"reason": "dependency_failed", "reason_detail": "dependency \"a, b\" failed"}[h]
		case "bounded_slowdown", "dag", "nodes", "mig_profile":
		default:
			row[i] = "0"
		}
	}
	w.Write(row)
	w.Flush()
	rows, err := readJobsCSV(strings.NewReader(b.String()), "jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Reason != "dependency_failed" || rows[0].ReasonDetail != "dependency \"a, b\" failed" || rows[0].State != "failed" {
		t.Errorf("rows = %+v", rows)
	}
	n := len(results.JobsCSVHeader) - 7 // without reason, reason_detail and schema 4 and 6 columns
	if results.JobsCSVHeader[n] != "reason" {
		t.Fatalf("JobsCSVHeader ends %q", results.JobsCSVHeader[n:])
	}
	var old strings.Builder
	w = csv.NewWriter(&old)
	w.Write(results.JobsCSVHeader[:n])
	w.Write(row[:n])
	w.Flush()
	rows, err = readJobsCSV(strings.NewReader(old.String()), "jobs.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Reason != "" || rows[0].ReasonDetail != "" || rows[0].Name != "train" {
		t.Errorf("schema 2 rows = %+v", rows)
	}
}

// A replay draws from the seed the folder's run.json records unless
// --seed is given, so that random placement places every job as the
// original run did (a live run's policy draws from seed 0). Here eight
// half-GPU jobs land on random GPUs of an 8-GPU node, and how many GPUs
// they leave idle decides when the four whole-GPU jobs behind them start:
// seed 2 leaves more than seed 1.
func TestReplayKeepsTheRecordedSeed(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "jobs.csv")
	text := "name,submit_s,duration_s,gpus,gpu_milli\n"
	for i := 1; i <= 8; i++ {
		text += "half" + itoa(i) + ",0,10,1,500\n"
	}
	for i := 1; i <= 4; i++ {
		text += "whole" + itoa(i) + ",1,5,1,\n"
	}
	if err := os.WriteFile(trace, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--trace", trace, "--cluster", "h200x8", "--policy", "fcfs/random,fair+bf/random", "--seed", "2", "--out", a); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--out", b); code != 0 {
		t.Fatal(stderr)
	}
	if seed, ok := recordedSeed(b); !ok || seed != 2 {
		t.Errorf("the replay's run.json records seed %d (%v), want the folder's 2", seed, ok)
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 2 {
		t.Fatal(rows, err)
	}
	for _, r := range rows {
		if !r.SameOrder || r.StartErrP95 != 0 || r.JCTErrP95 != 0 {
			t.Errorf("%s: the replay with the recorded seed differs: %+v", r.Policy, r)
		}
	}
	// --seed overrides it, and seed 1 places the halves otherwise: what
	// replaying with the default seed did before.
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--seed", "1", "--out", c); code != 0 {
		t.Fatal(stderr)
	}
	if seed, _ := recordedSeed(c); seed != 1 {
		t.Errorf("--seed 1: the replay records seed %d", seed)
	}
	rows, err = fidelity(a, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.StartErrP95 == 0 {
			t.Errorf("%s: seed 1 replays seed 2's random placement exactly: %+v", r.Policy, r)
		}
	}
}

// TestReplayOfSuspendingPolicies replays runs of the orders that suspend a
// preempted job with its progress (gandiva, gavel): each job must be
// replayed with its whole work, its preempted attempts' run included, for
// the replay to give back every start and end.
func TestReplayOfSuspendingPolicies(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--synthetic", "40", "--load", "3", "--cluster", "h200x8",
		"--policy", "gandiva+quantum=5m,gavel+round=5m", "--out", a); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--out", b); code != 0 {
		t.Fatal(stderr)
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 2 {
		t.Fatal(rows, err)
	}
	preempted := 0
	for _, x := range readJobs(t, a) {
		preempted += int(x.Preemptions)
	}
	if preempted < 100 {
		t.Fatalf("the runs preempted %d times; the test needs a run that preempts", preempted)
	}
	for _, r := range rows {
		if !r.SameOrder || r.StartErrP95 != 0 || r.JCTErrP95 != 0 {
			t.Errorf("%s: order %v, start err p95 %g s, JCT err p95 %g s", r.Policy, r.SameOrder, r.StartErrP95, r.JCTErrP95)
		}
	}
}
