// Package fill runs the experiment of the FGD paper (Weng et al., "Beware
// of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
// Gradient Descent", USENIX ATC'23, Figure 9(a) and Figure 7): a cluster
// is filled with pods drawn from a trace until their GPU requests reach a
// multiple of its GPU capacity; pods never leave; each placement policy
// faces the same pods; the curves are the GPU allocation ratio and the
// fragmentation ratio against the arrived load. `brigade fill` is its
// command line; Run is its entry point.
//
// The definitions below follow the paper's artifact, the simulator
// hkust-adsl/kubernetes-scheduler-simulator (pkg/simulator/core.go and
// pkg/simulator/simulator.go for the workload and the per-pod report, pkg/utils/frag.go
// for typical pods and fragmentation, experiments/run_scripts/ for the
// settings, experiments/analysis/merge_*_discrete*.py for the per-percent
// tables). With them and the placements of package policies, every
// published per-seed curve of the five deterministic policies (fgd,
// bestfit, dotprod, packing, clustering) is reproduced exactly, on all 17
// pod lists and all ten seeds: the GPU allocation ratio to the hundredth
// at every whole percent (docs/fgd-reproduction.md counts them;
// TestPublishedCurves checks the default trace, with the fragmentation
// ratio within its rounding to two decimals). Random placement cannot be
// replayed: its draws depend on the order of the artifact's parallel
// node filter.
//
// # The experiment
//
// Inputs: a cluster (a node list) of G GPUs, capacity C = 1000·G milli-GPU;
// a pod list P (every row, whatever its phase); a load L (1.3 in the
// paper); seeds (42–51 in the paper); placement policies.
//
// Workload of one seed (Sample). A math/rand generator seeded with the
// seed draws one Int; P sorted by name is shuffled; then, if P's GPU
// requests exceed L·C, pods at random positions are dropped until they do
// not, and otherwise pods drawn uniformly from P (sorted by name), with
// replacement, are appended until a draw's per-GPU request would take the
// total past L·C (that draw is discarded). This is the artifact's sequence
// of calls on Go's math/rand, seeded the same way, so a seed gives the
// artifact's workload: seed 42 turns the default list's 8,152 pods into
// 10,866. The stop test is the artifact's too, quirk included: it adds the
// draw's gpu_milli (per GPU) where it then adds num_gpu × gpu_milli, so a
// multi-GPU pod that fits under L·C by its per-GPU share is kept and the
// total may end above L·C, by less than that pod's request (seed 45 of the
// default trace ends at 130.1%). Keeping the quirk keeps every later draw
// of the generator, and so the node order below, identical to the
// artifact's.
//
// Node order. After sampling, the same generator gives ten numbers to the
// artifact's Kubernetes informers, then draws a permutation of the nodes
// (sorted by name), and the artifact renames node i with the prefix
// perm[i]; its scheduler breaks score ties by the smallest name. Run hands
// that order to the placers as policies.PlacerConfig.TieRank.
//
// Target workload. FGD's "typical pods" are built once per pod list, from
// P itself (not from the sampled workload), by
// policies.TargetFromRequestSpecs with each pod's gpu_spec text, as the
// artifact keys them.
//
// Arrivals. The pods arrive one at a time in that order. Each is offered
// once to the policy's placer (policies.NewPlacerWith with the seed, the
// target and the tie order) on the current cluster: if it places the pod, the pod holds its
// GPUs, CPU and memory to the end; if not, the pod fails, stays failed,
// and the next pod comes. No pod leaves. CPU-only pods are placed too
// (they take CPU and memory) and add nothing to the GPU load. Every
// (policy, seed) pair starts from an empty cluster.
//
// Records. After each arrival i, placed or not, one record:
//
//   - arrived A_i: the GPU milli requested by pods 1..i (num_gpu ×
//     gpu_milli; failed pods count; CPU-only pods add 0);
//   - allocated U_i: the GPU milli the cluster has allocated;
//   - fragmented F_i: Σ over nodes of policies.NodeFragmentation for the
//     target workload (expected milli that the typical pods cannot use);
//     idle I_i = C − U_i.
//
// and, as the artifact's analysis computes them, in float64:
//
//	a_i = A_i / G / 10                (arrived, % of C)
//	u_i = round2(U_i / G / 10)        (GPU allocation ratio, %)
//	f_i = round2(100 · F_i / I_i)     (fragmentation ratio, % of idle; 0 when I_i = 0)
//	k_i = round-half-to-even(a_i)     (the record's whole percent)
//
// where round2 is Python's round(x, 2): the nearest two-decimal value,
// exact ties to even.
//
// Curves. For every whole percent k = 0, 1, ..., floor(100·L), the curve's
// gpu_alloc_pct is the mean of u_i over the records with k_i = k, rounded
// to two decimals, and frag_pct likewise of f_i. The mean and its rounding
// are computed as pandas and NumPy do them (NumPy's pairwise summation, a
// division, then numpy.around: x × 100 rounded to even, ÷ 100), so that a
// mean within a rounding error of a two-decimal tie rounds the same way.
// When no record has k_i = k, the mean is over the records with k_i = k−1
// or k+1 (the artifact's rule).
// When there is none either (the artifact leaves a gap; here it happens
// only on clusters a few pods can fill), the value is the last record's
// before k, or the empty cluster's (0, and its fragmentation ratio) when
// no pod arrived before k.
//
// fill.csv has one row per (policy, seed, k): trace, policy, seed,
// arrived_pct = k, gpu_alloc_pct, frag_pct, with two decimals; policies in
// the order given, then seeds in the order given, then k. The summary and
// the plot use the mean over seeds at each k.
//
// # Invariants
//
// Tests hold every run to these:
//
//   - Sample is a function of (pods, C, L, seed); its pods' GPU requests
//     sum to more than L·C minus the largest per-GPU request, and to at
//     most L·C plus the largest (num_gpu − 1) × gpu_milli of a pod (the
//     artifact's stop test); when P asks for less than L·C, every pod of P
//     arrives once in its first |P| places; when it asks for more, each
//     arrives at most once and the total is at most L·C.
//   - Per curve: gpu_alloc_pct never decreases with k (pods never leave),
//     lies in [0, 100] and never exceeds k + 1.5 (only arrived pods hold
//     GPUs, and the value at k may come from records at k+1, whose arrived
//     load is below k + 1.5); frag_pct lies in [0, 100]; Placed <= Pods;
//     AllocatedMilli <= ArrivedMilli.
//   - Results do not depend on the number of workers or GOMAXPROCS:
//     fill.csv is byte-identical from run to run.
//
// # Determinism
//
// Runs are independent; Run spreads (policy, seed) pairs over goroutines
// and stores each result at its own index, so the output order is fixed.
// The sampling draws from its own math/rand source (never the global
// one), random placement from the placer's seed; no map iteration reaches
// an output.
//
// # Files
//
//   - sample.go: Sample, one seed's workload as the artifact draws it.
//   - run.go: Experiment and Run, the fills, the curves and their
//     per-percent means.
//   - published.go: the artifact's published means (LoadPublished).
//   - output.go: fill.csv and the summary table; report.go: the
//     Markdown page of every pod list; plot.go: the figure.
package fill
