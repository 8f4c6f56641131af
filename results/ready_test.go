package results

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestReadyNeverReady: a job that never became ready (its parent failed)
// has no ready_s: an empty cell in jobs.csv and null in jobs.parquet, as
// bounded_slowdown is for a job that never ran; a job ready at time 0
// keeps its 0.
func TestReadyNeverReady(t *testing.T) {
	s := hwmodel.Second
	jobs := []JobRecord{
		{ID: 0, Name: "parent", Tenant: "a", Ready: 0, Start: 0, End: 10 * s, Run: 10 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Failed, Reason: ReasonRetriesExhausted},
		{ID: 1, Name: "child", Tenant: "a", Ready: NotReady, Start: 10 * s, End: 10 * s, GPUs: 1, GPUMilli: 1000, State: Failed, Reason: ReasonDependencyFailed, Deps: []string{"parent"}},
		{ID: 2, Name: "late", Tenant: "a", Submit: 5 * s, Ready: 7 * s, Start: 7 * s, End: 9 * s, Run: 2 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Succeeded},
	}
	runs := []PolicyJobs{{Policy: "fcfs", Jobs: jobs}}
	dir := t.TempDir()
	csvPath, pqPath := filepath.Join(dir, "jobs.csv"), filepath.Join(dir, "jobs.parquet")
	if err := WriteJobsCSV(csvPath, runs); err != nil {
		t.Fatal(err)
	}
	if err := WriteJobsParquet(pqPath, runs); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := -1
	for i, h := range strings.Split(lines[0], ",") {
		if h == "ready_s" {
			col = i
		}
	}
	wantCSV := []string{"0.000000", "", "7.000000"}
	for i, want := range wantCSV {
		// No cell before ready_s holds a comma in these rows.
		if got := strings.Split(lines[1+i], ",")[col]; got != want {
			t.Errorf("jobs.csv job %d: ready_s %q, want %q", i, got, want)
		}
	}

	rows, err := parquet.ReadFile[JobRow](pqPath)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range wantCSV {
		got := "null"
		if rows[i].ReadyS != nil {
			got = strconv.FormatFloat(*rows[i].ReadyS, 'f', 6, 64)
		}
		if want == "" {
			want = "null"
		}
		if got != want {
			t.Errorf("jobs.parquet job %d: ready_s %s, want %s", i, got, want)
		}
	}
	fh, err := os.Open(pqPath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	c, ok := f.Schema().Lookup("ready_s")
	if !ok || !c.Node.Optional() || c.Node.Type().Kind() != parquet.Double {
		t.Errorf("jobs.parquet ready_s: %v, want an optional double", c.Node)
	}
	// Version 5 made ready_s nullable (6 added the preemption columns).
	if v, _ := f.Lookup(SchemaVersionKey); v != "6" || SchemaVersion != 6 {
		t.Errorf("schema version %q (SchemaVersion %d), want 6", v, SchemaVersion)
	}
}
