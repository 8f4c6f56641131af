// Package pollux reproduces the baseline runs of the Pollux (OSDI'21)
// artifact (petuum/adaptdl, branch osdi21-artifact, simulator/) job by
// job through Brigade's engine: Tiresias and Optimus on the 8 workloads
// at each of the job loads 0.5, 1.0, 1.5 and 2.0 (6,400 jobs each), every
// job with the JCT the artifact published
// (results-jobload/<policy>-<load>/summary.json) to the second
// (Baselines). `brigade pollux` is its command line; Compare is its entry
// point; docs/pollux.md has the table and the differences between the
// artifact and the papers.
//
// Nothing here is a special case of the engine or of the policy: a run is
// sim.Engine with the options any policy can run under, set as the
// artifact's simulator runs (Config):
//
//   - the application model (sim.Config.Apps, hwmodel.AppModel): jobs
//     train an application with a fixed batch size on the GPUs they are
//     given (their request, or the count Optimus chooses), at the pace
//     their placement's per-node GPU counts give, epoch by epoch, epoch
//     ends rounded to whole seconds;
//   - the 60 s decision grid (sim.Config.Interval);
//   - 30 s of restart on every start (sim.Config.StartupDelay), and
//     preemption that keeps all progress (SaveOnPreempt);
//   - 16 nodes of 4 GPUs;
//   - the policy spec "tiresias/mostfree" (Policy): the tiresias order
//     with its default single threshold of 16 GPU-hours (two queues, FIFO
//     within each, no promotion), the preemptor's admission by count, and
//     the mostfree placement; or "optimus" (OptimusPolicy): the optimus
//     order, which sizes every job each minute by a greedy on marginal
//     gain and places resized jobs on the emptiest nodes.
//
// # Invariants
//
//   - The embedded data (data/, its README.md names the sources) is read
//     only: workloads, the application model and the published JCTs.
//   - A run is deterministic: the same workload gives the same JCTs, so
//     Compare's rows and Write's table are byte-identical run to run.
//   - Exact means equal as float64: the artifact's JCTs are whole seconds
//     and so are ours.
//
// # Files
//
//   - run.go: the embedded data (Apps, Workload, Published, PublishedOf),
//     the baselines (Baselines), the artifact's cluster and engine
//     configuration (Cluster, Config), and JCTs, one run.
//   - compare.go: Compare and CompareBaseline, every workload and load of
//     a baseline against its published JCTs, and Write, the table
//     `brigade pollux` prints.
package pollux
