// Package hwmodel is Brigade's model of the hardware: the GPU catalogue
// (gpu.go), MIG profiles and layouts (mig.go), nodes and the cluster's
// capacity books (cluster.go, with the MIG books in cluster_mig.go),
// simulated time (time.go), and cluster specs and presets that describe a
// cluster as data (spec.go, presets.go; the schema is in docs/cluster.md;
// files are read by package config's strict decoder, and ClusterSpec,
// NodeGroupSpec and NodeSpec each say in their Check what a valid one is),
// and hardware failures (faults.go: Fault, the FailureModel that draws
// them as a renewal process per node and per GPU from its own seeded
// stream, ParseFault and ReadFaultTrace).
//
// # Invariants
//
// The capacity red line. A Cluster's free capacity always lies within its
// capacity: for every node, free CPU in 0..CPUMilli and free memory in
// 0..MemoryMiB; for every GPU, free share in 0..1000 milli (MilliPerGPU).
// The derived counters (idle GPUs per node and per model, allocated milli)
// always equal what the per-GPU state implies. Cluster.Allocate is the only
// way to take capacity and refuses, changing nothing, anything that would
// cross the line (the error wraps ErrCapacity); Cluster.Release panics
// rather than return more than was taken, because that means the caller's
// books are wrong. Cluster.CheckInvariants recomputes everything and is
// called by tests after every event.
//
// Generations and the journal. A node's Generation goes up by one with
// every Allocate or Release that touches it and every Reconfigure or
// UnblockMIG that changes one of its GPUs, and nothing else changes it;
// each such change is one entry of the cluster's change journal
// (journal.go), so Changes() is always the sum of the generations and
// ChangedNode lists, for the latest changes, which node each was. Readers
// (placement's node indexes, policies.FragTracker) use it to look again
// only at what changed; a node whose Generation is unchanged has the same
// books.
//
// MIG. There is one MIG table (mig.go): per model, its compute and memory
// slices and its profiles with NVML ids, instance limits, memory and valid
// starts; nvml_test.go checks it against go-nvml's mock machines, with
// real hardware winning where they disagree. Every layout a Cluster holds
// passes ValidateMIGLayout for its GPU's model: every start is one its
// profile allows, no two instances share a memory slice, no profile has
// more instances than its maximum, and the instances take at most the
// GPU's compute slices; so the model never holds a partition NVML would
// refuse. A MIG-enabled GPU has FreeMilli 0 and is never an idle GPU, so
// it is never handed out whole or shared; it is used one instance per
// share, and an instance is busy at most once. Busy and blocked instances
// are disjoint and exist in the layout; AllocatedMilli counts each busy
// instance's MIGMilli; MIGSliceStats equals what the layouts and busy bits
// imply. Cluster.Reconfigure never destroys or moves a busy instance,
// partitions a whole GPU only while idle, turns MIG off only with no
// instance busy, and changes nothing when it refuses. CheckInvariants
// re-verifies all of it.
//
// Copies. Lookups return copies (MIGProfiles, MIGLayoutOf) except
// Cluster.Node, which placement calls in inner loops: its Node.MIG slice
// is the cluster's description of the initial layouts and must be treated
// as read-only (the books keep their own copy, so a caller that writes
// into it corrupts only the description).
//
// Pure data. Nothing in this package reads the clock (Time is simulated
// microseconds, handed in by the driver), starts a goroutine, or uses the
// global random source. Functions that read files (LoadClusterSpec,
// ResolveCluster) do only that, and are not used on the event path. The
// catalogue and presets are fixed tables: lookups return copies, so no
// caller can change what another sees.
//
// Determinism. Model IDs are catalogue positions (append only); node
// indexes follow a spec's order (node_groups, then nodes); error messages
// list things in fixed order.
//
// # CPU and memory that a spec does not model
//
// A cluster spec may leave a node's cpu_milli or memory_mib out. That node
// then gets UnlimitedCapacity (2^40) of that resource, meaning "not
// modelled": traces without CPU or memory requests ask for 0, which always
// fits, and traces with them never run out. An explicit 0 is a real zero
// capacity (only requests for 0 fit). Reports that compute CPU or memory
// utilisation should skip nodes whose capacity is >= UnlimitedCapacity.
//
// # Files
//
//   - gpu.go: the GPU catalogue (GPUModel, LookupModel) and ModelSet.
//   - mig.go: the MIG table (profiles, slices, NVML ids), layouts and
//     their validation, MIGRequest.
//   - cluster.go: Node, Request, Placement and Cluster, the capacity books
//     (Allocate, Release, CheckInvariants).
//   - cluster_mig.go: the MIG books (instances busy and blocked,
//     Reconfigure); mig_query.go: the lookups placement uses on them.
//   - journal.go: the change journal (Changes, ChangedNode).
//   - clusterview.go: ClusterView, the read-only view policies get.
//   - time.go: Time, simulated microseconds, and ParseDuration.
//   - text.go: Plural, how every message counts things.
//   - spec.go: cluster specs (ClusterSpec, LoadClusterSpec, ResolveCluster)
//     and EditDistance, the one did-you-mean distance.
//   - presets.go: the named clusters.
//   - openb.go: Alibaba's openb node lists as clusters.
//   - faults.go: Fault, FailureModel, ParseFault, fault traces and
//     DeadlineAttempts, the deadline-aware retry grant.
package hwmodel
