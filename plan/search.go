package plan

import (
	"fmt"
	"slices"
)

// Search finds the smallest n in [lo, hi] for which pass(n) is true,
// assuming that once true it stays true for larger n. It tries lo, then
// doubles the step (lo+1, lo+3, lo+7, ...) until a size passes or hi is
// reached, then binary-searches the bracket. pass is called at most once
// per size. found is false when hi fails.
func Search(lo, hi int, pass func(n int) (bool, error)) (best int, found bool, err error) {
	if lo < 1 || hi < lo {
		return 0, false, fmt.Errorf("empty size range [%d, %d]", lo, hi)
	}
	seen := map[int]bool{}
	try := func(n int) (bool, error) {
		if ok, done := seen[n]; done {
			return ok, nil
		}
		ok, err := pass(n)
		seen[n] = ok
		return ok, err
	}
	lastFail := lo - 1
	n, step := lo, 1
	for {
		ok, err := try(n)
		if err != nil {
			return 0, false, err
		}
		if ok {
			break
		}
		lastFail = n
		if n == hi {
			return 0, false, nil
		}
		n = min(hi, n+step)
		step *= 2
	}
	// lastFail fails (or is below the range) and n passes.
	for n-lastFail > 1 {
		mid := lastFail + (n-lastFail)/2
		ok, err := try(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			n = mid
		} else {
			lastFail = mid
		}
	}
	return n, true, nil
}

// Point is one cluster size tried: the worst value of each target's
// metric across seeds, and whether each target held.
type Point struct {
	Model       string // canonical GPU model name
	Nodes, GPUs int
	Cost        float64 // GPUs × price per GPU-hour; 0 without prices
	Values      []float64
	Pass        []bool
	// Unfit is how many jobs could never fit the cluster (failed at
	// submission); a size with any is not an answer.
	Unfit int
}

// OK reports whether every target held and every job could fit.
func (p Point) OK() bool {
	if p.Unfit > 0 {
		return false
	}
	for _, ok := range p.Pass {
		if !ok {
			return false
		}
	}
	return true
}

// Result is a plan: every size tried, the answer and, for each model, its
// smallest passing size.
type Result struct {
	Targets []Target
	Models  []string
	Prices  map[string]float64 // by canonical model name; nil without prices
	Points  []Point            // sorted by model order, then nodes
	// Best is the index in Points of the answer; -1 when no size met
	// every target.
	Best int
	// PerModel is, for each model, the index in Points of its smallest
	// passing size, or -1.
	PerModel []int
	Evals    int // distinct simulated sizes (each across every seed)

	// smallestGrown is, for each model where one exists, the smallest size
	// meeting every target that the largest size meets.
	smallestGrown []Point
}

// Evaluator simulates one cluster: model's nodes × gpus-per-node.
type Evaluator func(model string, nodes int) (Point, error)

// Plan searches node counts in [loNodes, hiNodes] for every model.
func Plan(targets []Target, models []string, prices map[string]float64, loNodes, hiNodes int, eval Evaluator) (*Result, error) {
	r := &Result{Targets: targets, Models: models, Prices: prices, Best: -1}
	perModel := make([]Point, len(models))
	found := make([]bool, len(models))
	for mi, m := range models {
		pts := map[int]Point{}
		get := func(n int) (Point, error) {
			if p, ok := pts[n]; ok {
				return p, nil
			}
			p, err := eval(m, n)
			if err == nil {
				pts[n] = p
			}
			return p, err
		}
		// The largest size tells which targets growing can meet: those
		// that hold there. The search finds the smallest size at which
		// they all hold (and every job fits); targets that fail at the
		// largest size as well are checked there, and, being met by
		// shrinking if at all (a utilisation floor), cannot be met by a
		// larger size either.
		top, err := get(hiNodes)
		if err != nil {
			return nil, err
		}
		grow := top.Pass
		best, ok, err := Search(loNodes, hiNodes, func(n int) (bool, error) {
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
			return nil, err
		}
		ns := make([]int, 0, len(pts))
		for n := range pts {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		for _, n := range ns {
			r.Points = append(r.Points, pts[n])
		}
		r.Evals += len(ns)
		if ok {
			if slices.Contains(grow, true) {
				r.smallestGrown = append(r.smallestGrown, pts[best])
			}
			if pts[best].OK() {
				perModel[mi], found[mi] = pts[best], true
			}
		}
	}
	r.PerModel = make([]int, len(models))
	for mi := range models {
		r.PerModel[mi] = -1
		if !found[mi] {
			continue
		}
		for i, p := range r.Points {
			if p.Model == models[mi] && p.Nodes == perModel[mi].Nodes {
				r.PerModel[mi] = i
			}
		}
	}
	for _, i := range r.PerModel {
		if i < 0 {
			continue
		}
		if r.Best < 0 || better(r.Points[i], r.Points[r.Best], prices != nil) {
			r.Best = i
		}
	}
	return r, nil
}

func better(a, b Point, byCost bool) bool {
	if byCost && a.Cost != b.Cost {
		return a.Cost < b.Cost
	}
	return a.GPUs < b.GPUs
}

// Unreachable explains, when no size met the targets, which targets failed
// at the largest size of each model and by how much.
func (r *Result) Unreachable() string {
	if r.Best >= 0 {
		return ""
	}
	s := "no cluster in the allowed range meets every target"
	for _, m := range r.Models {
		var last *Point
		for i := range r.Points {
			if r.Points[i].Model == m && (last == nil || r.Points[i].Nodes > last.Nodes) {
				last = &r.Points[i]
			}
		}
		if last == nil {
			continue
		}
		s += fmt.Sprintf("; at the largest size, %d × %s (%d GPUs):", last.Nodes, m, last.GPUs)
		for k, t := range r.Targets {
			if !last.Pass[k] {
				s += fmt.Sprintf(" target %s fails: %s", t, t.Miss(last.Values[k]))
				// The best value any size tried reached, when another
				// size came closer.
				best := last
				for i := range r.Points {
					if p := &r.Points[i]; p.Model == m && t.Worse(p.Values[k], best.Values[k]) == best.Values[k] && p.Values[k] != best.Values[k] {
						best = p
					}
				}
				if best != last {
					s += fmt.Sprintf(" (the closest of the sizes tried was %d × %s: %s)", best.Nodes, m, fmtNum(best.Values[k]))
				}
				s += ";"
			}
		}
		if last.Unfit > 0 {
			s += fmt.Sprintf(" %d jobs can never fit it;", last.Unfit)
		}
		s = s[:len(s)-1]
	}
	for _, p := range r.smallestGrown {
		if p.OK() {
			continue
		}
		s += fmt.Sprintf("; at %d × %s (%d GPUs), the smallest size at which every job fits and the targets met at the largest size hold:", p.Nodes, p.Model, p.GPUs)
		for k, t := range r.Targets {
			if !p.Pass[k] {
				s += fmt.Sprintf(" target %s fails: %s;", t, t.Miss(p.Values[k]))
			}
		}
		s = s[:len(s)-1]
	}
	return s
}
