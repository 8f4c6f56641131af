// Package scheduler is Brigade's Kubernetes scheduler: a standalone
// scheduler (spec.schedulerName, default "brigade") that runs any policy
// spec brigade sim accepts through policies.Host, as live mode does, over
// a cluster built from the Nodes, and carries its decisions out as
// Bindings and Evictions.
//
// # From the API to the books
//
// Nodes: nvidia.com/gpu allocatable are whole GPUs; the model comes from
// GPU feature discovery's nvidia.com/gpu.product (NVIDIA-H100-80GB-HBM3 is
// the catalogue's H100-80GB; an unknown product is logged once and taken
// as an H100-80GB); MIG resources of the device plugin's mixed strategy
// (nvidia.com/mig-1g.10gb: 7) become further GPUs whose static layouts
// hold those instances; CPU and memory allocatable are booked; cordoned
// nodes are left out; NoSchedule and NoExecute taints are kept beside the
// cluster. What other schedulers' bound, unfinished pods hold on a node
// (whole GPUs, CPU, memory) is taken out of its capacity. Any change of
// these rebuilds the books (a heartbeat changes none and calls no round).
// With Config.NodeSelector, only nodes carrying all its labels exist for
// the scheduler (and its export): one scheduler per partition of a
// cluster, each with its own schedulerName.
//
// Pods: a pod, or a gang (brigade.sim/gang with brigade.sim/gang-size,
// labels or annotations;
// scheduling.x-k8s.io/pod-group with its PodGroup's minMember when the
// CRD is there, or the Workload API's spec.schedulingGroup with its
// scheduling.k8s.io/v1beta1 PodGroup's gang minCount; without a size, the
// members seen at first; a member that comes after its gang was placed
// waits for that gang to end and joins the next one), is one
// policy job: GPUs from nvidia.com/gpu limits or one MIG instance, CPU
// and memory requests, tenant from brigade.sim/tenant or the namespace,
// priority from spec.priority, estimate from brigade.sim/estimate or
// brigade.sim/duration (also the oracle), submit time from
// brigade.sim/submitted-at when it lies within 10 s before the creation
// second (a submitter's burst for one instant), else the creation
// timestamp. Jobs submitted at the same time are numbered by the name the
// export gives them (namespace/name, namespace/gang, namespace/job), so that a replay
// breaks their ties alike. A gang waits until all its members exist. A
// pod alone with brigade.sim/job (label or annotation) is known by that
// name, not its UID: like a gang's members, the pods a controller
// creates again after an eviction are the same job.
//
// The scheduler only counts GPUs per node: which devices a pod gets is
// the device plugin's choice, so the GPU indices and MIG instances of a
// placement are book-keeping, never sent to the node.
//
// # Rounds
//
// A round after a batch of informer events (20 ms of quiet, cut short by
// a wake-up), at the moment the policy asked to be called (WakeAt: a
// threshold, a quantum's end, a round) and at every tick: Round reads the informers' caches, brings
// the books up to date (ends → Host.Stop; a queued job deleted, bound by
// another, or a node change → rebuild: a fresh cluster, policy and Host,
// running jobs booked where their pods are, queued jobs queued again,
// which is also what a restart does), tells pods that no node could ever
// hold (runner.CheckFits' rule, with taints) why, by a Warning event and
// PodScheduled=False with reason Unschedulable, and keeps them out of the
// policy's queue; then, if the host has news, Host.Schedule. apply checks
// a Start (CheckPlacement, or the MIG instance; each pod's GPUs whole on
// one node; each pod tolerating its node's taints; a placement the pods
// cannot take as it is, split across nodes or on a node they do not
// tolerate, is repacked onto nodes of the same GPU model, its own first,
// since the policies place GPUs, not pods, and would choose it again)
// and books it. A Preempt is booked at once, as the simulator does
// (preempt.go): the policy hears the victim stop at the call's instant,
// and a call that preempted is followed by up to three more in the same
// round, which place what it freed; a victim known by its gang or
// brigade.sim/job is queued again at once, the same policy job, and can
// start once its controller has created its pods again (a Start before
// that is refused); its preempted attempts ride on the Bindings of its
// next one (brigade.sim/attempts, with its first submission), where the
// export reads them. A start on GPUs whose victim's pods are still on the
// node waits to be bound until they are gone. A refusal is the policy's
// Rejection. Every Binding carries the round's clock
// (brigade.sim/bound-at, which the API server copies onto the pod), and
// the round that books a job's end writes its clock on the job's pods
// (brigade.sim/released-at): the API's own times keep whole seconds, and
// the export needs the moments the policy saw. After the calls, Evictions
// (policy/v1, with each pod's terminationGracePeriodSeconds, for the pod
// of its UID; a preempted job's pods are all evicted, one that ran to its
// end since the books stopped it too, for no end of its was booked) go
// out 16 at a time, and Bindings 8 jobs at a time: a worker makes only its own job's API calls,
// in the protocol's order, and the books hear each job's outcome after
// all workers are done, in the round's order. The call's latency
// (Schedule and apply, no API call) and each Binding's are measured
// apart.
//
// # Restart safety
//
// The API server is the one truth; the scheduler keeps no state of its
// own. On start it lists pods and nodes and books every bound, unfinished
// pod where it is before its first decision. A failed Binding is never
// retried as such: the pod is read back; bound where it should be, it is
// bound; bound elsewhere, it is booked there; gone, its job ends;
// otherwise the start is taken back (the policy hears the end) and the
// job queued again at the next round, for the policy to decide afresh.
//
// A gang is bound in two steps. First its placement, a JSON map from
// member to node, is written in the annotation brigade.sim/placement of
// every member, each by an Update that fails on a conflict; a failure
// removes what was written and queues the gang again. Only then are the
// members bound. A placement is committed when every live member carries
// the same value naming a node for each. A scheduler that starts and finds
// a committed placement whose members are not all bound books it and
// binds the rest to the nodes it names, never choosing again (unless a
// node it names is no longer schedulable and no member is bound yet: then
// the annotation is removed and the gang queued again); a placement
// on some members only was never committed, nothing of it was bound, and
// it is overwritten by the next one.
//
// A gang's eviction is committed the same way: every member is marked
// brigade.sim/evicting before the first Eviction, and a scheduler that
// finds a running gang with a marked member preempts it and evicts the
// rest of it (a gang evicted in part would run on broken). An Eviction
// that fails is sent again at the next round.
//
// Only the holder of the coordination.k8s.io Lease schedules
// (--leader-elect; RunOptions set its timings, kube-scheduler's
// 15s/10s/2s by default).
//
// The moments where a kill -9 hurts most (a gang annotated on some
// members, committed, half bound; a Binding sent but not booked; an
// eviction half sent; the books half rebuilt) call crashpoint.At, which
// does nothing outside kube/crashtest's child processes.
//
// # Files
//
//   - scheduler.go: Scheduler, Config, Source, Round, syncing pods and
//     nodes into jobs and the cluster, rebuilding and adopting.
//   - apply.go: admission (never, the unschedulable event and
//     condition), apply, pods to a placement's nodes, the gang commit,
//     Bindings and their reconciliation.
//   - nodes.go: Nodes to hwmodel nodes: product names, MIG packing,
//     taints and tolerations.
//   - pods.go: Pods to requests, gangs, tenants and estimates.
//   - podgroups.go: a gang's size from its PodGroup object.
//   - foreign.go: what other schedulers' pods hold, out of the nodes.
//   - repack.go: a placement the pods cannot take as it is, repacked
//     pod by pod onto nodes of the same model.
//   - source.go: APISource and the informers' source (the partition's
//     nodes, the scheduler's pods, other schedulers' bound pods; no
//     round for a heartbeat).
//   - run.go: Run: informers, rounds, leader election.
//   - bindpool.go: bindAll, the round's Bindings by a few workers, and
//     settle, their outcomes applied to the books; parallel, the pool.
//   - preempt.go: preempt, a Preempt in the books; evictAll, the
//     Evictions and a gang's eviction commit; a victim's pods gone
//     (evictionDone); starts that wait for them (deferBlocked).
//   - metrics.go: the Prometheus metrics, and the exact samples Bench
//     reads (KeepSamples).
//   - bench.go: Bench, BenchWorkload: binding throughput and latencies
//     against a real API server (brigade-kube bench; BenchmarkRealAPI in
//     realapi_bench_test.go runs it on the test control plane).
//   - export.go: Export, a results folder for brigade sim --replay, with
//     the scheduler's sub-second times where it recorded them and each
//     job's preempted attempts.
package scheduler
