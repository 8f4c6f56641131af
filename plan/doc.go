// Package plan answers the capacity-planning question "how many GPUs of
// which kind do we need to meet our targets?" for brigade plan.
//
// A target is a summary.json metric (a dotted path such as wait_s.p99 or
// starvation.starved_jobs), a comparison (<=, >=, <, >) and a number.
// A cluster size meets a target when the target holds for every seed: the
// worst value across seeds is the one compared and reported. That is the
// conservative reading: a size that meets the target only on average would
// miss it on some seeds.
//
// What is searched: for each GPU model, clusters of identical nodes of that
// model (gpus-per-node GPUs each), with a node count in the allowed range.
// Mixes of models are not searched. The simulator does not scale job
// durations by GPU model, so models differ only in price (and in fit, for
// jobs that ask for a model); a mix of models would therefore cost more
// than the same number of GPUs of the cheapest model that fits every job.
//
// The search for one model first simulates the largest size. The targets
// that hold there are the ones a bigger cluster meets (wait ceilings,
// starvation counts: "monotone-ish" in size); Search then finds the
// smallest node count at which all of them hold and every job fits, with
// an exponential search from the smallest size (lo, lo+1, lo+3, lo+7, ...)
// followed by a binary search in the last bracket: O(log n) simulations
// instead of n. Targets that fail at the largest size are met, if at all,
// by a smaller cluster (a utilisation floor: a bigger cluster is idler), so
// they are checked at that smallest size: if they hold, it is the answer;
// if not, no size in range meets every target, and the message says which
// targets fail, by how much, at the largest size and at that size. Every
// size tried is kept as evidence.
//
// The answer is the best model's smallest passing cluster: by GPU count, or
// by cost (GPUs × price per GPU-hour) when prices are given; ties go to
// the fewer GPUs, then to the model named first.
//
// # Files
//
//   - target.go: Target, ParseTargets and the summary metrics a target
//     may name.
//   - search.go: Plan and Search, the size search over an Evaluator that
//     the caller supplies (brigade plan simulates), and its Result.
//   - output.go: the answer, the evidence table (text, CSV, Markdown) and
//     a plot per target.
package plan
