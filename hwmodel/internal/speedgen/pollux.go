package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

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
