// Package results turns a run into numbers: per-job records (JobRecord), the
// cluster's state over time (Timeline), one Summary per policy (Summarize),
// and the files and table that report them (WriteSummaryJSON, WriteJobsCSV,
// WriteTimeseriesCSV, FormatTable). Of Brigade's packages it imports only
// hwmodel and policies, so that both drivers (the simulator through
// runner, live mode through its export) write the same records.
//
// # Units
//
// In memory, times are hwmodel.Time (integer microseconds since the start of
// the run) and GPU capacity is milli-GPU (hwmodel.MilliPerGPU per GPU). In
// every output, a key or column says its unit: _s is seconds, _h hours,
// gpu_hours GPU-hours, _per_s and _per_h rates; utilisation and shares are
// fractions in [0, 1] (the table alone prints percentages). CSV times are
// printed from the integer microseconds with exactly six decimals, so they
// round-trip exactly.
//
// # Two independent books
//
// The Timeline is fed by the engine's running counters (queued, running, in
// system, allocated milli-GPU); the JobRecords are written per job. Summary
// takes utilisation, GPU hours allocated, queue length and the L of Little's
// law from the Timeline, and everything else from the records. Little's law
// (∫InSystem dt = Σ (End − Submit) over finished jobs, when the Timeline
// spans the makespan) then cross-checks the two: a consistent run gives a
// relative error of order 1e-15, and a bookkeeping bug in either book shows
// up as a visible error rather than a plausible number.
//
// # Which jobs each metric covers
//
//   - submitted: every JobRecord given (any state).
//   - finished: state succeeded or failed. Makespan ends at the last finished
//     job's End; Little's λ and W cover finished jobs, including failed jobs
//     that never ran (End − Submit is their time in the system).
//   - ran: finished with Attempts > 0 (failed jobs that ran included). Wait,
//     JCT (End − Submit) and bounded slowdown (max(1, JCT / max(Run, τ)))
//     distributions cover these, as do tenants' mean and max wait.
//   - starvation counts every submitted job whose Wait exceeds the threshold;
//     the default threshold is max(10 × median wait of jobs that ran, 1 h).
//   - tenants' job counts and GPU hours (Σ GPUs × GPUMilli/1000 × Run) cover
//     every submitted job; fair shares divide by the weights of tenants that
//     submitted at least one job; Jain's index covers those with a positive
//     weight.
//   - makespan is from the earliest Submit of any job to the latest End of
//     any finished job; rates, means over time and utilisation divide by it.
//
// # Failure reasons
//
// Why a job failed (JobRecord.Reason) and how each attempt ended
// (AttemptRecord.Ended) are words of one fixed vocabulary, the constants
// of reasons.go, which every driver writes: runner.Records maps the
// simulator's outcomes to it and live mode's export uses the same
// constants, so a live run and its replay compare job by job.
// JobRecord.ReasonDetail keeps each driver's own words.
//
// # Percentiles
//
// Every percentile is gonum's stat.Quantile with stat.Empirical on the sorted
// sample: the smallest observed value whose empirical CDF reaches p (sorted
// index ceil(p·n) − 1). Values are never interpolated.
//
// # Empty inputs
//
// encoding/json refuses NaN and ±Inf, so no output field is ever one: a
// quantity whose denominator is zero (no jobs, nothing finished, zero
// makespan, zero capacity, no weights) is reported as 0, and Jain's index,
// whose true range is [1/n, 1], reads 0 when undefined.
//
// # Timeline
//
// Observe(now, s) means s holds from now until the next Observe or Close.
// Integrals are exact 128-bit sums of count × microseconds over [first
// Observe, Close]. Buckets are fixed width from time 0; when a run would need
// more than MaxBuckets, adjacent pairs merge and the width doubles, so memory
// is bounded and Observe never allocates. Time going backwards, negative
// counts or Observe after Close panic: they are engine bugs, and the engine
// guarantees against them.
//
// # Determinism
//
// Outputs depend only on the inputs and their order: jobs in the order given
// (ID order), tenants in RunInput.Tenants order followed by tenants seen only
// in jobs in order of first appearance, runs in the order given. No map is
// ranged over to produce output (one map is used for name lookups only);
// JSON objects are structs, so key order is fixed; sums over integers are
// exact and therefore order-free. Files are written atomically
// (AtomicWriteFile): a temporary file in the same directory, fsync, rename;
// or, for JobFiles, in place in a folder that WriteFolder swaps in whole.
//
// # Files
//
//   - record.go: JobRecord and AttemptRecord, one per job and attempt;
//     stats.go: JobStats, what Summarize and the plots read of a record.
//   - reasons.go: the failure vocabulary that every driver writes.
//   - timeline.go: Timeline, the cluster's state over time, and its exact
//     integrals; acc.go: the 128-bit accumulator under them.
//   - summary.go: Summarize, one Summary per policy from the two books.
//   - table.go: FormatTable, the comparison table brigade sim prints.
//   - writers.go: summary.json and the CSV files; csvrows.go: the CSV
//     rows they append, byte for byte as encoding/csv writes them;
//     parquet.go: the Parquet tables and their versioned schema, written a
//     batch of rows at a time; jobfiles.go: JobFiles, the job tables
//     written a policy's records at a time, as the runs make them.
//   - runinfo.go: run.json (RunInfo, WriteRunJSON).
//   - atomic.go: AtomicWriteFile; replace.go: CheckReplaceable, which
//     folders a results folder may replace; folder.go: CheckOut and
//     WriteFolder, a whole results folder written beside its place and
//     renamed into it.
package results
