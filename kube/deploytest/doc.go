// Package deploytest runs the scheduler as the shipped manifests deploy
// it, on a real API server that authorizes by RBAC: the ClusterRole in
// deploy/kubernetes/scheduler must let it do everything it does (bind,
// write a gang's placement, evict, report an unschedulable pod, hold its
// Lease, read Workload API PodGroups), and any request the API server
// forbids fails the test. deploy/k8stest checks the other side, that the
// role grants nothing more than its list.
//
// The package has tests only:
//
//   - rbac_test.go: the manifests applied, the scheduler run as their
//     ServiceAccount through gangs of both kinds, an unschedulable pod and
//     a preemption.
package deploytest
