// Package workloads holds the jobs a run replays: plain jobs and the tasks
// of DAG jobs, read from traces (Microsoft Philly as prepared by Pollux,
// Alibaba's 2023 "openb" GPU pod lists, the Parallel Workloads Archive's
// Standard Workload Format, and Brigade's own CSV format, see
// docs/trace-format.md) or made by a seeded synthetic generator.
//
// # Invariants
//
// Every *Workload that Build, the readers, Default and Generate return
// satisfies these, and Workload.Validate checks them:
//
//   - Jobs are sorted by Submit (ties keep input order); a job's index in
//     Jobs is its ID in a run. Submit >= 0. The trace readers shift submit
//     times so that the earliest is 0; ReadBrigade keeps them as written.
//   - Names are non-empty and unique.
//   - Duration > 0, except for a job that trains an App (Pollux traces),
//     whose Duration is 0 and BatchSize > 0; Estimate >= 0 (0 means none; FillEstimates fills it);
//     MaxRetries >= 0 and FailedAttempts >= 0; Deadline, Checkpoint.Every
//     and Checkpoint.Cost >= 0, and a Cost only with an Every; Req passes
//     hwmodel.Request.Validate. Times stay below 1e12 s and counts below
//     2^20, so the engine's sums cannot overflow.
//   - Each entry of Deps is the index of another job, listed once, whose
//     Submit is not after the job's own, and the dependency graph has no
//     cycle. (Deps may point forward among jobs with equal Submit.)
//   - Every job's tenant is non-empty and appears exactly once in Tenants;
//     Tenants lists the tenants with jobs in order of first appearance,
//     then any tenant given a weight that has no jobs. Weights are finite
//     and > 0 (DefaultTenantWeight unless a weights list says otherwise).
//
// # Errors
//
// Problems with a file's content are *ParseError values with the file, the
// 1-based line, the field (column) and what was expected and found. Errors
// that Build finds after parsing (duplicate names, unknown or cyclic
// dependencies) are located at the job's Source. No input makes a reader
// panic; the fuzz tests hold them to that. Nor does any input exhaust
// memory: a CSV record longer than csvlimit.MaxLineBytes or with more than
// csvlimit.MaxFields fields is an error at its line, found before it is
// buffered (package csvlimit); an SWF line longer than
// csvlimit.MaxLineBytes is an error at its line too. A trace with no job
// after its header is an error too. Records a reader leaves out (openb's
// Pending pods, SWF records with no run time) are not errors; the SWF
// reader counts them, by kind, in Workload.Skipped.
//
// # Randomness
//
// Generate draws from its own PCG source seeded by its seed argument; the
// package never uses the global random source, the wall clock or
// goroutines.
//
// # Files
//
//   - job.go: Job, Checkpoint, Tenant, Workload, Skip and ParseError.
//   - build.go: Build, Validate, tenant weights and FillEstimates.
//   - formats.go: the registry of trace formats and DetectFormat, the one
//     place a format is added; readfile.go: ReadFile and tenant weight
//     files.
//   - csvtable.go: the CSV reader every CSV trace reader shares (columns,
//     csvlimit's line and field bounds, located errors); chunks.go: the
//     readers' row collector, which hands over one exact slice.
//   - philly.go, openb.go, brigade.go: the Philly, Alibaba openb and
//     Brigade CSV readers; swf.go: the Standard Workload Format reader,
//     its detection and SkipText; phillyfast.go: the Philly reader's fast path
//     for philly.csv's plain shape, which hands anything else (and every
//     error) to the general reader, replaying the input from its start.
//   - pollux.go: the Pollux artifact's workload reader (jobs that train
//     an application with a GPU count and batch size, Job.App).
//   - default.go: the embedded default trace (data/).
//   - synthetic.go: SyntheticConfig and Generate, the seeded generator.
//   - load.go: offered load and ScaleToLoad.
//   - mig.go: MIG requests checked against the catalogue.
package workloads
