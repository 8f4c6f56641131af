package policies

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// The linear programs of the gavel order (gavel.go), over classes of jobs
// rather than jobs.
//
// Notation. T GPU types (the models the cluster has), cap_t GPUs of type
// t, C = Σ cap_t. Job j needs g_j GPUs and progresses at rate r_jt on
// type t (SpeedView.RateOn; 0 where it cannot run). Its allocation
// X_jt is the fraction of time it runs on type t: X_jt ≥ 0, Σ_t X_jt ≤ 1,
// and Σ_j g_j X_jt ≤ cap_t. Its throughput is Σ_t X_jt r_jt.
//
// The equal share. Each GPU a job asks for gets the same time fraction
// of every type, cap_t / max(S, C) for S = Σ_j g_j: feasible, and the
// 1/n share of an n-job cluster of one-GPU jobs. Job j's throughput
// there is e_j / max(S, C), with e_j = Σ_t r_jt cap_t.
//
// Working in GPU-time (V_jt = g_j X_jt) and in rates normalised by e_j
// (ρ_jt = C r_jt / e_j; the factor C only keeps the numbers near 1),
// job j's normalised throughput (its throughput over its equal share's,
// up to the constant C / max(S, C)) is Σ_t ρ_jt V_jt / g_j.
//
// Classes. The constraints and objectives read a job only through its
// ρ vector, its weight (max-min) and, linearly, g_j. Jobs of one ρ vector
// and weight form a class c with G_c = Σ g_j; its variables are
// V_ct = Σ_{j∈c} V_jt. For max-min fairness the aggregation is exact:
// any class solution splits into a job solution in which every member
// runs the same time fraction X_jt = V_ct / G_c, with the same
// normalised throughput Σ_t ρ_ct V_ct / G_c, and any job solution sums
// to a class solution whose class minimum is no worse. So the LP has
// K·T + 1 variables (fewer: none where ρ_ct = 0), 2K + T rows, and K is
// the number of distinct (ρ, weight) pairs among the active jobs,
// whatever their number: at most the run's speed classes × reference
// models × accepted model sets × tenant weights, and never more than
// gavelMaxClasses (beyond it, jobs join the class of the nearest ρ).
//
// For finish-time fairness each job has its own demand, so the class
// constraint holds the sum of its members' demands, and ftfSplit divides
// the class's allocation among them, most urgent first. That relaxes the
// per-job cap Σ_t X_jt ≤ 1 to the class's sum: the LP may give a class
// mostly slow time that only some of its members can use, and a member
// that cannot meet its demand within its own time then falls short of
// the ratio the bisection found. On the runs in docs/policies.md 0.6–1.5 %
// of the jobs' allocations fell short, by at most the class's ratio of
// fastest to slowest rate (2.2); the rest meet it exactly.

// gavelMaxClasses bounds the number of classes, so that an LP has at
// most gavelMaxClasses·T + 1 structural variables and 2·gavelMaxClasses
// + T rows.
const gavelMaxClasses = 16

// gavelClass is one class of the LP.
type gavelClass struct {
	rho    []float64 // per type, normalised rate: C·r_t/e; 0 where the class cannot run
	weight float64   // max-min: a class of weight w gets w times the normalised throughput
	gpus   float64   // G_c, the GPUs its members ask for in all
	demand float64   // ftf: Σ δ_j at the φ being tried
	alloc  []float64 // per type, V_ct: the solution
}

// gavelLP builds and solves the LPs. Its slices are reused across
// solves.
type gavelLP struct {
	caps    []float64 // per type
	classes []gavelClass

	a      []float64 // row-major A of the standard form
	b, c   []float64
	vcol   []int // per class × type: the column of V_ct, or -1
	capRow []int // per class: the row of its time cap, or -1 if it cannot bind
	nV     int   // structural V columns
	nRows  int
	nCols  int
	zCol   int // max-min's z, or -1
	sCol0  int // first slack column
	solves int // LPs solved, for the benchmark's report
}

// lpTol is the simplex's optimality tolerance.
const lpTol = 1e-9

// layout numbers the columns: V_ct where ρ_ct > 0, then z (withZ), then
// one slack per row; and zeroes A, b and c.
func (p *gavelLP) layout(withZ bool) {
	T, K := len(p.caps), len(p.classes)
	p.vcol = p.vcol[:0]
	p.nV = 0
	for k := range K {
		for t := range T {
			if p.classes[k].rho[t] > 0 {
				p.vcol = append(p.vcol, p.nV)
				p.nV++
			} else {
				p.vcol = append(p.vcol, -1)
			}
		}
	}
	p.zCol = -1
	col := p.nV
	if withZ {
		p.zCol = col
		col++
	}
	p.sCol0 = col
	// A class's time cap Σ_t V ≤ G binds only when G is less than the
	// GPUs of the types it runs on (which bound Σ_t V anyway): the other
	// caps are left out, which in a loaded cluster removes most of them
	// and, the simplex's pivots costing the cube of the rows, most of the
	// work.
	p.capRow = p.capRow[:0]
	nCap := 0
	for k := range K {
		reach := 0.0
		for t := range T {
			if p.vcol[k*T+t] >= 0 {
				reach += p.caps[t]
			}
		}
		if p.classes[k].gpus < reach {
			p.capRow = append(p.capRow, K+nCap)
			nCap++
		} else {
			p.capRow = append(p.capRow, -1)
		}
	}
	p.nRows = K + nCap + T
	p.nCols = col + p.nRows
	p.a = resize(p.a, p.nRows*p.nCols)
	p.b = resize(p.b, p.nRows)
	p.c = resize(p.c, p.nCols)
	// Rows: K service rows (Σ_t ρ V − w G z − s = rhs, a surplus), the
	// time caps (Σ_t V + s = G), T capacities (Σ_c V + s = cap).
	capRow0 := K + nCap
	for k := range K {
		cl := &p.classes[k]
		rs, rt := k, p.capRow[k]
		for t := range T {
			if v := p.vcol[k*T+t]; v >= 0 {
				p.set(rs, v, cl.rho[t])
				if rt >= 0 {
					p.set(rt, v, 1)
				}
				p.set(capRow0+t, v, 1)
			}
		}
		p.set(rs, p.sCol0+rs, -1)
		if rt >= 0 {
			p.set(rt, p.sCol0+rt, 1)
			p.b[rt] = cl.gpus
		}
	}
	for t := range T {
		p.set(capRow0+t, p.sCol0+capRow0+t, 1)
		p.b[capRow0+t] = p.caps[t]
	}
}

func (p *gavelLP) set(row, col int, v float64) { p.a[row*p.nCols+col] = v }

// resize returns s with length n, zeroed, reusing its storage.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// solve runs the simplex on the standard form built and, on success,
// stores each class's allocation.
func (p *gavelLP) solve() bool {
	p.solves++
	A := mat.NewDense(p.nRows, p.nCols, p.a)
	_, x, err := lp.Simplex(p.c, A, p.b, lpTol, nil)
	if err != nil {
		return false
	}
	T := len(p.caps)
	for k := range p.classes {
		cl := &p.classes[k]
		cl.alloc = resize(cl.alloc, T)
		for t := range T {
			if v := p.vcol[k*T+t]; v >= 0 {
				cl.alloc[t] = max(x[v], 0)
			}
		}
	}
	return true
}

// maxMin solves weighted max-min fairness: maximise z subject to every
// class's normalised throughput per GPU, Σ_t ρ_ct V_ct / G_c, being at
// least w_c·z; then, with z held at its optimum, maximise Σ ρ V, so that
// capacity the minimum does not need goes where it does the most
// normalised work rather than wherever the first vertex left it. It
// returns the optimal z, or false when the simplex fails (numerically).
func (p *gavelLP) maxMin() (float64, bool) {
	if len(p.classes) == 0 {
		return 0, true
	}
	p.layout(true)
	K := len(p.classes)
	for k := range K {
		p.set(k, p.zCol, -p.classes[k].weight*p.classes[k].gpus)
	}
	p.c[p.zCol] = -1
	A := mat.NewDense(p.nRows, p.nCols, p.a)
	p.solves++
	_, x, err := lp.Simplex(p.c, A, p.b, lpTol, nil)
	if err != nil {
		return 0, false
	}
	z := x[p.zCol]
	// Stage two: z fixed a hair below its optimum (the simplex's
	// tolerance) so that the first stage's solution stays feasible.
	p.layout(false)
	zz := z * (1 - 1e-7)
	T := len(p.caps)
	for k := range K {
		cl := &p.classes[k]
		p.b[k] = cl.weight * cl.gpus * zz
		for t := range T {
			if v := p.vcol[k*T+t]; v >= 0 {
				p.c[v] = -cl.rho[t]
			}
		}
	}
	if !p.solve() {
		// Keep the first stage's allocation.
		for k := range p.classes {
			cl := &p.classes[k]
			cl.alloc = resize(cl.alloc, T)
			for t := range T {
				if v := p.vcol[k*T+t]; v >= 0 {
					cl.alloc[t] = max(x[v], 0)
				}
			}
		}
	}
	return z, true
}

// feasible reports whether every class's demand can be met (Σ_t ρ_ct
// V_ct ≥ demand_c) within the caps, and if so stores the allocation that
// meets them with the most normalised work Σ ρ V.
func (p *gavelLP) feasible() bool {
	if len(p.classes) == 0 {
		return true
	}
	p.layout(false)
	T := len(p.caps)
	for k := range p.classes {
		cl := &p.classes[k]
		p.b[k] = cl.demand
		for t := range T {
			if v := p.vcol[k*T+t]; v >= 0 {
				p.c[v] = -cl.rho[t]
			}
		}
	}
	return p.solve()
}

// gavelFTFJob is what finish-time fairness reads of one job. Times are
// in hours.
type gavelFTFJob struct {
	class int
	g     float64 // GPUs
	e     float64 // e_j = Σ_t r_jt cap_t
	rmax  float64 // its best rate
	age   float64 // a_j: time since submission
	left  float64 // W_j: work left, in hours at its reference pace
	iso   float64 // D_j: its whole run's duration at its equal share
}

// phi is job j's finish-time ratio at throughput thr: (a + W/thr) / D.
func (j *gavelFTFJob) phi(thr float64) float64 { return (j.age + j.left/thr) / j.iso }

// delta is job j's demand at ratio phi, in the class constraint's units
// (Σ_t ρ V): the throughput that ends it by phi·D, g·W·C / (e·(phi·D − a)).
func (j *gavelFTFJob) delta(phi, capTotal float64) float64 {
	return j.g * j.left * capTotal / (j.e * (phi*j.iso - j.age))
}

// ftfRelTol ends the bisection on ρ: the optimum is known within this
// relative width. Each step is one LP.
const (
	ftfRelTol   = 1e-3
	ftfMaxSteps = 40
)

// finishTimeFair minimises the largest finish-time ratio φ over jobs by
// bisection: φ is feasible when the class demands Σ_{j∈c} δ_j(φ) fit.
// lo, the largest ratio any job has even alone on its best type, bounds
// it from below; hi, the largest at the equal share (a feasible
// allocation), from above. It leaves the allocation of the best φ
// found in the classes and returns it; ok is false when no LP
// succeeded (the caller falls back to equal shares).
func (p *gavelLP) finishTimeFair(jobs []gavelFTFJob, capTotal, equal float64) (phi float64, ok bool) {
	lo, hi := 0.0, 0.0
	for i := range jobs {
		j := &jobs[i]
		lo = max(lo, j.phi(j.rmax))
		hi = max(hi, j.phi(j.e*equal))
	}
	hi = max(hi, lo)
	try := func(phi float64) bool {
		for k := range p.classes {
			p.classes[k].demand = 0
		}
		for i := range jobs {
			j := &jobs[i]
			p.classes[j.class].demand += j.delta(phi, capTotal)
		}
		return p.feasible()
	}
	if try(lo) {
		return lo, true
	}
	stored := false // the classes hold hi's allocation
	for step := 0; step < ftfMaxSteps && hi-lo > ftfRelTol*hi; step++ {
		mid := lo + (hi-lo)/2
		if try(mid) {
			hi, stored = mid, true
		} else {
			lo, stored = mid, false
		}
	}
	if !stored && !try(hi) {
		return hi, false
	}
	return hi, true
}

// gavelRound is the rounding of ρ entries that decides class identity: rates
// from a speed table are exact, so only floating noise is rounded away.
func gavelRound(x float64) int64 { return int64(math.Round(x * 1e6)) }

// ftfSplit divides each class's allocation among its members (jobs, all
// of one class run together, most urgent first) and writes each job's
// time fractions into x[i·T : (i+1)·T]. A proportional split would give
// every member the class's mix of types, which can ask more than all of
// its time of a member whose demand per GPU, δ/g, is well above the
// class's average. Instead the members are served by δ/g, highest first,
// from the class's GPU-time ordered by ρ: one whose demand the slowest
// time left can meet takes just enough of it; another takes its GPU
// count of time, as much of it from the slowest end as still meets its
// demand and the rest from the fastest end, so that the fast time left
// goes to the members that need it next. A member that cannot meet its
// demand even from the fastest end takes that and falls short: the one
// loss against an LP over jobs. Time the members leave over is spread
// over those with room, each the same fraction of every type in
// proportion to its room. (On the run of docs/policies.md this gave a
// smaller worst bounded slowdown than handing the leftover to the most
// urgent first on two seeds of three, and than giving every member its
// GPUs' worth of slow time on six of nine.)
func (p *gavelLP) ftfSplit(jobs []gavelFTFJob, ids []JobID, phi, capTotal float64, x []float64, s *ftfScratch) {
	T := len(p.caps)
	n := len(jobs)
	s.perm = s.perm[:0]
	s.u = resize(s.u, n)
	for i := range jobs {
		s.perm = append(s.perm, i)
		s.u[i] = jobs[i].delta(phi, capTotal) / jobs[i].g
	}
	slices.SortFunc(s.perm, func(a, b int) int {
		if c := cmp.Compare(jobs[a].class, jobs[b].class); c != 0 {
			return c
		}
		if c := cmp.Compare(s.u[b], s.u[a]); c != 0 {
			return c
		}
		return cmp.Compare(ids[a], ids[b])
	})
	clear(x[:n*T])
	for lo := 0; lo < n; {
		k := jobs[s.perm[lo]].class
		hi := lo
		for hi < n && jobs[s.perm[hi]].class == k {
			hi++
		}
		cl := &p.classes[k]
		// The class's types by ρ, fastest first, and what is left of each.
		s.ord = s.ord[:0]
		for t := range T {
			if cl.rho[t] > 0 && cl.alloc[t] > 0 {
				s.ord = append(s.ord, t)
			}
		}
		slices.SortFunc(s.ord, func(a, b int) int {
			if c := cmp.Compare(cl.rho[b], cl.rho[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		s.rem = resize(s.rem, T)
		left := 0.0
		for _, t := range s.ord {
			s.rem[t] = cl.alloc[t]
			left += cl.alloc[t]
		}
		for _, i := range s.perm[lo:hi] {
			j := &jobs[i]
			tau := min(j.g, left)
			need := s.u[i] * j.g
			w := 0.0 // time from the slow end
			switch {
			case s.back(cl.rho, tau) >= need:
				// The slowest time is enough: as little of it as meets
				// the demand, leaving the rest of the class's time to
				// the members after it.
				w, tau = s.backFor(cl.rho, need), s.backFor(cl.rho, need)
			case s.front(cl.rho, tau) > need:
				a, b := 0.0, tau
				for range 50 {
					mid := (a + b) / 2
					if s.front(cl.rho, tau-mid)+s.back(cl.rho, mid) >= need {
						a = mid
					} else {
						b = mid
					}
				}
				w = a
			}
			s.take(cl.rho, x[i*T:(i+1)*T], tau-w, w)
			left -= tau
		}
		// What is left goes to the members with room, each the same
		// fraction of every type in proportion to its room.
		room := 0.0
		for _, i := range s.perm[lo:hi] {
			used := 0.0
			for t := range T {
				used += x[i*T+t]
			}
			room += max(jobs[i].g-used, 0)
		}
		if left > 0 && room > 0 {
			scale := max(room, left)
			for _, i := range s.perm[lo:hi] {
				used := 0.0
				for t := range T {
					used += x[i*T+t]
				}
				if r := jobs[i].g - used; r > 0 {
					for _, t := range s.ord {
						x[i*T+t] += s.rem[t] * r / scale
					}
				}
			}
		}
		for _, i := range s.perm[lo:hi] {
			for t := range T {
				x[i*T+t] /= jobs[i].g
			}
		}
		lo = hi
	}
}

// ftfScratch is ftfSplit's reused storage.
type ftfScratch struct {
	perm []int
	u    []float64
	ord  []int     // the class's types, fastest first
	rem  []float64 // per type, GPU-time not yet given
}

// front is the value Σ ρ·time of a GPU-time from the fastest of what is
// left; back from the slowest.
func (s *ftfScratch) front(rho []float64, a float64) float64 {
	v := 0.0
	for _, t := range s.ord {
		d := min(a, s.rem[t])
		v += d * rho[t]
		if a -= d; a <= 0 {
			break
		}
	}
	return v
}

// backFor is the least GPU-time from the slowest of what is left whose
// value is need (at most what is left).
func (s *ftfScratch) backFor(rho []float64, need float64) float64 {
	a := 0.0
	for k := len(s.ord) - 1; k >= 0 && need > 0; k-- {
		t := s.ord[k]
		if v := s.rem[t] * rho[t]; v < need {
			a += s.rem[t]
			need -= v
			continue
		}
		a += need / rho[t]
		break
	}
	return a
}

func (s *ftfScratch) back(rho []float64, a float64) float64 {
	v := 0.0
	for k := len(s.ord) - 1; k >= 0; k-- {
		t := s.ord[k]
		d := min(a, s.rem[t])
		v += d * rho[t]
		if a -= d; a <= 0 {
			break
		}
	}
	return v
}

// take gives a member fast GPU-time from the fastest end and slow from
// the slowest, adding it to v (per type) and removing it from what is
// left. fast + slow never exceeds what is left, so the ends do not
// overlap.
func (s *ftfScratch) take(rho []float64, v []float64, fast, slow float64) {
	for _, t := range s.ord {
		d := min(fast, s.rem[t])
		v[t] += d
		s.rem[t] -= d
		if fast -= d; fast <= 0 {
			break
		}
	}
	for k := len(s.ord) - 1; k >= 0 && slow > 0; k-- {
		t := s.ord[k]
		d := min(slow, s.rem[t])
		v[t] += d
		s.rem[t] -= d
		slow -= d
	}
}
