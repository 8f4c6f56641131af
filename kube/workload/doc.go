// Package workload turns a Brigade CSV trace (docs/trace-format.md, read
// by the root module's workloads.ReadBrigade) into Pods for Brigade's
// Kubernetes scheduler, and submits them at the trace's submit times: a
// way to run a simulated job set on a real cluster, so that what the
// scheduler did can be exported and replayed in brigade sim.
//
// A job becomes what kube/scheduler reads (pods.go there):
//   - spec.schedulerName, one container that sleeps for the job's
//     duration_s, with the nvidia.com/gpu limit (or one
//     nvidia.com/mig-PROFILE instance), and cpu_milli and memory_mib as
//     CPU and memory requests;
//   - annotation brigade.sim/duration (the true duration, which KWOK plays
//     out) and brigade.sim/estimate (estimate_s, when given); Submit adds
//     brigade.sim/submitted-at, the instant the job was due;
//   - label brigade.sim/tenant, and brigade.sim/job (the pod's name) on a
//     pod alone: a pod created again under that name after an eviction is
//     the same job to the scheduler, as a gang's members are by its name;
//   - priority through a PriorityClass brigade-priority-N of value N (the
//     API server's Priority admission refuses a bare spec.priority), which
//     Submit creates when missing;
//   - a job larger than a node (Options.NodeGPUs) is a gang: one pod per
//     node-sized member, labelled brigade.sim/gang and
//     brigade.sim/gang-size, its CPU and memory split evenly (the
//     remainder on the first member, as the simulator's gang placement
//     splits them).
//
// Invariants:
//   - Pods are built in the trace's order; the same trace and Options
//     build the same pods.
//   - What a pod cannot say is refused, not dropped: fractional GPUs
//     (gpu_milli), dependencies, retries, deadlines, checkpoints, model
//     constraints, classes and datasets are errors naming the file, the
//     line and the column, as the trace reader's own errors do.
//   - Pod names are the trace's names made DNS-safe (lower case, runs of
//     other characters as '-'); two jobs whose names meet are an error.
//
// Files:
//   - pods.go: Options, Job, Build: trace jobs to Pods.
//   - submit.go: Submit: the namespace, the PriorityClasses and the pods,
//     each job at its submit time.
//   - wait.go: WaitEnded: until every pod has ended and its scheduler has
//     booked the end.
//   - keep.go: Keep, the jobs' controller while they run: a pod deleted
//     before it ended (an eviction) is created again, to start over or
//     to resume with what it had left (Evicted), until every pod has
//     ended.
package workload
