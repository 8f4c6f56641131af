package policies

import (
	"math"
	"math/bits"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// Optimus is the Optimus baseline of the Pollux (OSDI'21) artifact
// (simulator/optimus.py): every round (round=, default 1m) it sizes every
// active job anew, from scratch, and places the jobs whose size changed.
//
// Sizing is a greedy on marginal gain, as in the Optimus paper: every
// active job first gets one GPU (in submission order, while GPUs last);
// then each further GPU goes to the job whose predicted time to finish
// drops most by it, gain = (t(n) − t(n+1)) · iterations left, the first
// such job in submission order on a tie, until no gain is positive or no
// GPU is left. A job grows to at most batch size / smallest per-GPU batch
// GPUs (one for ncf, whose batch the artifact never splits). t(n) is the
// application model's true time of an iteration on n GPUs packed 4 to a
// node (hwmodel.App.PredictConfig, IterTime), and the iterations left are
// the validation traces' count at the job's batch size from its current
// epoch to its last (hwmodel.App.Iterations; an application model without
// the validation files' iteration column gives none, and its jobs never
// grow past one GPU): the artifact gives Optimus the truth where the paper
// fits a model online.
//
// Placement keeps a job's GPUs when its size is unchanged; the others, in
// order of size (smallest first, then submission), take min(idle, still
// needed) GPUs from the node with the most idle GPUs, ties to the lowest
// index, as MostFree does. A job whose size changed is preempted and
// started on its new GPUs in the same call (with the engine's restart
// cost); a job sized 0 is preempted.
//
// It is meant for an AppView (a run under an application model). A job
// the view cannot time is not elastic: it is started on its request, in
// submission order when the spec's placement finds room, before the
// greedy, and is never resized or preempted; the greedy shares what is
// left.
type optimus struct {
	name   string
	round  Time
	placer Placer

	state []ostate
	// preempted are the jobs this policy preempted at its last call,
	// whose Ended events are its own doing, not ends.
	preempted map[JobID]bool
	// steps caches the predicted iteration times by application and batch
	// size, by GPU count (index n; -1 until computed): they depend on
	// nothing else, and the greedy asks for them at every round.
	steps map[stepKey][]float64
	ds    []Decision
}

type stepKey struct {
	app   *hwmodel.App
	batch int
}

type ostate struct {
	active bool
	nodes  []int             // the allocation, one node index per GPU, in the order taken
	place  hwmodel.Placement // nil when not running
}

// DefaultOptimusRound is how often optimus sizes its jobs anew: the
// artifact's scheduling interval.
const DefaultOptimusRound = hwmodel.Minute

func newOptimus(label string, placer Placer, o Options) *optimus {
	r := o.Round
	if r <= 0 {
		r = DefaultOptimusRound
	}
	return &optimus{name: label, round: r, placer: placer, preempted: map[JobID]bool{}, steps: map[stepKey][]float64{}}
}

func (p *optimus) Name() string { return p.name }

// Suspends implements Suspender: a resized job keeps its progress.
func (p *optimus) Suspends() bool { return true }

func (p *optimus) grow(id JobID) *ostate {
	for int(id) >= len(p.state) {
		p.state = append(p.state, ostate{})
	}
	return &p.state[id]
}

// absorb brings the books up to date with the events since the last call.
func (p *optimus) absorb(v View) {
	ev := v.Events()
	for _, rj := range ev.Rejected {
		id := rj.Decision.Job
		if id < 0 {
			continue
		}
		switch rj.Decision.Kind {
		case Start:
			st := p.grow(id)
			st.nodes, st.place = nil, nil
		case Preempt:
			// Not preempted: a later Ended is the job's end.
			delete(p.preempted, id)
		}
	}
	for _, id := range ev.Ended {
		if id < 0 {
			continue
		}
		if p.preempted[id] {
			delete(p.preempted, id)
			continue
		}
		st := p.grow(id)
		st.active, st.nodes, st.place = false, nil, nil
	}
	clear(p.preempted)
	for _, id := range ev.Queued {
		if id >= 0 {
			p.grow(id).active = true
		}
	}
}

// Schedule implements Policy. The returned slice is reused by the next
// call.
func (p *optimus) Schedule(v View) []Decision {
	p.ds = p.ds[:0]
	p.absorb(v)
	var active []JobID
	for id := range p.state {
		if p.state[id].active {
			active = append(active, JobID(id))
		}
	}
	if len(active) == 0 {
		return p.ds
	}
	c := v.Cluster()
	av, _ := v.(AppView)
	var apps []JobID
	var infos []AppJob
	for _, id := range active {
		if av != nil {
			if aj, ok := av.AppJob(id); ok {
				apps, infos = append(apps, id), append(infos, aj)
				continue
			}
		}
		p.startFixed(v, c, id)
	}
	if len(apps) > 0 {
		size := p.size(c, apps, infos)
		p.place(v, c, apps, size)
	}
	wakeAt(v, v.Now()+p.round)
	return p.ds
}

// startFixed starts job id, which the view cannot time, on its request
// if it is queued and the placement finds room.
func (p *optimus) startFixed(v View, c hwmodel.ClusterView, id JobID) {
	st := &p.state[id]
	if st.place != nil {
		return
	}
	pl, ok := p.placer.Place(nil, c, v.Job(id).Req)
	if !ok || v.Reserve(pl) != nil {
		return
	}
	st.place = pl
	p.ds = append(p.ds, Decision{Kind: Start, Job: id, Placement: pl})
}

// size is the greedy on marginal gain: the GPU count of each job of
// apps (infos: what the view tells of it), sharing the idle whole GPUs
// and those the jobs hold.
func (p *optimus) size(c hwmodel.ClusterView, apps []JobID, infos []AppJob) map[JobID]int {
	free := 0
	for i := range c.NumNodes() {
		for g := range c.NodeGPUs(i) {
			if c.FreeMilli(i, g) == hwmodel.MilliPerGPU {
				free++
			}
		}
	}
	for _, id := range apps {
		free += p.state[id].place.GPUCount()
	}
	type grow struct {
		id   JobID
		aj   AppJob
		max  int
		left float64
		gain float64
	}
	n := make(map[JobID]int, len(apps))
	gs := make([]grow, 0, len(apps))
	for k, id := range apps {
		aj := infos[k]
		g := grow{id: id, aj: aj, left: optimusLeft(aj), max: aj.Batch / aj.App.MinLocal}
		if aj.App.Name == "ncf" {
			g.max = 1 // the artifact never splits ncf's batch
		}
		if free < 1 {
			gs = append(gs, g)
			continue
		}
		n[id] = 1
		free--
		g.gain = p.gain(g.aj, 1, g.max, free, g.left)
		gs = append(gs, g)
	}
	for free > 0 {
		best := -1
		for k := range gs {
			if gs[k].gain > 0 && (best < 0 || gs[k].gain > gs[best].gain) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		g := &gs[best]
		n[g.id]++
		g.gain = p.gain(g.aj, n[g.id], g.max, free, g.left)
		free--
	}
	return n
}

// optimusLeft is the artifact's estimate of a job's work left: the
// iterations from its current epoch to its last at its batch size, 1 once
// it is in its last epoch.
func optimusLeft(aj AppJob) float64 {
	last := aj.App.MaxEpochs - 1
	if last <= aj.State.Epoch {
		return 1
	}
	end, err1 := aj.App.Iterations(aj.Batch, last)
	now, err2 := aj.App.Iterations(aj.Batch, aj.State.Epoch)
	if err1 != nil || err2 != nil {
		return 0
	}
	return end - now
}

// gain is the predicted drop in a job's time to finish from its n-th GPU
// to an n+1-th; 0 when it may not grow (max GPUs, or free, the GPUs still
// unallocated before this one was taken, below 1).
func (p *optimus) gain(aj AppJob, n, maxGPUs, free int, left float64) float64 {
	if n+1 > maxGPUs || free < 1 {
		return 0
	}
	a, b := p.step(aj, n), p.step(aj, n+1)
	if math.IsNaN(a) || math.IsNaN(b) {
		return 0
	}
	return (a - b) * left
}

// step is optimusStep, cached.
func (p *optimus) step(aj AppJob, n int) float64 {
	k := stepKey{aj.App, aj.Batch}
	ts := p.steps[k]
	for len(ts) <= n {
		ts = append(ts, -1)
	}
	p.steps[k] = ts
	if ts[n] == -1 {
		ts[n] = optimusStep(aj, n)
	}
	return ts[n]
}

// optimusStep is the predicted time of one iteration on n GPUs packed
// four to a node; NaN when the model cannot time it.
func optimusStep(aj AppJob, n int) float64 {
	var counts []int
	for left := n; left > 0; left -= 4 {
		counts = append(counts, min(left, 4))
	}
	cfg, err := aj.App.PredictConfig(n, aj.Batch)
	if err != nil {
		return math.NaN()
	}
	t, err := aj.App.IterTime(counts, cfg)
	if err != nil {
		return math.NaN()
	}
	return t
}

// place keeps the allocations whose size is unchanged, preempts the
// others, and places the jobs sized above 0 without one, on whole GPUs
// idle now (after this call's reservations) or freed by its preemptions.
func (p *optimus) place(v View, c hwmodel.ClusterView, active []JobID, size map[JobID]int) {
	nn := c.NumNodes()
	idle := make([]uint64, nn)
	for i := range nn {
		for g := range c.NodeGPUs(i) {
			if c.FreeMilli(i, g) == hwmodel.MilliPerGPU {
				idle[i] |= 1 << uint(g)
			}
		}
	}
	for _, id := range active {
		st := &p.state[id]
		if st.place == nil || len(st.nodes) == size[id] {
			continue
		}
		// Preempted: its GPUs are idle once the decision is applied
		// (Preempts come before Starts).
		for _, s := range st.place {
			idle[s.Node] |= s.GPUs
		}
		p.ds = append(p.ds, Decision{Kind: Preempt, Job: id})
		p.preempted[id] = true
		st.nodes, st.place = nil, nil
	}
	order := slices.Clone(active)
	slices.SortStableFunc(order, func(a, b JobID) int { return size[a] - size[b] })
	for _, id := range order {
		st := &p.state[id]
		want := size[id]
		if want == 0 || st.place != nil {
			continue
		}
		req := v.Job(id).Req
		var pl hwmodel.Placement
		var nodes []int
		for len(nodes) < want {
			best, bestN := -1, 0
			for i := range nn {
				if !req.Models.Accepts(c.NodeModel(i)) {
					continue
				}
				if k := bits.OnesCount64(idle[i]); k > bestN {
					best, bestN = i, k
				}
			}
			if best < 0 {
				break
			}
			take := min(bestN, want-len(nodes))
			var m uint64
			for k := 0; k < take; k++ {
				low := idle[best] & -idle[best]
				m |= low
				idle[best] &^= low
			}
			pl = append(pl, hwmodel.Share{Node: best, GPUs: m, Milli: hwmodel.MilliPerGPU})
			for k := 0; k < take; k++ {
				nodes = append(nodes, best)
			}
		}
		if len(nodes) < want {
			// Only when models it refuses hold the GPUs left: it waits.
			for _, sh := range pl {
				idle[sh.Node] |= sh.GPUs
			}
			continue
		}
		st.nodes, st.place = nodes, pl
		p.ds = append(p.ds, Decision{Kind: Start, Job: id, Placement: pl})
	}
}
