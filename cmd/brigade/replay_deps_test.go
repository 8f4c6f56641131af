package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/brigadesim/brigade/results"
)

// requestTrace is a Brigade CSV trace for the h200x8 node (8 GPUs, 224
// CPUs, 2 TiB) whose decisions depend on the schema 4 columns: CPU-only
// jobs that do not fit beside each other by CPU or by memory, a DAG
// (prep -> train -> eval, eval also waiting for prep), a job that fails once
// and is retried, one that fails for good, with a dependant that therefore
// never runs, and GPU jobs competing for the node.
const requestTrace = `name,submit_s,duration_s,gpus,cpu_milli,memory_mib,deps,dag,failed_attempts,retries
cpu-a,0,100,0,150000,,,,,
prep,0,20,1,8000,,,pipe,,
train,0,60,4,32000,65536,prep,pipe,,
eval,0,10,1,,,train;prep,pipe,,
cpu-b,1,50,0,150000,,,,,
mem-a,3,40,0,1000,1500000,,,,
mem-b,4,20,0,1000,1000000,,,,
flaky,5,25,2,,,,,1,2
broken,6,15,1,,,,,2,1
after-broken,6,5,3,,,broken,,,
big,10,30,8,,,,,,
`

// simRequestRun runs requestTrace under three policies into a new folder.
func simRequestRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(requestTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--trace", trace, "--cluster", "h200x8",
		"--policy", "fcfs,fair,sjf+oracle", "--out", a); code != 0 {
		t.Fatal(stderr)
	}
	return a
}

// The replay of a sim run whose jobs ask for CPU and memory, form a DAG and
// fail (then are retried, or fail for good) reproduces every start and end,
// every state and attempt count: cpu_milli, memory_mib and deps come back
// from jobs.parquet, and the attempts from attempts.parquet.
func TestReplayReproducesRequestsDepsAndRetries(t *testing.T) {
	a := simRequestRun(t)
	ja := readJobs(t, a)
	// The run is the one the trace is meant to make: CPU and memory
	// contention, the DAG order, a retry and a failure.
	if g := ja["fcfs/cpu-b"]; g.StartS < 100 || g.CPUMilli != 150000 {
		t.Fatalf("cpu-b should wait for cpu-a's CPUs: %+v", g)
	}
	if g := ja["fcfs/mem-b"]; g.StartS < ja["fcfs/mem-a"].EndS || g.MemoryMiB != 1000000 {
		t.Fatalf("mem-b should wait for mem-a's memory: %+v", g)
	}
	if g := ja["fcfs/eval"]; g.Deps != "train;prep" || g.StartS < ja["fcfs/train"].EndS || ja["fcfs/train"].StartS < ja["fcfs/prep"].EndS {
		t.Fatalf("the DAG: %+v", g)
	}
	if g := ja["fcfs/flaky"]; g.Attempts != 2 || g.State != "succeeded" {
		t.Fatalf("flaky: %+v", g)
	}
	if g := ja["fcfs/broken"]; g.Attempts != 2 || g.State != "failed" || g.Reason != results.ReasonRetriesExhausted {
		t.Fatalf("broken: %+v", g)
	}
	if g := ja["fcfs/after-broken"]; g.Attempts != 0 || g.Reason != results.ReasonDependencyFailed {
		t.Fatalf("after-broken: %+v", g)
	}

	b := filepath.Join(t.TempDir(), "b")
	code, _, stderr := brigade(t, "sim", "--no-plots", "--replay", a, "--out", b)
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stderr, "1 job of") {
		t.Errorf("want after-broken warned about as never run, got %q", stderr)
	}
	jb := readJobs(t, b)
	for k, x := range ja {
		y, ok := jb[k]
		if x.Attempts == 0 {
			if ok {
				t.Errorf("%s never ran but is in the replay", k)
			}
			continue
		}
		if !ok {
			t.Errorf("%s is missing from the replay", k)
			continue
		}
		if x.StartS != y.StartS || x.EndS != y.EndS || x.State != y.State || x.Attempts != y.Attempts || x.Reason != y.Reason {
			t.Errorf("%s: start %g end %g %s after %d attempts (%s); replay %g %g %s after %d (%s)",
				k, x.StartS, x.EndS, x.State, x.Attempts, x.Reason, y.StartS, y.EndS, y.State, y.Attempts, y.Reason)
		}
		if x.CPUMilli != y.CPUMilli || x.MemoryMiB != y.MemoryMiB || x.Deps != y.Deps || x.DAG != y.DAG {
			t.Errorf("%s: request %d/%d deps %q dag %q; replay %d/%d %q %q", k, x.CPUMilli, x.MemoryMiB, x.Deps, x.DAG, y.CPUMilli, y.MemoryMiB, y.Deps, y.DAG)
		}
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 3 {
		t.Fatal(rows, err)
	}
	for _, r := range rows {
		if r.Jobs != 10 || !r.SameOrder || r.StartErrP95 != 0 || r.JCTErrP95 != 0 || r.JCTErrP50 != 0 {
			t.Errorf("%s: the replay differs: %+v", r.Policy, r)
		}
	}
}

// The same run replayed from a jobs.csv without the cpu_milli, memory_mib
// and deps columns (as a schema 3 folder would be) does not reproduce it:
// the CPU-only jobs run side by side and the DAG's tasks start at their
// submission.
func TestReplayWithoutRequestColumnsDiffers(t *testing.T) {
	a := simRequestRun(t)
	if err := os.Remove(filepath.Join(a, "jobs.parquet")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a, "jobs.csv")
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	for i, h := range recs[0] {
		if h != "cpu_milli" && h != "memory_mib" && h != "deps" {
			keep = append(keep, i)
		}
	}
	if len(keep) != len(recs[0])-3 {
		t.Fatalf("jobs.csv header %q lacks a schema 4 column", recs[0])
	}
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	for _, r := range recs {
		var out []string
		for _, i := range keep {
			out = append(out, r[i])
		}
		w.Write(out)
	}
	w.Flush()
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	b := filepath.Join(t.TempDir(), "b")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", a, "--out", b); code != 0 {
		t.Fatal(stderr)
	}
	ja, jb := readJobs(t, a), readJobs(t, b)
	for _, p := range []string{"fcfs", "fair", "sjf+oracle"} {
		if x, y := ja[p+"/cpu-b"], jb[p+"/cpu-b"]; y.StartS >= x.StartS || y.CPUMilli != 0 {
			t.Errorf("%s: without cpu_milli, cpu-b should start before %g, started at %g (cpu %d)", p, x.StartS, y.StartS, y.CPUMilli)
		}
		if x, y := ja[p+"/train"], jb[p+"/train"]; y.StartS >= x.StartS || y.Deps != "" {
			t.Errorf("%s: without deps, train should start before %g, started at %g (deps %q)", p, x.StartS, y.StartS, y.Deps)
		}
	}
	rows, err := fidelity(a, b)
	if err != nil || len(rows) != 3 {
		t.Fatal(rows, err)
	}
	for _, r := range rows {
		if r.SameOrder && r.StartErrP95 == 0 && r.JCTErrP95 == 0 {
			t.Errorf("%s: the replay without the columns reproduces the run: %+v", r.Policy, r)
		}
	}
}

// A dependency that names no job of the folder is an error naming the file,
// the line (jobs.csv) or row (jobs.parquet), the field and the name; so is
// one on a job that never ran when its dependant did.
func TestReplayUnknownDependency(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "live")
	jobsCSV(t, dir, [][]string{
		{"fcfs", "a", "0", "0", "10", "10", "8", "1", "succeeded", "0"},
		{"fcfs", "b", "1", "10", "15", "5", "8", "1", "succeeded", "0"},
		{"fcfs", "c", "2", "2", "2", "0", "8", "0", "failed", "0"},
	})
	path := filepath.Join(dir, "jobs.csv")
	setDeps := func(deps ...string) {
		t.Helper()
		rows, err := readJobsCSV(mustOpen(t, path), path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].Deps = deps[i]
		}
		var sb strings.Builder
		w := csv.NewWriter(&sb)
		w.Write(results.JobsCSVHeader)
		for _, r := range rows {
			rec := make([]string, len(results.JobsCSVHeader))
			for k, h := range results.JobsCSVHeader {
				rec[k] = map[string]string{"policy": r.Policy, "id": itoa(int(r.ID)), "name": r.Name, "tenant": r.Tenant,
					"priority": "0", "submit_s": ftoa(r.SubmitS), "start_s": ftoa(r.StartS), "end_s": ftoa(r.EndS), "run_s": ftoa(r.RunS),
					"jct_s": ftoa(r.JCTS), "gpus": "8", "gpu_milli": "1000", "attempts": itoa(int(r.Attempts)), "state": r.State, "deps": r.Deps}[h]
			}
			w.Write(rec)
		}
		w.Flush()
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay := func() (int, string) {
		code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", dir, "--cluster", "h200x8", "--out", t.TempDir())
		return code, stderr
	}
	setDeps("", "a;zz", "")
	code, stderr := replay()
	if code == 0 || !strings.Contains(stderr, path+`:3: field "deps"`) || !strings.Contains(stderr, `"b"`) || !strings.Contains(stderr, `"zz", which is not a job of the folder`) {
		t.Errorf("want an error naming jobs.csv line 3, field deps and the name zz, got %d %q", code, stderr)
	}
	setDeps("", "c", "")
	code, stderr = replay()
	if code == 0 || !strings.Contains(stderr, path+`:3: field "deps"`) || !strings.Contains(stderr, `"c", which never ran`) {
		t.Errorf("want an error naming the never-run dependency, got %d %q", code, stderr)
	}
	setDeps("", "a", "")
	if code, stderr = replay(); code != 0 {
		t.Errorf("a known dependency: %d %s", code, stderr)
	}

	// The same in a jobs.parquet: the row is named.
	pq := t.TempDir()
	jobs := []results.JobRecord{
		{ID: 0, Name: "a", Tenant: "t", End: 10e6, Run: 10e6, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: results.Succeeded},
		{ID: 1, Name: "b", Tenant: "t", End: 10e6, Run: 10e6, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: results.Succeeded, Deps: []string{"a", "nope"}},
	}
	if err := results.WriteJobsParquet(filepath.Join(pq, "jobs.parquet"), []results.PolicyJobs{{Policy: "fcfs", Jobs: jobs}}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = brigade(t, "sim", "--quiet", "--no-plots", "--replay", pq, "--cluster", "h200x8", "--out", t.TempDir())
	if want := filepath.Join(pq, "jobs.parquet") + `: field "deps": row 2: job "b" of policy fcfs depends on "nope"`; code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("want %q, got %d %q", want, code, stderr)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	return fh
}

// jobRowV3 is a jobs.parquet row of schema version 3, before cpu_milli,
// memory_mib and deps.
type jobRowV3 struct {
	Policy   string  `parquet:"policy,dict"`
	ID       int32   `parquet:"id"`
	Name     string  `parquet:"name"`
	Tenant   string  `parquet:"tenant,dict"`
	SubmitS  float64 `parquet:"submit_s"`
	StartS   float64 `parquet:"start_s"`
	EndS     float64 `parquet:"end_s"`
	RunS     float64 `parquet:"run_s"`
	JCTS     float64 `parquet:"jct_s"`
	GPUs     int32   `parquet:"gpus"`
	GPUMilli int32   `parquet:"gpu_milli"`
	Attempts int32   `parquet:"attempts"`
	State    string  `parquet:"state,dict"`
	Reason   string  `parquet:"reason,dict"`
}

// A jobs.parquet of schema version 3 (no cpu_milli, memory_mib, deps)
// still reads, with no request and no dependencies, and replays.
func TestReplayReadsSchema3Parquet(t *testing.T) {
	dir := t.TempDir()
	rows := []jobRowV3{
		{Policy: "fcfs", ID: 0, Name: "a", Tenant: "t", EndS: 10, RunS: 10, JCTS: 10, GPUs: 8, GPUMilli: 1000, Attempts: 1, State: "succeeded"},
		{Policy: "fcfs", ID: 1, Name: "b", Tenant: "t", SubmitS: 1, StartS: 10, EndS: 15, RunS: 5, JCTS: 14, GPUs: 8, GPUMilli: 1000, Attempts: 1, State: "succeeded"},
	}
	if err := parquet.WriteFile(filepath.Join(dir, "jobs.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	got, err := readResultJobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Name != "b" || got[1].StartS != 10 || got[1].CPUMilli != 0 || got[1].MemoryMiB != 0 || got[1].Deps != "" || results.SplitDeps(got[1].Deps) != nil {
		t.Fatalf("rows = %+v", got)
	}
	out := filepath.Join(t.TempDir(), "replay")
	if code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--replay", dir, "--cluster", "h200x8", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	jb := readJobs(t, out)
	if g := jb["fcfs/b"]; g.StartS != 10 || g.EndS != 15 || !slices.Contains([]string{"succeeded"}, g.State) {
		t.Errorf("b replayed %+v", g)
	}
}
