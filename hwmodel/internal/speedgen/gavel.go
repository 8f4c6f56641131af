package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

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
