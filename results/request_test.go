package results

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The cpu_milli, memory_mib and deps columns (schema version 4) round-trip
// through jobs.csv and jobs.parquet: the request as written, the
// dependencies joined by ';' and split back by SplitDeps. The Parquet rows
// are read into the test's own struct, by column name, and the column
// types are checked (int64, int64, string).
func TestRequestAndDepsColumnsRoundTrip(t *testing.T) {
	jobs := []JobRecord{
		{ID: 0, Name: "etl", State: Succeeded, Attempts: 1, CPUMilli: 150000, MemoryMiB: 1 << 20},
		{ID: 1, Name: "fit, v2", State: Succeeded, Attempts: 1, GPUs: 1, GPUMilli: 500, CPUMilli: 8000, Deps: []string{"etl"}},
		{ID: 2, Name: "report", State: Failed, Reason: ReasonDependencyFailed, MemoryMiB: 3_000_000_000_000, Deps: []string{"etl", "fit, v2"}},
		{ID: 3, Name: "gpu-only", State: Succeeded, Attempts: 1, GPUs: 8, GPUMilli: 1000, Deps: []string{}},
	}
	runs := []PolicyJobs{{Policy: "fcfs", Jobs: jobs}}
	dir := t.TempDir()

	csvPath := filepath.Join(dir, "jobs.csv")
	if err := WriteJobsCSV(csvPath, runs); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recs[0]); !slices.Equal(recs[0][n-5:], []string{"cpu_milli", "memory_mib", "deps", "preemptions", "preempt_lost_s"}) {
		t.Errorf("jobs.csv header ends %q, want cpu_milli, memory_mib, deps, then the schema 6 columns last", recs[0][max(0, n-5):])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if len(recs) != 1+len(jobs) {
		t.Fatalf("jobs.csv has %d rows, want %d", len(recs)-1, len(jobs))
	}
	for i, j := range jobs {
		r := recs[1+i]
		cpu, err1 := strconv.ParseInt(r[col["cpu_milli"]], 10, 64)
		mem, err2 := strconv.ParseInt(r[col["memory_mib"]], 10, 64)
		if err1 != nil || err2 != nil || cpu != j.CPUMilli || mem != j.MemoryMiB {
			t.Errorf("jobs.csv row %d: cpu_milli %q memory_mib %q, want %d %d", i, r[col["cpu_milli"]], r[col["memory_mib"]], j.CPUMilli, j.MemoryMiB)
		}
		if got := SplitDeps(r[col["deps"]]); !slices.Equal(got, j.Deps) && (len(got) != 0 || len(j.Deps) != 0) {
			t.Errorf("jobs.csv row %d: deps %q, want %q", i, r[col["deps"]], j.Deps)
		}
	}
	if got := recs[3][col["deps"]]; got != "etl;fit, v2" {
		t.Errorf("jobs.csv deps %q, want \"etl;fit, v2\"", got)
	}
	if got := recs[4][col["deps"]]; got != "" {
		t.Errorf("jobs.csv deps of a job without any %q, want empty", got)
	}

	type jobRow struct {
		Name      string `parquet:"name"`
		CPUMilli  int64  `parquet:"cpu_milli"`
		MemoryMiB int64  `parquet:"memory_mib"`
		Deps      string `parquet:"deps"`
	}
	pq := filepath.Join(dir, "jobs.parquet")
	if err := WriteJobsParquet(pq, runs); err != nil {
		t.Fatal(err)
	}
	jr, err := parquet.ReadFile[jobRow](pq)
	if err != nil {
		t.Fatal(err)
	}
	if len(jr) != len(jobs) {
		t.Fatalf("jobs.parquet has %d rows, want %d", len(jr), len(jobs))
	}
	for i, j := range jobs {
		if want := (jobRow{j.Name, j.CPUMilli, j.MemoryMiB, JoinDeps(j.Deps)}); jr[i] != want {
			t.Errorf("jobs.parquet row %d = %+v, want %+v", i, jr[i], want)
		}
	}
	fh2, err := os.Open(pq)
	if err != nil {
		t.Fatal(err)
	}
	defer fh2.Close()
	st, _ := fh2.Stat()
	f, err := parquet.OpenFile(fh2, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]parquet.Kind{"cpu_milli": parquet.Int64, "memory_mib": parquet.Int64, "deps": parquet.ByteArray} {
		c, ok := f.Schema().Lookup(name)
		if !ok || c.Node.Type().Kind() != kind || !c.Node.Required() {
			t.Errorf("jobs.parquet column %s: %v, want a required %v", name, c.Node, kind)
		}
	}
	if v, _ := f.Lookup(SchemaVersionKey); v != strconv.Itoa(SchemaVersion) || SchemaVersion < 4 {
		t.Errorf("schema version %q, want %d (4 added these columns)", v, SchemaVersion)
	}
}

func TestSplitDeps(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{{"", nil}, {"  ", nil}, {"a", []string{"a"}}, {"a;b c", []string{"a", "b c"}}, {" a ; b ", []string{"a", "b"}}} {
		if got := SplitDeps(c.in); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("SplitDeps(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := JoinDeps(nil); got != "" {
		t.Errorf("JoinDeps(nil) = %q", got)
	}
	if got := JoinDeps(SplitDeps("a;b")); got != "a;b" {
		t.Errorf("JoinDeps(SplitDeps(a;b)) = %q", got)
	}
}
