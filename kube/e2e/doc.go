// Package e2e holds end-to-end tests of Brigade's Kubernetes scheduler
// on a real control plane (package controlplane: etcd, kube-apiserver,
// KWOK playing GPU nodes and the pods' durations).
//
// TestSchedulerMatchesReplay submits one job set (testdata/jobs.csv, a
// Brigade CSV trace, through package workload) under each policy spec to
// its own scheduler (scheduler.Run, its own schedulerName and namespace)
// on its own partition of the nodes (Config.NodeSelector), several
// partitions at once, waits for every pod to end, exports the run
// (scheduler.Export), replays the export with brigade sim --replay and
// compares the two with brigade fidelity: the replay must start the jobs
// in the same order, and every start and end at the same microsecond. The 48 specs of docs/replay.md's live comparison
// run, and the non-preempting multifactor and seed orders. With -v it
// logs that table for these runs.
//
// Invariants:
//   - Each run's pods are all created, stamped with one submit instant
//     (brigade.sim/submitted-at), before its scheduler starts; the
//     scheduler's first round sees them all, and each job arrives in the
//     export at that round (brigade.sim/queued-at).
//   - Each run has its own schedulerName, namespace and partition of
//     nodes, so runs at once never see each other's pods or nodes.
//   - Every GPU job of the job set takes whole nodes (below).
//
// The job set: the events that decide something need no spacing, since
// the export gives the replay the scheduler's own clock: an arrival at
// the round that first saw the job whole (brigade.sim/queued-at), a start
// at the round that decided it (brigade.sim/bound-at), an end at the
// round that booked it (brigade.sim/released-at), so the replay sees the
// scheduler's timeline exactly. Every GPU job takes whole
// 8-GPU nodes: with smaller jobs splitting nodes, the simulator places a
// gang on the free GPUs of partly used nodes, which node-sized pods
// cannot take, and the scheduler refuses that start while the replay
// makes it.
//
// Preempting orders (las, tiresias, srtf, gandiva, priority+preempt, and
// gavel and optimus, which also resize) are not compared: the scheduler
// evicts, an evicted bare pod is gone, and its job leaves the export, so
// the replay runs fewer jobs than the scheduler saw. A comparison needs a
// job's identity across the pods a controller recreates (the scheduler
// keys a pod by its UID, so a recreated pod is a new job with no attained
// service, submitted anew) and its evicted attempts recorded where the
// export can read them.
//
// Files:
//   - compare_test.go: the comparison, its job set's partitions and the
//     table.
//   - testdata/jobs.csv: the job set.
package e2e
