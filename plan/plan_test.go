package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("wait_s.p99<=1800, gpu_utilisation_arrivals>=0.7,starvation.starved_jobs<5,jobs_succeeded>1e3")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{"wait_s.p99", "<=", 1800}, {"gpu_utilisation_arrivals", ">=", 0.7}, {"starvation.starved_jobs", "<", 5}, {"jobs_succeeded", ">", 1000}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("target %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	bad := []struct{ in, want string }{
		{"", "no target given"},
		{"wait_s.p99", "no comparison"},
		{"wait_s.p99=<3", "not one of"},
		{"<=3", "no metric"},
		{"wait_s.p99<=abc", "not a finite number"},
		{"wait_s.p99<=NaN", "not a finite number"},
		{"wait.p99<=3", `unknown metric "wait.p99" (known: `},
		{"wait_s.p99<=3,,", "empty item"},
		{"policy<=3", "unknown metric"},
	}
	for _, b := range bad {
		_, err := ParseTargets(b.in)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseTargets(%q) = %v, want an error mentioning %q", b.in, err, b.want)
		}
	}
	_, err = ParseTargets("nope<=1")
	if err == nil || !strings.Contains(err.Error(), "wait_s.p99") || !strings.Contains(err.Error(), "starvation.starved_jobs") {
		t.Errorf("unknown-key error does not list the known keys: %v", err)
	}
}

// TestSearchMinimum: on a monotone function the search finds the known
// minimum with far fewer evaluations than sizes in range.
func TestSearchMinimum(t *testing.T) {
	for _, tc := range []struct{ lo, hi, min int }{{1, 512, 70}, {1, 512, 1}, {1, 512, 512}, {3, 1000, 999}, {5, 5, 5}, {1, 4096, 2049}} {
		evals := 0
		seen := map[int]bool{}
		got, ok, err := Search(tc.lo, tc.hi, func(n int) (bool, error) {
			if seen[n] {
				t.Errorf("size %d evaluated twice", n)
			}
			seen[n] = true
			evals++
			return n >= tc.min, nil
		})
		if err != nil || !ok || got != tc.min {
			t.Errorf("%+v: got %d, %v, %v", tc, got, ok, err)
		}
		if size := tc.hi - tc.lo + 1; size > 1 && evals >= size {
			t.Errorf("%+v: %d evaluations for %d sizes", tc, evals, size)
		}
		if limit := 2*bitsLen(tc.hi-tc.lo+1) + 2; evals > limit {
			t.Errorf("%+v: %d evaluations, want at most %d", tc, evals, limit)
		}
	}
	_, ok, err := Search(1, 100, func(n int) (bool, error) { return false, nil })
	if ok || err != nil {
		t.Errorf("unreachable: got ok %v, err %v", ok, err)
	}
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// synthetic is an evaluator whose wait falls as 1e6/GPUs.
func synthetic(gpn int) Evaluator {
	return func(model string, nodes int) (Point, error) {
		g := nodes * gpn
		v := 1e6 / float64(g)
		return Point{Model: model, Nodes: nodes, GPUs: g, Values: []float64{v}, Pass: []bool{v <= 1800}}, nil
	}
}

func TestPlanUnreachable(t *testing.T) {
	targets := []Target{{"wait_s.p99", "<=", 1800}}
	r, err := Plan(targets, []string{"H100-80GB"}, nil, 1, 32, synthetic(8))
	if err != nil {
		t.Fatal(err)
	}
	msg := r.Unreachable()
	for _, want := range []string{"no cluster in the allowed range", "32 × H100-80GB (256 GPUs)", "wait_s.p99<=1800 fails", "wait_s.p99 = 3906", "2106 off the bound 1800", "(117.0%)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if r.Best != -1 || !strings.Contains(r.Answer(), "no cluster") {
		t.Errorf("answer %q", r.Answer())
	}
}

func TestPlanByCost(t *testing.T) {
	targets := []Target{{"wait_s.p99", "<=", 1800}}
	eval := func(model string, nodes int) (Point, error) {
		p, _ := synthetic(8)(model, nodes)
		if model == "A100-40GB" { // half as fast: needs twice the GPUs
			p.Values[0] *= 2
			p.Pass[0] = p.Values[0] <= 1800
		}
		p.Cost = float64(p.GPUs) * map[string]float64{"H100-80GB": 2.5, "A100-40GB": 1.2}[model]
		return p, nil
	}
	r, err := Plan(targets, []string{"H100-80GB", "A100-40GB"}, map[string]float64{"H100-80GB": 2.5, "A100-40GB": 1.2}, 1, 512, eval)
	if err != nil {
		t.Fatal(err)
	}
	b := r.Points[r.Best]
	if b.Model != "A100-40GB" || b.GPUs != 1112 {
		t.Errorf("by cost: got %+v", b)
	}
	r, _ = Plan(targets, []string{"H100-80GB", "A100-40GB"}, nil, 1, 512, eval)
	if b := r.Points[r.Best]; b.Model != "H100-80GB" || b.GPUs != 560 {
		t.Errorf("by GPUs: got %+v", b)
	}
}

// TestOutputDeterministic: the table, CSV and plots are byte-identical
// across two plans.
func TestOutputDeterministic(t *testing.T) {
	targets := []Target{{"wait_s.p99", "<=", 1800}, {"gpu_utilisation", ">=", 0}}
	eval := func(model string, nodes int) (Point, error) {
		p, _ := synthetic(8)(model, nodes)
		p.Values = append(p.Values, 0.5)
		p.Pass = append(p.Pass, true)
		return p, nil
	}
	var outs [2][]string
	for i := range outs {
		r, err := Plan(targets, []string{"H100-80GB", "P100"}, nil, 1, 256, eval)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		var tab bytes.Buffer
		if err := r.WriteTable(&tab); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteCSV(filepath.Join(dir, "plan.csv")); err != nil {
			t.Fatal(err)
		}
		if err := r.WritePlots(filepath.Join(dir, "plan.png"), filepath.Join(dir, "plan.svg")); err != nil {
			t.Fatal(err)
		}
		outs[i] = append(outs[i], tab.String())
		for _, f := range []string{"plan.csv", "plan.png", "plan.svg"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = append(outs[i], string(b))
		}
	}
	for k := range outs[0] {
		if outs[0][k] != outs[1][k] {
			t.Errorf("output %d differs between two runs", k)
		}
	}
	if !strings.Contains(outs[0][1], "model,nodes,gpus,cost_per_h,unfit_jobs,wait_s.p99,wait_s.p99<=1800") {
		t.Errorf("csv header: %s", outs[0][1][:100])
	}
}

// TestPlanWindow: a utilisation floor caps the size from above; the plan
// finds the smallest size meeting the wait ceiling and checks the floor
// there, and says so when the floor fails.
func TestPlanWindow(t *testing.T) {
	eval := func(floor float64) Evaluator {
		return func(model string, nodes int) (Point, error) {
			g := nodes * 8
			wait, util := 1e6/float64(g), 300/float64(g)
			return Point{Model: model, Nodes: nodes, GPUs: g, Values: []float64{wait, util}, Pass: []bool{wait <= 1800, util >= floor}}, nil
		}
	}
	targets := []Target{{"wait_s.p99", "<=", 1800}, {"gpu_utilisation_arrivals", ">=", 0.5}}
	r, err := Plan(targets, []string{"P100"}, nil, 1, 512, eval(0.5))
	if err != nil {
		t.Fatal(err)
	}
	if r.Best < 0 || r.Points[r.Best].GPUs != 560 {
		t.Fatalf("answer %s", r.Answer())
	}
	if r.Evals >= 30 {
		t.Errorf("%d evaluations", r.Evals)
	}
	targets[1].Value = 0.6
	r, err = Plan(targets, []string{"P100"}, nil, 1, 512, eval(0.6))
	if err != nil {
		t.Fatal(err)
	}
	msg := r.Unreachable()
	for _, want := range []string{"at the largest size, 512 × P100 (4096 GPUs): target gpu_utilisation_arrivals>=0.6 fails", "at 70 × P100 (560 GPUs), the smallest size at which every job fits and the targets met at the largest size hold", "gpu_utilisation_arrivals = 0.5357"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}
