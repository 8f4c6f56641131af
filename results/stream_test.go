package results

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// The streamed Parquet writers hand the rows over a batch at a time; the
// files must be the bytes of all the rows written at once, across batch
// boundaries and with the optional cells of every row kept apart.
func TestParquetStreamsTheSameBytes(t *testing.T) {
	jobs := streamJobs()
	runs := []PolicyJobs{{Policy: "a", Jobs: jobs}, {Policy: "b", Jobs: jobs[:parquetBatch-1]}}
	for _, c := range []struct {
		name         string
		stream, once func(string) error
	}{
		{"jobs", func(p string) error { return WriteJobsParquet(p, runs) }, func(p string) error { return writeParquet(p, JobRows(runs)) }},
		{"attempts", func(p string) error { return WriteAttemptsParquet(p, runs) }, func(p string) error { return writeParquet(p, AttemptRows(runs)) }},
	} {
		if !bytes.Equal(writeAndRead(t, c.stream), writeAndRead(t, c.once)) {
			t.Errorf("%s.parquet streamed differs from all its rows written at once", c.name)
		}
	}
}

// JobFiles, fed each policy's records in pieces of any size, writes the
// bytes WriteJobsParquet, WriteAttemptsParquet and WriteJobsCSV write of
// all of them, with every file's mode theirs, and leaves no page buffer
// behind.
func TestJobFilesWriteTheSameBytes(t *testing.T) {
	jobs := streamJobs()
	runs := []PolicyJobs{{Policy: "a", Jobs: jobs}, {Policy: "b", Jobs: jobs[:parquetBatch-1], SlowdownBound: hwmodel.Minute}, {Policy: "c"}}
	for _, piece := range []int{1, 7, parquetBatch, len(jobs)} {
		t.Run(fmt.Sprintf("pieces of %d", piece), func(t *testing.T) {
			dir := t.TempDir()
			f, err := CreateJobFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				for lo := 0; lo < len(r.Jobs); lo += piece {
					part := r
					part.Jobs = r.Jobs[lo:min(lo+piece, len(r.Jobs))]
					if err := f.Add(part); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			assertDir(t, dir, "attempts.parquet", "jobs.csv", "jobs.parquet") // no page buffers left
			for _, c := range []struct {
				name  string
				write func(string) error
			}{
				{"jobs.parquet", func(p string) error { return WriteJobsParquet(p, runs) }},
				{"attempts.parquet", func(p string) error { return WriteAttemptsParquet(p, runs) }},
				{"jobs.csv", func(p string) error { return WriteJobsCSV(p, runs) }},
			} {
				got, err := os.ReadFile(filepath.Join(dir, c.name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, writeAndRead(t, c.write)) {
					t.Errorf("%s differs from the one-shot writer's", c.name)
				}
				if fi, err := os.Stat(filepath.Join(dir, c.name)); err != nil || fi.Mode().Perm() != 0o644 {
					t.Errorf("%s: mode %v (%v), want 0644", c.name, fi.Mode(), err)
				}
			}
		})
	}
}

// streamJobs are records across three Parquet batches, some never ready
// and never run.
func streamJobs() []JobRecord {
	var jobs []JobRecord
	for i := range 3*parquetBatch + 17 {
		j := JobRecord{
			ID: int32(i), Name: fmt.Sprintf("j%d", i), Tenant: "t", Submit: hwmodel.Time(i) * hwmodel.Second,
			Ready: hwmodel.Time(i)*hwmodel.Second + 5, Start: hwmodel.Time(i+1) * hwmodel.Second, End: hwmodel.Time(i+7) * hwmodel.Second,
			Run: 6 * hwmodel.Second, Wait: hwmodel.Time(i % 13), GPUs: 1 + i%4, Attempts: 1, State: Succeeded, Nodes: "n1",
			AttemptLog: []AttemptRecord{{Start: hwmodel.Time(i+1) * hwmodel.Second, End: hwmodel.Time(i+7) * hwmodel.Second, Nodes: "n1", Ended: AttemptSucceeded, ExitCode: NoExitCode}},
		}
		if i%5 == 0 {
			j.Ready, j.Attempts, j.AttemptLog = NotReady, 0, nil
		}
		jobs = append(jobs, j)
	}
	return jobs
}
