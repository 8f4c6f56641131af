package plan

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// Axis names what a plan sizes, and is the name of its size column.
type Axis string

const (
	// AxisNodes: nodes of one GPU model in a cluster for a batch workload.
	AxisNodes Axis = "nodes"
	// AxisReplicas: fixed replicas of one service.
	AxisReplicas Axis = "replicas"
)

// Sample is what one run (one size, one seed) measured.
type Sample struct {
	// Metrics holds the value of every target's metric, by Target.Key.
	Metrics map[string]float64
	// Unfit counts jobs that could never fit the cluster (failed at
	// submission).
	Unfit int
	// GPUHoursPerHour is the GPU time held over the run's hours.
	GPUHoursPerHour float64
	// Requests is how many requests arrived.
	Requests int64
}

// Evaluator runs one size of one GPU model on one seed. Calls may come
// from several goroutines at once.
type Evaluator func(model string, size int, seed uint64) (Sample, error)

// Point is one size tried: the worst value of each target's metric across
// seeds, and whether each target held.
type Point struct {
	Model string // canonical GPU model name
	// Size is the node or replica count (Result.Axis).
	Size, GPUs int
	// Cost is GPUs × price per GPU-hour; 0 without prices.
	Cost float64
	// Fleet says what the nodes are when Model names a mix ("25 ×
	// H100-80GB + 75 × A100-80GB nodes"); "" for one model.
	Fleet  string
	Values []float64
	Pass   []bool
	// Unfit is the most jobs that could never fit, over seeds; a size with
	// any is not an answer.
	Unfit int
	// GPUHoursPerHour is the most over seeds; Requests the mean per seed.
	GPUHoursPerHour float64
	Requests        int64
}

// OK reports whether every target held and every job could fit.
func (p Point) OK() bool { return p.Unfit == 0 && !slices.Contains(p.Pass, false) }

// Config is one plan.
type Config struct {
	Axis    Axis
	Targets []Target
	// Models are sized one after another, each on its own; the best
	// model's smallest passing size is the answer.
	Models []string
	// Prices per GPU-hour by canonical model name; with them the cheapest
	// answer wins, without (nil) the fewest GPUs.
	Prices map[string]float64
	// Mixes are the entries of Models that name a mix of models (by
	// Mix.Label): their cost is their parts' and their points say their
	// split.
	Mixes []Mix
	// GPUsPer is the GPUs in one unit of size (a node, a replica).
	GPUsPer int
	// Lo and Hi bound the sizes searched.
	Lo, Hi int
	// Seeds: a size meets a target when it holds on every one.
	Seeds []uint64
	// Workers bounds the runs at once (default GOMAXPROCS); the result
	// does not depend on it.
	Workers int
	Eval    Evaluator
	// Progress, when set, is called with each point the plan uses, in the
	// order it uses them.
	Progress func(Point)
	// Service and Rate describe a replica plan for its messages: the
	// service planned and the constant arrival rate (0: the spec's).
	Service string
	Rate    float64
}

// Result is a plan: every size used, the answer and, for each model, its
// smallest passing size.
type Result struct {
	Axis    Axis
	Targets []Target
	Models  []string
	Prices  map[string]float64
	GPUsPer int
	Lo, Hi  int
	Seeds   []uint64
	Service string
	Rate    float64
	// Points are sorted by model order, then size.
	Points []Point
	// Best is the index in Points of the answer; -1 when no size met
	// every target.
	Best int
	// PerModel is, for each model, the index in Points of its smallest
	// passing size, or -1.
	PerModel []int
	// NeighbourFails is true when the answer is Lo or one size below it
	// was simulated and failed: the answer is the smallest size, not just
	// the smallest the search happened to try.
	NeighbourFails bool

	// searched is, for each model whose search found a size meeting the
	// targets that growing helps (when some target does), that size's
	// index in Points.
	searched []int
}

// Run plans: for each model it finds the smallest size in [Lo, Hi] at
// which every target holds on every seed (the worst value across seeds
// is the one compared) and every job fits.
//
// The search assumes that the targets growing helps hold from some size
// on. When every target's trend is known those are the Improving ones;
// otherwise Run simulates Hi first and takes the targets that hold there.
// It finds the smallest size at which they hold (Search), and checks the
// others there: being met, if at all, by shrinking (a utilisation or
// saturation floor), they cannot be met by a bigger size either.
//
// Up to Workers runs (one size, one seed) go at once: the seeds of a
// size, and the sizes the search may need next, simulated ahead. Points
// and Progress hold only the sizes the sequential search uses.
func Run(cfg Config) (*Result, error) {
	if len(cfg.Targets) == 0 {
		return nil, fmt.Errorf("plan: no target given")
	}
	if len(cfg.Models) == 0 {
		return nil, fmt.Errorf("plan: no GPU model given")
	}
	if cfg.Eval == nil || cfg.GPUsPer < 1 {
		return nil, fmt.Errorf("plan: Config needs Eval and GPUsPer >= 1")
	}
	if cfg.Lo < 1 || cfg.Hi < cfg.Lo {
		return nil, fmt.Errorf("plan: empty size range [%d, %d]", cfg.Lo, cfg.Hi)
	}
	if cfg.Axis != AxisNodes && cfg.Axis != AxisReplicas {
		return nil, fmt.Errorf("plan: unknown axis %q", cfg.Axis)
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{1}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := &Result{Axis: cfg.Axis, Targets: cfg.Targets, Models: cfg.Models, Prices: cfg.Prices, GPUsPer: cfg.GPUsPer,
		Lo: cfg.Lo, Hi: cfg.Hi, Seeds: seeds, Service: cfg.Service, Rate: cfg.Rate, Best: -1}
	probe := slices.ContainsFunc(cfg.Targets, func(t Target) bool { return t.Trend == TrendUnknown })
	// Every run takes a slot of sem, whichever size it belongs to.
	sem := make(chan struct{}, workers)
	for _, m := range cfg.Models {
		pts, best, found, driven, err := r.searchModel(cfg, m, seeds, probe, sem, workers)
		if err != nil {
			return nil, err
		}
		ns := make([]int, 0, len(pts))
		for n := range pts {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		first := len(r.Points)
		for _, n := range ns {
			r.Points = append(r.Points, pts[n])
		}
		i := -1
		if found && driven {
			r.searched = append(r.searched, first+slices.Index(ns, best))
		}
		if found && pts[best].OK() {
			i = first + slices.Index(ns, best)
		}
		r.PerModel = append(r.PerModel, i)
	}
	for _, i := range r.PerModel {
		if i >= 0 && (r.Best < 0 || better(r.Points[i], r.Points[r.Best], cfg.Prices != nil)) {
			r.Best = i
		}
	}
	if r.Best >= 0 {
		b := r.Points[r.Best]
		r.NeighbourFails = b.Size == r.Lo
		for _, p := range r.Points {
			if p.Model == b.Model && p.Size == b.Size-1 && !p.OK() {
				r.NeighbourFails = true
			}
		}
	}
	return r, nil
}

// searchModel searches one model's sizes. It returns the points the
// search used, by size, the search's answer, and whether any target drove
// the search.
func (r *Result) searchModel(cfg Config, model string, seeds []uint64, probe bool, sem chan struct{}, width int) (used map[int]Point, best int, found, driven bool, err error) {
	type evaluated struct {
		p   Point
		err error
	}
	var (
		mu    sync.Mutex
		cache = map[int]evaluated{}
	)
	prefetch := func(ns []int) {
		var wg sync.WaitGroup
		for _, n := range ns {
			mu.Lock()
			_, done := cache[n]
			mu.Unlock()
			if done {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := r.point(cfg, model, n, seeds, sem)
				mu.Lock()
				cache[n] = evaluated{p, err}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	used = map[int]Point{}
	get := func(n int) (Point, error) {
		prefetch([]int{n})
		mu.Lock()
		e := cache[n]
		mu.Unlock()
		if e.err != nil {
			return Point{}, e.err
		}
		if _, seen := used[n]; !seen {
			used[n] = e.p
			if cfg.Progress != nil {
				cfg.Progress(e.p)
			}
		}
		return e.p, nil
	}
	grow := make([]bool, len(cfg.Targets))
	if probe {
		// The largest size tells which targets growing can meet: those
		// that hold there.
		top, err := get(cfg.Hi)
		if err != nil {
			return nil, 0, false, false, err
		}
		copy(grow, top.Pass)
	} else {
		for k, t := range cfg.Targets {
			grow[k] = t.Improving()
		}
	}
	best, found, err = Search(cfg.Lo, cfg.Hi, width, prefetch, func(n int) (bool, error) {
		p, err := get(n)
		if err != nil {
			return false, err
		}
		if p.Unfit > 0 {
			return false, nil
		}
		for k, g := range grow {
			if g && !p.Pass[k] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, 0, false, false, err
	}
	return used, best, found, slices.Contains(grow, true), nil
}

// point simulates one size on every seed and keeps, for each target, the
// worst value.
func (r *Result) point(cfg Config, model string, n int, seeds []uint64, sem chan struct{}) (Point, error) {
	samples := make([]Sample, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for k, seed := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			samples[k], errs[k] = cfg.Eval(model, n, seed)
		}()
	}
	wg.Wait()
	p := Point{Model: model, Size: n, GPUs: n * cfg.GPUsPer}
	p.Cost = float64(p.GPUs) * cfg.Prices[model]
	if mix, ok := cfg.mix(model); ok {
		p.Cost, p.Fleet = 0, mix.Describe(n)
		for i, k := range mix.Split(n) {
			p.Cost += float64(k*cfg.GPUsPer) * cfg.Prices[mix.Models[i]]
		}
	}
	for k, err := range errs {
		if err != nil {
			return p, fmt.Errorf("%s, seed %d: %w", r.label(p), seeds[k], err)
		}
	}
	var reqs int64
	for k, s := range samples {
		for ti, t := range cfg.Targets {
			v, ok := s.Metrics[t.Key()]
			if !ok {
				return p, fmt.Errorf("%s, seed %d: the run measured no %s", r.label(p), seeds[k], t.Key())
			}
			if k == 0 {
				p.Values = append(p.Values, v)
			} else {
				p.Values[ti] = t.Worse(p.Values[ti], v)
			}
		}
		p.Unfit = max(p.Unfit, s.Unfit)
		p.GPUHoursPerHour = max(p.GPUHoursPerHour, s.GPUHoursPerHour)
		reqs += s.Requests
	}
	p.Requests = reqs / int64(len(seeds))
	for ti, t := range cfg.Targets {
		p.Pass = append(p.Pass, t.Holds(p.Values[ti]))
	}
	return p, nil
}

// mix is the mix that model names, if it names one.
func (cfg *Config) mix(model string) (Mix, bool) {
	for _, m := range cfg.Mixes {
		if m.Label() == model {
			return m, true
		}
	}
	return Mix{}, false
}

func better(a, b Point, byCost bool) bool {
	if byCost && a.Cost != b.Cost {
		return a.Cost < b.Cost
	}
	return a.GPUs < b.GPUs
}
