package main

import (
	"bytes"
	"encoding/csv"
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

// mapKeys returns m's keys sorted (by fmt's ordering for structs).
func mapKeys[K comparable, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return keys
}
