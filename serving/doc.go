// Package serving simulates online inference services beside batch
// training jobs on one shared cluster: request classes arriving
// by a rate schedule or a trace, a gateway that queues and routes them to
// replicas (round robin, least outstanding, latency-aware, priority lanes),
// outlier ejection as a circuit breaker, and an autoscaler whose new
// replicas take GPUs from the cluster, waiting for them or preempting
// lower-priority batch jobs, and pay the model load time.
//
// Requests are simulated by the package's own event loop; the batch jobs
// by sim.Engine. The two meet only where replicas take or give back GPUs:
// the serving model is the engine's sim.Coupled, and the engine hands it
// the cluster at those instants only (autoscaler ticks, the end of a
// drain, the horizon, and any scheduling point while a replica waits for
// GPUs). Between them the request loop needs nothing from the cluster, so
// a day of traffic costs a heap push and pop per request and never the
// batch engine's attention. Injected hardware faults (sim.Config.Faults)
// reach replicas through sim.CoupledFaults (faults.go): a replica on broken
// hardware stops answering at once and is replaced when the fault is
// detected.
//
// Invariants:
//
//   - Deterministic: the same Spec, cluster, batch workload, policy and
//     seed give the same Result. Each (service, class) draws from its own
//     PCG stream, so changing one service's traffic leaves the others';
//     stage pools draw from streams of their own, and a service's pools
//     from the service's, so neither changes any request.
//   - Events are ordered by (time, sequence number); ties never depend on
//     map order.
//   - A request is in exactly one place: a stage pool (queued or served),
//     the gateway queue, one replica, or finished (completed, error,
//     timeout); at the horizon the rest are counted unfinished. Requests =
//     Completed + Errors + Timeouts + Unfinished per class. A request
//     failed over to a backup is still booked in the class it arrived in.
//   - A replica holds its GPUs from placement to release; the cluster's
//     books (checked by the batch engine) include them.
//   - Replicas of one service are identical but for injected incidents.
//
// # Files
//
//   - spec.go: Spec, the services, classes, routing, health and
//     autoscaling the engine runs; validate.go: Spec.Check, the one
//     statement of a valid service (the engine's Validate and experiment
//     files both run it).
//   - experiment.go: experiment files (LoadExperiment, ParseExperiment,
//     Experiment, variants, the batch workload); experiment_file.go: the
//     file's schema as package config's strict decoder reads it, and the
//     defaults it fills; experiment_check.go: Experiment.Check, what a
//     valid experiment is beyond its services; experiment_faults.go: the
//     faults section; experiment_run.go: RunExperiment (the baseline and
//     every variant, in parallel) and RunSet.WriteFolder.
//   - run.go: Config and Run, one variant beside the batch engine.
//   - engine.go: the serving model (sim.Coupled): requests, replicas and
//     their states; heap.go: its event heap.
//   - arrivals.go: rate schedules and per-class PCG streams; trace.go:
//     request traces.
//   - pipeline.go: stage pools before the gateway (StagePool, per-stage
//     latency books); pools.go: pools of one service's replicas (Pool),
//     expanded into one engine service each, SERVICE/POOL.
//   - route.go: the gateway's queue and routing; batching.go: continuous
//     batching; iterlevel.go: the iteration-level replica
//     (IterationModel, replica.iteration in experiment files), which
//     hands requests to package iteration's engine and runs its steps
//     as events; prefix.go: classes' shared prompt prefixes (prefix
//     groups, cached across requests by the iteration-level engine);
//     health.go: outlier ejection; autoscale.go: the autoscaler.
//   - faults.go: injected faults under replicas (sim.CoupledFaults).
//   - failover.go: service-level circuit breaking (Service.Failover): the
//     healthy count kept as replicas change state, the circuit that sends
//     a service's traffic to its backup, its validation and its books.
//   - books.go: the per-bucket books; hist.go: log-bucketed latency
//     histograms; signals.go: the golden signals beyond TTFT and E2E
//     (inter-token latency, time per output token, tokens, saturation,
//     preemptions), kept in O(1) per request; result.go: Result and its
//     parts.
//   - alerts.go: alert rules (AlertRule), their checks and their
//     evaluation during the run over rings of per-interval histograms;
//     the autoscaler's on_alert reads their state.
//   - write.go: summary.json, the CSV files and the table; alerts_write.go:
//     alerts.csv, the alerts in the summary and their table; plot.go: the
//     plots.
//   - plan.go: what a replica plan needs of serving (package plan does
//     the planning): Fixed, one service run alone at N warm replicas, and
//     ServiceResult.Metric, a target's metric read from its results.
package serving
