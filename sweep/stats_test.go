package sweep

import (
	"math"
	"testing"

	"github.com/brigadesim/brigade/results"
)

func sampleSummary() results.Summary {
	var s results.Summary
	s.WaitS.P99 = 99
	s.Starvation.StarvedJobs = 7
	return s
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, sd √2.5; t(0.975, 4) = 2.7764451051977987 (tables).
	mean, half := MeanCI([]float64{1, 2, 3, 4, 5})
	want := 2.7764451051977987 * math.Sqrt(2.5) / math.Sqrt(5)
	if mean != 3 || !near(half, want, 1e-9) {
		t.Errorf("MeanCI(1..5) = %v ± %v, want 3 ± %v", mean, half, want)
	}
	// Two values: t(0.975, 1) = 12.706204736174694.
	mean, half = MeanCI([]float64{10, 12})
	if mean != 11 || !near(half, 12.706204736174694*math.Sqrt(2)/math.Sqrt(2), 1e-9) {
		t.Errorf("MeanCI(10, 12) = %v ± %v", mean, half)
	}
	mean, half = MeanCI([]float64{4})
	if mean != 4 || !math.IsNaN(half) {
		t.Errorf("MeanCI(4) = %v ± %v, want 4 ± NaN", mean, half)
	}
}

func TestPairedT(t *testing.T) {
	// Differences (m−2, m−1, m, m+1, m+2): sd √2.5, so t = m / √0.5; with
	// m = t(0.975, 4) × √0.5 the two-sided p is exactly 0.05.
	m := 2.7764451051977987 * math.Sqrt(0.5)
	a := []float64{m - 2 + 10, m - 1 + 10, m + 10, m + 1 + 10, m + 2 + 10}
	b := []float64{10, 10, 10, 10, 10}
	d, tt, p := PairedT(a, b)
	if !near(d, m, 1e-12) || !near(tt, 2.7764451051977987, 1e-9) || !near(p, 0.05, 1e-9) {
		t.Errorf("PairedT = %v, %v, %v; want %v, 2.776, 0.05", d, tt, p, m)
	}
	// Swapping the sides flips the sign, not p.
	d2, t2, p2 := PairedT(b, a)
	if !near(d2, -m, 1e-12) || !near(t2, -tt, 1e-12) || !near(p2, p, 1e-12) {
		t.Errorf("swapped: %v %v %v", d2, t2, p2)
	}
	// t(0.995, 9) = 3.2498355415921263: p = 0.01 with 10 pairs.
	e := []float64{-4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5} // sd √(82.5/9)
	sd := math.Sqrt(82.5 / 9)
	m = 3.2498355415921263 * sd / math.Sqrt(10)
	for i := range e {
		e[i] += m
	}
	if _, _, p := PairedT(e, make([]float64, 10)); !near(p, 0.01, 1e-9) {
		t.Errorf("p = %v, want 0.01", p)
	}
	if _, tt, p := PairedT([]float64{1}, []float64{2}); !math.IsNaN(tt) || !math.IsNaN(p) {
		t.Errorf("one pair: t %v p %v, want NaN", tt, p)
	}
	if _, _, p := PairedT([]float64{1, 2}, []float64{1, 2}); p != 1 {
		t.Errorf("equal samples: p %v, want 1", p)
	}
	if _, _, p := PairedT([]float64{2, 3}, []float64{1, 2}); p != 0 {
		t.Errorf("constant non-zero difference: p %v, want 0", p)
	}
}
