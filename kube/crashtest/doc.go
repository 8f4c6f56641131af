// Package crashtest proves on a real API server (package controlplane:
// etcd, kube-apiserver, KWOK) that Brigade's Kubernetes scheduler is
// safe to kill and to run twice. It holds only tests (Linux: they
// SIGKILL processes and give them a parent-death signal).
//
// The scheduler runs in child processes: the test binary re-executed
// (TestMain), running scheduler.Run as brigade-kube does, with
// crashpoint.Hook set to kill itself with SIGKILL the n-th time it
// passes a named point when the test asks. The API server audits every
// Binding with its target, so which process sent which Binding, and
// whether it took, is known even of processes killed before they could
// say.
//
// TestKillCampaign kills one scheduler again and again (at random
// moments, 20–800 ms into a life, and at every crash point but the
// eviction, which its non-preempting policy never reaches), restarting
// it each time while batches of pods and gangs arrive on 100 nodes of 8
// GPUs; a last life runs everything to the end. TestTwoReplicas runs two
// schedulers with leader election and short leases, kills the leader
// with a gang half bound, and times the takeover.
// TestKilledWhileEvictingGang kills a scheduler (priority+preempt)
// between the Evictions of a preempted gang: the next life evicts the
// rest.
//
// Invariants checked, by a watch of the pods (every state the API server
// went through, in its order) and by the audit log:
//   - no pod is bound twice or moved; every pod is bound once and
//     succeeds (none is lost);
//   - a gang member is bound only when every member carries the same
//     placement (committed), to the node it names, and the placement
//     never changes once a member is bound; at the end every gang is
//     whole on its placement's nodes;
//   - a life that finds a gang partly bound (left so by an earlier life
//     or the other replica) completes it before it binds a pod of its
//     own choosing (within one life, a round's Bindings go out several
//     jobs at a time and may interleave);
//   - a node's bound, unfinished pods never hold more GPUs than it has;
//   - with two replicas, only the Lease's holder sends Bindings: none
//     from the second before it acquires the Lease.
//
// Files:
//   - main_test.go: TestMain, the child scheduler and its lives.
//   - cluster_test.go: the audited control plane, the pods, the observer
//     and the checks.
//   - campaign_test.go: TestKillCampaign.
//   - leader_test.go: TestTwoReplicas.
//   - evict_test.go: TestKilledWhileEvictingGang.
package crashtest
