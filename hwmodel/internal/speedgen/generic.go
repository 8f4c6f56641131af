package main

import (
	"fmt"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
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
