package live

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/brigadesim/brigade/results"
)

// TestExportReady: ready_s is the submission for a job without
// dependencies, the first queueing for one whose dependencies succeeded,
// and null for one whose dependency failed (it never became ready).
func TestExportReady(t *testing.T) {
	att := func(queued, start, end int64, exit int) AttemptRecord {
		return AttemptRecord{Queued: queued, Start: start, End: end, GPUs: []int{0}, Milli: 1000, Exit: exit}
	}
	recs := []*Record{
		{ID: 0, Spec: JobSpec{Name: "a", Command: "x", GPUs: 1}, State: Succeeded, Attempt: 1, Submit: 1e6, Start: 1e6, End: 3e6,
			Attempts: []AttemptRecord{att(1e6, 1e6, 3e6, 0)}},
		{ID: 1, Spec: JobSpec{Name: "b", Command: "x", GPUs: 1, Deps: []string{"a"}}, State: Succeeded, Attempt: 1, Submit: 1e6, Queued: 3e6, Start: 3e6, End: 4e6,
			Attempts: []AttemptRecord{att(3e6, 3e6, 4e6, 0)}},
		{ID: 2, Spec: JobSpec{Name: "bad", Command: "x", GPUs: 1}, State: Failed, Attempt: 1, Submit: 1e6, Start: 4e6, End: 5e6, Exit: 3,
			Attempts: []AttemptRecord{att(1e6, 4e6, 5e6, 3)}},
		{ID: 3, Spec: JobSpec{Name: "child", Command: "x", GPUs: 1, Deps: []string{"bad"}}, State: Failed, Submit: 1e6, End: 5e6,
			DepFailed: true, Reason: ReasonDependencyPrefix + "bad failed"},
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := Export(recs, ExportOptions{Policy: "fcfs", GPUs: FakeGPUs(1), Now: 6e6}, out); err != nil {
		t.Fatal(err)
	}
	jobs, err := parquet.ReadFile[results.JobRow](filepath.Join(out, "jobs.parquet"))
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%v %v", jobs, err)
	}
	want := []float64{1, 3, 1, -1} // -1: null
	for i, j := range jobs {
		got := -1.0
		if j.ReadyS != nil {
			got = *j.ReadyS
		}
		if got != want[i] {
			t.Errorf("%s: ready_s %v, want %v (-1: null)", j.Name, got, want[i])
		}
	}
}
