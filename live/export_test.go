package live

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	bolt "go.etcd.io/bbolt"

	"github.com/brigadesim/brigade/results"
)

// exportSpecs are real sleep jobs on 2 GPUs: whole, pairs, shared halves,
// and one that fails its first attempt and succeeds on its retry.
func exportSpecs() []JobSpec {
	return []JobSpec{
		{Name: "a", Command: "sleep", Args: []string{"0.3"}, GPUs: 1},
		{Name: "pair", Command: "sleep", Args: []string{"0.2"}, GPUs: 2, Tenant: "bob"},
		{Name: "half1", Command: "sleep", Args: []string{"0.2"}, GPUMilli: 500},
		{Name: "half2", Command: "sleep", Args: []string{"0.2"}, GPUMilli: 500},
		{Name: "flaky", Command: `[ "$BRIGADE_ATTEMPT" -ge 2 ] || exit 7; sleep 0.2`, Shell: true, GPUs: 1, Retries: 1},
		{Name: "pair2", Command: "sleep", Args: []string{"0.2"}, GPUs: 2, Tenant: "bob"},
	}
}

func runReal(t *testing.T, dir string, specs []JobSpec) []*Record {
	t.Helper()
	d, err := Open(Config{GPUs: FakeGPUs(2), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Tick: 10 * time.Millisecond, ExitWhenDone: true, Backoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()
	recs, err := ReadState(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestExportLiveRun(t *testing.T) {
	dir := t.TempDir()
	recs := runReal(t, dir, exportSpecs())
	for _, r := range recs {
		want := 1
		if r.Spec.Name == "flaky" {
			want = 2
		}
		if r.State != Succeeded || len(r.Attempts) != want {
			t.Fatalf("%s: state %s, %d attempts %+v", r.Spec.Name, r.State, len(r.Attempts), r.Attempts)
		}
	}
	out := filepath.Join(dir, "out")
	if err := ExportState(filepath.Join(dir, "state.db"), ExportOptions{Command: []string{"brigade", "live"}}, out); err != nil {
		t.Fatal(err)
	}
	for _, f := range ExportFiles {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	jobs, err := parquet.ReadFile[results.JobRow](filepath.Join(out, "jobs.parquet"))
	if err != nil || len(jobs) != 6 {
		t.Fatalf("jobs.parquet: %d rows, %v", len(jobs), err)
	}
	byName := map[string]results.JobRow{}
	for _, j := range jobs {
		byName[j.Name] = j
		if j.Policy != "fcfs" || j.State != "succeeded" || j.Nodes != ExportNode {
			t.Errorf("%s: %+v", j.Name, j)
		}
		if math.Abs(j.JCTS-(j.EndS-j.SubmitS)) > 1e-6 || j.StartS < j.SubmitS || j.EndS < j.StartS+0.19 {
			t.Errorf("%s: times %+v", j.Name, j)
		}
		if j.BoundedSlowdown == nil || *j.BoundedSlowdown != 1 { // JCT < 10 s
			t.Errorf("%s: bounded slowdown %v", j.Name, j.BoundedSlowdown)
		}
	}
	if f := byName["flaky"]; f.Attempts != 2 || f.LostS <= 0 || f.LostS > 0.15 || f.RunS < f.LostS+0.19 {
		t.Errorf("flaky: %+v", f)
	}
	if p := byName["pair"]; p.GPUs != 2 || p.GPUMilli != 1000 || p.Tenant != "bob" {
		t.Errorf("pair: %+v", p)
	}
	if h := byName["half1"]; h.GPUs != 1 || h.GPUMilli != 500 || h.Tenant != "default" {
		t.Errorf("half1: %+v", h)
	}
	atts, err := parquet.ReadFile[results.AttemptRow](filepath.Join(out, "attempts.parquet"))
	if err != nil || len(atts) != 7 {
		t.Fatalf("attempts.parquet: %d rows, %v", len(atts), err)
	}
	var ended []string
	for _, a := range atts {
		if a.ID == byName["flaky"].ID {
			ended = append(ended, a.Ended)
		}
	}
	if strings.Join(ended, ",") != "failed,succeeded" {
		t.Errorf("flaky attempts ended %v", ended)
	}
	// summary.json: utilisation is the attempts' GPU time over makespan × 2 GPUs.
	var sums []results.Summary
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sums); err != nil || len(sums) != 1 {
		t.Fatalf("summary.json: %v", err)
	}
	var gpuS, first, last float64
	first = math.Inf(1)
	for _, a := range atts {
		j := jobs[a.ID]
		gpuS += a.RunS * float64(j.GPUs) * float64(j.GPUMilli) / 1000
	}
	for _, j := range jobs {
		first, last = min(first, j.SubmitS), max(last, j.EndS)
	}
	s := sums[0]
	if s.Policy != "fcfs" || s.JobsSucceeded != 6 || s.Cluster != ExportCluster || math.Abs(s.MakespanS-(last-first)) > 1e-6 {
		t.Errorf("summary %+v", s)
	}
	if u := gpuS / (2 * (last - first)); math.Abs(s.GPUUtilisation-u) > 1e-3 {
		t.Errorf("gpu_utilisation %v, want %v", s.GPUUtilisation, u)
	}
	// events.csv: time order, and one submit, start and end per attempt.
	fh, _ := os.Open(filepath.Join(out, "events.csv"))
	rows, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || strings.Join(rows[0], ",") != strings.Join(EventsCSVHeader, ",") {
		t.Fatalf("events.csv: %v %v", rows, err)
	}
	count := map[string]int{}
	prev := -1.0
	for _, r := range rows[1:] {
		count[r[4]]++
		tm := atof(r[0])
		if tm < prev {
			t.Errorf("events.csv out of order at %v", r)
		}
		prev = tm
		if r[2] == "flaky" && r[4] == "end" && r[3] == "1" && r[7] != "7" {
			t.Errorf("flaky first end: %v", r)
		}
	}
	if count["submit"] != 6 || count["start"] != 7 || count["end"] != 7 || count["retry"] != 1 || count["gpu_down"] != 0 {
		t.Errorf("events: %v", count)
	}
	// run.json names the cluster spec written beside it.
	var info struct {
		results.RunInfo
		Live struct {
			Policy string `json:"policy"`
			GPUs   []GPU  `json:"gpus"`
		} `json:"live"`
	}
	b, _ = os.ReadFile(filepath.Join(out, "run.json"))
	if err := json.Unmarshal(b, &info); err != nil || info.Live.Policy != "fcfs" || len(info.Live.GPUs) != 2 || info.Live.GPUs[1].UUID != "GPU-fake-0001" {
		t.Fatalf("run.json: %s %v", b, err)
	}
	if in := info.Inputs[len(info.Inputs)-1]; in.Role != "cluster" || in.Path != filepath.Join(out, "cluster.yaml") {
		t.Errorf("run.json cluster input %+v", in)
	}
	// Exporting again replaces the folder.
	if err := ExportState(filepath.Join(dir, "state.db"), ExportOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 { // state.db, logs, out
		t.Errorf("left in %s: %v", dir, ents)
	}
}

func atof(s string) float64 {
	var x float64
	_ = json.Unmarshal([]byte(s), &x)
	return x
}

func TestExportErrorsLeaveNoFolder(t *testing.T) {
	dir := t.TempDir()
	recs := []*Record{{ID: 0, Spec: JobSpec{Name: "x", Command: "true", GPUs: 1}, State: Succeeded, Attempt: 1, Start: 10, End: 20,
		GPUs: []int{0}, Milli: 1000, Attempts: []AttemptRecord{{Start: 10, End: 20, GPUs: []int{0}, Milli: 1000}}}}
	opt := ExportOptions{Policy: "fcfs", GPUs: FakeGPUs(1)}
	for k := range 10 {
		exportFault = func(i int) error {
			if i == k {
				return errors.New("disk full")
			}
			return nil
		}
		out := filepath.Join(dir, "out")
		if err := Export(recs, opt, out); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("fault after file %d: %v", k, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("fault after file %d left %v", k, ents)
		}
	}
	// An existing folder stays as it was.
	exportFault = nil
	out := filepath.Join(dir, "out")
	if err := Export(recs, opt, out); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "jobs.csv"))
	exportFault = func(int) error { return errors.New("disk full") }
	defer func() { exportFault = nil }()
	if err := Export(recs[:0], opt, out); err == nil {
		t.Fatal("no error")
	}
	after, _ := os.ReadFile(filepath.Join(out, "jobs.csv"))
	if string(before) != string(after) || len(before) == 0 {
		t.Errorf("jobs.csv changed: %q -> %q", before, after)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left %v", ents)
	}
	if err := Export(recs, ExportOptions{Policy: "nope", GPUs: FakeGPUs(1)}, filepath.Join(dir, "o2")); err == nil {
		t.Error("unknown policy exported")
	}
}

// A state file written before Record had Attempts still loads and exports:
// the last attempt is rebuilt from the record's own fields.
func TestExportOldStateFile(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(filepath.Join(dir, "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	var ep [8]byte
	old := `{"id":0,"spec":{"name":"j","command":"true","gpus":1},"state":"succeeded","attempt":2,"submit":0,"queued":1000000,` +
		`"start":1500000,"end":3500000,"gpus":[0],"milli":1000,"pid":0,"pidstart":0,"exit":0,"runs":2}`
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bMeta).Put([]byte("epoch"), ep[:]); err != nil {
			return err
		}
		return tx.Bucket(bJobs).Put(key(0), []byte(old))
	})
	s.db.Close()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadState(filepath.Join(dir, "old.db"))
	if err != nil || len(recs) != 1 || recs[0].Attempts != nil {
		t.Fatalf("%v %v", recs, err)
	}
	out := filepath.Join(dir, "out")
	if err := ExportState(filepath.Join(dir, "old.db"), ExportOptions{}, out); err == nil || !strings.Contains(err.Error(), "policy") {
		t.Fatalf("no policy: %v", err)
	}
	if err := ExportState(filepath.Join(dir, "old.db"), ExportOptions{Policy: "sjf", GPUs: FakeGPUs(1)}, out); err != nil {
		t.Fatal(err)
	}
	jobs, err := parquet.ReadFile[results.JobRow](filepath.Join(out, "jobs.parquet"))
	if err != nil || len(jobs) != 1 || jobs[0].Attempts != 1 || jobs[0].StartS != 1.5 || jobs[0].RunS != 2 || jobs[0].WaitS != 0.5 {
		t.Errorf("%+v %v", jobs, err)
	}
}

// Attempts that the health checks end (a GPU down) are hardware failures
// in the export, with a gpu_down line in events.csv.
func TestExportGPUDown(t *testing.T) {
	dir := t.TempDir()
	fh := NewFakeHealth(2)
	d := openHealthDriver(t, dir, FakeGPUs(2), fh)
	d.Submit([]JobSpec{
		{Name: "retry", Command: `[ "$BRIGADE_ATTEMPT" = 1 ] && exec sleep 30; exit 0`, Shell: true, GPUMilli: 500, Retries: 1},
		{Name: "once", Command: "sleep", Args: []string{"30"}, GPUMilli: 500},
	})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	fh.Lose(0, "NVML GetUtilizationRates: GPU is lost")
	run(t, d)
	d.Close()
	out := filepath.Join(dir, "out")
	if err := ExportState(filepath.Join(dir, "state.db"), ExportOptions{}, out); err != nil {
		t.Fatal(err)
	}
	jobs, err := parquet.ReadFile[results.JobRow](filepath.Join(out, "jobs.parquet"))
	if err != nil || len(jobs) != 2 {
		t.Fatalf("%v %v", jobs, err)
	}
	if r, o := jobs[0], jobs[1]; r.State != "succeeded" || r.Attempts != 2 || r.HardwareFailures != 1 ||
		o.State != "failed" || o.Attempts != 1 || o.HardwareFailures != 1 || o.LostS != o.RunS {
		t.Errorf("jobs %+v", jobs)
	}
	atts, _ := parquet.ReadFile[results.AttemptRow](filepath.Join(out, "attempts.parquet"))
	var ended []string
	for _, a := range atts {
		ended = append(ended, a.Ended)
	}
	if strings.Join(ended, ",") != "hardware_failure,succeeded,hardware_failure" {
		t.Errorf("attempts ended %v", ended)
	}
	b, _ := os.ReadFile(filepath.Join(out, "events.csv"))
	if n := strings.Count(string(b), ",gpu_down,0,500,-1,GPU 0 GPU-fake-0000 down: "); n != 2 {
		t.Errorf("%d gpu_down lines in\n%s", n, b)
	}
}

// Jobs still queued or running when the run stops are cut at opt.Now.
func TestExportCutsUnfinishedJobs(t *testing.T) {
	dir := t.TempDir()
	recs := []*Record{
		{ID: 0, Spec: JobSpec{Name: "run", Command: "x", GPUs: 1}, State: Running, Attempt: 2, Submit: 0, Queued: 3e6, Start: 4e6,
			GPUs: []int{0}, Milli: 1000, Attempts: []AttemptRecord{{Queued: 0, Start: 1e6, End: 3e6, GPUs: []int{0}, Milli: 1000, Exit: 1}}},
		{ID: 1, Spec: JobSpec{Name: "wait", Command: "x", GPUs: 1}, State: Queued, Submit: 2e6, Queued: 2e6},
	}
	out := filepath.Join(dir, "out")
	if err := Export(recs, ExportOptions{Policy: "fcfs", GPUs: FakeGPUs(1), Now: 10e6}, out); err != nil {
		t.Fatal(err)
	}
	jobs, err := parquet.ReadFile[results.JobRow](filepath.Join(out, "jobs.parquet"))
	if err != nil || len(jobs) != 2 {
		t.Fatalf("%v %v", jobs, err)
	}
	r, w := jobs[0], jobs[1]
	if r.State != "running" || r.Attempts != 2 || r.StartS != 1 || r.EndS != 10 || r.RunS != 2 || r.WaitS != 2 || r.LostS != 2 {
		t.Errorf("running job %+v", r)
	}
	if w.State != "queued" || w.Attempts != 0 || w.StartS != 10 || w.EndS != 10 || w.BoundedSlowdown != nil {
		t.Errorf("queued job %+v", w)
	}
	atts, _ := parquet.ReadFile[results.AttemptRow](filepath.Join(out, "attempts.parquet"))
	if len(atts) != 2 || atts[0].Ended != "failed" || atts[1].Ended != "running" || atts[1].EndS != -0.000001 || atts[1].RunS != 0 {
		t.Errorf("attempts %+v", atts)
	}
	var sums []results.Summary
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if json.Unmarshal(b, &sums) != nil || sums[0].JobsSucceeded != 0 || sums[0].JobsFailed != 0 || sums[0].JobsSubmitted != 2 {
		t.Errorf("summary %s", b)
	}
	// The timeline runs to Now: GPU 0 held 1-3 s and 4-10 s.
	ts, _ := parquet.ReadFile[results.TimeseriesRow](filepath.Join(out, "timeseries.parquet"))
	if len(ts) != 1 || math.Abs(ts[0].CoveredS-10) > 1e-9 || math.Abs(ts[0].AllocatedGPUs-0.8) > 1e-9 {
		t.Errorf("timeseries %+v", ts)
	}
}

// Export replaces only a folder an earlier export wrote (or an empty or
// missing one): a folder holding anything else is refused, untouched, with
// an error naming it and what it holds.
func TestExportRefusesForeignFolder(t *testing.T) {
	dir := t.TempDir()
	recs := []*Record{{ID: 0, Spec: JobSpec{Name: "x", Command: "true"}, State: Succeeded, Attempt: 1, Start: 10, End: 20,
		Attempts: []AttemptRecord{{Start: 10, End: 20}}}}
	opt := ExportOptions{Policy: "fcfs", GPUs: FakeGPUs(1)}
	mine := filepath.Join(dir, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(mine, "notes.txt")
	if err := os.WriteFile(notes, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Export(recs, opt, mine)
	if err == nil || !strings.Contains(err.Error(), mine) || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Export over a folder with notes.txt: %v; want a refusal naming the folder and the file", err)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "precious" {
		t.Fatalf("notes.txt: %q %v", b, err)
	}
	// An earlier export, even one a report was added to, is replaced; so
	// is an empty folder.
	out := filepath.Join(dir, "out")
	if err := Export(recs, opt, out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "report.html"), []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Export(recs, opt, out); err != nil {
		t.Errorf("replacing an earlier export: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if err := Export(recs, opt, empty); err != nil {
		t.Errorf("exporting into an empty folder: %v", err)
	}
	// A run.json that Brigade did not write is no marker.
	fake := filepath.Join(dir, "fake")
	os.Mkdir(fake, 0o755)
	os.WriteFile(filepath.Join(fake, "run.json"), []byte(`{"name": "mine"}`), 0o644)
	if err := Export(recs, opt, fake); err == nil {
		t.Errorf("a folder with a foreign run.json was replaced")
	}
	if _, err := os.Stat(filepath.Join(fake, "run.json")); err != nil {
		t.Errorf("foreign run.json: %v", err)
	}
}

// The state file and the job file are never inside what an export
// replaces, even when that folder is an earlier export or is "." .
func TestExportStateKeepsItsInputs(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	d.Submit([]JobSpec{{Name: "a", Command: "true"}})
	run(t, d)
	d.Close()
	state := filepath.Join(dir, "state.db")
	jobs := filepath.Join(dir, "jobs.yaml")
	os.WriteFile(jobs, []byte("jobs: []\n"), 0o644)
	for _, out := range []string{dir, filepath.Join(dir, ".")} {
		err := ExportState(state, ExportOptions{JobsFile: jobs}, out)
		if err == nil || !strings.Contains(err.Error(), "state.db") {
			t.Errorf("export to %s, which holds the state file: %v; want a refusal naming it", out, err)
		}
		if _, err := os.Stat(state); err != nil {
			t.Fatalf("state file: %v", err)
		}
	}
	// An earlier export that the job file was moved into stays too.
	out := filepath.Join(dir, "out")
	if err := ExportState(state, ExportOptions{}, out); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(out, "jobs.yaml")
	os.Rename(jobs, inside)
	if err := ExportState(state, ExportOptions{JobsFile: inside}, out); err == nil {
		t.Errorf("export replaced the folder holding its job file")
	}
	if _, err := os.Stat(inside); err != nil {
		t.Errorf("job file: %v", err)
	}
}
