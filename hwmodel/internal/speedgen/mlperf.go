package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MLPerf benchmarks and their class names. ResNet-50 is also a Gavel
// class (resnet50, single-GPU PyTorch steps); the MLPerf one is 8-GPU
// time to train, so it keeps a name of its own.
var mlperfClasses = map[string]string{
	"bert":             "bert",
	"dlrm":             "dlrm",
	"dlrm_dcnv2":       "dlrm-dcnv2",
	"llama2_70b_lora":  "llama2-70b-lora",
	"llama31_8b":       "llama31-8b",
	"maskrcnn":         "maskrcnn",
	"minigo":           "minigo",
	"resnet":           "mlperf-resnet",
	"retinanet":        "retinanet",
	"rgat":             "rgat",
	"rnnt":             "rnnt",
	"stable_diffusion": "stable-diffusion",
	"unet3d":           "unet3d",
}

// MLPerf accelerator classes (as the shared files spell them) and the
// catalogue models they become. GB200 and the rest have no catalogue
// model and are left out.
var mlperfModels = map[string]string{
	"A100-SXM-80GB":        "A100-80GB",
	"A100-SXM-40GB":        "A100-40GB",
	"H100-SXM-80GB":        "H100-80GB",
	"H200-SXM-141GB":       "H200-141GB",
	"B200-SXM-180GB":       "B200-180GB",
	"B300-SXM-270GB":       "B300-270GB",
	"MI300X":               "MI300X-192GB",
	"MI325X":               "MI325X-256GB",
	"MI355X":               "MI355X-288GB",
	"NVIDIA A30":           "A30",
	"NVIDIA A30-PCIE-24GB": "A30",
	"NVIDIA L40":           "L40",
	"NVIDIA L40S":          "L40S",
	"NVIDIA L4":            "L4",
}

// mlperfOrder is the order models are linked in: each model's ratio is
// taken against a model earlier in the list.
var mlperfOrder = []string{"A100-80GB", "H100-80GB", "H200-141GB", "B200-180GB", "B300-270GB", "MI300X-192GB", "MI325X-256GB", "MI355X-288GB"}

// extraModels are measured from the per-system scores, against A100-80GB
// or H100-80GB in the same round at the same accelerator and node count.
var extraModels = []string{"A100-40GB", "A30", "L40", "L40S"}

// l4Model has only 6-GPU results; it gets a generic row, estimated per
// GPU, and no class rows.
const l4Model = "L4"

// excluded lists selected MLPerf pairs left out, with the reason.
var excluded = map[[2]string]string{
	{"bert", "MI300X"}: "the only 8-GPU MI300X BERT result is tinygrad's, limited by its software",
}

// notGeneric lists classes kept as class rows but left out of the generic
// speeds, with the reason.
var notGeneric = map[string]string{
	"minigo": "reinforcement learning bound by its CPU self-play, not the GPU",
}

// roundKey orders rounds "v2.1" < "v3.0" < "v5.1".
func roundKey(s string) int {
	maj, min, _ := strings.Cut(strings.TrimPrefix(s, "v"), ".")
	return atoiOr0(maj)*100 + atoiOr0(min)
}

// mlperfLinks returns every measured link, class by class, and each
// class's root: A100-80GB (speed 1) where the class measures it, else the
// first model of mlperfOrder it measures.
func mlperfLinks(shared string) ([]link, map[string]string, error) {
	rel, err := readTable(filepath.Join(shared, mlperfRelFile))
	if err != nil {
		return nil, nil, err
	}
	type pair struct {
		r            map[string]string
		acc, base    string
		ratio        float64
		roundA, same int
		roundB       int
	}
	byClass := map[string][]pair{}
	var chained []map[string]string
	for _, r := range rel.rows {
		if r["selected"] != "yes" {
			continue
		}
		if _, ok := excluded[[2]string{r["benchmark"], r["accelerator"]}]; ok {
			continue
		}
		acc, ok1 := mlperfModels[r["accelerator"]]
		base, ok2 := mlperfModels[r["baseline"]]
		if !ok1 || !ok2 {
			continue // GB200: not a catalogue model
		}
		if _, ok := mlperfClasses[r["benchmark"]]; !ok {
			return nil, nil, fmt.Errorf("%s: benchmark %s has no class name", rel.name, r["benchmark"])
		}
		if r["pairing"] == "chained" {
			chained = append(chained, r)
			continue
		}
		a, err := rel.float(r, "best_minutes_accelerator")
		if err != nil {
			return nil, nil, err
		}
		b, err := rel.float(r, "best_minutes_baseline")
		if err != nil {
			return nil, nil, err
		}
		sb, err := rel.float(r, "speedup_best")
		if err != nil {
			return nil, nil, err
		}
		if math.Abs(b/a-sb) > 0.0006 {
			return nil, nil, fmt.Errorf("%s: %s %s/%s: minutes give %.4f, speedup_best says %.3f", rel.name, r["benchmark"], acc, base, b/a, sb)
		}
		same := 0
		if r["pairing"] == "same" {
			same = 1
		}
		byClass[r["benchmark"]] = append(byClass[r["benchmark"]], pair{r, acc, base, b / a, roundKey(r["round_accelerator"]), same, roundKey(r["round_baseline"])})
	}

	var links []link
	roots := map[string]string{}
	benches := mapKeys(byClass)
	for _, bench := range benches {
		ps := byClass[bench]
		in := map[string]bool{}
		for _, p := range ps {
			in[p.acc], in[p.base] = true, true
		}
		placed := map[string]bool{}
		for _, m := range mlperfOrder {
			if !in[m] {
				continue
			}
			if len(placed) == 0 {
				roots[bench] = m
				placed[m] = true
				continue
			}
			// The pair of the latest round against a model already placed,
			// a same-round pair before an adjacent-round one.
			var best *pair
			for i := range ps {
				p := &ps[i]
				if p.acc != m || !placed[p.base] {
					continue
				}
				if best == nil || p.roundA > best.roundA || p.roundA == best.roundA && (p.same > best.same || p.same == best.same && p.roundB > best.roundB) {
					best = p
				}
			}
			if best == nil {
				return nil, nil, fmt.Errorf("%s: %s on %s has no pair against a model placed before it", rel.name, bench, m)
			}
			pairing := best.r["round_accelerator"] + " same round"
			if best.same == 0 {
				pairing = best.r["round_accelerator"] + " vs " + best.r["round_baseline"] + " adjacent rounds"
			}
			links = append(links, link{bench, m, best.base, best.ratio,
				fmt.Sprintf("%s 8 GPUs %s: x%s vs %s (%s)", mlperfSetup, bestVsBest, num(best.ratio), best.base, pairing)})
			placed[m] = true
		}
		for m := range in {
			if !placed[m] {
				return nil, nil, fmt.Errorf("%s: %s on %s is not in the linking order", rel.name, bench, m)
			}
		}
	}

	// The chained values of the shared file must agree with the links.
	val := classValues(links, roots, nil)
	for _, r := range chained {
		if roots[r["benchmark"]] != commonRef || mlperfModels[r["baseline"]] != commonRef {
			continue
		}
		want, err := rel.float(r, "speedup_best")
		if err != nil {
			return nil, nil, err
		}
		got := val[r["benchmark"]][mlperfModels[r["accelerator"]]]
		if math.Abs(got/want-1) > 0.002 {
			return nil, nil, fmt.Errorf("%s: chained %s %s/A100 is %.3f, the links give %.3f", rel.name, r["benchmark"], r["accelerator"], want, got)
		}
	}

	extra, err := scoreLinks(shared, roots)
	if err != nil {
		return nil, nil, err
	}
	return append(links, extra...), roots, nil
}

// classValues puts each class on the common scale: its root at 1 when the
// root is A100-80GB, else at the root's generic speed (rootSpeed), and
// every other model at its parent's value times its ratio. L4's links
// (per GPU, from 6-GPU results) make no class rows.
func classValues(links []link, roots map[string]string, rootSpeed map[string]float64) map[string]map[string]float64 {
	val := map[string]map[string]float64{}
	for bench, root := range roots {
		v := 1.0
		if root != commonRef {
			v = rootSpeed[root]
		}
		val[bench] = map[string]float64{root: v}
	}
	for _, l := range links { // links are in linking order within a class
		if c := val[l.class]; c != nil && l.model != l4Model {
			c[l.model] = c[l.parent] * l.ratio
		}
	}
	return val
}

// scoreLinks measures A100-40GB, A30, L40 and L40S against A100-80GB or
// H100-80GB from the per-system scores, and L4 per GPU against H100-80GB.
func scoreLinks(shared string, roots map[string]string) ([]link, error) {
	t, err := readTable(filepath.Join(shared, mlperfAllFile))
	if err != nil {
		return nil, err
	}
	// best[group][model]: the fastest score of a model in one round,
	// benchmark, accelerator count and node count.
	best := map[group]map[string]score{}
	for _, r := range t.rows {
		if r["division"] != "closed" || r["duplicate_of"] != "" || r["minutes"] == "" {
			continue
		}
		m, ok := mlperfModels[r["accelerator_class"]]
		if !ok {
			continue
		}
		min, err := t.float(r, "minutes")
		if err != nil {
			return nil, err
		}
		accs, err1 := strconv.Atoi(r["accelerators"])
		nodes, err2 := strconv.ParseFloat(r["nodes"], 64)
		if err1 != nil || err2 != nil || nodes != math.Trunc(nodes) {
			return nil, fmt.Errorf("%s: bad accelerators or nodes %q %q", t.name, r["accelerators"], r["nodes"])
		}
		g := group{r["round"], r["benchmark_canonical"], accs, int(nodes)}
		if best[g] == nil {
			best[g] = map[string]score{}
		}
		if s, ok := best[g][m]; !ok || min < s.minutes || min == s.minutes && r["system"] < s.system {
			best[g][m] = score{min, r["system"]}
		}
	}
	groups := mapKeys(best)
	// Preference: 8 accelerators, then the latest round, then the count
	// nearest 8, then the larger count.
	slices.SortFunc(groups, func(a, b group) int {
		if (a.accs == 8) != (b.accs == 8) {
			if a.accs == 8 {
				return -1
			}
			return 1
		}
		if d := roundKey(b.round) - roundKey(a.round); d != 0 {
			return d
		}
		if d := abs(a.accs-8) - abs(b.accs-8); d != 0 {
			return d
		}
		if d := b.accs - a.accs; d != 0 {
			return d
		}
		if d := a.nodes - b.nodes; d != 0 {
			return d
		}
		return strings.Compare(a.bench, b.bench)
	})
	var links []link
	for _, m := range append(slices.Clone(extraModels), l4Model) {
		for _, bench := range mapKeys(roots) {
			if roots[bench] != commonRef {
				continue // only classes that measure A100-80GB and H100-80GB
			}
			if l, ok := scoreLink(groups, best, m, bench); ok {
				links = append(links, l)
			}
		}
	}
	return links, nil
}

// group is one round, benchmark, accelerator count and node count.
type group struct {
	round, bench string
	accs, nodes  int
}

// score is the fastest system's time to train within a group.
type score struct {
	minutes float64
	system  string
}

// scoreLink is model m's link in bench from the first group (in the
// preferred order) that measures m and its baseline: A100-80GB when the
// group has it, else H100-80GB. L4, which has 6-GPU results only, is
// compared per GPU with the 8-GPU H100-80GB of the same round.
func scoreLink(groups []group, best map[group]map[string]score, m, bench string) (link, bool) {
	for _, g := range groups {
		if g.bench != bench {
			continue
		}
		if m == l4Model {
			h, ok := best[g]["H100-80GB"]
			if !ok || g.accs != 8 {
				continue
			}
			for _, o := range groups {
				s, ok := best[o][m]
				if !ok || o.round != g.round || o.bench != bench || o.nodes != g.nodes {
					continue
				}
				ratio := h.minutes * float64(g.accs) / (s.minutes * float64(o.accs))
				return link{bench, m, "H100-80GB", ratio, fmt.Sprintf("%s %s: L4 %d GPUs vs H100-80GB %d GPUs, %s: x%s vs H100-80GB",
					mlperfSetup, g.round, o.accs, g.accs, linearScaleFix, num(ratio))}, true
			}
			continue
		}
		s, ok := best[g][m]
		if !ok {
			continue
		}
		base := commonRef
		b, ok := best[g][base]
		if !ok {
			base = "H100-80GB"
			if b, ok = best[g][base]; !ok {
				continue
			}
		}
		ratio := b.minutes / s.minutes
		what := fmt.Sprintf("%s %d GPUs on %d node(s) %s same round %s", mlperfSetup, g.accs, g.nodes, bestVsBest, g.round)
		if g.accs != 8 {
			what += " (no 8-GPU pair on equal node counts)"
		}
		return link{bench, m, base, ratio, fmt.Sprintf("%s: x%s vs %s", what, num(ratio), base)}, true
	}
	return link{}, false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
