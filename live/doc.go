// Package live is Brigade's live mode: the driver that runs the same
// policies that brigade sim benchmarks, through the same driver half
// (policies.Host), against this machine's real GPUs through NVML.
//
// It holds NVML discovery (Discover, behind go-nvml's nvml.Interface so that
// tests run against go-nvml's mock DGX machines, and DiscoverLocal, which
// opens the real library) for `brigade gpus`, and the live driver behind
// `brigade live` (docs/live.md): ParseJobFile reads a strict YAML job file;
// Driver holds a policies.Host over one node built from the discovered
// GPUs and the machine's CPU and memory (Machine), calls the policy through
// it at each scheduling point (a submission, an exit, a tick), applies
// Start and Preempt decisions (preemption: SIGTERM to the job's processes
// but its wrapper, Config.Grace, then SIGKILL; every attempt has a
// BRIGADE_CHECKPOINT_DIR kept across attempts), holds jobs with DAG
// dependencies pending until their parents succeed (deps.go), launches each started job in its own process group with
// CUDA_VISIBLE_DEVICES set to its GPUs' UUIDs, under a shell wrapper that
// records in an exit file whether the command started and how it ended,
// and keeps every job's state in a bbolt file, each transition committed
// before it is acted on, so that a restart after kill -9 re-adopts live
// processes (pid plus /proc start time, or the marker in their
// environment) and neither loses nor doubles a job (settle in driver_end.go).
// An attempt ends only once its process group is gone and no process
// carrying its marker lives (stopAttempt in proc.go): a daemon that left
// the group with setsid is killed too.
// Failed attempts are retried after brigade sim's exponential back-off
// (Config.Backoff). Time comes from an injected
// Clock, converted to hwmodel.Time (µs since the state file's creation) at
// the edge. MIG jobs run on the MIG instances that exist (mig.go): the
// layouts NVML reports become the cluster's static MIG layouts.
//
// Export (export.go) turns the store's records, which keep every ended
// attempt (Record.Attempts, appended by finish), into a results folder in
// brigade sim's format (results' writers and Summarize: jobs, attempts,
// time series, tenants, summary.json) plus events.csv, estimates.csv,
// cluster.yaml and run.json, written into a temporary folder renamed into
// place (replacing only what CheckOut allows), so that brigade sim
// --replay and brigade fidelity read a live run as they read a simulated
// one. ExportState does it from a state file
// (the policy and GPUs are recorded in its meta bucket) after a crash.
//
// Health (health.go) watches the GPUs through a HealthSource: NVMLHealth
// behind the cgo tag (one read-only GetUtilizationRates per GPU as the
// heartbeat, bounded by a timeout, and an NVML event set for critical XIDs
// and double-bit ECC errors), FakeHealth in tests. The driver polls it
// every Config.HeartbeatInterval from a goroutine and applies the reports
// at the start of each round: a GPU newly down is committed as down in the
// store, its jobs' process groups are killed and their attempts failed
// (retried as their specs allow), and the GPU is blocked in the cluster
// with a whole-GPU placement, as sim blocks a failed GPU. It comes back
// after RecoverBeats answered heartbeats, unless its error was critical;
// then only Config.GPUsUp clears it.
//
// Metrics (NewMetrics, set as Config.Metrics) is the Prometheus side of
// `brigade live --metrics`: a private registry of brigade_live_* gauges,
// counters and histograms that the driver updates at its transitions
// (submission, start, end, retry) through goroutine-safe Prometheus
// objects, so the HTTP handler never reads driver state; a nil *Metrics
// costs a nil check. Per-GPU utilisation and memory are read at scrape
// time through a GPUSampler (NVML's read-only GetUtilizationRates and
// GetMemoryInfo behind the cgo tag; FakeSampler in tests). Listen refuses
// a non-loopback address unless told otherwise and binds before the
// driver starts; MetricsServer.Serve answers only GET /metrics, over at
// most MaxMetricsConns connections at once, without keep-alive.
//
// Invariants:
//
//   - An attempt has ended only when its whole process group is gone: when
//     its wrapper exits (or, re-adopted, is found gone) the driver SIGKILLs
//     what is left of the group and waits for it before it records the end
//     and releases the GPUs. So no attempt runs beside the next attempt of
//     its job, nor beside the job given its GPUs.
//   - A job whose command never ran is never failed and spends no attempt:
//     a start undone by a crash before the launch, or by a launch error
//     that passes (EMFILE, EAGAIN, ENOMEM, ...), queues it again as it was.
//   - A job that may have finished is never rerun: a process group that
//     ended while the driver was down without recording its exit status
//     fails the job (ReasonExitLost), whatever retries it has left.
//   - Only a process confirmed gone has ended: /proc that cannot be read
//     is "unknown", never "dead".
//   - Live mode removes nothing of the user's: a results folder replaces
//     only a missing or empty folder or an earlier Brigade results folder
//     (results.CheckReplaceable), never one holding the job file, the
//     state file or the logs (CheckOut). A damaged state file is an error
//     naming it, not a crash.
//   - Live mode never changes GPU settings. It never enables or disables
//     MIG, never creates or destroys GPU or compute instances, and never
//     resets a GPU. Discover and NVMLHealth call read-only NVML queries only
//     (NVMLHealth also creates and frees an event set, which changes
//     nothing on the GPU). No flag to change GPU settings exists; if one
//     is ever added, its name must say so and no test may pass it.
//   - The code that touches go-nvml's nvml package sits behind the cgo build
//     tag (go-nvml does not compile without cgo). With CGO_ENABLED=0 the
//     package still builds, and DiscoverLocal and NewLocalHealth report
//     ErrNoCgo ("built without cgo: NVML unavailable").
//   - sim, policies and hwmodel never import live; live imports them.
//
// # Files
//
//   - driver.go: Driver, Config, Clock, Open, Submit, Run and the
//     scheduling rounds that apply a policy's decisions (starts,
//     preemption).
//   - driver_process.go: an attempt's processes: launch, its exit file,
//     termination (SIGTERM, grace, SIGKILL) and its checkpoint folder.
//   - driver_end.go: an attempt's end (settle), retries with their
//     deadline rule and back-off, and requeueing.
//   - driver_recover.go: restart: rebuilding the books from the state
//     file and settling or re-adopting what was running.
//   - store.go: the bbolt state file (State, Record, ReadState).
//   - jobfile.go: ParseJobFile, the job file read by package config's
//     strict decoder; JobSpec.Check and the file's Check (names, deps)
//     say what a valid job and file are.
//   - policy.go: the policies live mode runs, from their specs.
//   - deps.go: DAG dependencies: pending jobs and failure propagation.
//   - machine.go: the machine's CPU and memory (DetectMachine).
//   - mig.go: the MIG layouts NVML reports, as static layouts.
//   - proc.go: processes, groups and /proc start times; proc_linux.go and
//     proc_other.go: waiting for a wrapper without reaping it.
//   - export.go: Export and ExportState, a results folder in brigade
//     sim's format, and CheckOut.
//   - gpu.go: GPU and GPUInstance, what discovery reports; discover.go:
//     Discover over nvml.Interface and DiscoverLocal (cgo); nocgo.go: the
//     stand-ins without cgo.
//   - health.go: health watching and FakeHealth; health_nvml.go:
//     NVMLHealth (cgo).
//   - metrics.go: the Prometheus metrics and their server;
//     sampler_cgo.go and sampler_nocgo.go: per-GPU utilisation and memory
//     at scrape time.
package live
