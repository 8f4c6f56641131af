// Package sim is Brigade's discrete-event engine: it replays a workload on a
// modelled cluster and lets a policies.Policy decide what runs where.
//
// The engine is single-threaded. Time is integer microseconds
// (hwmodel.Time). Finish events sit in a typed binary heap ordered by
// (time, sequence number); arrivals are read in order straight from the
// workload, which is sorted by submission time, so the heap holds only
// running attempts. At each instant the engine applies every arrival and
// finish due, then makes one scheduling point: it calls the policy once,
// drops the capacity the policy reserved while deciding, and applies the
// decisions one by one against the true books. A decision that would break
// a rule (a job that is not ready, a placement that gives the job other than
// it asked for, a GPU model the job refuses, capacity that is not free) is
// rejected and reported to the policy at its next call; the engine keeps
// going.
//
// Job life: Pending (submitted, dependencies outstanding) → Ready (queued) →
// Running → Succeeded or Failed. A failed attempt with retries left goes
// back to Ready; a job that fails for good fails every job that depends on
// it, transitively, without running them. A job whose request no node of
// the cluster could ever hold fails at submission ("unsatisfiable"), so it
// cannot block a strict queue for ever.
//
// Invariants, re-verified after every event when Config.CheckInvariants is
// set (tests set it):
//   - no node, GPU, CPU or memory pool is over capacity, and the derived
//     counters agree with a recount (hwmodel.Cluster.CheckInvariants);
//   - every job is in exactly one state and the engine's counters of
//     queued, running, in-system and terminal jobs agree with a recount;
//   - no task runs while a dependency has not succeeded;
//   - time never goes backwards; every submitted job ends in exactly one
//     terminal state (Run fails with an error naming stranded jobs
//     otherwise).
//
// MIG (mig.go): Reconfigure decisions are applied at once and their new
// instances unblocked Config.MIGReconfigTime later, by an event that also
// makes a scheduling point; a MIG placement must name one free instance
// whose profile matches the job, with the instance's milli; tenants are
// charged their placements' milli. With static layouts (no
// Config.MIGReconfigure) a MIG job that no instance matches fails at
// submission, and without conversion a whole or shared job that only
// MIG GPUs could hold does too. The invariant check also verifies that
// every busy instance is held by exactly one running MIG job and that
// blocked instances exist only while a reconfiguration is in flight.
//
// Determinism: sim never reads the wall clock, never starts goroutines,
// never uses the global random source and never lets map order reach an
// output. The same workload, cluster and policy give the same Result.
package sim
