package workloads

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// badCase is a fixture that must fail with a ParseError at an exact line
// and field, with a message containing each of msg.
type badCase struct {
	file  string
	line  int
	field string
	msg   []string
}

func checkParseError(t *testing.T, err error, path string, c badCase) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one at line %d field %q", path, c.line, c.field)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %T %v is not a *ParseError", path, err, err)
	}
	if pe.File != path || pe.Line != c.line || pe.Field != c.field {
		t.Errorf("%s: error at %s:%d field %q, want %s:%d field %q (%v)", path, pe.File, pe.Line, pe.Field, path, c.line, c.field, err)
	}
	for _, m := range c.msg {
		if !strings.Contains(pe.Msg, m) {
			t.Errorf("%s: message %q lacks %q", path, pe.Msg, m)
		}
	}
}

func runBadCases(t *testing.T, format string, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", format, c.file)
			w, err := ReadFile(path, format)
			if w != nil {
				t.Errorf("got a workload along with error %v", err)
			}
			checkParseError(t, err, path, c)
		})
	}
}

func mustRead(t *testing.T, path, format string) *Workload {
	t.Helper()
	w, err := ReadFile(path, format)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("workload from %s fails Validate: %v", path, err)
	}
	return w
}

// brief is the part of a job that the reader tests compare.
type brief struct {
	Name, DAG, Tenant string
	Priority          int
	Submit, Duration  float64 // seconds
	Estimate          float64
	Req               hwmodel.Request
	Deps              []int
	Failed, Retries   int
	Source            string
}

func briefs(w *Workload) []brief {
	var out []brief
	for _, j := range w.Jobs {
		out = append(out, brief{j.Name, j.DAG, j.Tenant, j.Priority, j.Submit.Seconds(), j.Duration.Seconds(), j.Estimate.Seconds(),
			j.Req, j.Deps, j.FailedAttempts, j.MaxRetries, j.Source})
	}
	return out
}

func compareJobs(t *testing.T, w *Workload, want []brief, tenants []Tenant) {
	t.Helper()
	got := briefs(w)
	if len(got) != len(want) {
		t.Fatalf("got %d jobs, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("job %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if !reflect.DeepEqual(w.Tenants, tenants) {
		t.Errorf("tenants %v, want %v", w.Tenants, tenants)
	}
}

func whole(n int) hwmodel.Request { return hwmodel.Request{GPUs: n, GPUMilli: 1000} }

func TestReadPhillyGood(t *testing.T) {
	const p = "testdata/philly/good.csv"
	w := mustRead(t, p, "philly")
	compareJobs(t, w, []brief{
		{Name: "philly-3", Tenant: "11cb48", Submit: 0, Duration: 3600.5, Req: whole(8), Source: p + ":3"},
		{Name: "philly-2", Tenant: "6214e9", Submit: 10, Duration: 120, Req: whole(1), Source: p + ":2"},
		{Name: "philly-4", Tenant: "unknown", Submit: 10, Duration: 60, Req: whole(2), Source: p + ":4"},
		{Name: "philly-5", Tenant: "6214e9", Submit: 7200, Duration: 1, Req: whole(1), Source: p + ":5"},
	}, []Tenant{{"11cb48", 1}, {"6214e9", 1}, {"unknown", 1}})
}

func TestReadPhillyBad(t *testing.T) {
	runBadCases(t, "philly", []badCase{
		{"bad-missing-column.csv", 1, "num_gpus", []string{`"num_gpus" is missing`, "timestamp,duration,gpu_time,cluster"}},
		{"bad-number.csv", 3, "duration", []string{"want a number of seconds", `"12O.0"`}},
		{"bad-negative-duration.csv", 4, "duration", []string{"> 0", "-5.0"}},
		{"bad-zero-duration.csv", 2, "duration", []string{"> 0", "0.0"}},
		{"bad-nan.csv", 2, "duration", []string{"want a number of seconds", "NaN"}},
		{"bad-timestamp.csv", 2, "timestamp", []string{"want a UTC time", "2017-13-03"}},
		{"bad-gpus.csv", 3, "num_gpus", []string{"want an integer in 1..", `"1.5"`}},
		{"bad-zero-gpus.csv", 2, "num_gpus", []string{"want an integer in 1..", "found 0"}},
		{"bad-fields.csv", 3, "", []string{"want 5 fields", "found 4"}},
		{"bad-quote.csv", 2, "", []string{"malformed CSV"}},
		{"bad-empty.csv", 1, "", []string{"want a header line", "timestamp, duration, num_gpus, cluster"}},
	})
}

func TestReadOpenBGood(t *testing.T) {
	const p = "testdata/openb/good.csv"
	w := mustRead(t, p, "openb")
	v100s, err := hwmodel.ParseModelSet("V100-16GB|V100-32GB")
	if err != nil {
		t.Fatal(err)
	}
	compareJobs(t, w, []brief{
		{Name: "pod-a", Tenant: "LS", Priority: 2, Submit: 0, Duration: 1000, Req: hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 12000, MemoryMiB: 16384}, Source: p + ":2"},
		{Name: "pod-b", Tenant: "BE", Submit: 50, Duration: 200, Req: hwmodel.Request{GPUs: 1, GPUMilli: 460, CPUMilli: 6000, MemoryMiB: 12288}, Source: p + ":3"},
		{Name: "pod-c", Tenant: "Burstable", Priority: 1, Submit: 60, Duration: 100, Req: hwmodel.Request{CPUMilli: 4000, MemoryMiB: 8192}, Source: p + ":4"},
		{Name: "pod-d", Tenant: "LS", Priority: 2, Submit: 60, Duration: 860, Req: hwmodel.Request{GPUs: 8, GPUMilli: 1000, CPUMilli: 32000, MemoryMiB: 65536, Models: v100s}, Failed: 1, Source: p + ":5"},
		// pod-e on line 6 is Pending: skipped.
		{Name: "pod-f", Tenant: "Guaranteed", Submit: 100, Duration: 300, Req: hwmodel.Request{GPUs: 2, GPUMilli: 1000, CPUMilli: 8000, MemoryMiB: 16384}, Source: p + ":7"},
		{Name: "pod-g", Tenant: "BE", Submit: 200, Duration: 1, Req: hwmodel.Request{GPUs: 1, GPUMilli: 1000, CPUMilli: 1000}, Source: p + ":8"},
	}, []Tenant{{"LS", 1}, {"BE", 1}, {"Burstable", 1}, {"Guaranteed", 1}})
}

func TestReadOpenBBad(t *testing.T) {
	runBadCases(t, "openb", []badCase{
		{"bad-missing-column.csv", 1, "deletion_time", []string{`"deletion_time" is missing`, "pod_phase,creation_time,scheduled_time"}},
		{"bad-multigpu-format.csv", 1, "creation_time", []string{"no times", "cannot be replayed in time", "brigade fill"}},
		{"bad-missing-qos.csv", 1, "qos", []string{`"qos" is missing`}},
		{"bad-number.csv", 3, "cpu_milli", []string{"want an integer", `"12k"`}},
		{"bad-negative-duration.csv", 3, "deletion_time", []string{"after the scheduled_time 100", "found 90"}},
		{"bad-unknown-model.csv", 2, "gpu_spec", []string{`unknown GPU model "G9"`, "V100-16GB"}},
		{"bad-duplicate-name.csv", 4, "name", []string{`"pod-a" is already used`, "testdata/openb/bad-duplicate-name.csv:2"}},
		{"bad-shared-multi.csv", 2, "gpu_milli", []string{"num_gpu 2", "found 500"}},
		{"bad-num-gpu.csv", 2, "num_gpu", []string{"0..8", "found 9"}},
		{"bad-phase.csv", 2, "pod_phase", []string{"Succeeded, Running, Failed, Pending", `"Evicted"`}},
	})
}

func TestReadBrigadeGood(t *testing.T) {
	const p = "testdata/brigade/good.csv"
	w := mustRead(t, p, "brigade")
	fast, err := hwmodel.ParseModelSet("A100-80GB|H100-80GB")
	if err != nil {
		t.Fatal(err)
	}
	v100, _ := hwmodel.ParseModelSet("V100-32GB")
	compareJobs(t, w, []brief{
		{Name: "train-a", Tenant: "nlp", Priority: 2, Submit: 0, Duration: 3600.5, Req: whole(8), Source: p + ":4"},
		{Name: "tiny", Tenant: "nlp", Priority: -1, Submit: 5, Duration: 0.5, Req: hwmodel.Request{GPUs: 1, GPUMilli: 100, Models: v100}, Deps: []int{0}, Source: p + ":9"},
		{Name: "train-b", Tenant: "vision", Priority: 1, Submit: 10, Duration: 600, Estimate: 900,
			Req: hwmodel.Request{GPUs: 4, GPUMilli: 1000, CPUMilli: 16000, MemoryMiB: 65536, Models: fast}, Failed: 1, Retries: 2, Source: p + ":3"},
		{Name: "etl", DAG: "pipe", Tenant: "default", Submit: 30, Duration: 60, Req: hwmodel.Request{CPUMilli: 4000, MemoryMiB: 8192}, Source: p + ":6"},
		{Name: "fit", DAG: "pipe", Tenant: "default", Submit: 30, Duration: 1200, Req: hwmodel.Request{GPUs: 1, GPUMilli: 500}, Deps: []int{3}, Source: p + ":7"},
		{Name: "report", DAG: "pipe", Tenant: "default", Submit: 30, Duration: 30, Req: hwmodel.Request{GPUs: 1, GPUMilli: 250}, Deps: []int{3, 4}, Source: p + ":8"},
	}, []Tenant{{"nlp", 1}, {"vision", 1}, {"default", 1}})
}

func TestReadBrigadeBad(t *testing.T) {
	runBadCases(t, "brigade", []badCase{
		{"bad-missing-column.csv", 1, "duration_s", []string{`"duration_s" is missing`, "name,submit_s,gpus,tenant"}},
		{"bad-unknown-column.csv", 1, "walltime", []string{`unknown column "walltime"`, "name, submit_s, duration_s, gpus, tenant"}},
		{"bad-duplicate-column.csv", 1, "name", []string{"appears twice"}},
		{"bad-number.csv", 3, "gpus", []string{"want an integer", `"two"`}},
		{"bad-negative-duration.csv", 5, "duration_s", []string{"> 0", "-10"}},
		{"bad-negative-submit.csv", 2, "submit_s", []string{"want seconds in [0,", "-1"}},
		{"bad-unknown-model.csv", 2, "gpu_models", []string{`unknown GPU model "Z900"`}},
		{"bad-gpu-milli.csv", 2, "gpu_milli", []string{"1000 or empty", "2 GPUs", `"500"`}},
		{"bad-cycle.csv", 2, "deps", []string{"dependency cycle", `"a" (testdata/brigade/bad-cycle.csv:2) -> "c" (testdata/brigade/bad-cycle.csv:4) -> "b" (testdata/brigade/bad-cycle.csv:3) -> "a"`}},
		{"bad-duplicate-name.csv", 4, "name", []string{`"a" is already used by the job at testdata/brigade/bad-duplicate-name.csv:2`}},
		{"bad-unknown-dep.csv", 3, "deps", []string{`"b" depends on "zz"`, "no job has that name"}},
		{"bad-dep-later.csv", 2, "deps", []string{`"a" (submitted at 0 s) depends on "b"`, "bad-dep-later.csv:3", "submitted later, at 5 s"}},
		{"bad-self-dep.csv", 2, "deps", []string{`"a" depends on itself`}},
	})
}

func TestReadTenants(t *testing.T) {
	ts, err := ReadTenantWeights("testdata/tenants/good.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Tenant{{"nlp", 2}, {"vision", 0.5}, {"idle", 3}}
	if !reflect.DeepEqual(ts, want) {
		t.Fatalf("got %v, want %v", ts, want)
	}
	// Weights reach the workload; a tenant without jobs is kept at the end.
	w := mustRead(t, "testdata/brigade/good.csv", "brigade")
	if err := w.ApplyTenantWeights(ts); err != nil {
		t.Fatal(err)
	}
	wantT := []Tenant{{"nlp", 2}, {"vision", 0.5}, {"default", 1}, {"idle", 3}}
	if !reflect.DeepEqual(w.Tenants, wantT) {
		t.Fatalf("tenants %v, want %v", w.Tenants, wantT)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []badCase{
		{"bad-weight.csv", 3, "weight", []string{"> 0", `"0"`}},
		{"bad-duplicate.csv", 3, "tenant", []string{`"nlp" already has a weight on line 2`}},
	} {
		path := filepath.Join("testdata", "tenants", c.file)
		_, err := ReadTenantWeights(path)
		checkParseError(t, err, path, c)
	}
}

func TestReadFileErrors(t *testing.T) {
	if _, err := ReadFile("testdata/philly/good.csv", "pbs"); err == nil || !strings.Contains(err.Error(), "want philly, openb, brigade, pollux or swf") {
		t.Errorf("unknown format: got %v", err)
	}
	if _, err := ReadFile("testdata/nope.csv", "philly"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want a not-exist error", err)
	}
}

func TestReadFileGzip(t *testing.T) {
	raw, err := os.ReadFile("testdata/philly/good.csv")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(raw)
	z.Close()
	dir := t.TempDir()
	gz := filepath.Join(dir, "good.csv.gz")
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	w := mustRead(t, gz, "philly")
	plain := mustRead(t, "testdata/philly/good.csv", "philly")
	if len(w.Jobs) != len(plain.Jobs) || w.Jobs[0].Duration != plain.Jobs[0].Duration {
		t.Errorf("gzip read differs from plain read")
	}
	if w.Jobs[0].Source != gz+":3" {
		t.Errorf("source %q, want %q", w.Jobs[0].Source, gz+":3")
	}
	// Truncated gzip: a ParseError, not a panic or a silent short read.
	bad := filepath.Join(dir, "bad.csv.gz")
	os.WriteFile(bad, b.Bytes()[:b.Len()-6], 0o644)
	_, err = ReadFile(bad, "philly")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != bad {
		t.Errorf("truncated gzip: got %v, want a ParseError for %s", err, bad)
	}
	notGz := filepath.Join(dir, "plain.csv.gz")
	os.WriteFile(notGz, raw, 0o644)
	if _, err := ReadFile(notGz, "philly"); !errors.As(err, &pe) || !strings.Contains(pe.Msg, "gzip") {
		t.Errorf("plain file named .gz: got %v", err)
	}
}

func TestDefault(t *testing.T) {
	w, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 3621 {
		t.Errorf("Default has %d jobs, want 3621", len(w.Jobs))
	}
	if w.Jobs[0].Submit != 0 {
		t.Errorf("first submit %v, want 0", w.Jobs[0].Submit)
	}
	// 2017-10-16 00:02:04 to 2017-10-17 23:59:19.
	if got, want := w.Jobs[len(w.Jobs)-1].Submit, hwmodel.Time(2*86400-124-41)*hwmodel.Second; got != want {
		t.Errorf("last submit %v s, want %v s", got.Seconds(), want.Seconds())
	}
	if !strings.HasPrefix(w.Jobs[0].Source, DefaultFile+":") {
		t.Errorf("source %q", w.Jobs[0].Source)
	}
}

// A header with a byte-order mark, odd case and spaces, and CRLF line ends.
func TestReadBrigadeBOMAndCRLF(t *testing.T) {
	const p = "testdata/brigade/good-bom-crlf.csv"
	w := mustRead(t, p, "brigade")
	compareJobs(t, w, []brief{{Name: "a", Tenant: "default", Duration: 1, Req: whole(1), Source: p + ":2"}},
		[]Tenant{{"default", 1}})
}
