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
// in the same order. With -v it logs the table of docs/replay.md's live
// comparison for these runs.
//
// Invariants:
//   - Each run's pods are all created, stamped with one submit instant
//     (brigade.sim/submitted-at), before its scheduler starts, so the
//     scheduler's first round and the replay at time 0 see the same jobs.
//   - The job set keeps the events that decide something apart (see
//     testdata/jobs.csv), so that the milliseconds a real API server and
//     KWOK add cannot flip a decision.
//
// Files:
//   - compare_test.go: the comparison, its job set's partitions and the
//     table.
//   - testdata/jobs.csv: the job set.
package e2e
