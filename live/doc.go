// Package live is Brigade's live mode: the thin adapter that will drive the
// same policies that brigade sim benchmarks against this machine's real GPUs
// through NVML (DESIGN.md, issue 7).
//
// What exists so far is the NVML foundation: GPU discovery (Discover, behind
// go-nvml's nvml.Interface so that tests run against go-nvml's mock DGX
// machines, and DiscoverLocal, which opens the real library) and the
// `brigade gpus` command built on it. Job launching, health polling,
// persistence and metrics are planned, not built.
//
// Invariants:
//
//   - Live mode never changes GPU settings. It never enables or disables
//     MIG, never creates or destroys GPU or compute instances, and never
//     resets a GPU. Discover calls read-only NVML queries only. No flag to
//     change GPU settings exists; if one is ever added, its name must say so
//     and no test may pass it.
//   - The code that touches go-nvml's nvml package sits behind the cgo build
//     tag (go-nvml does not compile without cgo). With CGO_ENABLED=0 the
//     package still builds, and DiscoverLocal reports ErrNoCgo ("built
//     without cgo: NVML unavailable").
//   - sim, policies and hwmodel never import live; live imports them.
package live
