package policies

import (
	"cmp"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// DefaultRound is the gavel order's round, as Gavel's artifact runs it.
const DefaultRound = 6 * hwmodel.Minute

// The gavel order's objectives (Options.Objective).
const (
	GavelMaxMin = "maxmin" // heterogeneity-aware max-min fairness (the default)
	GavelFTF    = "ftf"    // finish-time fairness
)

// gavel is the gavel order: Gavel's heterogeneity-aware policies
// (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for
// Deep Learning Workloads", OSDI'20) and its round-based mechanism.
//
// The policy is an allocation X_jt, the fraction of time job j should
// run on GPU type t, from an LP over the active (queued and running)
// jobs (gavellp.go): max-min fairness of throughput normalised by each
// job's throughput at an equal share, weighted by its tenant's weight,
// or finish-time fairness (the largest ratio of a job's finish time to
// its finish time at an equal share, minimised; tenant weights do not
// enter it; the work left is the estimate, or with Options.UseOracle the
// true duration, less what the job has done). Throughputs are the run's
// speed table (SpeedView.RateOn); without speeds every rate is 1 and
// both become homogeneous fairness.
// The LP is solved again only when the set of active jobs has changed
// since the last solve, at a round boundary.
//
// The mechanism. Every round (Options.Round, default 6 minutes) each
// active job j gets the priority X_jt / f_jt on each type t, f_jt being
// the fraction of its time since it was first queued that it has run on
// t (a job that has not run there has priority +∞, ranked by X_jt). Over
// the (job, type) pairs from the highest priority down, a job not yet
// given a type gets t if t's GPUs not yet given this round hold it. Pairs
// of X_jt = 0 come last, so that capacity the LP leaves unused still
// goes to jobs. Running jobs not given their own type are preempted;
// queued jobs given a type start there, now if the placer finds room,
// else at the driver's next call (the one it makes at once after the
// preemptions). Between rounds the order is work-conserving: capacity
// that frees up goes to the jobs the round ranked highest that did not
// get a type, then to jobs that arrived since, on the type of their
// largest X (or fastest) with room. The order asks its driver to wake
// it at the next round boundary (WakeView).
//
// Gavel's jobs checkpoint at the end of a lease, so a preempted gavel
// job keeps its progress: gavel is a Suspender, as gandiva is.
//
// Cost. A round costs O(A·T log(A·T)) for A active jobs and T types,
// plus the LP when the active set changed: max-min two simplex solves,
// finish-time fairness one to about log2(1/ftfRelTol) ≈ 10–20 (its
// bisection), each of at most 2·gavelMaxClasses + T rows whatever A (the
// classes of gavellp.go), and O(A log A) to divide the classes'
// allocations among their jobs.
// Calls between rounds cost O(1) per event absorbed plus the fill, which
// visits at most Options.BackfillDepth queued jobs (DefaultBackfillDepth)
// and stops once no GPU is idle.
type gavel struct {
	name   string
	placer Placer
	ftf    bool
	oracle bool // ftf: work left from Job.Oracle where the driver reveals it
	round  Time
	depth  int

	jobs   []gjob
	active []JobID // queued, starting or running; unordered (gjob.pos)
	dirty  bool    // the active set changed since the last solve
	next   Time    // the next round boundary

	types  []hwmodel.ModelID       // the cluster's GPU models, in ID order
	typeOf [hwmodel.MaxModels]int8 // a model's type index, -1 if absent
	caps   []float64               // GPUs per type
	all    hwmodel.ModelSet        // the types' models
	lp     gavelLP
	keys   map[string]int // class key → class index, per solve
	keybuf []byte
	ftfJ   []gavelFTFJob
	ftfIDs []JobID
	ftfX   []float64 // per job of ftfJ and type, its share
	split  ftfScratch

	pairs   []gpair
	budget  []int64 // per type, milli-GPU, during a round
	plan    []JobID // given a type at the round, waiting for room
	ranked  []JobID // active jobs the round gave no type, best first
	arrived []JobID // jobs that became active since the round
	seen    uint32  // round number, marks ranked jobs

	now  Time
	ds   []Decision
	slab hwmodel.Placement
}

// gjob is what gavel keeps of one job.
type gjob struct {
	state      pstate
	preempting bool
	active     bool
	pos        int32
	ranked     uint32 // the round that ranked it
	model      hwmodel.ModelID
	assigned   int8 // the round's type for it, -1 none
	planned    bool
	start      Time
	first      Time    // when it was first queued
	done       float64 // work done in finished attempts, µs at its reference pace
	milli      int64
	class      int32     // its class at the last solve (max-min)
	recv       []Time    // per type: time run there, finished attempts
	x          []float64 // per type: its allocation X_jt
}

// gpair is one (job, type) candidate of a round.
type gpair struct {
	pri, x float64
	here   bool // the job runs on this type now
	id     JobID
	t      int8
}

var _ Suspender = (*gavel)(nil)

func newGavel(label string, placer Placer, o Options) *gavel {
	g := &gavel{name: label, placer: placer, ftf: o.Objective == GavelFTF, oracle: o.UseOracle,
		round: o.Round, depth: o.BackfillDepth}
	if g.round <= 0 {
		g.round = DefaultRound
	}
	if g.depth <= 0 {
		g.depth = DefaultBackfillDepth
	}
	return g
}

func (g *gavel) Name() string { return g.name }

// Suspends implements Suspender: a Gavel job checkpoints when its lease
// ends.
func (g *gavel) Suspends() bool { return true }

// Schedule implements Policy. The returned slice is reused by the next
// call.
func (g *gavel) Schedule(v View) []Decision {
	g.now = v.Now()
	g.ds = g.ds[:0]
	c := v.Cluster()
	if g.types == nil {
		g.initTypes(c)
	}
	g.absorb(v)
	if len(g.active) == 0 {
		return g.ds
	}
	if g.now >= g.next {
		g.doRound(v, c)
		g.next = g.now + g.round
	} else {
		g.fill(v, c)
	}
	wakeAt(v, g.next)
	return g.ds
}

func (g *gavel) initTypes(c hwmodel.ClusterView) {
	g.types = []hwmodel.ModelID{}
	for m := range g.typeOf {
		g.typeOf[m] = -1
	}
	for m := range numModels() {
		id := hwmodel.ModelID(m)
		if n := c.GPUsOfModel(id); n > 0 && len(g.types) < math.MaxInt8 {
			g.typeOf[m] = int8(len(g.types))
			g.types = append(g.types, id)
			g.caps = append(g.caps, float64(n))
			g.all |= hwmodel.Of(id)
		}
	}
	g.budget = make([]int64, len(g.types))
	g.lp.caps = g.caps
}

func (g *gavel) grow(id JobID) *gjob {
	if int(id) >= len(g.jobs) {
		g.jobs = slices.Grow(g.jobs, int(id)+1-len(g.jobs))
		g.jobs = g.jobs[:cap(g.jobs)]
	}
	return &g.jobs[id]
}

// typeIndex is model m's type index, -1 if the cluster has none.
func (g *gavel) typeIndex(m hwmodel.ModelID) int {
	if int(m) >= len(g.typeOf) {
		return -1
	}
	return int(g.typeOf[m])
}

// rate is job j's rate on model m: 0 where it cannot run, 1 without
// speeds.
func rateOn(v View, j *Job, m hwmodel.ModelID) float64 {
	if !j.Req.Models.Accepts(m) {
		return 0
	}
	if sv, ok := v.(SpeedView); ok && sv.HasSpeeds() {
		return sv.RateOn(j, m)
	}
	return 1
}

// absorb brings the books up to date with the call's events.
func (g *gavel) absorb(v View) {
	ev := v.Events()
	for _, rj := range ev.Rejected {
		id := rj.Decision.Job
		if rj.Decision.Kind != Start || id < 0 {
			continue
		}
		if gj := g.grow(id); gj.state == pStarting {
			gj.state = pQueued
		}
	}
	for _, id := range ev.Started {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		gj := g.grow(id)
		if gj.state != pStarting {
			// Started without this policy deciding it (a driver restoring
			// state): its model is a guess, the first it accepts.
			gj.model = 0
			for _, m := range g.types {
				if j.Req.Models.Accepts(m) {
					gj.model = m
					break
				}
			}
			g.activate(j, gj)
		}
		gj.state = pRunning
		gj.start = j.Start
		gj.milli = needMilli(j.Req)
	}
	for _, id := range ev.Ended {
		if id < 0 {
			continue
		}
		gj := g.grow(id)
		if gj.state == pRunning || gj.state == pStarting {
			if t := g.typeIndex(gj.model); t >= 0 && g.now > gj.start && gj.recv != nil {
				d := g.now - gj.start
				gj.recv[t] += d
				if j := v.Job(id); j != nil {
					gj.done += float64(d) * rateOn(v, j, gj.model)
				}
			}
		}
		gj.state, gj.preempting = pNone, false
	}
	for _, id := range ev.Queued {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		gj := g.grow(id)
		gj.state, gj.preempting = pQueued, false
		gj.milli = needMilli(j.Req)
		g.activate(j, gj)
	}
	for _, id := range ev.Ended {
		if id >= 0 && g.jobs[id].state == pNone && g.jobs[id].active {
			g.deactivate(id)
		}
	}
}

// activate adds job j to the active set if it is not in it.
func (g *gavel) activate(j *Job, gj *gjob) {
	if gj.active {
		return
	}
	if gj.recv == nil {
		gj.first = j.Queued
		gj.recv = make([]Time, len(g.types))
		gj.x = make([]float64, len(g.types))
	}
	gj.active = true
	gj.pos = int32(len(g.active))
	g.active = append(g.active, j.ID)
	g.arrived = append(g.arrived, j.ID)
	g.dirty = true
}

func (g *gavel) deactivate(id JobID) {
	k := int(g.jobs[id].pos)
	last := g.active[len(g.active)-1]
	g.active[k] = last
	g.jobs[last].pos = int32(k)
	g.active = g.active[:len(g.active)-1]
	gj := &g.jobs[id]
	// Its books go with it: a job queued again after a failure starts
	// them afresh, as a new job would.
	gj.active, gj.recv, gj.x = false, nil, nil
	g.dirty = true
}

// doRound is a round boundary: solve if the active set changed, give
// types by priority, preempt and start.
func (g *gavel) doRound(v View, c hwmodel.ClusterView) {
	if g.dirty {
		g.solve(v)
		g.dirty = false
	}
	g.seen++
	T := len(g.types)
	for t, m := range g.types {
		g.budget[t] = int64(c.FreeWholeGPUsAccepted(hwmodel.Of(m))) * hwmodel.MilliPerGPU
	}
	g.pairs = g.pairs[:0]
	for _, id := range g.active {
		gj := &g.jobs[id]
		gj.assigned, gj.planned = -1, false
		here := -1
		if gj.state == pRunning || gj.state == pStarting {
			here = g.typeIndex(gj.model)
			if here >= 0 {
				g.budget[here] += gj.milli
			}
		}
		if gj.milli == 0 {
			continue
		}
		if gj.state == pStarting && here >= 0 {
			// Its Start is not answered yet: it keeps its GPUs this round.
			gj.assigned = int8(here)
			continue
		}
		j := v.Job(id)
		elapsed := float64(g.now - gj.first)
		for t := range T {
			if !j.Req.Models.Accepts(g.types[t]) {
				continue
			}
			recv := float64(gj.recv[t])
			if t == here {
				recv += float64(g.now - gj.start)
			}
			x := gj.x[t]
			pri := 0.0
			switch {
			case x <= 0:
			case recv <= 0 || elapsed <= 0:
				pri = math.Inf(1)
			default:
				pri = x / (recv / elapsed)
			}
			g.pairs = append(g.pairs, gpair{pri: pri, x: x, here: t == here, id: id, t: int8(t)})
		}
	}
	for _, id := range g.active {
		if gj := &g.jobs[id]; gj.assigned >= 0 {
			g.budget[gj.assigned] -= gj.milli
		}
	}
	slices.SortFunc(g.pairs, func(a, b gpair) int {
		if c := cmp.Compare(b.pri, a.pri); c != 0 {
			return c
		}
		if c := cmp.Compare(b.x, a.x); c != 0 {
			return c
		}
		if a.here != b.here {
			if a.here {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(a.t, b.t)
	})
	g.ranked, g.arrived, g.plan = g.ranked[:0], g.arrived[:0], g.plan[:0]
	for _, p := range g.pairs {
		gj := &g.jobs[p.id]
		if gj.assigned >= 0 {
			continue
		}
		if g.budget[p.t] >= gj.milli {
			g.budget[p.t] -= gj.milli
			gj.assigned = p.t
			continue
		}
		if gj.ranked != g.seen {
			gj.ranked = g.seen
			g.ranked = append(g.ranked, p.id)
		}
	}
	// Preempt first, then start: a job given another type than the one
	// it runs on is preempted now and started on its new type at the
	// next call.
	for _, id := range g.active {
		gj := &g.jobs[id]
		if gj.state == pRunning && !gj.preempting && gj.milli > 0 && int(gj.assigned) != g.typeIndex(gj.model) {
			gj.preempting = true
			g.ds = append(g.ds, Decision{Kind: Preempt, Job: id})
		}
	}
	for _, p := range g.pairs {
		gj := &g.jobs[p.id]
		if gj.assigned != p.t || gj.planned {
			continue
		}
		switch gj.state {
		case pQueued:
			if !g.start(v, c, v.Job(p.id), int(p.t)) {
				gj.planned = true
				g.plan = append(g.plan, p.id)
			}
		case pRunning:
			if gj.model != g.types[p.t] {
				gj.planned = true
				g.plan = append(g.plan, p.id)
			}
		}
	}
	// CPU-only jobs take no GPU budget: they start where they fit.
	for _, id := range g.active {
		if gj := &g.jobs[id]; gj.milli == 0 && gj.state == pQueued {
			g.startAny(v, c, id)
		}
	}
}

// fill starts, between rounds, the jobs the round gave a type that were
// waiting for room, then the best-ranked jobs without one and the jobs
// that arrived since, on whatever has room: capacity does not idle until
// the next round.
func (g *gavel) fill(v View, c hwmodel.ClusterView) {
	visited := 0
	for _, id := range g.plan {
		gj := &g.jobs[id]
		if gj.state != pQueued || gj.assigned < 0 {
			continue
		}
		visited++
		g.start(v, c, v.Job(id), int(gj.assigned))
	}
	// The lists drop the jobs that are no longer queued as they are
	// walked, so that calls between rounds do not walk them again.
	for _, list := range [2]*[]JobID{&g.ranked, &g.arrived} {
		l, w := *list, 0
		for k, id := range l {
			if gj := &g.jobs[id]; gj.state != pQueued || !gj.active {
				continue
			}
			if visited >= g.depth || c.FreeWholeGPUsAccepted(g.all) == 0 {
				w += copy(l[w:], l[k:])
				*list = l[:w]
				return
			}
			visited++
			if !g.startAny(v, c, id) {
				l[w] = id
				w++
			}
		}
		*list = l[:w]
	}
}

// startAny starts queued job id on the type of its largest allocation
// with room, or failing that its fastest (ties by type index).
func (g *gavel) startAny(v View, c hwmodel.ClusterView, id JobID) bool {
	j := v.Job(id)
	gj := &g.jobs[id]
	if gj.milli == 0 {
		return g.placeOn(v, c, j, j.Req)
	}
	best, bestX, bestR := -1, 0.0, 0.0
	tried := uint64(0)
	for range g.types {
		best, bestX, bestR = -1, -1, -1
		for t, m := range g.types {
			if tried&(1<<uint(t%64)) != 0 || !j.Req.Models.Accepts(m) {
				continue
			}
			x, r := gj.x[t], rateOn(v, j, m)
			if x > bestX || (x == bestX && r > bestR) {
				best, bestX, bestR = t, x, r
			}
		}
		if best < 0 {
			return false
		}
		tried |= 1 << uint(best%64)
		if g.start(v, c, j, best) {
			return true
		}
	}
	return false
}

// start places queued job j on type t now and decides its Start; false
// if it does not fit now.
func (g *gavel) start(v View, c hwmodel.ClusterView, j *Job, t int) bool {
	r := j.Req
	r.Models = hwmodel.Of(g.types[t])
	return g.placeOn(v, c, j, r)
}

func (g *gavel) placeOn(v View, c hwmodel.ClusterView, j *Job, r hwmodel.Request) bool {
	need := 1
	if r.GPUs > 1 {
		need = min(r.GPUs, max(c.NumNodes(), 1))
	}
	if cap(g.slab)-len(g.slab) < need {
		g.slab = make(hwmodel.Placement, 0, max(slabShares, need))
	}
	pl, ok := g.placer.Place(g.slab[len(g.slab):len(g.slab)], c, r)
	if !ok || len(pl) == 0 || v.Reserve(pl) != nil {
		return false
	}
	g.slab = g.slab[:len(g.slab)+len(pl)]
	gj := &g.jobs[j.ID]
	gj.state = pStarting
	gj.start = g.now
	if len(pl) > 0 && pl[0].GPUs != 0 {
		gj.model = c.NodeModel(pl[0].Node)
	}
	g.ds = append(g.ds, Decision{Kind: Start, Job: j.ID, Placement: pl})
	return true
}

// solve computes every active job's allocation X_jt from the LP of the
// objective, over the classes of gavellp.go.
func (g *gavel) solve(v View) {
	T := len(g.types)
	capTotal := 0.0
	for _, c := range g.caps {
		capTotal += c
	}
	demand := 0.0
	for _, id := range g.active {
		demand += float64(g.jobs[id].milli) / hwmodel.MilliPerGPU
	}
	scale := max(demand, capTotal) // max(S, C)
	tenants := v.Tenants()
	if g.keys == nil {
		g.keys = map[string]int{}
	}
	clear(g.keys)
	g.lp.classes = g.lp.classes[:0]
	g.ftfJ, g.ftfIDs = g.ftfJ[:0], g.ftfIDs[:0]
	rates := make([]float64, T)
	for _, id := range g.active {
		gj := &g.jobs[id]
		clear(gj.x)
		gj.class = -1
		if gj.milli == 0 {
			continue
		}
		j := v.Job(id)
		e, rmax := 0.0, 0.0
		for t, m := range g.types {
			rates[t] = rateOn(v, j, m)
			e += rates[t] * g.caps[t]
			rmax = max(rmax, rates[t])
		}
		if e <= 0 {
			continue // it can run nowhere here
		}
		w := 1.0
		if !g.ftf && j.Tenant >= 0 && j.Tenant < len(tenants) && tenants[j.Tenant].Weight > 0 {
			w = tenants[j.Tenant].Weight
		}
		k := g.classOf(rates, e, capTotal, w)
		gpus := float64(gj.milli) / hwmodel.MilliPerGPU
		g.lp.classes[k].gpus += gpus
		if g.ftf {
			est := float64(j.Estimate)
			if g.oracle && j.Oracle > 0 {
				est = float64(j.Oracle)
			}
			left := max(est-g.doneNow(v, j, gj), est*ftfMinLeft)
			g.ftfJ = append(g.ftfJ, gavelFTFJob{
				class: k, g: gpus, e: e, rmax: rmax,
				age:  float64(g.now-j.Submit) / float64(hwmodel.Hour),
				left: left / float64(hwmodel.Hour),
				iso:  est / float64(hwmodel.Hour) * scale / e,
			})
			g.ftfIDs = append(g.ftfIDs, id)
		} else {
			gj.class = int32(k)
		}
	}
	ok := false
	if g.ftf {
		var phi float64
		if phi, ok = g.lp.finishTimeFair(g.ftfJ, capTotal, 1/scale); ok {
			g.ftfX = resize(g.ftfX, len(g.ftfJ)*T)
			g.lp.ftfSplit(g.ftfJ, g.ftfIDs, phi, capTotal, g.ftfX, &g.split)
			for i, id := range g.ftfIDs {
				copy(g.jobs[id].x, g.ftfX[i*T:(i+1)*T])
			}
		}
	} else if _, ok = g.lp.maxMin(); ok {
		for _, id := range g.active {
			gj := &g.jobs[id]
			if gj.milli == 0 || gj.class < 0 || int(gj.class) >= len(g.lp.classes) {
				continue
			}
			cl := &g.lp.classes[gj.class]
			if cl.alloc != nil && cl.gpus > 0 {
				g.setX(gj, cl.alloc, 1/cl.gpus)
			}
		}
	}
	if !ok {
		// The simplex failed (numerically): every job gets its equal share.
		for _, id := range g.active {
			gj := &g.jobs[id]
			j := v.Job(id)
			for t, m := range g.types {
				if j.Req.Models.Accepts(m) {
					gj.x[t] = g.caps[t] / scale
				}
			}
		}
	}
}

// ftfMinLeft is the least work finish-time fairness counts as left, as a
// fraction of the estimate: a job past its estimate still has some.
const ftfMinLeft = 0.05

// setX sets a job's allocation to alloc × share, scaled down to all of
// its time if it is more.
func (g *gavel) setX(gj *gjob, alloc []float64, share float64) {
	sum := 0.0
	for t := range gj.x {
		gj.x[t] = alloc[t] * share
		sum += gj.x[t]
	}
	if sum > 1 {
		for t := range gj.x {
			gj.x[t] /= sum
		}
	}
}

// doneNow is the work job j has done, in µs at its reference pace,
// counting its current attempt.
func (g *gavel) doneNow(v View, j *Job, gj *gjob) float64 {
	d := gj.done
	if (gj.state == pRunning || gj.state == pStarting) && g.now > gj.start {
		d += float64(g.now-gj.start) * rateOn(v, j, gj.model)
	}
	return d
}

// classOf is the class of a job of rates (with e = Σ r·cap) and weight
// w, added if new; past gavelMaxClasses, the nearest class by its
// normalised rates.
func (g *gavel) classOf(rates []float64, e, capTotal, w float64) int {
	T := len(rates)
	b := g.keybuf[:0]
	for _, r := range rates {
		b = appendInt64(b, gavelRound(r*capTotal/e))
	}
	b = appendInt64(b, gavelRound(w))
	g.keybuf = b
	if k, ok := g.keys[string(b)]; ok {
		return k
	}
	if len(g.lp.classes) >= gavelMaxClasses {
		best, bestD := 0, math.Inf(1)
		for k := range g.lp.classes {
			cl := &g.lp.classes[k]
			d := math.Abs(cl.weight - w)
			for t := range T {
				d += math.Abs(cl.rho[t] - rates[t]*capTotal/e)
			}
			if d < bestD {
				best, bestD = k, d
			}
		}
		return best
	}
	k := len(g.lp.classes)
	g.keys[string(b)] = k
	if k < cap(g.lp.classes) {
		g.lp.classes = g.lp.classes[:k+1]
	} else {
		g.lp.classes = append(g.lp.classes, gavelClass{})
	}
	cl := &g.lp.classes[k]
	cl.rho = resize(cl.rho, T)
	for t, r := range rates {
		cl.rho[t] = r * capTotal / e
	}
	cl.weight, cl.gpus, cl.demand = w, 0, 0
	return k
}

func appendInt64(b []byte, x int64) []byte {
	for range 8 {
		b = append(b, byte(x))
		x >>= 8
	}
	return b
}
