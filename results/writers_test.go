package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
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
		t.Fatalf("%v (run go test ./results -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is intended, rerun with -update and review the diff.\ngot:\n%s", path, got)
	}
}

// writeAndRead runs write on a file in a fresh directory and returns its
// bytes, checking that nothing else (no temporary file) is left there.
func writeAndRead(t *testing.T, write func(path string) error) []byte {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	assertDir(t, dir, "out")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

func goldenRuns() []Summary {
	hand := Summarize(handInput())
	empty := Summarize(RunInput{Policy: "empty", Cluster: "none", Workload: "none"})
	return []Summary{hand, empty}
}

func TestSummaryJSONGolden(t *testing.T) {
	b := writeAndRead(t, func(p string) error { return WriteSummaryJSON(p, goldenRuns()) })
	golden(t, "summary.golden.json", b)
}

// The documented key list, in order: a rename or reorder must show up here
// as well as in the golden file.
var summaryKeys = []string{
	"policy", "seed", "cluster", "workload",
	"jobs_submitted", "jobs_succeeded", "jobs_failed", "makespan_s",
	"wait_s", "jct_s", "bounded_slowdown",
	"throughput_jobs_per_h", "gpu_utilisation", "gpu_utilisation_arrivals", "gpu_frag_ratio", "gpu_hours_allocated",
	"mig_slice_utilisation", "mig_fragmentation", "mig_reconfigurations", "mig_reconfig_gpu_s",
	"faults", "retries", "jobs_failed_hardware", "lost_gpu_hours", "checkpoint_gpu_hours", "goodput", "down_gpu_hours",
	"queue_length", "starvation", "tenants", "jain_index", "jain_index_slowdown", "littles_law", "events",
}

var nestedKeys = map[string][]string{
	"wait_s":           {"mean", "p50", "p95", "p99", "max"},
	"jct_s":            {"mean", "p50", "p95", "p99", "max"},
	"bounded_slowdown": {"mean", "p50", "p95", "p99", "max"},
	"queue_length":     {"mean", "max"},
	"starvation":       {"threshold_s", "starved_jobs", "longest_wait_s", "longest_wait_job"},
	"littles_law":      {"mean_in_system", "throughput_per_s", "mean_time_in_system_s", "rel_error"},
	"tenants":          {"tenant", "weight", "jobs", "gpu_hours", "share", "fair_share", "share_over_fair", "mean_wait_s", "max_wait_s", "mean_bounded_slowdown"},
}

// objectKeys returns the keys of the JSON object in raw, in document order.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestSummaryJSONKeys(t *testing.T) {
	b, err := json.Marshal(goldenRuns())
	if err != nil {
		t.Fatal(err)
	}
	var objs []json.RawMessage
	if err := json.Unmarshal(b, &objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if got := objectKeys(t, o); !slices.Equal(got, summaryKeys) {
			t.Errorf("keys = %q\nwant   %q", got, summaryKeys)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(o, &fields); err != nil {
			t.Fatal(err)
		}
		for k, want := range nestedKeys {
			raw := fields[k]
			if k == "tenants" {
				var ts []json.RawMessage
				if err := json.Unmarshal(raw, &ts); err != nil {
					t.Fatalf("tenants: %v in %s", err, raw)
				}
				if len(ts) == 0 {
					continue
				}
				raw = ts[0]
			}
			if got := objectKeys(t, raw); !slices.Equal(got, want) {
				t.Errorf("%s keys = %q, want %q", k, got, want)
			}
		}
	}
	// A key reads the way the docs say.
	var runs []struct {
		WaitS struct{ P99 float64 } `json:"wait_s"`
	}
	if err := json.Unmarshal(b, &runs); err != nil || runs[0].WaitS.P99 != 50 {
		t.Errorf("wait_s.p99 = %+v, %v; want 50", runs, err)
	}
}

func TestSummaryJSONEmptyList(t *testing.T) {
	b := writeAndRead(t, func(p string) error { return WriteSummaryJSON(p, nil) })
	if string(b) != "[]\n" {
		t.Errorf("nil runs wrote %q, want \"[]\\n\"", b)
	}
}

func TestJobsCSVGolden(t *testing.T) {
	jobs := handJobs()
	jobs[0].Name, jobs[0].DAG, jobs[0].Nodes, jobs[0].Priority = "train, \"big\"", "pipeline-1", "n0+n1", 3
	jobs[2].GPUMilli = 500 // a shared GPU
	jobs[2].Submit += 1    // sub-second times print exactly: 10.000001
	jobs[3].Reason, jobs[3].ReasonDetail = ReasonRetriesExhausted, "attempt 1 failed, no retries left"
	jobs[4].Reason, jobs[4].ReasonDetail = ReasonDependencyFailed, "dependency \"x, y\" failed"
	jobs[4].Ready = NotReady                           // its parent failed: ready_s is empty
	jobs[1].CPUMilli, jobs[1].MemoryMiB = 16000, 65536 // a request of CPU and memory
	jobs[4].Deps = []string{"train, \"big\"", "j"}     // two parents: deps joined by ';'
	runs := []PolicyJobs{
		{Policy: "fcfs", Jobs: jobs},
		{Policy: "sjf", Jobs: jobs[:2], SlowdownBound: 200 * hwmodel.Second},
	}
	b := writeAndRead(t, func(p string) error { return WriteJobsCSV(p, runs) })
	golden(t, "jobs.golden.csv", b)
	if first, _, _ := strings.Cut(string(b), "\n"); first != strings.Join(JobsCSVHeader, ",") {
		t.Errorf("header %q", first)
	}
	if n := strings.Count(string(b), "\n"); n != 1+len(jobs)+2 {
		t.Errorf("%d lines, want %d", n, 1+len(jobs)+2)
	}
}

func TestTimeseriesCSVGolden(t *testing.T) {
	steps := []obs{
		{5 * sec, State{Queued: 2, Running: 1, InSystem: 3, AllocatedMilli: 1000}},
		{15 * sec, State{Queued: 1, Running: 2, InSystem: 3, AllocatedMilli: 2000}},
		{30 * sec, State{}},
	}
	runs := []PolicyTimeline{
		{Policy: "fcfs", Timeline: feed(NewTimeline(10*sec, 4000), steps, 40*sec)},
		{Policy: "none", Timeline: nil},
		{Policy: "sjf", Timeline: timelineFromJobs(handJobs(), 4000, -1)},
	}
	b := writeAndRead(t, func(p string) error { return WriteTimeseriesCSV(p, runs) })
	golden(t, "timeseries.golden.csv", b)
}

func TestFormatSeconds(t *testing.T) {
	cases := []struct {
		t    hwmodel.Time
		want string
	}{
		{0, "0.000000"},
		{1, "0.000001"},
		{1_500_000, "1.500000"},
		{-1, "-0.000001"},
		{-2_000_001, "-2.000001"},
		{hwmodel.Day, "86400.000000"},
		{-9223372036854775808, "-9223372036854.775808"},
	}
	for _, c := range cases {
		if got := FormatSeconds(c.t); got != c.want {
			t.Errorf("FormatSeconds(%d) = %q, want %q", c.t, got, c.want)
		}
	}
}

func TestAtomicWriteFile(t *testing.T) {
	boom := errors.New("boom")
	t.Run("failed write leaves nothing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "summary.json")
		err := AtomicWriteFile(path, func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("half-written ", 10000)) // more than the buffer
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want boom", err)
		}
		assertDir(t, dir)
	})
	t.Run("failed write keeps the old file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "summary.json")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AtomicWriteFile(path, func(w io.Writer) error { io.WriteString(w, "new"); return boom }); !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("file now %q, want old", b)
		}
		assertDir(t, dir, "summary.json")
	})
	t.Run("panicking write leaves nothing", func(t *testing.T) {
		dir := t.TempDir()
		func() {
			defer func() { recover() }()
			AtomicWriteFile(filepath.Join(dir, "x"), func(w io.Writer) error { panic("oops") })
		}()
		assertDir(t, dir)
	})
	t.Run("missing directory", func(t *testing.T) {
		if err := AtomicWriteFile(filepath.Join(t.TempDir(), "no", "x"), func(io.Writer) error { return nil }); err == nil {
			t.Error("no error")
		}
	})
	t.Run("success replaces, mode 0644", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.csv")
		os.WriteFile(path, []byte("old"), 0o600)
		if err := AtomicWriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if string(b) != "new" || fi.Mode().Perm() != 0o644 {
			t.Errorf("content %q mode %v", b, fi.Mode().Perm())
		}
		assertDir(t, dir, "f.csv")
	})
	t.Run("relative path", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		if err := AtomicWriteFile("rel.txt", func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
			t.Fatal(err)
		}
		assertDir(t, dir, "rel.txt")
	})
}
