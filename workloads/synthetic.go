package workloads

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/brigadesim/brigade/hwmodel"
)

// syntheticStream is the second PCG word of the generator's random source;
// the seed is the first. Changing it changes every generated workload.
const syntheticStream = 0x6272696761646531 // "brigade1"

// SyntheticConfig describes a synthetic workload. DefaultSyntheticConfig
// documents sensible values; start from it and change what matters.
type SyntheticConfig struct {
	// Jobs is the number of jobs generated, DAG tasks included.
	Jobs int

	Arrival  ArrivalConfig
	Duration DurationConfig

	// GPUCounts and GPUWeights give the distribution of a job's GPU count:
	// GPUCounts[i] is drawn with probability proportional to GPUWeights[i].
	// A count of 0 makes a CPU-only job.
	GPUCounts  []int
	GPUWeights []float64
	// SharedFraction is the probability that a 1-GPU job asks for a share
	// of one GPU instead of all of it; the share is drawn uniformly from
	// SharedMilli (values in 1..999).
	SharedFraction float64
	SharedMilli    []int32
	// CPUMilliPerGPU and MemoryMiBPerGPU give each job CPU and memory in
	// proportion to its GPU share (GPUs × milli / 1000); a CPU-only job
	// gets as much as a 1-GPU job. Zero asks for none.
	CPUMilliPerGPU  int64
	MemoryMiBPerGPU int64

	// Tenants are the tenants and their fair-share weights. TenantMix[i]
	// is the relative share of jobs submitted by Tenants[i]; nil means an
	// equal share each.
	Tenants   []Tenant
	TenantMix []float64

	// PriorityWeights[p] is the relative frequency of priority p; nil or
	// a single weight gives every job priority 0.
	PriorityWeights []float64

	Estimate EstimateConfig
	DAG      DAGConfig
	// MIG makes a fraction of the jobs ask for one MIG instance instead of
	// GPUs (inference, say); the zero value makes none.
	MIG MIGConfig
	// Classes and ClassWeights give each job a class for the speed table
	// (Job.Class), Classes[i] drawn with probability proportional to
	// ClassWeights[i] (nil: equal weights) from a stream of its own, so
	// that a workload with classes is the same workload as without them,
	// job for job, but for the classes. nil Classes gives none.
	Classes      []string
	ClassWeights []float64
}

// MIGConfig makes some jobs MIG jobs. With probability Fraction a job asks
// for one MIG instance with at least the compute slices and memory of a
// class drawn from Classes (by Weight) instead of drawing a GPU count. Its
// duration is drawn from Duration when set (inference is short), else from
// the workload's Duration. Classes give minimums rather than profile
// names, so any MIG-capable GPU model can serve them. CPU and memory are
// CPUMilliPerGPU and MemoryMiBPerGPU times MinSlices/7 (at least one
// slice). With Fraction 0 the generator draws exactly what it drew before
// MIG existed, so existing workloads do not change.
type MIGConfig struct {
	Fraction float64
	Classes  []MIGClass
	Duration *DurationConfig
}

// MIGClass is one kind of MIG request in a MIGConfig's mix.
type MIGClass struct {
	MinSlices    int
	MinMemoryMiB int64
	Weight       float64
}

// DefaultMIGClasses is an inference mix for MIGConfig.Classes, sized for
// today's models on 80–141 GB GPUs: half the requests need one slice and
// 16 GiB (a small model; 1g.18gb on an H200, 1g.20gb on an H100), 30% two
// slices and 32 GiB (2g.35gb on an H200), 15% three slices and 64 GiB
// (3g.71gb) and 5% four slices and 64 GiB (4g.71gb). The proportions are
// an assumption, not a measurement.
func DefaultMIGClasses() []MIGClass {
	return []MIGClass{
		{MinSlices: 1, MinMemoryMiB: 16 * 1024, Weight: 50},
		{MinSlices: 2, MinMemoryMiB: 32 * 1024, Weight: 30},
		{MinSlices: 3, MinMemoryMiB: 64 * 1024, Weight: 15},
		{MinSlices: 4, MinMemoryMiB: 64 * 1024, Weight: 5},
	}
}

// ArrivalConfig is the arrival process of jobs (of DAGs, for DAG tasks:
// all tasks of a DAG arrive together). The first arrival is at time 0.
type ArrivalConfig struct {
	// Process is "poisson" (exponential gaps at RatePerHour) or "bursty":
	// a Poisson process whose rate switches between BurstRatePerHour and
	// QuietRatePerHour, staying in each state for an exponentially
	// distributed time with mean BurstLength or QuietLength (a two-state
	// Markov-modulated Poisson process). Its long-run rate is
	// (BurstRate×BurstLength + QuietRate×QuietLength) / (BurstLength +
	// QuietLength).
	Process          string
	RatePerHour      float64
	BurstRatePerHour float64
	QuietRatePerHour float64 // may be 0: nothing arrives between bursts
	BurstLength      hwmodel.Time
	QuietLength      hwmodel.Time
}

// DurationConfig is the distribution of a job's true running time.
type DurationConfig struct {
	// Dist is "lognormal" (the default: median Median, log-space standard
	// deviation Sigma, clamped to [Min, Max]) or "pareto" (bounded Pareto
	// on [Min, Max] with tail index Alpha; Median and Sigma are unused).
	Dist     string
	Median   hwmodel.Time
	Sigma    float64
	Alpha    float64
	Min, Max hwmodel.Time
}

// EstimateConfig controls the users' runtime estimates. When Enabled, a
// job's Estimate is its Duration times a lognormal factor with median
// Factor and log-space standard deviation Sigma (Sigma 0: exactly
// Duration × Factor), at least one second. When not, Estimate is 0 (none).
type EstimateConfig struct {
	Enabled bool
	Factor  float64
	Sigma   float64
}

// DAGConfig makes some arrivals DAG jobs instead of plain jobs. With
// probability Probability an arrival is a DAG of Tasks tasks (fewer when
// the workload's job count runs out) that share its submit time, tenant
// and priority, each with its own duration and GPU count. Shape "chain"
// runs the tasks one after another; "forkjoin" runs a first task, then
// Tasks-2 tasks in parallel, then a last task that waits for all of them
// (with fewer than 3 tasks it is a chain); "mixed" picks one of the two
// with equal probability per DAG. A DAG's name is its first task's name.
type DAGConfig struct {
	Probability float64
	Shape       string
	Tasks       int
}

// DefaultSyntheticConfig returns a Philly-like configuration:
//   - 10,000 jobs arriving as a Poisson process at 60 jobs per hour (the
//     bursty parameters, used if Process is set to "bursty", have the same
//     long-run rate: bursts of 1 h at 200/h, quiet spells of 6 h at
//     about 36.7/h);
//   - lognormal durations with Philly's median (1,144 s) and a sigma of
//     2.3, which puts the 99th percentile near Philly's 254,884 s,
//     clamped to [1 s, 60 days];
//   - GPU counts 1, 2, 4, 8, 16 and 32 with Philly's relative frequencies,
//     no GPU sharing, no CPU or memory requests;
//   - four tenants of weight 1 submitting 40%, 30%, 20% and 10% of jobs;
//   - priorities 0, 1 and 2 in proportion 70:20:10;
//   - estimates 1.5× the true duration with a lognormal noise of sigma
//     0.75 (users over-estimate, and by a lot);
//   - no DAGs (Probability 0; Shape "chain" and 4 Tasks if enabled).
//
// Its mean GPU demand (MeanGPUDemand) is about 330 GPUs, so a cluster of
// 400–512 GPUs sees queueing at times without being swamped.
func DefaultSyntheticConfig() SyntheticConfig {
	return SyntheticConfig{
		Jobs: 10000,
		Arrival: ArrivalConfig{
			Process:          "poisson",
			RatePerHour:      60,
			BurstRatePerHour: 200,
			QuietRatePerHour: 220.0 / 6,
			BurstLength:      hwmodel.Hour,
			QuietLength:      6 * hwmodel.Hour,
		},
		Duration: DurationConfig{
			Dist:   "lognormal",
			Median: 1144 * hwmodel.Second,
			Sigma:  2.3,
			Alpha:  1.1,
			Min:    hwmodel.Second,
			Max:    60 * hwmodel.Day,
		},
		GPUCounts:   []int{1, 2, 4, 8, 16, 32},
		GPUWeights:  []float64{76627, 1818, 1870, 1643, 199, 67},
		SharedMilli: []int32{250, 500},
		Tenants: []Tenant{
			{Name: "team-a", Weight: 1}, {Name: "team-b", Weight: 1},
			{Name: "team-c", Weight: 1}, {Name: "team-d", Weight: 1},
		},
		TenantMix:       []float64{4, 3, 2, 1},
		PriorityWeights: []float64{7, 2, 1},
		Estimate:        EstimateConfig{Enabled: true, Factor: 1.5, Sigma: 0.75},
		DAG:             DAGConfig{Probability: 0, Shape: "chain", Tasks: 4},
	}
}

// Validate reports the first problem with the configuration.
func (c SyntheticConfig) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	weights := func(name string, w []float64, n int) error {
		if len(w) != n {
			return fmt.Errorf("%s: want %d weights, found %d", name, n, len(w))
		}
		sum := 0.0
		for _, x := range w {
			if !finite(x) || x < 0 {
				return fmt.Errorf("%s: want finite weights >= 0, found %g", name, x)
			}
			sum += x
		}
		if !(sum > 0) || !finite(sum) {
			return fmt.Errorf("%s: want weights with a positive finite sum", name)
		}
		return nil
	}
	if c.Jobs < 0 || c.Jobs > 1<<31 {
		return fmt.Errorf("Jobs: want 0..%d, found %d", 1<<31, c.Jobs)
	}
	a := c.Arrival
	switch a.Process {
	case "poisson":
		if !finite(a.RatePerHour) || a.RatePerHour <= 0 {
			return fmt.Errorf("Arrival.RatePerHour: want a finite rate > 0, found %g", a.RatePerHour)
		}
	case "bursty":
		if !finite(a.BurstRatePerHour) || a.BurstRatePerHour <= 0 {
			return fmt.Errorf("Arrival.BurstRatePerHour: want a finite rate > 0, found %g", a.BurstRatePerHour)
		}
		if !finite(a.QuietRatePerHour) || a.QuietRatePerHour < 0 {
			return fmt.Errorf("Arrival.QuietRatePerHour: want a finite rate >= 0, found %g", a.QuietRatePerHour)
		}
		if a.BurstLength <= 0 || a.QuietLength <= 0 {
			return fmt.Errorf("Arrival.BurstLength and QuietLength: want > 0, found %v and %v", a.BurstLength, a.QuietLength)
		}
	default:
		return fmt.Errorf("Arrival.Process: want \"poisson\" or \"bursty\", found %q", a.Process)
	}
	if err := c.Duration.validate("Duration"); err != nil {
		return err
	}
	if len(c.GPUCounts) == 0 {
		return errors.New("GPUCounts: want at least one GPU count")
	}
	for _, g := range c.GPUCounts {
		if g < 0 || g > maxGPUs {
			return fmt.Errorf("GPUCounts: want counts in 0..%d, found %d", maxGPUs, g)
		}
	}
	if err := weights("GPUWeights", c.GPUWeights, len(c.GPUCounts)); err != nil {
		return err
	}
	if !(c.SharedFraction >= 0 && c.SharedFraction <= 1) {
		return fmt.Errorf("SharedFraction: want 0..1, found %g", c.SharedFraction)
	}
	if c.SharedFraction > 0 && len(c.SharedMilli) == 0 {
		return errors.New("SharedMilli: want at least one share when SharedFraction > 0")
	}
	for _, m := range c.SharedMilli {
		if m < 1 || m >= hwmodel.MilliPerGPU {
			return fmt.Errorf("SharedMilli: want shares in 1..999, found %d", m)
		}
	}
	if c.CPUMilliPerGPU < 0 || c.CPUMilliPerGPU > maxResource/maxGPUs || c.MemoryMiBPerGPU < 0 || c.MemoryMiBPerGPU > maxResource/maxGPUs {
		return fmt.Errorf("CPUMilliPerGPU and MemoryMiBPerGPU: want 0..%d, found %d and %d", int64(maxResource/maxGPUs), c.CPUMilliPerGPU, c.MemoryMiBPerGPU)
	}
	if len(c.Tenants) == 0 {
		return errors.New("Tenants: want at least one tenant")
	}
	if err := checkTenantList(c.Tenants, ""); err != nil {
		return fmt.Errorf("Tenants: %s", err.(*ParseError).Msg)
	}
	if c.TenantMix != nil {
		if err := weights("TenantMix", c.TenantMix, len(c.Tenants)); err != nil {
			return err
		}
	}
	if len(c.PriorityWeights) > 0 {
		if err := weights("PriorityWeights", c.PriorityWeights, len(c.PriorityWeights)); err != nil {
			return err
		}
	}
	if e := c.Estimate; e.Enabled && (!finite(e.Factor) || e.Factor <= 0 || !finite(e.Sigma) || e.Sigma < 0) {
		return fmt.Errorf("Estimate: want Factor > 0 and Sigma >= 0, found %g and %g", e.Factor, e.Sigma)
	}
	if err := c.MIG.validate(weights); err != nil {
		return err
	}
	g := c.DAG
	if !(g.Probability >= 0 && g.Probability <= 1) {
		return fmt.Errorf("DAG.Probability: want 0..1, found %g", g.Probability)
	}
	if err := c.ValidateClasses(); err != nil {
		return err
	}
	if g.Probability > 0 {
		if g.Tasks < 2 || g.Tasks > 1<<20 {
			return fmt.Errorf("DAG.Tasks: want 2..%d tasks, found %d", 1<<20, g.Tasks)
		}
		switch g.Shape {
		case "chain", "forkjoin", "mixed":
		default:
			return fmt.Errorf("DAG.Shape: want \"chain\", \"forkjoin\" or \"mixed\", found %q", g.Shape)
		}
	}
	return nil
}

// ValidateClasses checks Classes and ClassWeights: names that pass
// hwmodel.CheckClassName, none twice, and one finite weight >= 0 each
// with a positive sum (or nil weights).
func (c SyntheticConfig) ValidateClasses() error {
	if len(c.Classes) > MaxClasses {
		return fmt.Errorf("Classes: want at most %d, found %d", MaxClasses, len(c.Classes))
	}
	seen := make(map[string]bool, len(c.Classes))
	for _, k := range c.Classes {
		if err := hwmodel.CheckClassName(k); err != nil {
			return fmt.Errorf("Classes: %v", err)
		}
		if seen[k] {
			return fmt.Errorf("Classes: %q is given twice", k)
		}
		seen[k] = true
	}
	if c.ClassWeights == nil {
		return nil
	}
	if len(c.ClassWeights) != len(c.Classes) {
		return fmt.Errorf("ClassWeights: want %d weights, found %d", len(c.Classes), len(c.ClassWeights))
	}
	sum := 0.0
	for _, x := range c.ClassWeights {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("ClassWeights: want finite weights >= 0, found %g", x)
		}
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return fmt.Errorf("ClassWeights: want weights with a positive finite sum")
	}
	return nil
}

func (d DurationConfig) validate(name string) error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if d.Min <= 0 || d.Max < d.Min || d.Max > maxTime {
		return fmt.Errorf("%s.Min and Max: want 0 < Min <= Max <= %g s, found %g s and %g s", name, float64(maxSeconds), d.Min.Seconds(), d.Max.Seconds())
	}
	switch d.Dist {
	case "lognormal":
		if d.Median <= 0 || !finite(d.Sigma) || d.Sigma < 0 {
			return fmt.Errorf("%s: want Median > 0 and Sigma >= 0, found %g s and %g", name, d.Median.Seconds(), d.Sigma)
		}
	case "pareto":
		if !finite(d.Alpha) || d.Alpha <= 0 {
			return fmt.Errorf("%s.Alpha: want a finite tail index > 0, found %g", name, d.Alpha)
		}
	default:
		return fmt.Errorf("%s.Dist: want \"lognormal\" or \"pareto\", found %q", name, d.Dist)
	}
	return nil
}

func (m MIGConfig) validate(weights func(string, []float64, int) error) error {
	if !(m.Fraction >= 0 && m.Fraction <= 1) {
		return fmt.Errorf("MIG.Fraction: want 0..1, found %g", m.Fraction)
	}
	if m.Fraction == 0 {
		return nil
	}
	if len(m.Classes) == 0 {
		return errors.New("MIG.Classes: want at least one class when MIG.Fraction > 0")
	}
	w := make([]float64, len(m.Classes))
	for i, k := range m.Classes {
		if k.MinSlices < 0 || k.MinSlices > maxMIGSlices || k.MinMemoryMiB < 0 || k.MinMemoryMiB > maxMIGMemoryGiB*1024 {
			return fmt.Errorf("MIG.Classes[%d]: want MinSlices in 0..%d and MinMemoryMiB in 0..%d, found %d and %d", i, maxMIGSlices, maxMIGMemoryGiB*1024, k.MinSlices, k.MinMemoryMiB)
		}
		if k.MinSlices == 0 && k.MinMemoryMiB == 0 {
			return fmt.Errorf("MIG.Classes[%d]: want MinSlices or MinMemoryMiB > 0", i)
		}
		w[i] = k.Weight
	}
	if err := weights("MIG.Classes weights", w, len(w)); err != nil {
		return err
	}
	if m.Duration != nil {
		return m.Duration.validate("MIG.Duration")
	}
	return nil
}

// MeanArrivalsPerHour is the long-run arrival rate of the arrival process
// (DAGs count once).
func (c SyntheticConfig) MeanArrivalsPerHour() float64 {
	a := c.Arrival
	if a.Process == "bursty" {
		b, q := a.BurstLength.Seconds(), a.QuietLength.Seconds()
		return (a.BurstRatePerHour*b + a.QuietRatePerHour*q) / (b + q)
	}
	return a.RatePerHour
}

// MeanDuration is the expected job duration in seconds under the
// configured distribution, clamping or bounds included.
func (c SyntheticConfig) MeanDuration() float64 { return c.Duration.mean() }

// mean is the distribution's expected value in seconds.
func (d DurationConfig) mean() float64 {
	lo, hi := d.Min.Seconds(), d.Max.Seconds()
	if d.Dist == "pareto" {
		a := d.Alpha
		if hi == lo {
			return lo
		}
		if a == 1 {
			return hi * lo / (hi - lo) * math.Log(hi/lo)
		}
		return math.Pow(lo, a) / (1 - math.Pow(lo/hi, a)) * a / (a - 1) * (math.Pow(lo, 1-a) - math.Pow(hi, 1-a))
	}
	mu, s := math.Log(d.Median.Seconds()), d.Sigma
	if s == 0 {
		return min(max(d.Median.Seconds(), lo), hi)
	}
	z := func(x float64) float64 { return (math.Log(x) - mu) / s }
	n := distuv.UnitNormal
	// E[clamp(X, lo, hi)] = lo P(X<lo) + hi P(X>hi) + E[X; lo<=X<=hi].
	partial := math.Exp(mu+s*s/2) * (n.CDF(z(hi)-s) - n.CDF(z(lo)-s))
	return lo*n.CDF(z(lo)) + hi*n.Survival(z(hi)) + partial
}

// MeanGPUDemand is the expected number of GPUs busy on a cluster large
// enough that nothing waits: the long-run job rate times the mean GPU
// share times the mean duration (GPU count and duration are drawn
// independently; a MIG job counts as MinSlices/7 of a GPU for its own
// duration distribution). Use it to size a cluster for a target load.
func (c SyntheticConfig) MeanGPUDemand() float64 {
	perArrival := 1.0
	if c.DAG.Probability > 0 {
		perArrival += c.DAG.Probability * float64(c.DAG.Tasks-1)
	}
	sum, gpus := 0.0, 0.0
	for i, g := range c.GPUCounts {
		share := float64(g)
		if g == 1 && c.SharedFraction > 0 && len(c.SharedMilli) > 0 {
			mean := 0.0
			for _, m := range c.SharedMilli {
				mean += float64(m) / hwmodel.MilliPerGPU
			}
			mean /= float64(len(c.SharedMilli))
			share = (1-c.SharedFraction)*1 + c.SharedFraction*mean
		}
		sum += c.GPUWeights[i]
		gpus += c.GPUWeights[i] * share
	}
	gpuSeconds := gpus / sum * c.MeanDuration()
	if f := c.MIG.Fraction; f > 0 {
		wsum, share := 0.0, 0.0
		for _, k := range c.MIG.Classes {
			wsum += k.Weight
			share += k.Weight * migGPUShare(hwmodel.MIGRequest{MinSlices: k.MinSlices})
		}
		d := c.Duration
		if c.MIG.Duration != nil {
			d = *c.MIG.Duration
		}
		gpuSeconds = (1-f)*gpuSeconds + f*share/wsum*d.mean()
	}
	return c.MeanArrivalsPerHour() / 3600 * perArrival * gpuSeconds
}

// Generate makes a workload from cfg. The same configuration and seed give
// the same workload, job for job; the random source is a PCG seeded with
// (seed, a fixed stream constant) and nothing else is random. Jobs are
// named "j<index>" and carry no Source. Generating a million jobs takes
// about a second and allocates the Job slice, one string holding every
// name, and the dependency lists of DAG tasks, nothing per job.
func Generate(cfg SyntheticConfig, seed uint64) (*Workload, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("synthetic workload: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, syntheticStream))
	g := generator{cfg: &cfg, r: r}
	g.gpuCum = cumulative(cfg.GPUWeights)
	if cfg.TenantMix != nil {
		g.tenantCum = cumulative(cfg.TenantMix)
	}
	if len(cfg.PriorityWeights) > 1 {
		g.prioCum = cumulative(cfg.PriorityWeights)
	}
	if cfg.MIG.Fraction > 0 {
		w := make([]float64, len(cfg.MIG.Classes))
		for i, k := range cfg.MIG.Classes {
			w[i] = k.Weight
		}
		g.migCum = cumulative(w)
	}
	g.startArrivals()

	n := cfg.Jobs
	jobs := make([]Job, n)
	names := newNameSeq(n)
	var depBuf []int // chunk that DAG tasks' Deps are cut from
	for i := 0; i < n; {
		sec := g.nextArrival()
		if !(sec <= maxSeconds) { // compare before converting: no overflow
			return nil, fmt.Errorf("synthetic workload: job %d would arrive after %g s; raise the arrival rate or lower Jobs", i, float64(maxSeconds))
		}
		at := hwmodel.FromSeconds(sec)
		tenant := g.pickTenant()
		prio := g.pickPriority()
		tasks := 1
		if cfg.DAG.Probability > 0 && r.Float64() < cfg.DAG.Probability {
			tasks = min(cfg.DAG.Tasks, n-i)
		}
		forkJoin := false
		if tasks >= 3 {
			switch cfg.DAG.Shape {
			case "forkjoin":
				forkJoin = true
			case "mixed":
				forkJoin = r.IntN(2) == 1
			}
		}
		first := i
		for k := 0; k < tasks; k++ {
			j := &jobs[i]
			j.Name = names.next(i)
			j.Tenant = tenant.Name
			j.Priority = prio
			j.Submit = at
			g.fillJob(j)
			if tasks > 1 {
				j.DAG = jobs[first].Name
				var nd int
				switch {
				case k == 0:
				case !forkJoin || k < tasks-1:
					nd = 1
				default:
					nd = tasks - 2
				}
				if nd > 0 {
					if cap(depBuf)-len(depBuf) < nd {
						depBuf = make([]int, 0, max(4096, nd))
					}
					start := len(depBuf)
					switch {
					case !forkJoin:
						depBuf = append(depBuf, i-1)
					case k < tasks-1:
						depBuf = append(depBuf, first)
					default:
						for d := first + 1; d < i; d++ {
							depBuf = append(depBuf, d)
						}
					}
					j.Deps = depBuf[start:len(depBuf):len(depBuf)]
				}
			}
			i++
		}
	}
	w := &Workload{Jobs: jobs}
	// Tenants in order of first appearance, then any that submitted nothing.
	seen := make([]bool, len(cfg.Tenants))
	idx := make(map[string]int, len(cfg.Tenants))
	for k, t := range cfg.Tenants {
		idx[t.Name] = k
	}
	for i := 0; i < n && len(w.Tenants) < len(cfg.Tenants); i++ {
		if k := idx[jobs[i].Tenant]; !seen[k] {
			seen[k] = true
			w.Tenants = append(w.Tenants, cfg.Tenants[k])
		}
	}
	for k, t := range cfg.Tenants {
		if !seen[k] {
			w.Tenants = append(w.Tenants, t)
		}
	}
	DrawClasses(w, cfg.Classes, cfg.ClassWeights, seed)
	return w, nil
}

// classStream is the PCG stream constant of job classes ("class").
const classStream = 0x636c617373

// DrawClasses gives every job of w a class from names, each drawn with
// probability proportional to its weight (weights nil: equal), from
// seed's stream of classes, which no other draw uses; names must pass
// hwmodel.CheckClassName and weights SyntheticConfig.Validate's rule.
func DrawClasses(w *Workload, names []string, weights []float64, seed uint64) {
	drawNames(w, &w.Classes, names, weights, seed, classStream, func(j *Job, k uint16) { j.Class = k })
}

// drawNames gives every job of w a name from names (into *list, each job
// its 1-based number through set), drawn by weight from seed's stream.
func drawNames(w *Workload, list *[]string, names []string, weights []float64, seed, stream uint64, set func(*Job, uint16)) {
	if len(names) == 0 {
		return
	}
	cum := cumulative(weightsOrOnes(weights, len(names)))
	r := rand.New(rand.NewPCG(seed, stream))
	*list = slices.Clone(names)
	for i := range w.Jobs {
		set(&w.Jobs[i], uint16(pick(r, cum)+1))
	}
}

// nameSeq hands out "j0", "j1", ... in order, cut from one string, so that
// names cost one allocation in all.
type nameSeq struct {
	all string
	off int
}

func newNameSeq(n int) *nameSeq {
	size := 0
	for lo, d := 0, 1; lo < n; d++ {
		hi := min(n, pow10(d)) // numbers lo..hi-1 have d digits
		size += (hi - lo) * (1 + d)
		lo = hi
	}
	buf := make([]byte, 0, size)
	for i := 0; i < n; i++ {
		buf = append(buf, 'j')
		buf = strconv.AppendInt(buf, int64(i), 10)
	}
	return &nameSeq{all: string(buf)}
}

// next returns name i; calls must come with i = 0, 1, 2, ...
func (s *nameSeq) next(i int) string {
	end := s.off + 1 + digits(i)
	name := s.all[s.off:end]
	s.off = end
	return name
}

func pow10(d int) int {
	p := 1
	for ; d > 0; d-- {
		if p > math.MaxInt/10 {
			return math.MaxInt
		}
		p *= 10
	}
	return p
}

func digits(i int) int {
	d := 1
	for ; i >= 10; i /= 10 {
		d++
	}
	return d
}

// cumulative turns weights into running sums for pick.
func cumulative(w []float64) []float64 {
	c := make([]float64, len(w))
	sum := 0.0
	for i, x := range w {
		sum += x
		c[i] = sum
	}
	return c
}

// pick draws an index with probability proportional to its weight; cum is
// from cumulative. A linear scan beats a binary search for the handful of
// categories used here.
func pick(r *rand.Rand, cum []float64) int {
	u := r.Float64() * cum[len(cum)-1]
	for i, c := range cum {
		if u < c {
			return i
		}
	}
	return len(cum) - 1
}

// generator holds the random source and the arrival process's state.
type generator struct {
	cfg                        *SyntheticConfig
	r                          *rand.Rand
	gpuCum, tenantCum, prioCum []float64
	migCum                     []float64

	now      float64 // seconds; time of the last arrival
	started  bool
	burst    bool    // bursty: in a burst now
	stateEnd float64 // bursty: when the current state ends
}

func (g *generator) startArrivals() {
	a := g.cfg.Arrival
	if a.Process != "bursty" {
		return
	}
	// Start in each state with its long-run probability, with a remaining
	// time drawn afresh (the state lengths are memoryless).
	b, q := a.BurstLength.Seconds(), a.QuietLength.Seconds()
	g.burst = g.r.Float64() < b/(b+q)
	g.stateEnd = g.stateLength()
}

func (g *generator) stateLength() float64 {
	if g.burst {
		return g.r.ExpFloat64() * g.cfg.Arrival.BurstLength.Seconds()
	}
	return g.r.ExpFloat64() * g.cfg.Arrival.QuietLength.Seconds()
}

// nextArrival returns the next arrival time in seconds. The process runs
// from time 0, and the first arrival is shifted to 0, so that a workload
// starts at 0 like one read from a trace.
func (g *generator) nextArrival() float64 {
	a := &g.cfg.Arrival
	var t float64
	if a.Process == "bursty" {
		t = g.now
		for {
			rate := a.QuietRatePerHour
			if g.burst {
				rate = a.BurstRatePerHour
			}
			if rate > 0 {
				gap := g.r.ExpFloat64() / (rate / 3600)
				if t+gap < g.stateEnd {
					t += gap
					break
				}
			}
			// No arrival before the state ends; by memorylessness the
			// process restarts there in the other state.
			t = g.stateEnd
			g.burst = !g.burst
			g.stateEnd = t + g.stateLength()
		}
	} else {
		t = g.now + g.r.ExpFloat64()/(a.RatePerHour/3600)
	}
	if !g.started {
		g.started = true
		g.stateEnd -= t
		t = 0
	}
	g.now = t
	return t
}

func (g *generator) pickTenant() *Tenant {
	if g.tenantCum == nil {
		return &g.cfg.Tenants[g.r.IntN(len(g.cfg.Tenants))]
	}
	return &g.cfg.Tenants[pick(g.r, g.tenantCum)]
}

func (g *generator) pickPriority() int {
	if g.prioCum == nil {
		return 0
	}
	return pick(g.r, g.prioCum)
}

// fillJob draws a job's duration, request and estimate.
func (g *generator) fillJob(j *Job) {
	c := g.cfg
	d := c.Duration
	mig := c.MIG.Fraction > 0 && g.r.Float64() < c.MIG.Fraction
	if mig && c.MIG.Duration != nil {
		d = *c.MIG.Duration
	}
	var sec float64
	lo, hi := d.Min.Seconds(), d.Max.Seconds()
	switch d.Dist {
	case "pareto":
		// Inverse CDF of the Pareto distribution truncated to [lo, hi].
		u := g.r.Float64()
		sec = lo * math.Pow(1-u*(1-math.Pow(lo/hi, d.Alpha)), -1/d.Alpha)
	default:
		sec = d.Median.Seconds() * math.Exp(d.Sigma*g.r.NormFloat64())
	}
	// Clamp in seconds first: a huge Sigma may overflow to +Inf.
	j.Duration = min(max(hwmodel.FromSeconds(min(max(sec, lo), hi)), d.Min), d.Max)

	share := int64(hwmodel.MilliPerGPU)
	if mig {
		k := c.MIG.Classes[pick(g.r, g.migCum)]
		j.Req.GPUs = 1
		j.Req.MIG = hwmodel.MIGRequest{MinSlices: k.MinSlices, MinMemoryMiB: k.MinMemoryMiB}
		share = int64(max(k.MinSlices, 1)) * hwmodel.MilliPerGPU / maxMIGSlices
	} else if gpus := c.GPUCounts[pick(g.r, g.gpuCum)]; gpus > 0 {
		j.Req.GPUs = gpus
		j.Req.GPUMilli = hwmodel.MilliPerGPU
		if gpus == 1 && c.SharedFraction > 0 && g.r.Float64() < c.SharedFraction {
			j.Req.GPUMilli = c.SharedMilli[g.r.IntN(len(c.SharedMilli))]
		}
		share = int64(gpus) * int64(j.Req.GPUMilli)
	}
	j.Req.CPUMilli = c.CPUMilliPerGPU * share / hwmodel.MilliPerGPU
	j.Req.MemoryMiB = c.MemoryMiBPerGPU * share / hwmodel.MilliPerGPU

	if e := c.Estimate; e.Enabled {
		f := e.Factor
		if e.Sigma > 0 {
			f *= math.Exp(e.Sigma * g.r.NormFloat64())
		}
		est := j.Duration.Seconds() * f
		j.Estimate = min(max(hwmodel.FromSeconds(min(est, maxSeconds)), hwmodel.Second), maxTime)
	}
}

// ParseClassList reads a list of job classes with weights, as the
// --classes flags and scenario files write it: CLASS[=WEIGHT],... with
// finite weights >= 0 (default 1) and a positive sum.
func ParseClassList(list string) ([]string, []float64, error) {
	var names []string
	var weights []float64
	for _, item := range strings.Split(list, ",") {
		name, w, hasWeight := strings.Cut(strings.TrimSpace(item), "=")
		weight := 1.0
		if hasWeight {
			v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("want CLASS=WEIGHT with a finite weight >= 0, got %q", item)
			}
			weight = v
		}
		names, weights = append(names, strings.TrimSpace(name)), append(weights, weight)
	}
	cfg := SyntheticConfig{Classes: names, ClassWeights: weights}
	if err := cfg.ValidateClasses(); err != nil {
		return nil, nil, err
	}
	return names, weights, nil
}

// CheckDatasetName says what is wrong with a dataset name, if anything:
// 1 to 64 bytes of letters, digits and . _ - /.
func CheckDatasetName(s string) error {
	if err := hwmodel.CheckClassName(s); err != nil {
		return fmt.Errorf("want a dataset name of 1 to 64 letters, digits and . _ - /, found %q", s)
	}
	return nil
}

// datasetStream is the PCG stream constant of datasets ("data").
const datasetStream = 0x64617461

// DrawDatasets gives every job of w a dataset from names, drawn as
// DrawClasses draws classes but from a stream of its own.
func DrawDatasets(w *Workload, names []string, weights []float64, seed uint64) {
	drawNames(w, &w.Datasets, names, weights, seed, datasetStream, func(j *Job, k uint16) { j.Dataset = k })
}

// weightsOrOnes is weights, or n equal weights when it is nil.
func weightsOrOnes(weights []float64, n int) []float64 {
	if weights != nil {
		return weights
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
