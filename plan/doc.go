// Package plan answers capacity-planning questions: "how many GPUs of
// which kind does a batch workload need to meet our targets?" (brigade
// plan: nodes of a GPU model) and "how many replicas does a service need?"
// (brigade serve --plan: fixed replicas of one service). One planner
// answers both; what differs is the axis sized (AxisNodes or
// AxisReplicas), the vocabulary of targets and the evaluator that runs one
// size on one seed.
//
// A target is a metric, optionally of a request class, a comparison (<=,
// >=, <, >) and a bound: "wait_s.p99<=1800", "interactive.ttft_p99<=1s".
// ParseTargets reads a list of them in a Catalogue's vocabulary, which
// gives each metric its unit (how a bound is written: a plain number,
// seconds with duration syntax, a fraction or percentage, a rate) and its
// trend as the size grows. SummaryMetrics is a cluster plan's vocabulary
// (the numeric summary.json fields, trends unknown); ServiceMetrics a
// replica plan's (a service's latencies, SLO attainment, errors,
// unfinished requests, throughput and saturation, each with a known
// trend).
//
// Invariants:
//
//   - A size meets a target when it holds on every seed: the worst value
//     across seeds (Target.Worse) is the one compared and reported. A size
//     that met a target only on average would miss it on some seeds.
//   - Search is the one size search: from the smallest size it doubles the
//     step (lo, lo+1, lo+3, lo+7, ...) until a size passes, then bisects
//     the last bracket, O(log n) sizes instead of n. It may simulate
//     several sizes at once (its width), but the sizes it uses, their
//     order and the answer do not depend on the width; Result.Points and
//     Config.Progress hold only the sizes used, so a plan is the same on
//     any number of cores.
//   - Which targets drive the search: when every target's trend is known,
//     the Improving ones (a latency ceiling, an SLO floor); otherwise Run
//     simulates the largest size first and takes the targets that hold
//     there (a wait ceiling is met by growing). The others (a utilisation
//     or saturation floor) are met, if at all, by shrinking, so they are
//     checked at the smallest size the search finds: if they fail there,
//     no size in range meets every target, and the message says which
//     targets fail, by how much, at the largest size tried and at that
//     size.
//   - A size at which some job can never fit a node fails whatever its
//     metrics.
//   - The answer is the best model's smallest passing size: by GPU count,
//     or by cost (GPUs × price per GPU-hour) when prices are given; ties go
//     to the fewer GPUs, then to the model named first. A Mix (two or more
//     models in fixed node shares, mix.go) is sized as a model is, by its
//     total node count, its nodes split by Mix.Split (largest remainder,
//     so the counts always sum to the size) and its cost the sum of its
//     parts'. Without a speed table the simulator runs every job at its
//     measured pace on any model, so models differ only in price (and in
//     fit, for jobs that ask for a model) and a mix never beats the
//     cheapest single model that fits; with one (ClusterConfig.Speeds) a
//     faster model meets the targets at fewer GPUs, and a mix can win.
//
// Layering: plan stands over the simulators it sizes for. It imports
// runner (a batch workload on a cluster) and serving (serving.Fixed, a
// service run alone at N replicas, and ServiceResult.Metric); neither
// imports plan.
//
// # Files
//
//   - target.go: Target, its Holds, Worse, Improving and Miss; Unit, Trend,
//     Metric and Catalogue; ParseTargets.
//   - search.go: Search, the size search, with its look-ahead.
//   - mix.go: Mix, a fleet of several models in node shares; Mixes, every
//     two-model mix of a list at a number of steps.
//   - plan.go: Axis, Sample, Evaluator, Point, Config, Result and Run, the
//     planner: a search per model over the worst values across seeds.
//   - cluster.go: cluster plans: Metrics and SummaryMetrics (summary.json
//     fields), ClusterConfig and Cluster (runner runs per size and seed).
//   - replicas.go: replica plans: ServiceMetrics, ReplicaConfig and
//     Replicas (serving.Fixed runs per count and seed).
//   - output.go: the answer or why there is none, the evidence table
//     (text, Markdown, CSV) and a plot panel per target, for either axis.
package plan
