// Package e2e holds end-to-end tests of Brigade's Kubernetes scheduler
// on a real control plane (package controlplane: etcd, kube-apiserver,
// KWOK playing GPU nodes and the pods' durations).
//
// TestSchedulerMatchesReplay submits a job set (a Brigade CSV trace,
// through package workload) under each policy spec to its own scheduler
// (scheduler.Run, its own schedulerName and namespace) on its own
// partition of the nodes (Config.NodeSelector), several partitions at
// once, waits for every pod to end, exports the run (scheduler.Export),
// replays the export with brigade sim --replay and compares the two with
// brigade fidelity: the replay must start the jobs in the same order.
// With -v it logs the table of docs/kubernetes.md for these runs.
//
// Two kinds of runs:
//   - The 48 specs of docs/replay.md's live comparison and the
//     multifactor and seed orders run testdata/jobs.csv, all submitted
//     at one instant before the scheduler starts, on partitions of 104
//     nodes; every start and end must also agree to the microsecond.
//   - The seven preempting orders (las, tiresias, srtf, priority+preempt,
//     gandiva, gavel, optimus; thresholds, quanta and rounds in seconds)
//     run testdata/preempt.csv, submitted over 17.3 s while the
//     scheduler runs, on partitions of 8 nodes, all seven at once after
//     the other runs (they decide by the clock; beside the other runs,
//     on this control plane or a second one, rounds came seconds late),
//     with workload.Keep as the jobs' controller: an evicted pod is created again (brigade.sim/job or its
//     gang keeps it the same job) to start over, or, under the orders
//     that suspend jobs (gandiva, gavel, optimus), to run what it had
//     left. Every order but optimus (which preempts only to resize
//     elastic jobs) must have preempted, and the starts must agree within
//     5 s at the 95th percentile: the first starts agree closely,
//     later attempts less (below).
//
// Invariants:
//   - Each run has its own schedulerName, namespace and partition of
//     nodes, so runs at once never see each other's pods or nodes.
//   - Every GPU job of both job sets takes whole nodes (below).
//
// The job sets: the events that decide something need no spacing, since
// the export gives the replay the scheduler's own clock: an arrival at
// the round that first saw the job whole (brigade.sim/queued-at), a start
// at the round that decided it (brigade.sim/bound-at), an end at the
// round that booked it (brigade.sim/released-at), a preemption at the
// call that decided it (brigade.sim/attempts), so the replay sees the
// scheduler's timeline exactly. What a replay cannot follow is a
// moment the scheduler reached late: a policy's wake-up (a service
// threshold, a quantum's end, a round) a few milliseconds after another
// round, which the API calls of that round delay, or a preempted job
// whose pods its controller has not yet created again. They change the
// later attempts of the preempting orders, whose JCTs then differ by
// seconds, rarely their first starts. Every GPU job takes whole 8-GPU
// nodes: with smaller jobs splitting nodes, the simulator places a gang
// on the free GPUs of partly used nodes, which node-sized pods cannot
// take, and the scheduler refuses that start while the replay makes it.
//
// Files:
//   - compare_test.go: the comparison, its job set's partitions and the
//     table.
//   - testdata/jobs.csv: the job set of the orders that never preempt.
//   - testdata/preempt.csv: the preempting orders' job set.
package e2e
