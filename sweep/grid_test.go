package sweep

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeGridFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "grid.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExampleGrid(t *testing.T) {
	g, err := LoadGrid("../examples/sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(g.Runs()); got != 20 {
		t.Errorf("examples/sweep.yaml has %d runs, its comment says 20", got)
	}
	if got := strings.Join(g.Metrics, ","); got != strings.Join(DefaultMetrics, ",") {
		t.Errorf("metrics %s, want the defaults", got)
	}
	labels := []string{g.Label(0), g.Label(1), g.Label(2)}
	if got := strings.Join(labels, ","); got != "fcfs,sjf+bf,fair/bestfit" {
		t.Errorf("labels %s", got)
	}
	// docs/sweeps.md documents every field of the grid.
	doc, err := os.ReadFile("../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"traces", "synthetic", "clusters", "policies", "loads", "seeds", "metrics", "bucket", "starvation_threshold",
		"path", "format", "jobs", "load", "name", "label", "placement", "backfill", "backfill_depth", "priority_weight", "wait_weight", "oracle"} {
		if !strings.Contains(string(doc), "`"+f+"`") {
			t.Errorf("docs/sweeps.md does not document `%s`", f)
		}
	}
}

func TestGridDefaultsAndSeeds(t *testing.T) {
	g, err := LoadGrid(writeGridFile(t, "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: [3, 1, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Metrics) != len(DefaultMetrics) || len(g.Seeds) != 3 || g.Seeds[0] != 3 {
		t.Errorf("got metrics %v seeds %v", g.Metrics, g.Seeds)
	}
	for in, want := range map[string]int{"1-10": 10, "5": 1, "1-3,7,9-10": 6} {
		s, err := ParseSeeds(in)
		if err != nil || len(s) != want {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %d seeds", in, s, err, want)
		}
	}
}

func TestBadGrids(t *testing.T) {
	base := "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1-2\n"
	for _, tc := range []struct{ name, text, want string }{
		{"unknown top field", base + "seed: 3\n", "seed: unknown field"},
		{"unknown nested field", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}, {name: sjf, backfil: true}]\nseeds: 1-2\n", `policies[1].backfil: unknown field (known fields: name, label, placement, backfill, backfill_depth, priority_weight, wait_weight, oracle); did you mean "backfill"?`},
		{"wrong type", "synthetic: [{jobs: ten}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1-2\n", `:1: synthetic[0].jobs: want a whole number, got "ten"`},
		{"no workload", "clusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1-2\n", "no workload"},
		{"bad format", "traces: [{path: grid.yaml, format: csv}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1\n", "traces[0].format: want philly, openb, brigade, pollux or swf"},
		{"missing trace", "traces: [{path: nope.csv, format: philly}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1\n", "traces[0].path"},
		{"no cluster", "synthetic: [{jobs: 10}]\npolicies: [{name: fcfs}]\nseeds: 1-2\n", "clusters: want at least one"},
		{"bad cluster", "synthetic: [{jobs: 10}]\nclusters: [h200x9]\npolicies: [{name: fcfs}]\nseeds: 1-2\n", `:2: clusters[0]: cluster "h200x9": no such file`},
		{"bad policy", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: lifo}]\nseeds: 1-2\n", "policies[0].name"},
		{"bad placement", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs, placement: worst}]\nseeds: 1-2\n", "policies[0].placement: want one of"},
		{"duplicate label", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}, {name: fcfs}]\nseeds: 1-2\n", `policies[1]: label "fcfs" is already policies[0]'s`},
		{"bad seeds", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 5-1\n", `seeds: want a list of seeds or a range like "1-10"`},
		{"duplicate seed", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: [1, 1]\n", "seed 1 is listed twice"},
		{"no seeds", "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\n", "seeds: want"},
		{"bad load", base + "loads: [0.5, 0]\n", "loads[1]: want a positive offered load"},
		{"bad metric", base + "metrics: [wait_s.p42]\n", `metrics[0]: unknown metric "wait_s.p42"`},
		{"metric not a number", base + "metrics: [wait_s]\n", `metrics[0]: metric "wait_s" is not a number`},
		{"bad bucket", base + "bucket: soon\n", "bucket:"},
		{"not yaml", "policies: [\n", ": YAML syntax: "},
		{"zero jobs", "synthetic: [{jobs: 0}]\nclusters: [h200x8]\npolicies: [{name: fcfs}]\nseeds: 1\n", "synthetic[0].jobs: want a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeGridFile(t, tc.text)
			_, err := LoadGrid(path)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), path+":") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want the file and %q", err, tc.want)
			}
		})
	}
}

func TestMetric(t *testing.T) {
	g, _ := LoadGrid("../examples/sweep.yaml")
	_ = g
	for _, m := range DefaultMetrics {
		if _, err := Metric(sampleSummary(), m); err != nil {
			t.Error(err)
		}
	}
	v, err := Metric(sampleSummary(), "starved_jobs")
	if err != nil || v != 7 {
		t.Errorf("starved_jobs = %v, %v; want 7", v, err)
	}
	v, err = Metric(sampleSummary(), "starvation.starved_jobs")
	if err != nil || v != 7 {
		t.Errorf("starvation.starved_jobs = %v, %v; want 7", v, err)
	}
	if v, _ := Metric(sampleSummary(), "wait_s.p99"); v != 99 {
		t.Errorf("wait_s.p99 = %v", v)
	}
	if !math.IsNaN(math.NaN()) {
		t.Fatal()
	}
}

// A grid with several mistakes reports them all, with lines, in one
// error; policies and seeds read in each of their shapes.
func TestGridReportsEveryProblem(t *testing.T) {
	path := writeGridFile(t, `synthetic: [{jobs: 10}]
clusters: [h200x8]
policies:
  - fcfs
  - {name: sjf, placement: worst}
  - {name: fair, backfil: true}
  - 3
seeds: [1, 1]
bucket: soon
`)
	_, err := LoadGrid(path)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		path + `:5: policies[1].placement: want one of`,
		path + `:6: policies[2].backfil: unknown field`,
		path + `:7: policies[3]: want a policy spec such as "sjf+bf/bestfit", or a mapping with fields name, label`,
		path + `:8: seeds: seed 1 is listed twice`,
		path + `:9: bucket: `,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d = %q, want it to start %q", i, lines[i], w)
		}
	}

	g, err := LoadGrid(writeGridFile(t, "synthetic: [{jobs: 10}]\nclusters: [h200x8]\npolicies: [fcfs, {name: sjf, backfill: true, label: easy}]\nseeds: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Seeds) != 1 || g.Seeds[0] != 7 || g.Label(0) != "fcfs" || g.Label(1) != "easy" {
		t.Errorf("seeds %v, labels %q %q", g.Seeds, g.Label(0), g.Label(1))
	}
	if s, err := g.Policies[1].Spec(); err != nil || s.String() != "sjf+bf" {
		t.Errorf("policies[1] = %v, %v", s, err)
	}
}
