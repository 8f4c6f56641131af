// Package policies holds the contract between a scheduling policy and its
// drivers (the simulator in package sim and the live mode), the driver half
// of that contract that every driver embeds (Host, host.go), the policy
// spec grammar (ParseSpec, Spec.String: spec.go), and the policies
// themselves: queue orders (FCFS, SJF, priority with aging, weighted fair
// share, the seed's locality score, Slurm's multifactor priority) combined with a placement and an optional EASY backfill, the
// preemptive orders, and the kueue order, Kueue's quotas and admission (see Kueue). Policies
// are built from a spec with Spec.New (or New with an order and Options);
// placements alone by name with NewPlacer or NewPlacerWith. The
// conformance suites for drivers and policies are in policies/policytest.
//
// # Contract invariants
//
// A driver calls Policy.Schedule(v) at every scheduling point: an instant
// at which the policy has news (Host.HasNews), anything besides the answers
// to its own last Starts and Reconfigures. Both sides keep these rules:
//
//   - Events are incremental. v.Events() reports what happened since the
//     previous call: Queued (a job entered the queue, once per entry),
//     Started (a Start the driver accepted), Ended (a job stopped running)
//     and Rejected (a Start the driver refused; the job is still queued).
//     Every Start a policy returns is answered at the next call by exactly
//     one Started or Rejected. A policy keeps its own queue index from these
//     events and never rebuilds it from a full pending list.
//   - A policy removes a job from its queue when it decides to start it and
//     puts it back if the Start is Rejected.
//   - Within one call a policy calls v.Reserve(p) for each Start it returns,
//     so v.Cluster() shows the capacity as taken to later placements in the
//     same call. The driver drops the reservations when the call returns,
//     then applies the decisions in order, rejecting any that no longer fit
//     (Host lets a Start that is the next reservation keep it instead: the
//     same books and answers, without releasing and allocating it again).
//     v.Cluster() is a hwmodel.ClusterView, which has no mutating method
//     and returns nothing that aliases the cluster's state, so Reserve is
//     the only way a policy can change the cluster: the type enforces it.
//     Placers and the fragmentation measures take a ClusterView too. The
//     driver's hwmodel.Cluster is the capacity truth; a policy's own counts
//     are hints for ordering and backfill only.
//   - The []Decision that Schedule returns belongs to the policy and is
//     reused by its next call: the driver must consume it (apply the
//     decisions, copy what it keeps) before calling Schedule again. The
//     hwmodel.Placement in each decision is never reused by the policy, so
//     the driver may keep it for the job's lifetime (to release it later).
//   - Reconfigure decisions (MIG) are answered like Starts: by exactly one
//     Reconfigured or Rejected at the next call; an applied one is later
//     reported once in Unblocked, when its new instances become usable.
//     Decisions are applied in order, so a Start after a Reconfigure of
//     the same GPU in one call would see the new layout: a policy reserves
//     what a reconfiguration destroys (mig.go does).
//   - Jobs are read through v.Job(id); the pointers stay valid for the run
//     and are read-only to the policy. Job.Estimate is > 0.
//   - Determinism: every order breaks ties by JobID; no map iteration, wall
//     clock, goroutine or global random source is used; the same events give
//     the same decisions.
//
// # Orders
//
// Every order but seed and multifactor is a static key, so insert and
// remove are O(log n) in a B+ tree (qtree.go) whose linked leaves keep
// their keys in a window of a fixed array: taking the first job and
// queueing one behind the last, as FCFS does, are O(1):
//
//   - fcfs: (Submit, ID).
//   - sjf: (duration, Submit, ID); duration is Estimate, or Oracle when
//     Options.UseOracle is set and Oracle > 0.
//   - priority: score = WPriority·priority + WWait·(now − Queued)/hour,
//     highest first. Since now is common to all queued jobs the order equals
//     that of the static key WPriority·priority − WWait·Queued/hour: two
//     waiting jobs age at the same rate, so a job that has waited long
//     enough overtakes a higher priority one that came later.
//   - fair: one FCFS queue per tenant; the next job comes from the tenant
//     (with queued jobs) whose dominant share divided by its weight is the
//     smallest, ties by tenant index. A dominant share is the largest of
//     allocated/cluster total over GPU milli, CPU and memory, skipping a
//     resource the cluster has none of. Shares come from v.Tenants() at the
//     start of a call and are updated locally as the call starts jobs.
//     Each pick costs O(tenants + log n); the queued jobs are never scanned.
//     A non-positive weight counts as 1.
//   - multifactor: Slurm's priority/multifactor, w_age·age +
//     w_fs·fairshare + w_size·jobsize + w_qos·qos over factors in [0, 1],
//     highest first, then ID; fair share is the classic 2^(−U/S) over each tenant's GPU
//     usage, integrated exactly between calls and decayed continuously by
//     a half-life (multifactor.go has the factors and why the classic
//     formula). Its key is static only between recomputations: as Slurm
//     recomputes every PriorityCalcPeriod, the order is rebuilt when
//     CalcPeriod has passed since the last rebuild, O(n log n) for n
//     queued jobs, and otherwise a call costs O(tenants) for the usage
//     books plus O(log n) per job entering (its priority as of the last
//     rebuild, age 0 if it entered since) or leaving. Every key is
//     evaluated at the same instant, so with only the age weight the
//     order is that of queue entry, FCFS's for jobs queued once. A
//     rebuild refills the tree with the leaves it had (qtree.reset), so
//     it allocates only inner nodes. Measured (brigade bench, 100,000
//     jobs on 1,000 GPUs): 5.1 µs of CPU per event at load 0.9 (fcfs
//     1.0 µs), 240 µs at load 20 with about 90,000 jobs queued, where
//     each rebuild re-ranks them all.
//
// # The scheduler
//
// Schedule walks the queue in order and starts every job the placer can
// place. By default the order is strict: the first job that cannot be
// placed blocks every job behind it (head-of-line blocking), so a call
// costs O(jobs started × placement + log n), whatever the queue length.
//
// With Options.Backfill (EASY), the first blocked job gets a reservation
// and the walk goes on through at most Options.BackfillDepth further jobs,
// starting those that fit now and either end (now + duration) by the
// reservation's shadow time or use no more than its remaining extra (which
// they then consume).
//
// The reservation is count-based, the standard approximation. For a GPU
// job, running jobs are walked in order of estimated end (start +
// duration, an overdue job counting as ending now), adding the GPU milli
// each releases to its GPU model's idle count, until one model the blocked
// job accepts has enough idle GPUs for it: that time is the shadow time,
// that model is the one reserved, and its idle surplus then, every job
// that ends by the shadow time released (those tied with the job that met
// the need included, as standard EASY counts them), is the extra.
// Only backfilled jobs placed on the reserved model consume the extra. For
// a CPU-only job the same walk counts CPU and memory cluster-wide instead,
// since that is what blocks it, and backfilled jobs consume CPU and memory
// extra. Node boundaries are ignored, so the blocked job may still not fit
// at the shadow time (fragmentation, a node short of CPU); if the running
// jobs never free enough, the shadow time is the last estimated end and
// the extra is zero. Running jobs are indexed by (estimated end, ID) in a
// B+ tree like the queue's, maintained from this policy's Start decisions
// and the Started, Rejected and Ended events, so the walk never sorts;
// without backfill nothing reads it and the policy keeps none.
//
// GPU-model speeds (a SpeedView whose HasSpeeds holds). Durations are
// measured on a job's Reference model; at its placement it takes
// hwmodel.ScaleDuration(duration, View.Rate(j, p)). A running job's
// estimated end is its start plus that; a backfill candidate that could
// end by the shadow time on the run's fastest model (SpeedView.MaxRate) is
// placed and then tested by its end where it landed, and one that could
// not is held to the extra as before. The walk's early stops compare
// durations with the time to the shadow stretched by MaxRate, so they
// still skip only jobs that could not start. Without speeds every rate is
// 1 and all of this is the rule above. The fastest option (Options.Fastest)
// tries the models a job accepts from its highest rate down and places it
// on the first with room.
//
// Data locality (a DataView whose HasData holds). The seed order scores
// each job w_p·priority + w_d·d_i + w_w·hours waited, d_i = 1 when some
// node holding its dataset has room for it (or it reads none); the
// waiting term raises the score, as the seed's prose says, and a weight
// of 0 means 0. The order is rebuilt at each call, since d_i changes with
// what is free. The local option tries, before the placement, the first
// node in node order that holds the job's dataset and has room (single-
// node jobs); with LocalDelay a job finding none waits until LocalDelay
// after it was queued (checked at scheduling points), then goes remote.
//
// The backfill walk stops early when the cluster has no free GPU share
// left and no CPU-only job is queued, and when no queued job at all could
// start: none is CPU-only or MIG, and either none fits (none fractional,
// the smallest asks for more whole GPUs than the cluster has idle) or
// none passes the reservation's test (all land on the reserved models, the
// smallest asks for more than the extra, the shortest ends after the
// shadow time). The queue-wide minimums behind this test are kept as jobs
// enter and leave the queue, and it runs after the reservation and after
// each backfilled start, so it changes no decision. Within the walk, each
// leaf of the queue's tree summarises its jobs (per size class of request,
// the smallest size and shortest duration; whether any is CPU-only or
// MIG), and the walk steps over a leaf, or a run of jobs, that by the same
// tests could not start, counting them against BackfillDepth as visited:
// the walk then costs about one step per leaf instead of one per job. A CPU-only job is never held back by
// GPU accounting: behind a blocked GPU job it uses none of the reserved
// GPUs. Within a call, a single-node request that needs at least as much
// of everything as one that already failed to place (on no more GPU
// models) is skipped without a node scan, since capacity only shrinks
// during a call. The plain scheduler never preempts.
//
// # Preemptive orders
//
// las, tiresias, srtf, gandiva and priority+preempt rank queued and
// running jobs together and preempt (preemptive.go, preemptorders.go).
// At each call one scheduler walks both in the order's key and admits,
// by count, each job whose GPU need fits a budget per GPU model (idle
// whole GPUs plus what running jobs hold there), never blocking the jobs
// behind one that does not fit. When the idle GPUs cannot hold the
// admitted queued jobs by count, the running jobs the budget did not
// admit are preempted (only those on models the blocked jobs need, each
// once) and nothing starts; the driver calls again at the same instant
// after a preemption, and that call places the admitted jobs in key
// order on what the victims left. Otherwise the admitted jobs are placed
// in key order at once; one the placer finds no room for is blocked and
// has victims preempted for it if any can help. A job that cannot be
// placed with no victim left (fragmentation) is stuck,
// taking no budget, until capacity comes back; meanwhile queued jobs
// that fit start in key order. Keys that change with time ask the driver
// for a wake-up (WakeView): las and tiresias at the next threshold
// crossing or starvation promotion, gandiva at the next quantum's end.
// The running jobs sit in a tree by a key that changes only at times
// known in advance (a crossing, a quantum's end, an estimate used up),
// kept in a heap, so time passing costs nothing until such a time comes,
// and then O(log n) for that job. A call costs O(log n) per event and per
// queued job visited; only when some running job ranks below the best
// queued one (a preemption may be due) does it also step through the
// running jobs in key order, O(1) each. It never passes over the whole
// queue.
// Backfill, MIG reconfiguration, fastest and local do not combine with
// them (New refuses). What a preemption costs is the driver's: the
// simulator keeps what the job's checkpoints saved, or all its progress
// for a Suspender (gandiva) or with sim.Config.SaveOnPreempt.
//
// # Gavel
//
// The gavel order (gavel.go, gavellp.go) is Gavel's heterogeneity-aware
// policy (Narayanan et al., OSDI'20): an LP over the speed table gives
// each active job the fraction of time X_jt it should run on each GPU
// type, for max-min fairness of throughput normalised by an equal share
// (Options.Objective GavelMaxMin, the default) or for finish-time
// fairness (GavelFTF); every Options.Round (DefaultRound, 6 minutes) jobs
// get types by X_jt over the share of their time they received there,
// the others are preempted, and the order asks to be woken at the next
// round. The LP is over classes of jobs that the objective cannot tell
// apart, at most gavelMaxClasses, so its size does not grow with the
// jobs; it is solved again only when the active set has changed. It
// suspends (Suspender). Backfill, MIG reconfiguration, fastest and local
// do not combine with it.
//
// # Optimus
//
// The optimus order (optimus.go) is the Optimus baseline of the Pollux
// artifact (Peng et al., EuroSys'18, as petuum/adaptdl's
// simulator/optimus.py runs it): every Options.Round (DefaultOptimusRound,
// 1 minute) it sizes every active job anew by a greedy on the predicted
// drop in its time to finish per added GPU, keeps the GPUs of the jobs
// whose size is unchanged, and preempts and restarts the others on the
// nodes with the most idle GPUs. It reads each job's application, batch
// size and epoch from an AppView: it is meant for runs under the
// application model, whose jobs are elastic (any GPU count; the driver
// rescales the batch configuration). A job the view cannot time runs on
// its request, never resized. It suspends (Suspender). Backfill, MIG
// reconfiguration, fastest and local do not combine with it.
//
// # Placements
//
// firstfit is the lowest-numbered node that fits (placement.go); mostfree
// (mostfree.go) takes idle GPUs from the emptiest node first, spreading a
// job over as many nodes as that takes, as the Pollux artifact's Tiresias
// places. The
// others are the six placements of the FGD paper (Weng et al., "Beware of
// Fragmentation", USENIX ATC'23), computed as its simulator
// (hkust-adsl/kubernetes-scheduler-simulator) computes them, so that runs
// compare with its published results: each feasible node gets an integer
// score, the highest wins, and ties go to the first node of a tie order
// (PlacerConfig.TieRank, or a random permutation of the nodes drawn once
// from PlacerConfig.Seed, which is what the reference's tie rule amounts
// to). Free and requested CPU are divided by 128,000 milli-CPU, GPU milli
// by 8,000; freeGPU is a node's free GPU milli summed over its GPUs.
//
//   - bestfit: int(100·(1 − ½·(freeCPU − cpu)/128k − ½·(freeGPU − gpu)/8k)).
//   - dotprod: int(100·(1 − (freeCPU/128k·cpu/128k + freeGPU/8k·gpu/8k)/2)).
//   - packing: CPU-only 0; a node with all GPUs idle max(33 − idle, idle);
//     else, on the GPUs the request would take (least sufficient free
//     first), any idle one gives max(50 − idle GPUs taken, 33), otherwise
//     max(100 − ⌊Σ⌊free·100/1000⌋/10⌋, 50).
//   - clustering: CPU-only 0; base ⌊25·(8000 − freeGPU)/8000⌋, plus 75 if
//     the node runs only jobs of the request's kind (sharing, or k whole
//     GPUs; hwmodel.Cluster.SharesOfKind), 50 if that kind among others,
//     25 if nothing.
//   - random: a feasible node drawn uniformly from Seed's stream (math/rand/v2
//     PCG); a sharing request's GPU likewise among those with room.
//   - fgd: int(100·sigmoid((frag before − frag after)/1000)), frag being
//     NodeFragmentation for PlacerConfig.Target; a sharing request tries
//     every GPU with room and takes the best (lowest index on ties).
//
// Whole-GPU requests take the node's lowest-numbered idle GPUs; the other
// scored placements give a sharing request the node's tightest GPU (least
// free share that suffices, lowest index on ties). Feasibility is the same
// for all: CPU, memory, an accepted GPU model and GPU room; a request that
// needs more GPUs than any accepted node holds is a gang (placement.go).
//
// Fragmentation (frag.go) follows the paper: for a target workload of
// request classes with popularities, a node's idle GPU milli that a class
// cannot use counts as fragmented for it (all of it when the class does
// not fit the node at all: wrong model, short of CPU, too few GPUs with
// room, or a CPU-only class; otherwise the free milli on GPUs with less
// than the class's per-GPU share), and NodeFragmentation is the
// popularity-weighted sum. TargetFromRequests builds the paper's target
// ("typical pods") from a trace. FragMeter keeps each node's value until
// the node's generation changes (FGD reads it per node); FragTracker keeps
// a cluster's figure, math.Round(ClusterFragmentation), current from the
// cluster's change journal (hwmodel.Cluster.Changes, ChangedNode), in O(1)
// per call beyond re-evaluating the nodes that changed, and bit for bit
// equal to the full pass: an exact
// fixed-point total decides the rounding unless the ordered float sum's
// error bound reaches a half, when it sums in node order (see frag.go).
//
// Speed: no placement looks at every node for a single-node request.
// Each placer keeps an index of its own beside the cluster (its order is
// the placer's: node order or tie order), brought up to date at every
// Place through the cluster's change journal (hwmodel.Cluster.Changes,
// ChangedNode), so upkeep costs O(log n) per node changed since the last
// call (index.go):
//
//   - firstfit: per-model trees of free capacity in node order
//     (nodetree.go); the first node that fits is found in O(log n).
//   - packing: the same trees in tie order, which also hold each used
//     node's freest GPU per hundred of free milli and the sizes of idle
//     nodes: packing's score is constant on a handful of such classes,
//     so the answer is the first node of the best class, O(log n) each.
//   - bestfit, dotprod: per model and idle GPU count, a treap ordered by
//     free CPU (the nodes with the request's CPU are a suffix), whose
//     subtrees carry the bounds of free CPU and GPU milli that bound the
//     score; the search skips subtrees that cannot beat the best node
//     found (cpuorder.go).
//   - fgd, clustering: scores cached per request shape and node
//     generation, and per shape a max tree of scores in tie order
//     (shapeindex.go); a placement re-scores only the nodes changed since
//     its shape was last placed, then descends to the best in O(log n).
//   - random: feasible nodes counted and drawn 64 at a time from bitmasks
//     of capacity levels (randindex.go), O(n/64).
//
// Gangs (more GPUs than any accepted node holds) still pass over the
// nodes. Every index gives exactly the linear scan's answer:
// TestIndexedPlacementsMatchReference runs each placement beside the
// linear algorithm it replaced (placeref_test.go) on random clusters and
// request sequences. BenchmarkPlace measures a placement on a half-full
// cluster shaped like the Alibaba trace's.
//
// # MIG
//
// MIG placement (one rule for every placer), dynamic reconfiguration
// (Options.MIGReconfigure, MIGConvertWhole), right-sizing and how MIG jobs
// interact with backfill are documented in mig.go.
//
// # Kueue
//
// The kueue order (kueuepolicy.go, kueuepreempt.go) admits jobs as Kueue
// (kueue.x-k8s.io) admits workloads, over a Kueue configuration
// (kueue.go, Options.Kueue; package kueue reads it from manifests). A
// job belongs to the LocalQueue its tenant names (Kueue.QueueOf) and so
// to that LocalQueue's ClusterQueue; a job of no LocalQueue is held and
// never admitted (drivers check tenants first). Its priority is
// Job.Priority, which plays the part of a WorkloadPriorityClass's value
// (traces and job files carry a number, not a class name); the classes
// are read, checked and kept in Kueue.Priorities.
//
//   - Queues: each ClusterQueue keeps its pending jobs in a B+ tree by
//     (priority, highest first; the time the job entered the queue,
//     which after a preemption is Kueue's eviction time; ID).
//     StrictFIFO: an inadmissible head blocks its queue for the call.
//     BestEffortFIFO: it is passed over, at most DefaultBackfillDepth
//     times per queue and call.
//   - Quota: usage is counted per ClusterQueue, flavor and resource
//     (GPU milli, CPU milli, memory MiB; a resource the ClusterQueue does
//     not cover is not limited) from the job's admission to its end.
//     A cohort's pool per flavor and resource is Σ lendable (the lending
//     limit, or the nominal quota where none is set), and in use is Σ
//     max(0, usage − guaranteed), guaranteed being nominal − lendable. A
//     ClusterQueue may use max(0, guaranteed − usage) + (pool − in use)
//     more, at most nominal + borrowingLimit − usage; a ClusterQueue
//     without a cohort is a cohort of its own, so it may use its nominal
//     quota. It borrows when that takes it above nominal.
//   - Admission, one cycle per admission: the heads of the ClusterQueues
//     (each tried at its first flavor, in the resource group's order,
//     where it fits, borrowing if it must) are ordered by: those that fit
//     without borrowing first, then with fair sharing the lower share,
//     then priority, entry time and the ClusterQueue's index. The first
//     is admitted on that flavor: its quota counts from then on, as
//     Kueue's admission reserves quota. It starts when the placer finds
//     it room on nodes of the flavor's GPU model; until then it waits,
//     admitted, holding its quota (as a workload whose pods are pending).
//     Quota alone is not room: a whole-node job may wait for a node that
//     small jobs keep fragmented.
//   - A call goes: the jobs that preempted at an earlier call first (so
//     the room their victims freed is theirs), then the admitted jobs
//     waiting for room, in one order over all ClusterQueues (priority,
//     entry time, ID), then the cycle above.
//   - Preemption, for a head that fits on no flavor: on the first flavor
//     where preempting makes room, victims are chosen as Kueue chooses
//     them (preemptFor's comment): candidates of other ClusterQueues of
//     the cohort that borrow first (reclaimWithinCohort), then lower
//     priority, then the most recently admitted; taken in order until the
//     head fits, then those not needed are given back; borrowWithinCohort
//     with maxPriorityThreshold as Kueue's. The victims are preempted only
//     if the nodes would then have room for the head (roomAfter): victims
//     whose quota lets it in but whose GPUs do not would be preempted for
//     nothing. A victim still waiting for room goes back to its queue at
//     once; the others get Preempt decisions. The head's quota is held
//     for the rest of the call, as Kueue's cycle holds it, so no other
//     head borrows what its victims free; it is admitted at a later call,
//     once they have stopped (the driver's next scheduling point).
//   - Fair sharing (Kueue's Configuration fairSharing.enable): a
//     ClusterQueue's share is the largest, over resources, of what it
//     borrows (usage above nominal, summed over its flavors) over its
//     cohort's lendable total, divided by its weight (fairSharing.weight,
//     default 1; weight 0 borrows last); heads are ordered by the share
//     they would have once admitted. Fair sharing's preemption
//     strategies are not modelled: preemption follows each
//     ClusterQueue's preemption rules.
//
// Cost: absorbing an event is O(log n) (the job's pending or admitted
// tree). Each call tries the W admitted jobs waiting for room: W
// placements (W is bounded by the quotas over the smallest request, not
// by the queue). Each admission costs O(Q·F) to order the heads of Q
// ClusterQueues over F flavors (a head's place is kept until its queue's
// head or the usage changes), plus the placement, plus O(log n)
// for the trees. A head passed over costs O(log n) and, unless a like
// head already failed since usage last changed (a memo of a few per
// queue), a preemption search: it walks the admitted jobs of the head's
// ClusterQueue below its priority and of its cohort's borrowing
// ClusterQueues on one flavor, and sorts them, O(r log r) for r
// candidates. BestEffortFIFO passes over at most DefaultBackfillDepth
// heads per ClusterQueue and call. No call scans the queued jobs:
// BenchmarkKueueOverloaded shows the cost of a call flat from 10,000 to
// 100,000 queued jobs.
//
// # Allocation
//
// In steady state a call allocates nothing beyond its decisions: slices
// are reused, the trees recycle nodes (the queue's tree keeps a spare
// leaf, and its last leaf when it empties), and placements are cut from
// slabs of shares allocated a few hundred at a time.
//
// # Files
//
//   - contract.go: the contract: Policy, View, Decision, Events, Job,
//     Tenant.
//   - host.go: Host, the driver half every driver embeds.
//   - spec.go: Spec, ParseSpec and Spec.String, the policy grammar; the
//     options table is the one place an option is added.
//   - registry.go: Options, New and the order names.
//   - multifactor.go: the multifactor order (mfQueue): its factors, the
//     usage books and their decay, the recomputation period; Multifactor,
//     its configuration.
//   - locality.go: data locality: the seed order (seedQueue, its score
//     recomputed at each call), the local option's placement and its
//     delay, fitsOn.
//   - scheduler.go: the scheduler: the queue walk, the running-job index,
//     placing a job (fastest, local); backfill.go: the EASY reservation,
//     the backfill test and its early stops; queue.go: the orders' static
//     keys; qtree.go: the B+ tree of the queue and the running-job index,
//     its cursor and leaf summaries.
//   - placement.go: Placer, first fit, the placement names; scored.go: the
//     FGD paper's scored placements; fgd.go: FragMeter and the fgd score;
//     mostfree.go: the Pollux artifact's placement (most idle node first).
//   - frag.go: NodeFragmentation, ClusterFragmentation and FragTracker;
//     target.go: target workloads (typical pods) and PlacerConfig.
//   - index.go: how placers follow the cluster's change journal;
//     nodetree.go: trees of free capacity (first fit, packing);
//     cpuorder.go: the CPU-ordered treaps (best fit, dot product);
//     shapeindex.go: scores by request shape (fgd, clustering);
//     randindex.go: random's feasible-node bitmasks.
//   - frag.go: NodeFragmentation; target.go: target workloads (typical
//     pods) and PlacerConfig.
//   - mig.go: MIG placement, reconfiguration planning and right-sizing.
//   - preemptive.go: the preemptor, the preemptive orders' scheduler;
//     preemptorders.go: their keys (lasOrder for las and tiresias,
//     srtfOrder, priorityPreemptOrder, gandivaOrder).
//   - gavel.go: the gavel order, a preemptive policy of its own: the
//     active jobs, their classes, the rounds and the work-conserving fill
//     between them; gavellp.go: its LPs over classes of jobs (max-min
//     fairness, finish-time fairness by bisection) on gonum's simplex.
//   - optimus.go: the optimus order, a preemptive policy of its own: its
//     books, the greedy sizing on marginal gain and the placement.
//   - kueue.go: Kueue, the kueue order's configuration (flavors,
//     ClusterQueues and their quotas, LocalQueues, priority classes) as
//     plain data; kueuepolicy.go: the kueue order, its queues, quota books
//     and admission cycle; kueuepreempt.go: choosing preemption victims.
package policies
