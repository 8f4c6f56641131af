package workloads

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func mustGenerate(t testing.TB, c SyntheticConfig, seed uint64) *Workload {
	t.Helper()
	w, err := Generate(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestGenerateDeterministic(t *testing.T) {
	c := DefaultSyntheticConfig()
	c.Jobs = 5000
	c.SharedFraction = 0.3
	c.DAG.Probability = 0.2
	c.DAG.Shape = "mixed"
	c.Arrival.Process = "bursty"
	a, b := mustGenerate(t, c, 42), mustGenerate(t, c, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different workloads")
	}
	other := mustGenerate(t, c, 43)
	same := 0
	for i := range a.Jobs {
		if a.Jobs[i].Duration == other.Jobs[i].Duration {
			same++
		}
	}
	if same > len(a.Jobs)/100 {
		t.Errorf("seeds 42 and 43 share %d of %d durations", same, len(a.Jobs))
	}
}

// TestGenerateValid checks the package invariants over many shapes of
// configuration.
func TestGenerateValid(t *testing.T) {
	base := DefaultSyntheticConfig()
	base.Jobs = 3000
	variants := map[string]func(c *SyntheticConfig){
		"default":  func(c *SyntheticConfig) {},
		"bursty":   func(c *SyntheticConfig) { c.Arrival.Process = "bursty"; c.Arrival.QuietRatePerHour = 0 },
		"pareto":   func(c *SyntheticConfig) { c.Duration.Dist = "pareto" },
		"chain":    func(c *SyntheticConfig) { c.DAG = DAGConfig{Probability: 0.3, Shape: "chain", Tasks: 5} },
		"forkjoin": func(c *SyntheticConfig) { c.DAG = DAGConfig{Probability: 0.3, Shape: "forkjoin", Tasks: 6} },
		"all DAGs": func(c *SyntheticConfig) { c.DAG = DAGConfig{Probability: 1, Shape: "mixed", Tasks: 7} },
		"2-task":   func(c *SyntheticConfig) { c.DAG = DAGConfig{Probability: 1, Shape: "forkjoin", Tasks: 2} },
		"shared": func(c *SyntheticConfig) {
			c.SharedFraction = 1
			c.CPUMilliPerGPU = 8000
			c.MemoryMiBPerGPU = 65536
			c.GPUCounts = append(c.GPUCounts, 0)
			c.GPUWeights = append(c.GPUWeights, 5000)
		},
		"no estimates": func(c *SyntheticConfig) { c.Estimate.Enabled = false },
		"uniform":      func(c *SyntheticConfig) { c.TenantMix = nil; c.PriorityWeights = nil },
		"one job":      func(c *SyntheticConfig) { c.Jobs = 1 },
		"no jobs":      func(c *SyntheticConfig) { c.Jobs = 0 },
		"huge sigma":   func(c *SyntheticConfig) { c.Duration.Sigma = 1e6; c.Estimate.Sigma = 1e6 },
	}
	for name, f := range variants {
		t.Run(name, func(t *testing.T) {
			c := base
			f(&c)
			w := mustGenerate(t, c, 7)
			if err := w.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(w.Jobs) != c.Jobs {
				t.Fatalf("%d jobs, want %d", len(w.Jobs), c.Jobs)
			}
			if len(w.Tenants) != len(c.Tenants) {
				t.Errorf("tenants %v, want all of %v", w.Tenants, c.Tenants)
			}
			if c.Jobs > 0 && w.Jobs[0].Submit != 0 {
				t.Errorf("first submit %v, want 0", w.Jobs[0].Submit)
			}
			for _, j := range w.Jobs {
				if j.Duration < c.Duration.Min || j.Duration > c.Duration.Max {
					t.Fatalf("job %s: duration %v outside [%v, %v]", j.Name, j.Duration, c.Duration.Min, c.Duration.Max)
				}
				if (j.Estimate > 0) != c.Estimate.Enabled {
					t.Fatalf("job %s: estimate %v with estimates enabled=%v", j.Name, j.Estimate, c.Estimate.Enabled)
				}
			}
		})
	}
}

func TestGenerateDAGShapes(t *testing.T) {
	for _, shape := range []string{"chain", "forkjoin"} {
		c := DefaultSyntheticConfig()
		c.Jobs = 20000
		c.DAG = DAGConfig{Probability: 0.25, Shape: shape, Tasks: 5}
		w := mustGenerate(t, c, 3)
		groups := map[string][]int{}
		var order []string
		for i, j := range w.Jobs {
			if j.DAG == "" {
				if len(j.Deps) != 0 {
					t.Fatalf("plain job %s has deps", j.Name)
				}
				continue
			}
			if _, ok := groups[j.DAG]; !ok {
				order = append(order, j.DAG)
			}
			groups[j.DAG] = append(groups[j.DAG], i)
		}
		// Arrivals = plain jobs + DAGs; a quarter of them should be DAGs.
		plain := len(w.Jobs)
		for _, g := range groups {
			plain -= len(g)
		}
		if frac := float64(len(groups)) / float64(len(groups)+plain); math.Abs(frac-0.25) > 0.02 {
			t.Errorf("%s: %.3f of arrivals are DAGs, want 0.25", shape, frac)
		}
		for _, name := range order {
			g := groups[name]
			if w.Jobs[g[0]].Name != name {
				t.Fatalf("DAG %s: first task is %s", name, w.Jobs[g[0]].Name)
			}
			if len(g) != 5 && g[len(g)-1] != len(w.Jobs)-1 {
				t.Fatalf("DAG %s has %d tasks, want 5 (only the last DAG may be cut short)", name, len(g))
			}
			for k, i := range g {
				j := w.Jobs[i]
				if j.Submit != w.Jobs[g[0]].Submit || j.Tenant != w.Jobs[g[0]].Tenant || j.Priority != w.Jobs[g[0]].Priority {
					t.Fatalf("DAG %s task %d differs in submit, tenant or priority", name, k)
				}
				var want []int
				switch {
				case k == 0:
				case shape == "chain" || len(g) < 3:
					want = []int{i - 1}
				case k < len(g)-1:
					want = []int{g[0]}
				default:
					want = g[1 : len(g)-1]
				}
				if !slices.Equal(j.Deps, want) {
					t.Fatalf("%s DAG %s task %d: deps %v, want %v", shape, name, k, j.Deps, want)
				}
			}
		}
	}
}

// TestGenerateStatistics would fail for a generator that ignored its
// arrival rate, its duration median, its GPU weights, its tenant mix or
// its estimate factor.
func TestGenerateStatistics(t *testing.T) {
	const n = 100000
	c := DefaultSyntheticConfig()
	c.Jobs = n
	c.Arrival.RatePerHour = 45
	c.Duration.Median = 900 * hwmodel.Second
	w := mustGenerate(t, c, 11)

	gaps, gapCV := interArrival(w)
	if want := 3600.0 / 45; math.Abs(gaps/want-1) > 0.02 {
		t.Errorf("mean inter-arrival %.2f s, want %.2f s ±2%%", gaps, want)
	}
	if math.Abs(gapCV-1) > 0.05 {
		t.Errorf("Poisson inter-arrival CV %.3f, want 1", gapCV)
	}
	durs := make([]float64, n)
	ratios := make([]float64, n)
	oneGPU, teamA := 0, 0
	for i, j := range w.Jobs {
		durs[i] = j.Duration.Seconds()
		ratios[i] = j.Estimate.Seconds() / j.Duration.Seconds()
		if j.Req.GPUs == 1 {
			oneGPU++
		}
		if j.Tenant == "team-a" {
			teamA++
		}
	}
	if med := median(durs); math.Abs(med/900-1) > 0.04 {
		t.Errorf("duration median %.1f s, want 900 s ±4%%", med)
	}
	if med := median(ratios); math.Abs(med/1.5-1) > 0.04 {
		t.Errorf("estimate/duration median %.3f, want 1.5 ±4%%", med)
	}
	wantOne := 76627.0 / (76627 + 1818 + 1870 + 1643 + 199 + 67)
	if got := float64(oneGPU) / n; math.Abs(got-wantOne) > 0.005 {
		t.Errorf("1-GPU fraction %.4f, want %.4f", got, wantOne)
	}
	if got := float64(teamA) / n; math.Abs(got-0.4) > 0.01 {
		t.Errorf("team-a fraction %.4f, want 0.4", got)
	}
}

func TestGenerateBursty(t *testing.T) {
	c := DefaultSyntheticConfig()
	c.Jobs = 100000
	c.Arrival = ArrivalConfig{Process: "bursty", BurstRatePerHour: 300, QuietRatePerHour: 20,
		BurstLength: 3 * hwmodel.Minute, QuietLength: 12 * hwmodel.Minute}
	long := c.MeanArrivalsPerHour() // (300×3 + 20×12) / 15 = 76 per hour
	if long != 76 {
		t.Fatalf("MeanArrivalsPerHour %g, want 76", long)
	}
	w := mustGenerate(t, c, 5)
	mean, cv := interArrival(w)
	// About 5,000 burst/quiet cycles: over seeds the mean inter-arrival
	// varies by about 1.3%; a process stuck in one state is off by 4×.
	if want := 3600 / long; math.Abs(mean/want-1) > 0.05 {
		t.Errorf("mean inter-arrival %.2f s, want %.2f s ±5%%", mean, want)
	}
	if cv < 1.3 {
		t.Errorf("inter-arrival CV %.2f; a bursty process should be well above 1", cv)
	}
}

func TestGenerateParetoAndMeans(t *testing.T) {
	c := DefaultSyntheticConfig()
	c.Jobs = 100000
	c.Duration = DurationConfig{Dist: "pareto", Alpha: 1.5, Min: 60 * hwmodel.Second, Max: 10 * hwmodel.Hour}
	w := mustGenerate(t, c, 9)
	durs := make([]float64, len(w.Jobs))
	sum := 0.0
	for i, j := range w.Jobs {
		durs[i] = j.Duration.Seconds()
		sum += durs[i]
	}
	lo, hi, a := 60.0, 36000.0, 1.5
	wantMed := lo * math.Pow(1-0.5*(1-math.Pow(lo/hi, a)), -1/a)
	if med := median(durs); math.Abs(med/wantMed-1) > 0.03 {
		t.Errorf("Pareto median %.1f s, want %.1f s", med, wantMed)
	}
	if mean := sum / float64(len(durs)); math.Abs(mean/c.MeanDuration()-1) > 0.05 {
		t.Errorf("Pareto mean %.1f s, MeanDuration says %.1f s", mean, c.MeanDuration())
	}

	// Lognormal with clamping at both ends; a small sigma keeps the sample
	// mean steady.
	c.Duration = DurationConfig{Dist: "lognormal", Median: 1000 * hwmodel.Second, Sigma: 0.8, Min: 500 * hwmodel.Second, Max: 3000 * hwmodel.Second}
	w = mustGenerate(t, c, 9)
	sum = 0
	for _, j := range w.Jobs {
		sum += j.Duration.Seconds()
	}
	if mean := sum / float64(len(w.Jobs)); math.Abs(mean/c.MeanDuration()-1) > 0.01 {
		t.Errorf("clamped lognormal mean %.1f s, MeanDuration says %.1f s", mean, c.MeanDuration())
	}
	c.Duration.Sigma = 0
	if got := c.MeanDuration(); got != 1000 {
		t.Errorf("sigma 0: MeanDuration %g, want 1000", got)
	}
}

func TestMeanGPUDemand(t *testing.T) {
	c := DefaultSyntheticConfig()
	c.GPUCounts, c.GPUWeights = []int{1, 4}, []float64{1, 1}
	c.SharedFraction, c.SharedMilli = 0.5, []int32{200, 400}
	c.Duration = DurationConfig{Dist: "lognormal", Median: 3600 * hwmodel.Second, Min: hwmodel.Second, Max: hwmodel.Day}
	c.Arrival = ArrivalConfig{Process: "poisson", RatePerHour: 10}
	c.DAG = DAGConfig{Probability: 0.5, Shape: "chain", Tasks: 3}
	// Per arrival 1 + 0.5×2 = 2 jobs; mean share (0.5×1 + 0.5×0.3 + 4) / 2
	// = 2.325 GPUs; one hour each: 10 × 2 × 2.325 = 46.5 GPUs busy.
	if got := c.MeanGPUDemand(); math.Abs(got-46.5) > 1e-9 {
		t.Errorf("MeanGPUDemand %g, want 46.5", got)
	}
	d := DefaultSyntheticConfig()
	if got := d.MeanGPUDemand(); got < 300 || got > 360 {
		t.Errorf("default MeanGPUDemand %g; the doc says about 330", got)
	}
}

func TestGenerateConfigErrors(t *testing.T) {
	cases := map[string]func(c *SyntheticConfig){
		"negative jobs":     func(c *SyntheticConfig) { c.Jobs = -1 },
		"process":           func(c *SyntheticConfig) { c.Arrival.Process = "hawkes" },
		"rate":              func(c *SyntheticConfig) { c.Arrival.RatePerHour = 0 },
		"nan rate":          func(c *SyntheticConfig) { c.Arrival.RatePerHour = math.NaN() },
		"burst rate":        func(c *SyntheticConfig) { c.Arrival.Process = "bursty"; c.Arrival.BurstRatePerHour = 0 },
		"burst length":      func(c *SyntheticConfig) { c.Arrival.Process = "bursty"; c.Arrival.QuietLength = 0 },
		"dist":              func(c *SyntheticConfig) { c.Duration.Dist = "weibull" },
		"median":            func(c *SyntheticConfig) { c.Duration.Median = 0 },
		"min > max":         func(c *SyntheticConfig) { c.Duration.Min = 2 * c.Duration.Max },
		"alpha":             func(c *SyntheticConfig) { c.Duration.Dist = "pareto"; c.Duration.Alpha = -1 },
		"gpu weights":       func(c *SyntheticConfig) { c.GPUWeights = c.GPUWeights[:2] },
		"zero weights":      func(c *SyntheticConfig) { c.GPUWeights = make([]float64, len(c.GPUCounts)) },
		"negative gpus":     func(c *SyntheticConfig) { c.GPUCounts[0] = -1 },
		"shared milli":      func(c *SyntheticConfig) { c.SharedFraction = 0.5; c.SharedMilli = []int32{1000} },
		"shared fraction":   func(c *SyntheticConfig) { c.SharedFraction = 2 },
		"no tenants":        func(c *SyntheticConfig) { c.Tenants = nil },
		"tenant weight":     func(c *SyntheticConfig) { c.Tenants[0].Weight = 0 },
		"tenant mix":        func(c *SyntheticConfig) { c.TenantMix = []float64{1} },
		"priority weights":  func(c *SyntheticConfig) { c.PriorityWeights = []float64{-1, 2} },
		"estimate factor":   func(c *SyntheticConfig) { c.Estimate.Factor = 0 },
		"dag probability":   func(c *SyntheticConfig) { c.DAG.Probability = 1.5 },
		"dag tasks":         func(c *SyntheticConfig) { c.DAG.Probability = 0.5; c.DAG.Tasks = 1 },
		"dag shape":         func(c *SyntheticConfig) { c.DAG.Probability = 0.5; c.DAG.Shape = "tree" },
		"cpu per gpu":       func(c *SyntheticConfig) { c.CPUMilliPerGPU = -1 },
		"arrivals too slow": func(c *SyntheticConfig) { c.Arrival.RatePerHour = 1e-12; c.Jobs = 100 },
	}
	for name, f := range cases {
		c := DefaultSyntheticConfig()
		f(&c)
		if _, err := Generate(c, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestGenerateAllocations checks that allocations do not grow with the job
// count: the Job slice, the names string and a few fixed-size things.
func TestGenerateAllocations(t *testing.T) {
	c := DefaultSyntheticConfig()
	allocs := func(n int) float64 {
		c.Jobs = n
		return testing.AllocsPerRun(3, func() { mustGenerate(t, c, 1) })
	}
	small, large := allocs(1000), allocs(50000)
	if large > small+2 || large > 30 {
		t.Errorf("%.0f allocations for 1,000 jobs, %.0f for 50,000: want no per-job allocation", small, large)
	}
}

func interArrival(w *Workload) (mean, cv float64) {
	n := len(w.Jobs) - 1
	var s, s2 float64
	for i := 1; i <= n; i++ {
		g := (w.Jobs[i].Submit - w.Jobs[i-1].Submit).Seconds()
		s += g
		s2 += g * g
	}
	mean = s / float64(n)
	return mean, math.Sqrt(s2/float64(n)-mean*mean) / mean
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{10000, 100000, 1000000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			c := DefaultSyntheticConfig()
			c.Jobs = n
			b.ReportAllocs()
			for b.Loop() {
				mustGenerate(b, c, 1)
			}
		})
	}
}
