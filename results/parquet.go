package results

import (
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/brigadesim/brigade/hwmodel"
)

// SchemaVersion is the version of the results schema that docs/results.md
// documents: the columns of jobs.parquet, attempts.parquet,
// timeseries.parquet and tenants.parquet and the keys of run.json. It is written in each Parquet file's key-value metadata under
// SchemaVersionKey and in run.json. Bump it when a column is renamed,
// removed or changes type or unit (adding a column at the end is compatible
// but still bumps it, so readers can tell).
const SchemaVersion = 6

// SchemaVersionKey is the Parquet key-value metadata key holding
// SchemaVersion.
const SchemaVersionKey = "brigade.schema_version"

// JobRow is one row of jobs.parquet: one job of one policy's run. Times are
// seconds (float64, from integer microseconds); ReadyS is null for a job
// that never became ready (JobRecord.Ready is NotReady) and BoundedSlowdown
// for a job that never ran. The engine keeps per-job outcomes only, so a job
// retried after a failure or preemption is one row whose Attempts counts
// its attempts, and Wait and Run are summed over them. Reason is one of
// the job reasons of reasons.go ("" for a job that succeeded), and
// ReasonDetail the driver's words for it. CPUMilli and MemoryMiB are the
// job's request; Deps names the jobs it waits for, joined by ';'
// (JoinDeps; SplitDeps reads it back), "" for none.
type JobRow struct {
	Policy           string   `parquet:"policy,dict"`
	ID               int32    `parquet:"id"`
	Name             string   `parquet:"name"`
	DAG              string   `parquet:"dag,dict"`
	Tenant           string   `parquet:"tenant,dict"`
	Priority         int32    `parquet:"priority"`
	SubmitS          float64  `parquet:"submit_s"`
	ReadyS           *float64 `parquet:"ready_s,optional"`
	StartS           float64  `parquet:"start_s"`
	EndS             float64  `parquet:"end_s"`
	WaitS            float64  `parquet:"wait_s"`
	RunS             float64  `parquet:"run_s"`
	JCTS             float64  `parquet:"jct_s"`
	BoundedSlowdown  *float64 `parquet:"bounded_slowdown,optional"`
	GPUs             int32    `parquet:"gpus"`
	GPUMilli         int32    `parquet:"gpu_milli"`
	Nodes            string   `parquet:"nodes"`
	Attempts         int32    `parquet:"attempts"`
	State            string   `parquet:"state,dict"`
	MIGProfile       string   `parquet:"mig_profile,dict"`
	HardwareFailures int32    `parquet:"hardware_failures"`
	LostS            float64  `parquet:"lost_s"`
	CheckpointS      float64  `parquet:"checkpoint_s"`
	Reason           string   `parquet:"reason,dict"`
	ReasonDetail     string   `parquet:"reason_detail"`
	CPUMilli         int64    `parquet:"cpu_milli"`
	MemoryMiB        int64    `parquet:"memory_mib"`
	Deps             string   `parquet:"deps"`
	Preemptions      int32    `parquet:"preemptions"`
	PreemptLostS     float64  `parquet:"preempt_lost_s"`
}

// AttemptRow is one row of attempts.parquet: one attempt of one job of one
// policy's run (JobRecord.AttemptLog). A job that never ran has no row.
// Ended is one of the attempt ends of reasons.go; ExitCode is the
// process's exit code, NoExitCode (-1) when unknown or not applicable.
type AttemptRow struct {
	Policy   string  `parquet:"policy,dict"`
	ID       int32   `parquet:"id"`
	Attempt  int32   `parquet:"attempt"`
	StartS   float64 `parquet:"start_s"`
	EndS     float64 `parquet:"end_s"`
	WaitS    float64 `parquet:"wait_s"`
	RunS     float64 `parquet:"run_s"`
	Nodes    string  `parquet:"nodes"`
	Ended    string  `parquet:"ended,dict"`
	ExitCode int32   `parquet:"exit_code"`
}

// AttemptRows converts every run's attempt logs to attempts.parquet rows:
// runs in the order given, jobs in each run's order, attempts in order
// (numbered from 1). run_s is End − Start, 0 for an attempt still running.
func AttemptRows(runs []PolicyJobs) []AttemptRow {
	var rows []AttemptRow
	eachAttemptRow(runs, func(r *AttemptRow) error { rows = append(rows, *r); return nil })
	return rows
}

// eachAttemptRow hands emit AttemptRows(runs) one row at a time, in their
// order; the row is emit's only until it returns. It stops at emit's
// first error.
func eachAttemptRow(runs []PolicyJobs, emit func(*AttemptRow) error) error {
	var row AttemptRow
	for _, r := range runs {
		for i := range r.Jobs {
			j := &r.Jobs[i]
			for k, a := range j.AttemptLog {
				run := a.End - a.Start
				if a.End < 0 {
					run = 0
				}
				row = AttemptRow{
					Policy: r.Policy, ID: j.ID, Attempt: int32(k + 1),
					StartS: Seconds(a.Start), EndS: Seconds(a.End), WaitS: Seconds(a.Wait), RunS: Seconds(run),
					Nodes: a.Nodes, Ended: a.Ended, ExitCode: int32(a.ExitCode),
				}
				if err := emit(&row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// WriteAttemptsParquet writes AttemptRows(runs) to path, atomically, as
// Zstd compressed Parquet (see writeParquet), without holding them all.
func WriteAttemptsParquet(path string, runs []PolicyJobs) error {
	return writeParquetRows(path, func(emit func(*AttemptRow) error) error { return eachAttemptRow(runs, emit) })
}

// TimeseriesRow is one row of timeseries.parquet: one time bucket of one
// policy's run (Timeline.Buckets). The means are over the part of the
// bucket the run covered (CoveredS).
type TimeseriesRow struct {
	Policy              string  `parquet:"policy,dict"`
	BucketStartS        float64 `parquet:"bucket_start_s"`
	BucketWidthS        float64 `parquet:"bucket_width_s"`
	CoveredS            float64 `parquet:"covered_s"`
	QueueLength         float64 `parquet:"queue_length"`
	RunningJobs         float64 `parquet:"running_jobs"`
	AllocatedGPUs       float64 `parquet:"allocated_gpus"`
	CapacityGPUs        float64 `parquet:"capacity_gpus"`
	GPUUtilisation      float64 `parquet:"gpu_utilisation"`
	GPUFragRatio        float64 `parquet:"gpu_frag_ratio"`
	MIGSliceUtilisation float64 `parquet:"mig_slice_utilisation"`
	MIGFragmentation    float64 `parquet:"mig_fragmentation"`
	DownGPUs            float64 `parquet:"down_gpus"`
}

// TenantRow is one row of tenants.parquet: one tracked tenant in one time
// bucket of one policy's run (Timeline.TenantShares).
type TenantRow struct {
	BucketStartS  float64 `parquet:"bucket_start_s"`
	Policy        string  `parquet:"policy,dict"`
	Tenant        string  `parquet:"tenant,dict"`
	AllocatedGPUs float64 `parquet:"allocated_gpus"`
	GPUShare      float64 `parquet:"gpu_share"`
	FairShare     float64 `parquet:"fair_share"`
}

// TenantRows converts every run's per-tenant series to tenants.parquet
// rows, in the order of tenants.csv: runs in the order given, buckets in
// time order, tenants in the workload's order. A nil Timeline, or one that
// tracks no tenants, contributes no rows.
func TenantRows(runs []PolicyTimeline) []TenantRow {
	var rows []TenantRow
	for _, r := range runs {
		if r.Timeline == nil {
			continue
		}
		for _, ts := range r.Timeline.TenantShares() {
			rows = append(rows, TenantRow{
				BucketStartS: Seconds(ts.Start), Policy: r.Policy, Tenant: ts.Tenant,
				AllocatedGPUs: ts.AllocatedGPUs, GPUShare: ts.GPUShare, FairShare: ts.FairShare,
			})
		}
	}
	return rows
}

// WriteTenantsParquet writes TenantRows(runs) to path, atomically, as Zstd
// compressed Parquet (see writeParquet).
func WriteTenantsParquet(path string, runs []PolicyTimeline) error {
	return writeParquet(path, TenantRows(runs))
}

// Seconds converts run time in microseconds to float64 seconds.
func Seconds(t hwmodel.Time) float64 { return float64(t) / 1e6 }

// JobRows converts every run's job records to jobs.parquet rows, runs in
// the order given and jobs in the order of each run's slice (the order of
// jobs.csv).
func JobRows(runs []PolicyJobs) []JobRow {
	n := 0
	for _, r := range runs {
		n += len(r.Jobs)
	}
	rows := make([]JobRow, 0, n)
	// The optional cells point into one array, not an allocation each.
	opt := make([]float64, 2*n)
	eachJobRow(runs, func(row *JobRow) error {
		row.keepOptional(opt[2*len(rows):])
		rows = append(rows, *row)
		return nil
	})
	return rows
}

// keepOptional moves the row's optional cells into into[0] and into[1],
// so that they outlive the buffer eachJobRow reuses for the next row.
func (row *JobRow) keepOptional(into []float64) {
	if row.ReadyS != nil {
		into[0] = *row.ReadyS
		row.ReadyS = &into[0]
	}
	if row.BoundedSlowdown != nil {
		into[1] = *row.BoundedSlowdown
		row.BoundedSlowdown = &into[1]
	}
}

// eachJobRow hands emit JobRows(runs) one row at a time, in their order;
// the row, and the cells its pointers point to, are emit's only until it
// returns. It stops at emit's first error.
func eachJobRow(runs []PolicyJobs, emit func(*JobRow) error) error {
	var (
		row         JobRow
		ready, slow float64
	)
	for _, r := range runs {
		for i := range r.Jobs {
			j := &r.Jobs[i]
			row = JobRow{
				Policy: r.Policy, ID: j.ID, Name: j.Name, DAG: j.DAG, Tenant: j.Tenant, Priority: int32(j.Priority),
				SubmitS: Seconds(j.Submit), StartS: Seconds(j.Start), EndS: Seconds(j.End),
				WaitS: Seconds(j.Wait), RunS: Seconds(j.Run), JCTS: Seconds(j.End - j.Submit),
				GPUs: int32(j.GPUs), GPUMilli: j.GPUMilli, Nodes: j.Nodes,
				Attempts: int32(j.Attempts), State: string(j.State), MIGProfile: j.MIGProfile,
				HardwareFailures: int32(j.HardwareFailures), LostS: Seconds(j.Lost), CheckpointS: Seconds(j.Checkpoint),
				Reason: j.Reason, ReasonDetail: j.ReasonDetail,
				CPUMilli: j.CPUMilli, MemoryMiB: j.MemoryMiB, Deps: JoinDeps(j.Deps),
				Preemptions: int32(min(j.Preemptions, 1<<31-1)), PreemptLostS: Seconds(j.PreemptLost),
			}
			if j.Ready >= 0 {
				ready = Seconds(j.Ready)
				row.ReadyS = &ready
			}
			if j.Attempts > 0 {
				slow = BoundedSlowdown(*j, r.SlowdownBound)
				row.BoundedSlowdown = &slow
			}
			if err := emit(&row); err != nil {
				return err
			}
		}
	}
	return nil
}

// TimeseriesRows converts every run's buckets to timeseries.parquet rows,
// in the order of timeseries.csv; a nil Timeline contributes no rows.
func TimeseriesRows(runs []PolicyTimeline) []TimeseriesRow {
	var rows []TimeseriesRow
	for _, r := range runs {
		if r.Timeline == nil {
			continue
		}
		capGPUs := float64(r.Timeline.CapacityMilli()) / 1000
		for _, b := range r.Timeline.Buckets() {
			rows = append(rows, TimeseriesRow{
				Policy: r.Policy, BucketStartS: Seconds(b.Start), BucketWidthS: Seconds(b.Width), CoveredS: Seconds(b.Covered),
				QueueLength: b.QueueLength, RunningJobs: b.RunningJobs,
				AllocatedGPUs: b.GPUUtilisation * capGPUs, CapacityGPUs: capGPUs,
				GPUUtilisation: b.GPUUtilisation, GPUFragRatio: b.GPUFragmentation,
				MIGSliceUtilisation: b.MIGSliceUtilisation, MIGFragmentation: b.MIGFragmentation,
				DownGPUs: b.DownGPUs,
			})
		}
	}
	return rows
}

// WriteJobsParquet writes JobRows(runs) to path, atomically, as Zstd
// compressed Parquet (see writeParquet), without holding them all.
func WriteJobsParquet(path string, runs []PolicyJobs) error {
	return AtomicWriteFile(path, func(w io.Writer) error {
		p := newJobParquetRows(w)
		for _, r := range runs {
			if err := p.add(r); err != nil {
				return err
			}
		}
		return p.close()
	})
}

// jobParquetRows writes jobs.parquet's rows a policy's records at a time.
type jobParquetRows struct {
	rows *parquetRows[JobRow]
	// A batched row's optional cells must outlive eachJobRow's next row:
	// they point into opt, at the row's place in its batch (the batch is
	// written out every parquetBatch rows).
	opt []float64
	n   int
}

func newJobParquetRows(w io.Writer, options ...parquet.WriterOption) *jobParquetRows {
	return &jobParquetRows{rows: newParquetRows[JobRow](w, options...), opt: make([]float64, 2*parquetBatch)}
}

func (p *jobParquetRows) add(r PolicyJobs) error {
	return eachJobRow([]PolicyJobs{r}, func(row *JobRow) error {
		row.keepOptional(p.opt[2*(p.n%parquetBatch):])
		p.n++
		return p.rows.add(row)
	})
}

func (p *jobParquetRows) close() error { return p.rows.close() }

// WriteTimeseriesParquet writes TimeseriesRows(runs) to path, atomically,
// as Zstd compressed Parquet (see writeParquet).
func WriteTimeseriesParquet(path string, runs []PolicyTimeline) error {
	return writeParquet(path, TimeseriesRows(runs))
}

// writeParquet writes rows as one Parquet file: Zstd compression, a fixed
// created_by and SchemaVersion in the key-value metadata, and nothing that
// varies between runs (no timestamps, no random ids, no build information),
// so the same rows give the same bytes.
func writeParquet[T any](path string, rows []T) error {
	return writeParquetRows(path, func(emit func(*T) error) error {
		for i := range rows {
			if err := emit(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// parquetBatch is how many rows writeParquetRows hands the Parquet writer
// at a time: the writer cuts pages by their buffered size, not by the
// calls that fill them, so the batch changes no byte of the file, and a
// batch of rows is all the memory the rows themselves take.
const parquetBatch = 1024

// writeParquetRows is writeParquet of the rows each emits, in their order,
// copied a batch at a time (parquetBatch) instead of all held at once.
func writeParquetRows[T any](path string, each func(emit func(*T) error) error) error {
	return AtomicWriteFile(path, func(w io.Writer) error {
		p := newParquetRows[T](w)
		if err := each(p.add); err != nil {
			return err
		}
		return p.close()
	})
}

// parquetRows writes one Parquet file (writeParquet's) of the rows added,
// in their order, copying them a batch at a time.
type parquetRows[T any] struct {
	pw    *parquet.GenericWriter[T]
	batch []T
}

// With options, the writer takes them too (JobFiles' page buffers).
func newParquetRows[T any](w io.Writer, options ...parquet.WriterOption) *parquetRows[T] {
	return &parquetRows[T]{
		pw: parquet.NewGenericWriter[T](w, append([]parquet.WriterOption{
			parquet.Compression(&zstd.Codec{Level: zstd.DefaultLevel, Concurrency: 1}),
			parquet.CreatedBy("brigade", "results-schema-"+strconv.Itoa(SchemaVersion), ""),
			parquet.KeyValueMetadata(SchemaVersionKey, strconv.Itoa(SchemaVersion)),
		}, options...)...),
		batch: make([]T, 0, parquetBatch),
	}
}

// add copies row; what its pointers point to must stay as it is until
// the batch is written (jobParquetRows keeps the optional cells apart).
func (p *parquetRows[T]) add(row *T) error {
	p.batch = append(p.batch, *row)
	if len(p.batch) == cap(p.batch) {
		return p.flush()
	}
	return nil
}

func (p *parquetRows[T]) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	_, err := p.pw.Write(p.batch)
	clear(p.batch) // drop the strings the rows point to
	p.batch = p.batch[:0]
	return err
}

// close writes the last batch and the file's footer.
func (p *parquetRows[T]) close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.pw.Close()
}
