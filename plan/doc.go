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
// Mixes of models are not searched. For one model, Search assumes that the
// targets, once met, stay met as the cluster grows (waits fall, and so on;
// "monotone-ish"), and finds the smallest node count that meets them with
// an exponential search from the smallest size followed by a binary search
// in the last bracket: O(log n) simulations instead of n. Every size tried
// is kept as evidence. The answer is the cheapest model's smallest passing
// cluster: by GPU count, or by cost (GPUs × price per GPU-hour) when prices
// are given; ties go to the fewer GPUs, then to the model named first.
//
// A metric that is not monotone in size (utilisation falls as the cluster
// grows, so a utilisation floor caps the size from above) can make the
// passing sizes an interval rather than a suffix; the exponential phase
// then stops at the first passing size it meets, and the binary search
// finds the smallest passing size within the last bracket. The evidence
// table shows every size tried, so such cases can be checked by eye.
package plan
