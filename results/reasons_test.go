package results

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The vocabulary is written out here, word by word: the files' readers
// (notebooks, DuckDB queries, brigade fidelity) match these strings, so a
// swapped or renamed constant must fail a test.
func TestReasonVocabulary(t *testing.T) {
	for got, want := range map[string]string{
		ReasonRetriesExhausted: "retries_exhausted",
		ReasonDeadline:         "deadline",
		ReasonDependencyFailed: "dependency_failed",
		ReasonUnsatisfiable:    "unsatisfiable",
		AttemptSucceeded:       "succeeded",
		AttemptFailed:          "failed",
		AttemptPreempted:       "preempted",
		AttemptHardwareFailure: "hardware_failure",
		AttemptRunning:         "running",
	} {
		if got != want {
			t.Errorf("constant %q, want %q", got, want)
		}
	}
	if got, want := JobReasons(), []string{"retries_exhausted", "deadline", "dependency_failed", "unsatisfiable"}; !slices.Equal(got, want) {
		t.Errorf("JobReasons() = %q, want %q", got, want)
	}
	if got, want := AttemptEnds(), []string{"succeeded", "failed", "preempted", "hardware_failure", "running"}; !slices.Equal(got, want) {
		t.Errorf("AttemptEnds() = %q, want %q", got, want)
	}
	if NoExitCode != -1 {
		t.Errorf("NoExitCode = %d, want -1", NoExitCode)
	}
	// The attempt ends agree with the job states where they overlap.
	if AttemptSucceeded != string(Succeeded) || AttemptFailed != string(Failed) {
		t.Errorf("attempt ends %q, %q; job states %q, %q", AttemptSucceeded, AttemptFailed, Succeeded, Failed)
	}
}

// reasonJobs: one job per reason and one that succeeded, each with
// attempts whose exit codes cover unknown, zero and non-zero; details
// with a comma, quotes and a newline, which CSV must quote.
func reasonJobs() []PolicyJobs {
	att := func(ended string, code int) AttemptRecord {
		return AttemptRecord{Start: 1 * sec, End: 2 * sec, Nodes: "n0", Ended: ended, ExitCode: code}
	}
	jobs := []JobRecord{
		{ID: 0, Name: "ok", State: Succeeded, Attempts: 2, AttemptLog: []AttemptRecord{att(AttemptFailed, 137), att(AttemptSucceeded, 0)}},
		{ID: 1, Name: "r", State: Failed, Reason: ReasonRetriesExhausted, ReasonDetail: "attempt 2 failed, no retries left",
			Attempts: 2, AttemptLog: []AttemptRecord{att(AttemptHardwareFailure, NoExitCode), att(AttemptFailed, 3)}},
		{ID: 2, Name: "d", State: Failed, Reason: ReasonDeadline, ReasonDetail: "deadline",
			Attempts: 1, AttemptLog: []AttemptRecord{att(AttemptFailed, NoExitCode)}},
		{ID: 3, Name: "dep", State: Failed, Reason: ReasonDependencyFailed, ReasonDetail: "dependency \"train, 3\"\nfailed"},
		{ID: 4, Name: "u", State: Failed, Reason: ReasonUnsatisfiable, ReasonDetail: "unsatisfiable: 16 GPUs"},
		{ID: 5, Name: "p", State: Succeeded, Attempts: 2, AttemptLog: []AttemptRecord{att(AttemptPreempted, NoExitCode),
			{Start: 3 * sec, End: -1, Nodes: "n0", Ended: AttemptRunning, ExitCode: NoExitCode}}},
	}
	return []PolicyJobs{{Policy: "fcfs", Jobs: jobs}}
}

// The reason, reason_detail and exit_code columns round-trip through
// jobs.csv, jobs.parquet and attempts.parquet. The Parquet rows are read
// into the test's own structs, by column name.
func TestReasonColumnsRoundTrip(t *testing.T) {
	runs := reasonJobs()
	jobs := runs[0].Jobs
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
	if n := len(recs[0]); n < 7 || recs[0][n-7] != "reason" || recs[0][n-6] != "reason_detail" {
		t.Errorf("jobs.csv header ends %q, want reason, reason_detail before the schema 4 and 6 columns", recs[0][max(0, n-7):])
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
		if r[col["reason"]] != j.Reason || r[col["reason_detail"]] != j.ReasonDetail || r[col["state"]] != string(j.State) {
			t.Errorf("jobs.csv row %d: state %q reason %q detail %q; want %q %q %q", i, r[col["state"]], r[col["reason"]], r[col["reason_detail"]], j.State, j.Reason, j.ReasonDetail)
		}
	}

	type jobRow struct {
		Name         string `parquet:"name"`
		State        string `parquet:"state"`
		Reason       string `parquet:"reason"`
		ReasonDetail string `parquet:"reason_detail"`
	}
	if err := WriteJobsParquet(filepath.Join(dir, "jobs.parquet"), runs); err != nil {
		t.Fatal(err)
	}
	jr, err := parquet.ReadFile[jobRow](filepath.Join(dir, "jobs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(jr) != len(jobs) {
		t.Fatalf("jobs.parquet has %d rows, want %d", len(jr), len(jobs))
	}
	for i, j := range jobs {
		if want := (jobRow{j.Name, string(j.State), j.Reason, j.ReasonDetail}); jr[i] != want {
			t.Errorf("jobs.parquet row %d = %+v, want %+v", i, jr[i], want)
		}
	}

	type attemptRow struct {
		ID       int32  `parquet:"id"`
		Attempt  int32  `parquet:"attempt"`
		Ended    string `parquet:"ended"`
		ExitCode int32  `parquet:"exit_code"`
	}
	if err := WriteAttemptsParquet(filepath.Join(dir, "attempts.parquet"), runs); err != nil {
		t.Fatal(err)
	}
	ar, err := parquet.ReadFile[attemptRow](filepath.Join(dir, "attempts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var want []attemptRow
	for _, j := range jobs {
		for k, a := range j.AttemptLog {
			want = append(want, attemptRow{j.ID, int32(k + 1), a.Ended, int32(a.ExitCode)})
		}
	}
	if !slices.Equal(ar, want) {
		t.Errorf("attempts.parquet rows\n%+v\nwant\n%+v", ar, want)
	}
	// The literal values, in case the records above and the writer agree
	// on a wrong word.
	if ar[0].ExitCode != 137 || ar[1].ExitCode != 0 || ar[2].ExitCode != -1 || ar[2].Ended != "hardware_failure" || jr[2].Reason != "deadline" || jr[3].Reason != "dependency_failed" {
		t.Errorf("rows %+v / %+v", ar, jr)
	}
}

// A jobs.parquet of schema version 2, without the reason columns, reads
// into JobRow with empty reasons, as brigade fidelity and sim --replay
// read earlier results folders.
func TestJobRowReadsSchema2(t *testing.T) {
	type v2 struct {
		Policy string  `parquet:"policy,dict"`
		ID     int32   `parquet:"id"`
		Name   string  `parquet:"name"`
		State  string  `parquet:"state,dict"`
		EndS   float64 `parquet:"end_s"`
	}
	path := filepath.Join(t.TempDir(), "jobs.parquet")
	if err := writeParquet(path, []v2{{"fcfs", 0, "a", "failed", 1.5}}); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.ReadFile[JobRow](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Name != "a" || rows[0].State != "failed" || rows[0].EndS != 1.5 || rows[0].Reason != "" || rows[0].ReasonDetail != "" {
		t.Errorf("rows = %+v", rows)
	}
}
