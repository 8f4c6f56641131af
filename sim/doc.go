// Package sim is Brigade's discrete-event engine: it replays a workload on a
// modelled cluster and lets a policies.Policy decide what runs where.
//
// The engine is single-threaded. Time is integer microseconds
// (hwmodel.Time). Finish events sit in a typed 4-ary heap ordered by
// (time, sequence number); arrivals are read in order straight from the
// workload, which is sorted by submission time, so the heap holds only
// running attempts. At each instant the engine applies every arrival and
// finish due, then makes one scheduling point through policies.Host, the
// driver half every driver shares: it calls the policy once, drops the
// capacity the policy reserved while deciding, and applies the decisions
// one by one against the true books. A decision that would break
// a rule (a job that is not ready, a placement that gives the job other than
// it asked for, a GPU model the job refuses, capacity that is not free) is
// rejected and reported to the policy at its next call; the engine keeps
// going.
//
// Job life: Pending (submitted, dependencies outstanding) → Ready (queued) →
// Running → Succeeded or Failed. A failed attempt with retries left goes
// back to Ready; a job that fails for good fails every job that depends on
// it, transitively, without running them. A job whose request no node of
// the cluster could ever hold fails at submission ("unsatisfiable"), so it
// cannot block a strict queue for ever.
//
// Invariants, re-verified after every event when Config.CheckInvariants is
// set (tests set it):
//   - no node, GPU, CPU or memory pool is over capacity, and the derived
//     counters agree with a recount (hwmodel.Cluster.CheckInvariants);
//   - every job is in exactly one state and the engine's counters of
//     queued, running, in-system and terminal jobs agree with a recount;
//   - no task runs while a dependency has not succeeded;
//   - time never goes backwards; every submitted job ends in exactly one
//     terminal state (Run fails with an error naming stranded jobs
//     otherwise);
//   - the GPU the cluster counts as allocated is exactly what tenants'
//     jobs, out-of-service hardware and the coupled model hold.
//
// Coupled models (coupled.go): Config.Coupled shares the cluster with a
// second model, the inference services of package serving, which keeps its
// own events. The engine calls its Step only at the instants it names
// (Next) and at scheduling points while it waits for capacity, after the
// batch events of the instant and before the policy; through Access it
// takes whole GPUs of one node (best fit) or preempts lower-priority
// running jobs for them, which go back to the queue as after a Preempt
// decision. A coupled model that implements CoupledFaults hears of
// injected faults under its holdings when they happen and when they are
// detected, and must give the hardware back at detection.
//
// MIG (mig.go): Reconfigure decisions are applied at once and their new
// instances unblocked Config.MIGReconfigTime later, by an event that also
// makes a scheduling point; a MIG placement must name one free instance
// whose profile matches the job, with the instance's milli; tenants are
// charged their placements' milli. With static layouts (no
// Config.MIGReconfigure) a MIG job that no instance matches fails at
// submission, and without conversion a whole or shared job that only
// MIG GPUs could hold does too. The invariant check also verifies that
// every busy instance is held by exactly one running MIG job and that
// blocked instances exist only while a reconfiguration is in flight.
//
// Faults, retries and checkpoints (faults.go). Config.Faults injects
// hardware failures (hwmodel.Fault: a node, or one GPU of it, out of
// service from At for Repair). Detection costs one event per fault, not one
// per heartbeat, and is exact: node n sends heartbeats at
// phase_n + k·Interval for every integer k, phase_n = n·Interval/N (integer
// division, N nodes: the cluster's heartbeats are spread over the
// interval). A node that fails at t sends none at or after t, so it is
// declared dead at (its last heartbeat strictly before t) + Timeout; a
// node fault while the node is already dead but undetected is detected
// with it. A GPU fault is reported by its (alive) node's first heartbeat at
// or after t; on a node that is dead but undetected, at the node's
// detection. Until detection the jobs on the failed hardware stay Running
// (GPU-time burnt, no progress after t; a finish event that falls in
// between does not count) and the policy may even place new jobs there:
// they are lost too. At detection those attempts fail, in job order, and
// go to the retry policy; then the hardware's capacity is taken out of
// service until At+Repair by a blocking allocation through the ordinary
// cluster books that no tenant owns (a node's block holds all its GPUs,
// CPU and memory): policies see it as used, Observation.AllocatedMilli
// excludes it and Observation.DownMilli reports it. A fault on hardware
// already out of service only extends the repair; overlapping faults keep
// it out until the latest repair; if the repair is due before detection
// nothing is blocked. Each detection and each repair makes a scheduling
// point. MIG: faults are refused (New fails) on nodes with MIG-enabled
// GPUs and with MIGConvertWhole, so blocked GPUs are always whole GPUs.
// Once every job is terminal the run ends: later faults and repairs are not
// processed (nor recorded in Result.Faults), and a fault not yet detected
// keeps FaultRecord.Detected -1.
//
// Retries (Config.Retry) apply to every failed attempt, hardware or trace
// (Job.FailedAttempts counts trace failures on their own, so preemptions
// and hardware failures do not shift them): "trace" (default) allows the
// job's MaxRetries, "none" none, "fixed" Retry.Max. "deadline": a job with
// a Deadline is granted, at its first failure,
// min(Max, max(1, floor((Submit+Deadline−now) / avg_run))) further
// attempts (hwmodel.DeadlineAttempts), avg_run being the job's runtime estimate
// (policies.Job.Estimate, as the policy sees it); at every failure within
// the grant it fails for good (FailDeadline, Reason "deadline") when
// RestartTime + (estimate − saved progress) exceeds the time left, and a
// failure beyond the grant fails it as any retry policy that runs out does
// (FailRetriesExhausted); a job without a deadline gets Max. Retry.BackoffBase > 0 re-queues the k-th
// retry BackoffBase·BackoffFactor^(k−1) after the failure, by an event
// (the job is Pending meanwhile; the back-off counts in neither
// Outcome.Wait nor Outcome.Run). Config.RestartTime is added to every
// attempt after a failure.
//
// Checkpoints are progress-based (the job's Checkpoint, else
// Config.DefaultCheckpoint): after every Every of progress the job spends
// Cost of wall time saving it, with no checkpoint at the very end, so a
// full run of duration W takes W + floor((W−1µs)/Every)·Cost. An attempt
// that fails or is preempted keeps the checkpoints it completed before its
// hardware failed (or before it stopped) and the next resumes from the
// last one. Outcome.LostTime is the wall time that bought no lasting
// progress (work since the last checkpoint, an unfinished checkpoint, time
// burnt until detection, restart time), Outcome.CheckpointTime the time
// spent on completed checkpoints, so a succeeded job's
// Run = Duration + LostTime + CheckpointTime. The invariant check also
// verifies that no running job holds out-of-service capacity and that the
// blocked capacity agrees with a recount.
//
// Start-up delay: Config.StartupDelay (sim --startup-delay) is added to
// every attempt, like the restart time after a failure, before any progress:
// the start of a process and its CUDA context, which took 3.2-4.8 s for
// PyTorch on an H200. A succeeded job's Outcome.Run is then its
// duration + one start-up delay + LostTime + CheckpointTime: the start-up
// of the successful attempt is run time, that of an interrupted attempt is
// lost time. Traces whose durations were measured from the process start
// already include it; the default is 0.
//
// Processor sharing (Config.ProcessorSharing, sim --gpu-sharing
// processor; off by default): fractional jobs (one GPU, GPUMilli < 1000,
// no MIG) on one GPU share its compute. With S the sum of the compute
// demands (Job.DemandMilli, else GPUMilli) of the GPU's jobs past their
// start-up, each progresses at 1000/max(1000, S) of full speed. When a
// GPU's working set changes, its jobs are advanced at their old rate,
// re-rated and re-timed with new finish events; a per-job version makes
// the replaced events stale (sharing.go, docs/replay.md). Under sharing,
// progress is not wall time: the sharing books note the wall time at which
// a job's progress completes each checkpoint, and an interrupted attempt
// keeps its completed checkpoints and loses the wall time since the last
// one. A fault freezes the GPUs under it (no progress, no events) until
// its detection fails their jobs, as without sharing.
//
// GPU-model speeds (speeds.go; Config.Speeds, sim --speeds). A job's
// Duration and Estimate were measured on its reference model (its
// MeasuredOn, else Config.SpeedReference); an attempt on model m runs at
// rate = the speed table's Rates.Rate for the job's class, fixed for the
// attempt (a gang runs on one model, and a job does not move while it
// runs). Progress is counted in measured time and converted to wall time
// by hwmodel.ScaleDuration (rounded up to the microsecond, exact at rate
// 1): an attempt lasts restart + ScaleDuration(work left, rate) +
// checkpoints × Cost, its k-th checkpoint ends ScaleDuration(k·Every,
// rate) + k·Cost after its start-up, and an interrupted attempt keeps the
// checkpoints whose ends lie before the cut. A succeeded job's Run is then
// the wall time of its progress at the rates it ran at, plus LostTime and
// CheckpointTime. Under processor sharing the rate multiplies the share.
// Policies see the rates through View.Rate (EASY backfill's ends use
// them); the deadline retry policy's estimate of the time needed is the
// job's measured estimate, not scaled.
//
// Data locality (data.go). With datasets in the cluster and jobs that
// read them, an attempt's locality is the GPU-weighted share of its nodes
// that hold the job's dataset at its start (a replica, or a cached copy
// whose read has ended); it first reads (1 − locality) × size from the
// storage tier at its bandwidth, after the restart and start-up delay and
// before any progress, and this read counts as start-up: run time when
// the attempt succeeds, lost time when it does not. Its nodes then cache
// the dataset from the end of that read (hwmodel's LRU caches), even if
// the attempt fails during it. Result.Data counts what was read.
//
// The decision grid and the application model (apps.go). With
// Config.Interval > 0 the policy is called only at multiples of it: an
// instant off the grid processes its events, and if the policy has news
// pushes the next grid point as an event. With Config.Apps, a job that
// trains an application (workloads.Job.App) has no duration: its attempt
// trains from the end of its start-up at the pace of its placement
// (hwmodel.AppRun), and its end is played forward at its start in the
// pieces the grid cuts time into, epoch ends rounded to whole seconds in
// each (hwmodel.AppRun.Advance); on the grid it keeps its GPUs until the
// grid point that ends the piece in which it is done, and its End is when
// its training was done. A preemption with SaveOnPreempt advances its
// state to the cut the same way and keeps it; without, the attempt keeps
// nothing. Such a job is elastic: a policy may start it on any number of
// whole GPUs (policies.Host.CheckElasticPlacement), and its batch
// configuration and pace are those of its placement's GPU count, the
// batch size kept (the artifact rescales a job so on every reallocation;
// its Optimus chooses the counts). The Host answers policies.AppView with
// its application, batch size and training state now. Checkpoints,
// processor sharing and GPU-model speeds do not apply to such jobs (New
// refuses the first two).
//
// Stepping (step.go): Run and RunUntil share one step function, which
// processes one instant as described above, so a run stepped by RunUntil
// in any increments is the run Run makes: the same Result, the same
// Observe calls (step_test.go checks it). RunUntil(t) processes every
// instant at or before t, the end-of-run scheduling points included, and
// leaves the clock at t while the run goes on; Now, Next and Snapshot read
// the engine between steps and change nothing. A Snapshot is a copy: its
// jobs' books as if the run stopped at Now (a job not started has Start
// -1, a job not terminal End -1), and the nodes', GPUs' and tenants'
// books.
//
// Scenario tests (datadriven_test.go): the files under
// testdata/scenarios are scripts of commands (cluster, tenants, policy,
// config, heartbeat, submit, fail, run, print, assert, reset), each
// followed by the output the engine gives; run with -rewrite to refresh
// that output, then review the diff. The harness's doc comment lists the
// commands and their arguments.
//
// Determinism: sim never reads the wall clock, never starts goroutines,
// never uses the global random source and never lets map order reach an
// output. The same workload, cluster and policy give the same Result.
//
// # Files
//
//   - engine.go: Config, Result, Outcome, New, Run, arrivals, finishes
//     and the job state machine;
//   - outcome.go: an Outcome's attempt log (Log, Attempt), its first
//     attempt kept in the outcome's own fields;
//   - step.go: the step function, RunUntil, Now, Next and Snapshot;
//   - schedule.go: the scheduling point and applying decisions;
//   - heap.go: the typed event heap;
//   - invariants.go: the invariant check behind Config.CheckInvariants;
//   - faults.go: injected faults, heartbeat detection, retries, back-off
//     and checkpoints;
//   - mig.go: MIG placements, reconfigurations and their books;
//   - sharing.go: processor sharing of fractional GPUs;
//   - data.go: data locality: datasets resolved, each attempt's read of
//     what its nodes lack, the caches filled, DataStats;
//   - speeds.go: GPU-model speeds: the table checked and compiled, an
//     attempt's checkpoints at its rate;
//   - coupled.go: the Coupled model interface and its access to the
//     cluster;
//   - apps.go: the application model (Config.Apps): jobs' training
//     states, an attempt's end played forward in the pieces the decision
//     grid (Config.Interval) cuts, what a preemption keeps;
//   - testdata/scenarios: the scenario files datadriven_test.go runs.
package sim
