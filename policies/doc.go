// Package policies holds the contract between a scheduling policy and its
// two drivers (the simulator in package sim and the live mode), and the
// policies themselves: queue orders (FCFS, SJF, priority with aging,
// weighted fair share) combined with a placement (first fit, best fit) and
// an optional EASY backfill. Policies are built by name with New.
//
// # Contract invariants
//
// A driver calls Policy.Schedule(v) at every scheduling point. Both sides
// keep these rules:
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
//     then applies the decisions in order, rejecting any that no longer fit.
//     The policy never changes the cluster otherwise. hwmodel.Cluster is the
//     capacity truth; a policy's own counts are hints for ordering and
//     backfill only.
//   - The []Decision that Schedule returns belongs to the policy and is
//     reused by its next call: the driver must consume it (apply the
//     decisions, copy what it keeps) before calling Schedule again. The
//     hwmodel.Placement in each decision is never reused by the policy, so
//     the driver may keep it for the job's lifetime (to release it later).
//   - Jobs are read through v.Job(id); the pointers stay valid for the run
//     and are read-only to the policy. Job.Estimate is > 0.
//   - Determinism: every order breaks ties by JobID; no map iteration, wall
//     clock, goroutine or global random source is used; the same events give
//     the same decisions.
//
// # Orders
//
// Every order is a static key, so insert and remove are O(log n) in a
// github.com/google/btree:
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
// that model is the one reserved, and its idle surplus then is the extra.
// Only backfilled jobs placed on the reserved model consume the extra. For
// a CPU-only job the same walk counts CPU and memory cluster-wide instead,
// since that is what blocks it, and backfilled jobs consume CPU and memory
// extra. Node boundaries are ignored, so the blocked job may still not fit
// at the shadow time (fragmentation, a node short of CPU); if the running
// jobs never free enough, the shadow time is the last estimated end and
// the extra is zero. Running jobs are indexed by (estimated end, ID) in a
// btree, maintained from this policy's Start decisions and the Started,
// Rejected and Ended events, so the walk never sorts.
//
// The backfill walk stops early when the cluster has no free GPU share
// left and no CPU-only job is queued. A CPU-only job is never held back by
// GPU accounting: behind a blocked GPU job it uses none of the reserved
// GPUs. Within a call, a single-node request that needs at least as much
// of everything as one that already failed to place (on no more GPU
// models) is skipped without a node scan, since capacity only shrinks
// during a call. Preemption is not used.
//
// # Allocation
//
// In steady state a call allocates nothing beyond its decisions: slices
// are reused, the btrees recycle nodes, and placements are cut from slabs
// of shares allocated a few hundred at a time.
package policies
