package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Files read, relative to the -shared folder.
const (
	gavelSimFile    = "throughputs/gavel/simulation_throughputs_isolated.csv"
	gavelPhysFile   = "throughputs/gavel/physical_cluster_throughputs_isolated.csv"
	gavelSpreadFile = "throughputs/gavel/simulation_throughputs_isolated_unconsolidated.csv"
	gavelPairsFile  = "throughputs/gavel/simulation_throughputs.json"
	polluxApps      = "traces/philly-pollux/applications"
	// gavelSpreadGPU is the GPU whose consolidated and unconsolidated
	// throughputs give the spread factors: the fastest Gavel measured, on
	// which communication weighs most.
	gavelSpreadGPU = "v100"
	mlperfRelFile  = "throughputs/mlperf/mlperf_relative_speed.csv"
	mlperfAllFile  = "throughputs/mlperf/mlperf_training_all_scores.csv"
	commonRef      = "A100-80GB"
	gavelRef       = "V100-16GB"
	mlperfSetup    = "MLPerf Training closed division"
	bestVsBest     = "fastest system vs fastest system"
	linearScaleFix = "per GPU assuming linear scaling"
)

// estimates are the models no shared file measures on the common scale.
// Each is a measured (or, for T4, itself estimated) model's generic speed
// times the ratio of their dense FP16 tensor-core peaks in TFLOPS, from
// NVIDIA's datasheets: vendor numbers, not measurements. A10 and T4 are
// scaled from PCIe siblings rather than from A100 because the measured
// PCIe parts reach well under their peak ratio to A100 (A30 0.34 measured
// against 165/312 = 0.53; L40S 0.52 against 362/312 = 1.16).
var estimates = []struct {
	model, from     string
	peak, fromPeak  float64
	peakName, label string
}{
	{"V100-16GB", "A100-80GB", 125, 312, "V100 SXM2", "no result measures a V100 together with an A100 (MLPerf data from v2.1 has no V100; Gavel has no A100)"},
	{"V100-32GB", "A100-80GB", 125, 312, "V100 SXM2", "no result measures a V100 together with an A100 (MLPerf data from v2.1 has no V100; Gavel has no A100)"},
	{"A10", "A30", 125, 165, "A10", "no A10 result in the data"},
	{"T4", "L4", 65, 121, "T4", "no T4 result in the data"},
}

// Gavel's model names and the class each becomes.
var gavelClasses = []struct{ gavel, class string }{
	{"ResNet-18", "resnet18"},
	{"ResNet-50", "resnet50"},
	{"Transformer", "transformer"},
	{"LM", "lm"},
	{"Recommendation", "recommendation"},
	{"A3C", "a3c"},
	{"CycleGAN", "cyclegan"},
}

// gavelFromPhysical names the Gavel models whose rows come from the
// physical-cluster file: in the simulation file Recommendation runs slower
// on V100 than on K80 and P100 at four of its five batch sizes, which no
// other model does; the physical-cluster file has V100 fastest.
var gavelFromPhysical = map[string]bool{"Recommendation": true}

// Gavel's worker types and the catalogue models they become. Gavel does
// not say which V100 memory size it measured; both get the same rows.
var gavelGPUs = []struct {
	gavel  string
	models []string
}{
	{"k80", []string{"K80"}},
	{"p100", []string{"P100"}},
	{"v100", []string{"V100-16GB", "V100-32GB"}},
}

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

// catalogue models with no data and no basis for an estimate.
var noRow = map[string]bool{"G2": true, "G3": true}

func main() {
	shared := flag.String("shared", "../shared", "the folder holding throughputs/")
	out := flag.String("out", "hwmodel/speeds.csv", "the speed table to write")
	flag.Parse()
	data, err := generate(*shared)
	if err != nil {
		fmt.Fprintln(os.Stderr, "speedgen:", err)
		os.Exit(1)
	}
	if _, err := hwmodel.ReadSpeedTable(bytes.NewReader(data), *out); err != nil {
		fmt.Fprintln(os.Stderr, "speedgen: the table written does not read back:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "speedgen:", err)
		os.Exit(1)
	}
}

// row is one row of the table.
type row struct {
	class  string
	model  string
	speed  float64
	source string
}

// link is one measured ratio: model runs ratio times as fast as parent
// on class's work.
type link struct {
	class, model, parent string
	ratio                float64
	note                 string // where the ratio comes from
}

func generate(shared string) ([]byte, error) {
	gavelRows, gavelMeans, err := gavel(shared)
	if err != nil {
		return nil, err
	}
	links, roots, err := mlperfLinks(shared)
	if err != nil {
		return nil, err
	}
	generic, err := genericSpeeds(links, gavelMeans)
	if err != nil {
		return nil, err
	}
	mlRows, err := mlperfRows(links, roots, generic)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, m := range hwmodel.Models() {
		if g, ok := generic[m.Name]; ok {
			rows = append(rows, row{hwmodel.AnyClass, m.Name, g.speed, g.source})
		}
	}
	rows = append(rows, gavelRows...)
	spreadRows, err := gavelSpread(shared)
	if err != nil {
		return nil, err
	}
	rows = append(rows, spreadRows...)
	polluxRows, err := polluxSpread(shared)
	if err != nil {
		return nil, err
	}
	rows = append(rows, polluxRows...)
	pairRows, err := gavelPairs(shared)
	if err != nil {
		return nil, err
	}
	rows = append(rows, pairRows...)
	rows = append(rows, mlRows...)

	var b bytes.Buffer
	b.WriteString("# Brigade's default GPU speed table: relative throughput by (job class, GPU model).\n")
	b.WriteString("# Only ratios within one class matter; class * is the generic row, A100-80GB = 1.\n")
	b.WriteString("# Generated from shared/throughputs by go run ./hwmodel/internal/speedgen; do not edit.\n")
	b.WriteString("# docs/speeds.md gives the derivation and the provenance of the data.\n")
	w := csv.NewWriter(&b)
	_ = w.Write(hwmodel.SpeedTableHeader)
	for _, r := range rows {
		_ = w.Write([]string{r.class, r.model, num(r.speed), r.source})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// num writes a speed with four significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// geomean is the geometric mean of vs (all > 0).
func geomean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += math.Log(v)
	}
	return math.Exp(s / float64(len(vs)))
}

// table is a CSV file read whole: its rows as maps from column name.
type table struct {
	name string
	rows []map[string]string
}

func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	t := &table{name: filepath.Base(path)}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			m[h] = rec[i]
		}
		t.rows = append(t.rows, m)
	}
	return t, nil
}

func (t *table) float(r map[string]string, col string) (float64, error) {
	v, err := strconv.ParseFloat(r[col], 64)
	if err != nil {
		return 0, fmt.Errorf("%s: column %s: %v", t.name, col, err)
	}
	return v, nil
}

// ---- Gavel ----

// gavel returns the Gavel classes' rows (V100 = 1) and, per catalogue
// model, its speed relative to V100 in each class.
func gavel(shared string) ([]row, map[string][]float64, error) {
	files := map[string]*table{}
	for _, p := range []string{gavelSimFile, gavelPhysFile} {
		t, err := readTable(filepath.Join(shared, p))
		if err != nil {
			return nil, nil, err
		}
		files[p] = t
	}
	known := map[string]bool{}
	for _, gc := range gavelClasses {
		known[gc.gavel] = true
	}
	for _, t := range files {
		for _, r := range t.rows {
			if model, _ := splitJobType(r["job_type"]); !known[model] {
				return nil, nil, fmt.Errorf("%s: Gavel model %q has no class name", t.name, model)
			}
		}
	}
	var rows []row
	means := map[string][]float64{}
	for _, gc := range gavelClasses {
		file := gavelSimFile
		why := "from simulation_throughputs.json, the default of Gavel's simulator"
		if gavelFromPhysical[gc.gavel] {
			file = gavelPhysFile
			why = "from physical_cluster_throughputs.json, not the simulator's default file, which has V100 slower than K80"
		}
		t := files[file]
		// throughput[batch][gpu], scale factor 1 (one GPU).
		thr := map[string]map[string]float64{}
		var batches []string
		for _, r := range t.rows {
			if r["scale_factor"] != "1" {
				continue
			}
			model, batch := splitJobType(r["job_type"])
			if model != gc.gavel {
				continue
			}
			v, err := t.float(r, "throughput")
			if err != nil {
				return nil, nil, err
			}
			if thr[batch] == nil {
				thr[batch] = map[string]float64{}
				batches = append(batches, batch)
			}
			thr[batch][r["gpu_model"]] = v
		}
		if len(batches) == 0 {
			return nil, nil, fmt.Errorf("%s: no scale-factor-1 rows for %s", t.name, gc.gavel)
		}
		slices.SortFunc(batches, func(a, b string) int { return atoiOr0(a) - atoiOr0(b) })
		over := "one configuration"
		if len(batches) > 1 || batches[0] != "" {
			over = "geomean over batch sizes " + strings.Join(batches, "/")
		}
		for _, g := range gavelGPUs {
			var ratios []float64
			for _, bs := range batches {
				v, ref := thr[bs][g.gavel], thr[bs]["v100"]
				if !(v > 0 && ref > 0) {
					return nil, nil, fmt.Errorf("%s: %s batch %q lacks a throughput on %s or v100", t.name, gc.gavel, bs, g.gavel)
				}
				ratios = append(ratios, v/ref)
			}
			s := geomean(ratios)
			src := fmt.Sprintf("measured: Gavel %s (%s), 1 GPU, steps/s vs V100 = 1, %s", t.name, why, over)
			if g.gavel == "v100" {
				src = fmt.Sprintf("measured: Gavel %s (%s), 1 GPU, the class's reference (V100 = 1)", t.name, why)
			}
			for _, m := range g.models {
				msrc := src
				if m == "V100-32GB" {
					msrc = "measured on Gavel's V100, whose memory size Gavel does not state: same as V100-16GB"
				}
				rows = append(rows, row{gc.class, m, s, msrc})
				means[m] = append(means[m], s)
			}
		}
	}
	return rows, means, nil
}

// gavelSpread gives the across-nodes factor of every Gavel class measured
// on several servers: its steps/s with its GPUs spread across servers
// (unconsolidated) over its steps/s with them on one server
// (consolidated), on V100, geomean over batch sizes and scale factors
// 2, 4 and 8. No generic row: work the data does not cover is not slowed
// by spreading unless a table says so.
func gavelSpread(shared string) ([]row, error) {
	cons, err := readTable(filepath.Join(shared, gavelSimFile))
	if err != nil {
		return nil, err
	}
	spread, err := readTable(filepath.Join(shared, gavelSpreadFile))
	if err != nil {
		return nil, err
	}
	key := func(r map[string]string) string { return r["job_type"] + "|" + r["scale_factor"] }
	consolidated := map[string]float64{}
	for _, r := range cons.rows {
		if r["gpu_model"] != gavelSpreadGPU || r["scale_factor"] == "1" {
			continue
		}
		v, err := cons.float(r, "throughput")
		if err != nil {
			return nil, err
		}
		consolidated[key(r)] = v
	}
	ratios := map[string][]float64{}
	for _, r := range spread.rows {
		if r["gpu_model"] != gavelSpreadGPU || r["scale_factor"] == "1" {
			continue
		}
		v, err := spread.float(r, "throughput")
		if err != nil {
			return nil, err
		}
		c, ok := consolidated[key(r)]
		if !ok || !(c > 0 && v > 0) {
			continue // not measured both ways, or did not run
		}
		model, _ := splitJobType(r["job_type"])
		ratios[model] = append(ratios[model], v/c)
	}
	var rows []row
	for _, gc := range gavelClasses {
		rs := ratios[gc.gavel]
		if len(rs) == 0 {
			continue
		}
		f := min(1, geomean(rs))
		rows = append(rows, row{gc.class, "across-nodes", f, fmt.Sprintf("measured: Gavel %s over %s, V100, GPUs spread across servers vs on one server, geomean of %d (batch size, scale factor 2/4/8) pairs", spread.name, cons.name, len(rs))})
	}
	return rows, nil
}

// polluxSpread gives the across-nodes factor of each Pollux application
// (its name is the class): Pollux measured step times by placement on
// nodes of four T4s, a placement written as the GPUs on each node ("4":
// one node of four, "1111": four nodes of one). The factor is the step
// time on one node of G GPUs over the step time of a placement of G GPUs
// on several nodes, at the same local batch size, geomean over every such
// pair with G up to 4 (the largest one-node placement).
func polluxSpread(shared string) ([]row, error) {
	dir := filepath.Join(shared, polluxApps)
	apps, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, app := range apps {
		if !app.IsDir() {
			continue
		}
		t, err := readTable(filepath.Join(dir, app.Name(), "placements.csv"))
		if err != nil {
			return nil, err
		}
		step := map[[2]string]float64{}
		for _, r := range t.rows {
			v, err := t.float(r, "step_time")
			if err != nil {
				return nil, err
			}
			step[[2]string{r["placement"], r["local_bsz"]}] = v
		}
		var ratios []float64
		for _, k := range mapKeys(step) {
			p := k[0]
			if len(p) < 2 {
				continue // one node
			}
			g := 0
			for _, c := range p {
				g += int(c - '0')
			}
			if one, ok := step[[2]string{strconv.Itoa(g), k[1]}]; ok && g <= 4 && one > 0 && step[k] > 0 {
				ratios = append(ratios, one/step[k])
			}
		}
		if len(ratios) == 0 {
			continue
		}
		rows = append(rows, row{app.Name(), "across-nodes", min(1, geomean(ratios)),
			fmt.Sprintf("measured: Pollux %s/placements.csv, T4 nodes of 4, step time on one node over step time spread over nodes, same GPUs and local batch size, geomean of %d pairs", app.Name(), len(ratios))})
	}
	return rows, nil
}

// gavelPairs gives the co-location factors Gavel measured: class A on a
// GPU shared with class B progresses at factor × its pace alone, the
// geometric mean over batch sizes of A's steps/s beside B over A's steps/s
// alone, one GPU each (scale factor 1), on each Gavel GPU. The rows read
// "A+B" in the class column. Recommendation is left out: its simulation-
// file throughputs are implausible (see gavelFromPhysical) and the
// physical-cluster file has no pairs of it on every GPU.
func gavelPairs(shared string) ([]row, error) {
	data, err := os.ReadFile(filepath.Join(shared, gavelPairsFile))
	if err != nil {
		return nil, err
	}
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", gavelPairsFile, err)
	}
	classOf := map[string]string{}
	for _, gc := range gavelClasses {
		if !gavelFromPhysical[gc.gavel] {
			classOf[gc.gavel] = gc.class
		}
	}
	// jobType reads a key "('ResNet-18 (batch size 16)', 1)" of scale
	// factor 1 into its class; "" for another scale factor or class.
	jobType := func(key string) string {
		if !strings.HasPrefix(key, "('") || !strings.HasSuffix(key, "', 1)") {
			return ""
		}
		model, _ := splitJobType(strings.TrimSuffix(strings.TrimPrefix(key, "('"), "', 1)"))
		return classOf[model]
	}
	var rows []row
	for _, g := range gavelGPUs {
		ratios := map[[2]string][]float64{}
		for key, entries := range raw[g.gavel] {
			a := jobType(key)
			if a == "" {
				continue
			}
			var alone float64
			if err := json.Unmarshal(entries["null"], &alone); err != nil || !(alone > 0) {
				continue // did not run alone there
			}
			for pk, pv := range entries {
				b := jobType(pk)
				if pk == "null" || b == "" {
					continue
				}
				var pair []float64
				if err := json.Unmarshal(pv, &pair); err != nil || len(pair) != 2 {
					return nil, fmt.Errorf("%s: %s %s %s: want [steps/s, partner's steps/s]", gavelPairsFile, g.gavel, key, pk)
				}
				if pair[0] > 0 {
					ratios[[2]string{a, b}] = append(ratios[[2]string{a, b}], pair[0]/alone)
				}
			}
		}
		keys := mapKeys(ratios)
		slices.SortFunc(keys, func(x, y [2]string) int { return strings.Compare(x[0]+"+"+x[1], y[0]+"+"+y[1]) })
		for _, k := range keys {
			f := min(1, geomean(ratios[k]))
			src := fmt.Sprintf("measured: Gavel %s, %s beside %s on one %s, steps/s over its steps/s alone, geomean of %d batch-size pairs", filepath.Base(gavelPairsFile), k[0], k[1], strings.ToUpper(g.gavel), len(ratios[k]))
			for _, m := range g.models {
				rows = append(rows, row{k[0] + "+" + k[1], m, f, src})
			}
		}
	}
	return rows, nil
}

// splitJobType splits "ResNet-50 (batch size 64)" into the model and the
// batch size ("" when the job type has none).
func splitJobType(s string) (model, batch string) {
	if i := strings.Index(s, " (batch size "); i >= 0 && strings.HasSuffix(s, ")") {
		return s[:i], s[i+len(" (batch size ") : len(s)-1]
	}
	return s, ""
}

func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ---- MLPerf ----

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

// mapKeys returns m's keys sorted (by fmt's ordering for structs).
func mapKeys[K comparable, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return keys
}

// ---- generic rows ----

type genericRow struct {
	speed  float64
	source string
}

// genericSpeeds gives every catalogue model but G2 and G3 one speed on the
// common scale (A100-80GB = 1).
func genericSpeeds(links []link, gavelMeans map[string][]float64) (map[string]genericRow, error) {
	g := map[string]genericRow{commonRef: {1, "reference of the common scale (A100-80GB = 1)"}}

	// MLPerf family: each model is its parents' generic speed times the
	// geomean of its measured ratios, over the classes that measure it.
	order := []string{"H100-80GB", "A100-40GB", "A30", "L40", "L40S", l4Model, "H200-141GB", "B200-180GB", "B300-270GB", "MI300X-192GB", "MI325X-256GB", "MI355X-288GB"}
	for _, m := range order {
		var vals []float64
		parents := map[string]int{}
		var classes []string
		for _, l := range links {
			if l.model != m {
				continue
			}
			if _, skip := notGeneric[l.class]; skip {
				continue
			}
			p, ok := g[l.parent]
			if !ok {
				return nil, fmt.Errorf("generic %s: parent %s has no speed yet", m, l.parent)
			}
			vals = append(vals, l.ratio*p.speed)
			parents[l.parent]++
			classes = append(classes, mlperfClasses[l.class])
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("generic %s: no measurement", m)
		}
		var ps []string
		for _, p := range mapKeys(parents) {
			ps = append(ps, fmt.Sprintf("%s in %d", p, parents[p]))
		}
		kind := "measured"
		how := mlperfSetup + ", same-round pairs"
		if m == l4Model {
			kind = "estimated"
			how = mlperfSetup + " L4 6 GPUs vs H100-80GB 8 GPUs, " + linearScaleFix
		}
		in := fmt.Sprintf("%d classes", len(vals))
		if len(vals) == 1 {
			in = "1 class"
		}
		g[m] = genericRow{geomean(vals), fmt.Sprintf("%s: %s; %s (%s); geomean of ratio x the generic speed of the model compared with (%s)",
			kind, how, in, strings.Join(classes, " "), strings.Join(ps, ", "))}
	}

	// The bridge and the other estimates.
	for _, e := range estimates {
		from := g[e.from].speed
		g[e.model] = genericRow{from * e.peak / e.fromPeak, fmt.Sprintf("estimated: %s's generic speed x %g/%g, the ratio of dense FP16 tensor-core peaks in TFLOPS (NVIDIA datasheets: %s %g, %s %g), not a measurement; %s",
			e.from, e.peak, e.fromPeak, e.peakName, e.peak, e.from, e.fromPeak, e.label)}
	}
	v := g[gavelRef].speed
	for _, m := range []string{"K80", "P100"} {
		r := geomean(gavelMeans[m])
		g[m] = genericRow{r * v, fmt.Sprintf("measured vs V100 by Gavel (1 GPU, geomean of %d classes: x%s), put on the A100 scale through V100-16GB's estimated speed %s", len(gavelMeans[m]), num(r), num(v))}
	}

	for _, m := range hwmodel.Models() {
		if _, ok := g[m.Name]; !ok && !noRow[m.Name] {
			return nil, fmt.Errorf("catalogue model %s has no generic speed", m.Name)
		}
	}
	return g, nil
}

// mlperfRows writes the MLPerf classes: class values on the common scale.
func mlperfRows(links []link, roots map[string]string, generic map[string]genericRow) ([]row, error) {
	rootSpeed := map[string]float64{}
	for m, r := range generic {
		rootSpeed[m] = r.speed
	}
	val := classValues(links, roots, rootSpeed)
	notes := map[[2]string]string{}
	for _, l := range links {
		notes[[2]string{l.class, l.model}] = l.note
	}
	var rows []row
	for _, bench := range mapKeys(roots) {
		class := mlperfClasses[bench]
		for _, m := range hwmodel.Models() {
			v, ok := val[bench][m.Name]
			if !ok {
				continue
			}
			src := notes[[2]string{bench, m.Name}]
			if m.Name == roots[bench] {
				if m.Name == commonRef {
					src = mlperfSetup + " 8 GPUs: the class's reference (A100-80GB = 1)"
				} else {
					src = fmt.Sprintf("%s: no A100-80GB result; %s set to its generic speed so the class reads on the A100 scale", mlperfSetup, m.Name)
				}
			} else {
				src += "; value = that model's row x ratio"
			}
			if why, ok := notGeneric[bench]; ok {
				src += "; class left out of the generic rows: " + why
			}
			rows = append(rows, row{class, m.Name, v, src})
		}
	}
	return rows, nil
}
