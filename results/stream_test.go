package results

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// The streamed Parquet writers hand the rows over a batch at a time; the
// files must be the bytes of all the rows written at once, across batch
// boundaries and with the optional cells of every row kept apart.
func TestParquetStreamsTheSameBytes(t *testing.T) {
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
