package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

// docSchema reads docs/results.md: its schema version and, per Parquet
// file, the documented columns as "name type" (type "double?" when
// nullable), in order.
func docSchema(t *testing.T) (version int, tables map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Schema version: \*\*(\d+)\*\*`).FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/results.md: no \"Schema version: **N**\" line")
	}
	version, _ = strconv.Atoi(string(m[1]))
	tables = map[string][]string{}
	heading := regexp.MustCompile("^### `([a-z]+\\.parquet)`")
	row := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\| ([a-z0-9]+)(, nullable)? \\|")
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		if h := heading.FindStringSubmatch(line); h != nil {
			cur = h[1]
			continue
		}
		if strings.HasPrefix(line, "### ") {
			cur = ""
		}
		if r := row.FindStringSubmatch(line); r != nil && cur != "" {
			typ := r[2]
			if r[3] != "" {
				typ += "?"
			}
			tables[cur] = append(tables[cur], r[1]+" "+typ)
		}
	}
	return version, tables
}

// fileSchema describes an open Parquet file's columns the way docSchema
// does.
func fileSchema(t *testing.T, f *parquet.File) []string {
	t.Helper()
	var cols []string
	for _, field := range f.Schema().Fields() {
		if !field.Leaf() {
			t.Fatalf("column %s is not a leaf", field.Name())
		}
		var typ string
		switch k := field.Type().Kind(); {
		case k == parquet.ByteArray && field.Type().LogicalType() != nil && field.Type().LogicalType().String() == "STRING":
			typ = "string"
		case k == parquet.Int32:
			typ = "int32"
		case k == parquet.Int64:
			typ = "int64"
		case k == parquet.Double:
			typ = "double"
		default:
			t.Fatalf("column %s has undocumented type %v", field.Name(), field.Type())
		}
		switch {
		case field.Optional():
			typ += "?"
		case !field.Required():
			t.Fatalf("column %s is repeated", field.Name())
		}
		cols = append(cols, field.Name()+" "+typ)
	}
	return cols
}

func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

func csvRows(t *testing.T, path string) int {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return len(recs) - 1
}

// jobRow is the test's own reading of jobs.parquet: only the columns the
// recomputation needs, declared here rather than borrowed from the writer.
type jobRow struct {
	Policy   string  `parquet:"policy"`
	ID       int32   `parquet:"id"`
	Submit   float64 `parquet:"submit_s"`
	End      float64 `parquet:"end_s"`
	Wait     float64 `parquet:"wait_s"`
	Run      float64 `parquet:"run_s"`
	JCT      float64 `parquet:"jct_s"`
	GPUs     int32   `parquet:"gpus"`
	GPUMilli int32   `parquet:"gpu_milli"`
	Attempts int32   `parquet:"attempts"`
	State    string  `parquet:"state"`
	Reason   string  `parquet:"reason"`
	Detail   string  `parquet:"reason_detail"`
}

type attemptRow struct {
	Policy  string  `parquet:"policy"`
	ID      int32   `parquet:"id"`
	Attempt int32   `parquet:"attempt"`
	Start   float64 `parquet:"start_s"`
	End     float64 `parquet:"end_s"`
	Wait    float64 `parquet:"wait_s"`
	Run     float64 `parquet:"run_s"`
	Ended   string  `parquet:"ended"`
	Exit    int32   `parquet:"exit_code"`
}

func near6(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }

type tsRow struct {
	Policy    string  `parquet:"policy"`
	Start     float64 `parquet:"bucket_start_s"`
	Covered   float64 `parquet:"covered_s"`
	Allocated float64 `parquet:"allocated_gpus"`
	Capacity  float64 `parquet:"capacity_gpus"`
}

type tenantRow struct {
	Start     float64 `parquet:"bucket_start_s"`
	Policy    string  `parquet:"policy"`
	Tenant    string  `parquet:"tenant"`
	Allocated float64 `parquet:"allocated_gpus"`
	Share     float64 `parquet:"gpu_share"`
	Fair      float64 `parquet:"fair_share"`
}

// TestSimResultsGolden runs the embedded default and checks the results
// files: the Parquet schemas against docs/results.md (columns, types,
// schema version), the row counts against the trace and the CSV twins,
// run.json, and summary.json's values recomputed from jobs.parquet's rows.
func TestSimResultsGolden(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := brigade(t, "sim", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	version, tables := docSchema(t)
	if version != results.SchemaVersion {
		t.Errorf("docs/results.md documents schema version %d, results.SchemaVersion is %d", version, results.SchemaVersion)
	}
	var sums []struct {
		Policy        string  `json:"policy"`
		Seed          uint64  `json:"seed"`
		JobsSubmitted int     `json:"jobs_submitted"`
		JobsSucceeded int     `json:"jobs_succeeded"`
		JobsFailed    int     `json:"jobs_failed"`
		MakespanS     float64 `json:"makespan_s"`
		GPUUtil       float64 `json:"gpu_utilisation"`
		GPUHours      float64 `json:"gpu_hours_allocated"`
		WaitS         struct {
			Mean, P50, P95, P99, Max float64
		} `json:"wait_s"`
		JCTS struct {
			Mean, P99, Max float64
		} `json:"jct_s"`
	}
	sb, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &sums); err != nil {
		t.Fatal(err)
	}
	w, err := workloads.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"jobs.parquet", "attempts.parquet", "timeseries.parquet", "tenants.parquet"} {
		f := openParquet(t, filepath.Join(dir, name))
		if got, want := fileSchema(t, f), tables[name]; !slices.Equal(got, want) {
			t.Errorf("%s columns differ from docs/results.md:\n got %v\nwant %v", name, got, want)
		}
		if v, ok := f.Lookup(results.SchemaVersionKey); !ok || v != strconv.Itoa(version) {
			t.Errorf("%s: metadata %s = %q, %v; want %d", name, results.SchemaVersionKey, v, ok, version)
		}
		twin := strings.TrimSuffix(name, ".parquet") + ".csv"
		if name == "attempts.parquet" {
			continue // no CSV twin; checked against jobs.parquet below
		}
		if got, want := f.NumRows(), int64(csvRows(t, filepath.Join(dir, twin))); got != want {
			t.Errorf("%s has %d rows, %s %d", name, got, twin, want)
		}
		if name == "jobs.parquet" && f.NumRows() != int64(len(sums)*len(w.Jobs)) {
			t.Errorf("jobs.parquet has %d rows, want %d policies × %d jobs", f.NumRows(), len(sums), len(w.Jobs))
		}
	}

	var info results.RunInfo
	rb, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rb, &info); err != nil {
		t.Fatal(err)
	}
	if info.SchemaVersion != version || info.Seed != 1 || info.BrigadeVersion == "" ||
		!slices.Equal(info.Command, []string{"brigade", "sim", "--quiet", "--out", dir}) ||
		len(info.Inputs) != 2 || info.Inputs[0].Role != "trace" || !info.Inputs[0].Embedded ||
		len(info.Inputs[0].SHA256) != 64 || info.Inputs[1].Path != "philly-sample" || !info.Inputs[1].Embedded {
		t.Errorf("run.json is not as expected:\n%s", rb)
	}

	rows, err := parquet.ReadFile[jobRow](filepath.Join(dir, "jobs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := parquet.ReadFile[tsRow](filepath.Join(dir, "timeseries.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := parquet.ReadFile[attemptRow](filepath.Join(dir, "attempts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		policy string
		id     int32
	}
	perJob := map[key]*attemptRow{}
	for k, a := range attempts {
		x := perJob[key{a.Policy, a.ID}]
		if x == nil {
			x = &attemptRow{}
			perJob[key{a.Policy, a.ID}] = x
		}
		if a.Attempt != x.Attempt+1 || math.Abs(a.Run-(a.End-a.Start)) > 1e-6 || a.Exit != -1 || !slices.Contains(results.AttemptEnds(), a.Ended) {
			t.Fatalf("attempts.parquet row %d: %+v (attempt %d expected, run = end − start)", k, a, x.Attempt+1)
		}
		x.Attempt, x.Wait, x.Run, x.End, x.Ended = a.Attempt, x.Wait+a.Wait, x.Run+a.Run, a.End, a.Ended
	}
	reasons := map[string]int{}
	for _, r := range rows {
		// A failed job, and only a failed job, has a reason of the
		// vocabulary and its detail; the default trace's failures all
		// run out of retries.
		if (r.State == "failed") != (r.Reason != "") || (r.Reason == "") != (r.Detail == "") ||
			(r.Reason != "" && !slices.Contains(results.JobReasons(), r.Reason)) {
			t.Fatalf("%s job %d: state %s, reason %q, detail %q", r.Policy, r.ID, r.State, r.Reason, r.Detail)
		}
		reasons[r.Reason]++
		x := perJob[key{r.Policy, r.ID}]
		if x == nil {
			x = &attemptRow{}
		}
		if x.Attempt != r.Attempts || (r.Attempts > 0 && (!near6(x.Wait, r.Wait) || !near6(x.Run, r.Run) || x.End != r.End || x.Ended != r.State)) {
			t.Fatalf("%s job %d: attempts.parquet sums to %+v, jobs.parquet has %+v", r.Policy, r.ID, *x, r)
		}
	}
	if len(reasons) != 1 || reasons[""] != len(rows) {
		t.Errorf("reasons %v: the default run fails no job", reasons)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("%s: recomputed %.9g from jobs.parquet, summary.json has %.9g", what, got, want)
		}
	}
	for _, s := range sums {
		var waits, jcts []float64
		succeeded, failed, n := 0, 0, 0
		first, last, gpuSeconds := math.Inf(1), math.Inf(-1), 0.0
		for _, r := range rows {
			if r.Policy != s.Policy {
				continue
			}
			if r.ID != int32(n) {
				t.Fatalf("%s: row %d has id %d", s.Policy, n, r.ID)
			}
			n++
			switch r.State {
			case "succeeded":
				succeeded++
			case "failed":
				failed++
			}
			first, last = min(first, r.Submit), max(last, r.End)
			if r.Attempts > 0 {
				waits = append(waits, r.Wait)
				jcts = append(jcts, r.JCT)
			}
			if math.Abs(r.JCT-(r.End-r.Submit)) > 1e-6 {
				t.Errorf("%s job %d: jct_s %v != end_s − submit_s", s.Policy, r.ID, r.JCT)
			}
			gpuSeconds += float64(r.GPUs) * float64(r.GPUMilli) / 1000 * r.Run
		}
		if n != s.JobsSubmitted || succeeded != s.JobsSucceeded || failed != s.JobsFailed {
			t.Errorf("%s: %d rows, %d succeeded, %d failed; summary %d, %d, %d", s.Policy, n, succeeded, failed, s.JobsSubmitted, s.JobsSucceeded, s.JobsFailed)
		}
		slices.Sort(waits)
		slices.Sort(jcts)
		// The p-quantile is the smallest observed x[i] with i+1 >= p·n.
		q := func(p float64, x []float64) float64 { return x[int(math.Ceil(p*float64(len(x))))-1] }
		mean := func(x []float64) float64 {
			sum := 0.0
			for _, v := range x {
				sum += v
			}
			return sum / float64(len(x))
		}
		near(s.Policy+" wait_s.mean", mean(waits), s.WaitS.Mean)
		near(s.Policy+" wait_s.p50", q(0.5, waits), s.WaitS.P50)
		near(s.Policy+" wait_s.p95", q(0.95, waits), s.WaitS.P95)
		near(s.Policy+" wait_s.p99", q(0.99, waits), s.WaitS.P99)
		near(s.Policy+" wait_s.max", waits[len(waits)-1], s.WaitS.Max)
		near(s.Policy+" jct_s.mean", mean(jcts), s.JCTS.Mean)
		near(s.Policy+" jct_s.p99", q(0.99, jcts), s.JCTS.P99)
		near(s.Policy+" makespan_s", last-first, s.MakespanS)
		near(s.Policy+" gpu_hours_allocated", gpuSeconds/3600, s.GPUHours)
		capacity := 0.0
		for _, r := range ts {
			if r.Policy == s.Policy {
				capacity = r.Capacity
			}
		}
		near(s.Policy+" gpu_utilisation", gpuSeconds/(capacity*(last-first)), s.GPUUtil)
	}

	// tenants.parquet: every tenant of the workload in every bucket of
	// timeseries.parquet; per bucket the tenants' allocated GPUs sum to the
	// bucket's, so Σ allocated_gpus × covered_s is the policy's GPU-hours;
	// the fair shares are summary.json's.
	tenants, err := parquet.ReadFile[tenantRow](filepath.Join(dir, "tenants.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(tenants), len(ts)*len(w.Tenants); got != want {
		t.Fatalf("tenants.parquet has %d rows, want %d buckets × %d tenants", got, len(ts), len(w.Tenants))
	}
	gpuSeconds := map[string]float64{}
	for i, b := range ts {
		sum := 0.0
		for k, tw := range w.Tenants {
			r := tenants[i*len(w.Tenants)+k]
			if r.Policy != b.Policy || r.Start != b.Start || r.Tenant != tw.Name {
				t.Fatalf("tenants.parquet row %d is %+v, want bucket %v of %s, tenant %s", i*len(w.Tenants)+k, r, b.Start, b.Policy, tw.Name)
			}
			if math.Abs(r.Share*b.Capacity-r.Allocated) > 1e-9*max(1, r.Allocated) {
				t.Errorf("tenants.parquet row %+v: gpu_share × capacity %v != allocated_gpus", r, b.Capacity)
			}
			sum += r.Allocated
			gpuSeconds[r.Policy] += r.Allocated * b.Covered
		}
		if math.Abs(sum-b.Allocated) > 1e-9*max(1, b.Allocated) {
			t.Errorf("%s bucket %v: tenants hold %v GPUs, timeseries.parquet %v", b.Policy, b.Start, sum, b.Allocated)
		}
	}
	for _, s := range sums {
		near(s.Policy+" Σ tenants.parquet allocated_gpus × covered_s", gpuSeconds[s.Policy]/3600, s.GPUHours)
	}
	var fair []struct {
		Policy  string `json:"policy"`
		Tenants []struct {
			Name      string  `json:"tenant"`
			FairShare float64 `json:"fair_share"`
		} `json:"tenants"`
	}
	if err := json.Unmarshal(sb, &fair); err != nil {
		t.Fatal(err)
	}
	for _, s := range fair {
		for _, st := range s.Tenants {
			for _, r := range tenants {
				if r.Policy == s.Policy && r.Tenant == st.Name && math.Abs(r.Fair-st.FairShare) > 1e-12 {
					t.Fatalf("%s tenant %s: fair_share %v in tenants.parquet, %v in summary.json", s.Policy, st.Name, r.Fair, st.FairShare)
				}
			}
		}
	}
}

// TestSimParquetDeterministic: two runs with the same seed write
// byte-identical Parquet files; another seed's placement changes them.
func TestSimParquetDeterministic(t *testing.T) {
	run := func(seed string) map[string][]byte {
		dir := t.TempDir()
		code, _, stderr := brigade(t, "sim", "--quiet", "--out", dir, "--policy", "fcfs,sjf", "--placement", "random", "--seed", seed)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		out := map[string][]byte{}
		for _, f := range []string{"jobs.parquet", "timeseries.parquet"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
		return out
	}
	a, b, c := run("7"), run("7"), run("8")
	for f := range a {
		if !bytes.Equal(a[f], b[f]) {
			t.Errorf("%s differs between two runs with seed 7", f)
		}
	}
	if bytes.Equal(a["jobs.parquet"], c["jobs.parquet"]) {
		t.Errorf("jobs.parquet is the same with seeds 7 and 8 under random placement")
	}
}

// TestSimAttemptsParquetWithFaults: with node failures, retried jobs have
// several rows in attempts.parquet, one per attempt, those the failures
// ended marked hardware_failure, as many as jobs.parquet's
// hardware_failures.
func TestSimAttemptsParquetWithFaults(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := brigade(t, "sim", "--quiet", "--out", dir, "--policy", "fcfs",
		"--retry", "fixed", "--max-retries", "3",
		"--fail", "p100x8-000@3h+30m", "--fail", "p100x8-001@5h+1h", "--fail", "p100x8-002@20h+1h")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type job struct {
		Attempts int32 `parquet:"attempts"`
		HW       int32 `parquet:"hardware_failures"`
	}
	type attempt struct {
		Ended string `parquet:"ended"`
	}
	jobs, err := parquet.ReadFile[job](filepath.Join(dir, "jobs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := parquet.ReadFile[attempt](filepath.Join(dir, "attempts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var sumAttempts, sumHW, hwRows int
	for _, j := range jobs {
		sumAttempts += int(j.Attempts)
		sumHW += int(j.HW)
	}
	for _, a := range attempts {
		if a.Ended == "hardware_failure" {
			hwRows++
		}
	}
	if sumHW == 0 || len(attempts) <= len(jobs) || len(attempts) != sumAttempts || hwRows != sumHW {
		t.Errorf("%d jobs with %d attempts and %d hardware failures; attempts.parquet has %d rows, %d ended by hardware",
			len(jobs), sumAttempts, sumHW, len(attempts), hwRows)
	}
}

// TestSimReasonsWithFaults: with no retries, every job a node failure hits
// fails with reason retries_exhausted and the words of its hardware
// failure, in jobs.parquet and jobs.csv alike; no other job fails, and no
// simulated attempt has an exit code.
func TestSimReasonsWithFaults(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := brigade(t, "sim", "--quiet", "--no-plots", "--out", dir, "--policy", "fcfs", "--retry", "none",
		"--fail", "p100x8-000@3h+30m", "--fail", "p100x8-001@5h+1h")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type job struct {
		ID     int32  `parquet:"id"`
		State  string `parquet:"state"`
		HW     int32  `parquet:"hardware_failures"`
		Reason string `parquet:"reason"`
		Detail string `parquet:"reason_detail"`
	}
	type attempt struct {
		Ended string `parquet:"ended"`
		Exit  int32  `parquet:"exit_code"`
	}
	jobs, err := parquet.ReadFile[job](filepath.Join(dir, "jobs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := parquet.ReadFile[attempt](filepath.Join(dir, "attempts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(filepath.Join(dir, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if len(recs)-1 != len(jobs) {
		t.Fatalf("jobs.csv has %d rows, jobs.parquet %d", len(recs)-1, len(jobs))
	}
	failed := 0
	for i, j := range jobs {
		if j.State == "failed" {
			failed++
			if j.HW != 1 || j.Reason != "retries_exhausted" || !strings.Contains(j.Detail, "lost to a hardware failure, no retries left") {
				t.Errorf("job %d: %+v, want one hardware failure, retries_exhausted and its words", j.ID, j)
			}
		} else if j.HW != 0 || j.Reason != "" || j.Detail != "" {
			t.Errorf("job %d: %+v", j.ID, j)
		}
		if r := recs[1+i]; r[col["reason"]] != j.Reason || r[col["reason_detail"]] != j.Detail {
			t.Errorf("job %d: jobs.csv says %q, %q; jobs.parquet %q, %q", j.ID, r[col["reason"]], r[col["reason_detail"]], j.Reason, j.Detail)
		}
	}
	if failed == 0 {
		t.Error("no job failed: the faults hit nothing")
	}
	for k, a := range attempts {
		if a.Exit != -1 {
			t.Fatalf("attempt row %d: %+v, want exit_code -1", k, a)
		}
	}
}
