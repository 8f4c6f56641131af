// Package iteration is an iteration-level model of one LLM serving
// replica (a vLLM-style engine), the alternative to package serving's
// token-rate replica: the replica runs engine steps; each step forms a
// batch (continuing prefills and decodes first, then new requests from
// its wait queue, within a sequence limit and a token budget, prompts in
// chunks), allocates KV cache blocks, preempts the newest running
// request (recompute) when blocks run out, and takes the time a latency
// model gives for that batch's composition.
//
// The latency model and its coefficients follow BLIS (inference-sim's
// "trained-physics" model) so that the coefficients BLIS fitted can be
// used as they are, and the replica's scheduling follows the same vLLM
// rules; the agreement with BLIS's own runs is measured by
// TestBLISAgreement and written in docs/serving.md.
//
// Invariants:
//
//   - Deterministic: the same requests and parameters give the same
//     results; nothing depends on map order or the wall clock.
//   - Blocks are conserved: free + held = capacity after every step,
//     a block shared by requests of one prefix group counting once (its
//     reference count is its holders; it is free when that is 0), and a
//     request holds ceil(tokens in cache / block size) blocks, but for
//     one case kept from BLIS: a request without a prefix group whose
//     whole prompt is found in the prefix cache (back after a
//     preemption) takes no blocks for it (see allocPrompt). A request of
//     a group always computes its last prompt token, as vLLM does.
//   - A request is in exactly one place: waiting (not yet arrived at the
//     queue, or queued), running, or done; each ends once.
//   - A step costs O(running batch) plus O(1) per request admitted or
//     preempted; the waiting queue is a deque, never scanned.
//
// # Files
//
//   - model.go: Arch and ReadArch (a Hugging Face config.json).
//   - gpu.go: GPU and ReadGPUs (a hardware_config.json).
//   - coeffs.go: Coeffs and ReadCoeffs (defaults.yaml's
//     trained_physics_coefficients).
//   - latency.go: Latency, a step's time from its Batch.
//   - kvcap.go: WeightBytes and KVBlocks, the cache's capacity.
//   - kvcache.go: the block cache with its LRU free list and prefix
//     caching: blocks shared by a prefix group's requests, and the
//     private blocks a preempted request finds again.
//   - replica.go: Replica, the engine steps.
//   - replay.go: Replay of a request list, BLIS trace files, Summary.
//   - calibrate.go: Calibrate, fitting the coefficients to measured
//     requests by replaying them, and WriteCoeffs.
package iteration
