package policies

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// slabShares is how many shares one placement slab holds. Placements handed
// to the driver are cut from a slab and never reused, so the driver may keep
// them; a new slab is allocated when one runs out.
const slabShares = 512

// Where a job is, as far as the policy knows.
const (
	stNone     uint8 = iota // not queued, not running (new, ended, or unknown)
	stQueued                // in the queue index
	stStarting              // Start decided; waiting for Started or Rejected
	stRunning               // the driver confirmed the start
)

// runItem is a running (or starting) job in the estimated-end index.
type runItem struct {
	end   Time // start + duration; may lie in the past for an overdue job
	dur   Time // its expected duration at its placement's speed
	id    JobID
	model int16 // GPU model of its placement, -1 for none or unknown
	milli int64 // GPU milli it holds
	cpu   int64
	mem   int64
}

// scheduler combines a queue order, a placer and the backfill option.
type scheduler struct {
	name     string
	q        queue
	placer   Placer
	backfill bool
	depth    int
	oracle   bool

	// running indexes running and starting jobs by estimated end for the
	// EASY reservation; nil without backfill, which never reads it.
	running *qtree
	hope    hope
	// Per job, by ID (grow): where it is (stNone...), its queue key while
	// queued, and with backfill its running-index key while starting or
	// running. Kept apart so that the events of a call touch a byte per
	// job where they can.
	where   []uint8
	qk      []qitem
	run     []runItem
	queued  backlog // with backfill only, its one reader
	recheck bool    // the backfill walk's cannotBackfill is due
	rated   bool    // the run models GPU speeds (HasSpeeds), read each call
	maxRate float64 // the fastest any job may run (SpeedView.MaxRate), at least 1
	fastest bool    // Options.Fastest
	// local and localDelay: Options.Local and LocalDelay.
	local      bool
	localDelay Time
	byRate     []modelRate
	// everyJob makes the backfill walk visit every job it would have
	// visited without its early stops and steps (tests compare the two).
	everyJob bool

	out    []Decision
	slab   hwmodel.Placement
	failed failMemo
	tot    clusterTotals
	res    reservation
	step   func(qitem) bool // s.walkStep on the job's run item, bound once
	mig    migPlanner
}

func newScheduler(name string, q queue, p Placer, o Options) *scheduler {
	s := &scheduler{
		name: name, q: q, placer: p,
		backfill: o.Backfill, depth: o.BackfillDepth, oracle: o.UseOracle, fastest: o.Fastest,
		local: o.Local, localDelay: o.LocalDelay,
		mig: migPlanner{enabled: o.MIGReconfigure, convert: o.MIGConvertWhole},
	}
	if o.Backfill {
		s.running = new(qtree)
	}
	s.step = func(it qitem) bool { return s.walkStep(s.run[it.id]) }
	return s
}

func (s *scheduler) Name() string { return s.name }

// duration is the job's expected run time: its oracle duration when
// UseOracle is set and one is revealed, otherwise its estimate.
func (s *scheduler) duration(j *Job) Time {
	d := j.Estimate
	if s.oracle && j.Oracle > 0 {
		d = j.Oracle
	}
	return max(d, 1)
}

// grow makes room for job id in the per-job tables (doubling): IDs are
// dense, so they end the size of the driver's job list.
func (s *scheduler) grow(id JobID) {
	if int(id) < len(s.where) {
		return
	}
	n := int(id) + 1 - len(s.where)
	s.where = slices.Grow(s.where, n)
	s.where = s.where[:cap(s.where)]
	s.qk = slices.Grow(s.qk, len(s.where)-len(s.qk))
	s.qk = s.qk[:len(s.where)]
	if s.running != nil {
		s.run = slices.Grow(s.run, len(s.where)-len(s.run))
		s.run = s.run[:len(s.where)]
	}
}

// runKey is job id's key in the running index: its run item's estimated
// end, then its ID.
func (s *scheduler) runKey(id JobID) qitem { return qitem{a: int64(s.run[id].end), id: id} }

// track puts job id's run item in the running index (with backfill).
func (s *scheduler) track(id JobID) {
	if s.running != nil {
		s.running.insert(s.runKey(id), qmeta{})
	}
}

// untrack takes job id's run item out of the running index (with
// backfill).
func (s *scheduler) untrack(id JobID) {
	if s.running != nil {
		s.running.delete(s.runKey(id))
	}
}

// enqueue puts job j, whose tables have room (grow), in the queue.
func (s *scheduler) enqueue(j *Job) {
	s.where[j.ID] = stQueued
	if !s.backfill {
		s.qk[j.ID] = s.q.insert(j, qmeta{}) // only the backfill walk reads it
		return
	}
	d := s.duration(j)
	s.qk[j.ID] = s.q.insert(j, metaOf(j, d))
	s.queued.add(j, d, +1)
}

func (s *scheduler) dequeued(j *Job) {
	if s.backfill {
		s.queued.add(j, s.duration(j), -1)
	}
}

// absorb brings the indexes up to date with what happened since the
// previous call.
func (s *scheduler) absorb(v View) {
	if len(s.where) == 0 {
		// Size the per-job tables at once where the view can tell how many
		// jobs there are (a Host can); they grow by doubling otherwise.
		if c, ok := v.(interface{ NumJobs() int }); ok && c.NumJobs() > 0 {
			s.grow(JobID(c.NumJobs() - 1))
		}
	}
	ev := v.Events()
	s.mig.absorb(ev)
	for _, rj := range ev.Rejected {
		id := rj.Decision.Job
		if rj.Decision.Kind != Start || id < 0 {
			continue
		}
		s.grow(id)
		j := v.Job(id)
		if s.where[id] != stStarting || j == nil {
			continue
		}
		s.untrack(id)
		s.enqueue(j)
	}
	for _, id := range ev.Started {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		s.grow(id)
		switch s.where[id] {
		case stStarting:
			if s.running != nil {
				if end := j.Start + s.run[id].dur; end != s.run[id].end {
					s.untrack(id)
					s.run[id].end = end
					s.track(id)
				}
			}
		case stQueued, stNone:
			// Started without this policy deciding it (a driver restoring
			// state, say). Its placement is unknown, so backfill never
			// counts its GPUs as released: pessimistic, never optimistic.
			if s.where[id] == stQueued {
				s.q.remove(s.qk[id], j)
				s.dequeued(j)
			}
			if s.running != nil {
				d := s.duration(j)
				s.run[id] = runItem{end: j.Start + d, dur: d, id: id, model: -1, cpu: j.Req.CPUMilli, mem: j.Req.MemoryMiB}
				s.track(id)
			}
		}
		s.where[id] = stRunning
	}
	for _, id := range ev.Ended {
		if id < 0 {
			continue
		}
		s.grow(id)
		if w := s.where[id]; w == stRunning || w == stStarting {
			s.untrack(id)
			s.where[id] = stNone
		}
	}
	for _, id := range ev.Queued {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		s.grow(id)
		switch s.where[id] {
		case stQueued:
			continue
		case stRunning, stStarting: // its Ended was not reported; trust Queued
			s.untrack(id)
		}
		s.enqueue(j)
	}
}

// Schedule implements Policy. The returned slice is reused by the next
// call: the driver must consume it before calling Schedule again. The
// placements inside it are never reused and may be kept.
func (s *scheduler) Schedule(v View) []Decision {
	s.out = s.out[:0]
	s.absorb(v)
	if c, ok := s.q.(clockedQueue); ok {
		c.tick(v)
	}
	if s.q.len() == 0 {
		return s.out
	}
	s.rated, s.maxRate = HasSpeeds(v), 1
	if s.rated {
		s.maxRate = max(1, v.(SpeedView).MaxRate())
	}
	c := v.Cluster()
	now := v.Now()
	s.tot.update(c)
	s.q.begin(v, &s.tot)
	s.failed.reset()
	s.mig.resetCall()
	blocked := false
	visited := 0
	for {
		if blocked && !s.everyJob {
			if s.recheck {
				// Only a start changes what the tests read, so they are
				// set up after the reservation and after each start.
				s.recheck = false
				if s.cannotBackfill(c, now) {
					break
				}
				s.hope.set(s, c, now)
			}
			if visited = s.skipHopeless(visited); visited > s.depth {
				break
			}
		}
		it, ok := s.q.next()
		if !ok {
			break
		}
		j := v.Job(it.id)
		if j == nil {
			continue
		}
		if !blocked {
			waits := false // for a right-sized MIG instance
			if p, ok := s.placeJob(v, c, j); ok {
				if waits = j.Req.WantsMIG() && s.migRightSize(v, j, p, true); !waits && s.commit(v, it, j, p) {
					continue
				}
			}
			if j.Req.WantsMIG() {
				if !waits {
					s.migWait(v, j, true)
				}
			} else {
				s.migOff(v, j)
			}
			if !s.backfill {
				break // strict order: the head blocks everything behind it
			}
			blocked = true
			s.reserveFor(v, j)
			s.recheck = true
			continue
		}
		// EASY backfill behind the reservation.
		if visited++; visited > s.depth {
			break
		}
		if int64(c.TotalGPUs())*hwmodel.MilliPerGPU == c.AllocatedMilli() {
			if s.queued.cpuOnly == 0 {
				break // nothing left that any queued job could use
			}
			if j.Req.GPUs > 0 {
				continue
			}
		}
		if j.Req.WantsMIG() {
			// It cannot delay the head (see mig.go): no reservation test.
			if p, ok := s.placeJob(v, c, j); ok {
				if !s.migRightSize(v, j, p, false) {
					s.commit(v, it, j, p)
				}
				continue
			}
			s.migWait(v, j, false)
			continue
		}
		s.backfillOne(v, c, now, it, j)
	}
	return s.out
}

// failMemo remembers a few single-node requests that found no room in
// this call. Capacity only shrinks during a call, so a request that needs
// at least as much of everything, on no more models, cannot fit either and
// is skipped without a node scan. This relies on the Placer contract (a
// placer finds a placement whenever its rules allow one). Gangs are not
// remembered: their proportional CPU split makes "needs more" not monotone.
type failMemo struct {
	n, next int
	r       [8]hwmodel.Request
}

func (m *failMemo) reset() { m.n, m.next = 0, 0 }

func singleNode(c hwmodel.ClusterView, r hwmodel.Request) bool {
	return r.GPUs == 0 || r.GPUs <= c.MaxNodeGPUs(r.Models)
}

// dooms reports whether failed request f proves that r cannot fit. A
// failed MIG request dooms only the same MIG request (instances are not
// ordered by size across requests); no whole or shared request dooms a
// MIG one, nor the reverse.
func dooms(f, r hwmodel.Request) bool {
	if r.CPUMilli < f.CPUMilli || r.MemoryMiB < f.MemoryMiB {
		return false
	}
	if f.GPUs == 0 {
		return true // no node has the CPU and memory, whatever else r needs
	}
	if f.WantsMIG() || r.WantsMIG() {
		return f.MIG == r.MIG && within(r.Models, f.Models)
	}
	return r.GPUs >= f.GPUs && r.GPUMilli >= f.GPUMilli && within(r.Models, f.Models)
}

func (m *failMemo) doomed(r hwmodel.Request) bool {
	for _, f := range m.r[:m.n] {
		if dooms(f, r) {
			return true
		}
	}
	return false
}

func (m *failMemo) add(r hwmodel.Request) {
	if m.n < len(m.r) {
		m.r[m.n] = r
		m.n++
		return
	}
	m.r[m.next] = r
	m.next = (m.next + 1) % len(m.r)
}

// placeJob places job j: with Options.Local on a node holding its dataset
// when one has room (or, within LocalDelay of its queueing, nowhere yet);
// on the fastest GPU model with room for it when the policy asks for that
// (Options.Fastest) and the run models speeds; else where the placer
// puts its request.
func (s *scheduler) placeJob(v View, c hwmodel.ClusterView, j *Job) (hwmodel.Placement, bool) {
	if s.local && j.Dataset > 0 {
		if dv := dataView(v); dv != nil {
			if p, ok := s.placeLocal(dv, c, j); ok {
				return p, true
			}
			if s.waitsForData(v, j) {
				return nil, false
			}
		}
	}
	if !s.fastest || !s.rated || j.Req.GPUs == 0 {
		return s.place(c, j.Req)
	}
	return s.placeFastest(v, c, j)
}

// placeFastest tries the models j accepts from the one it runs fastest on
// (the lowest ModelID first among equals), each with the placer, and
// takes the first that has room: of what is free now, the placement where
// j is expected to finish first.
func (s *scheduler) placeFastest(v View, c hwmodel.ClusterView, j *Job) (hwmodel.Placement, bool) {
	sv := v.(SpeedView)
	s.byRate = s.byRate[:0]
	for m := range numModels() {
		id := hwmodel.ModelID(m)
		if j.Req.Models.Accepts(id) && c.GPUsOfModel(id) > 0 {
			s.byRate = append(s.byRate, modelRate{id, sv.RateOn(j, id)})
		}
	}
	slices.SortStableFunc(s.byRate, func(a, b modelRate) int { return cmp.Compare(b.rate, a.rate) })
	for _, mr := range s.byRate {
		r := j.Req
		r.Models = hwmodel.Of(mr.model)
		if p, ok := s.place(c, r); ok {
			return p, true
		}
	}
	return nil, false
}

// modelRate is one GPU model and a job's rate on it.
type modelRate struct {
	model hwmodel.ModelID
	rate  float64
}

// place asks the placer for room in the current slab. Without backfill
// the first request that fails ends the call, so the memo of failures is
// never read and not kept.
func (s *scheduler) place(c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if !s.backfill {
		return s.placeInSlab(c, r)
	}
	single := validRequest(r) && singleNode(c, r)
	if single && s.failed.doomed(r) {
		return nil, false
	}
	p, ok := s.placeInSlab(c, r)
	if !ok && single {
		s.failed.add(r)
	}
	return p, ok
}

func (s *scheduler) placeInSlab(c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	need := 1
	if r.GPUs > 1 {
		need = min(r.GPUs, max(c.NumNodes(), 1))
	}
	if cap(s.slab)-len(s.slab) < need {
		s.slab = make(hwmodel.Placement, 0, max(slabShares, need))
	}
	return s.placer.Place(s.slab[len(s.slab):len(s.slab)], c, r)
}

// commit reserves p for j, records the Start decision and moves j from the
// queue to the running index. It returns false, changing nothing, if the
// view refuses the reservation (a placer disagreeing with the cluster).
func (s *scheduler) commit(v View, it qitem, j *Job, p hwmodel.Placement) bool {
	if len(p) == 0 || v.Reserve(p) != nil {
		return false
	}
	n := len(p)
	if spare := s.slab[len(s.slab):cap(s.slab)]; len(spare) >= n && &spare[0] == &p[0] {
		s.slab = s.slab[:len(s.slab)+n]
	}
	p = p[:n:n] // a driver appending to it cannot reach the slab
	s.out = append(s.out, Decision{Kind: Start, Job: j.ID, Placement: p})
	s.recheck = true
	s.q.take(it, j, placementMilli(p))
	s.dequeued(j)
	s.grow(j.ID)
	s.where[j.ID] = stStarting
	if s.running != nil {
		d := hwmodel.ScaleDuration(s.duration(j), v.Rate(j, p))
		s.run[j.ID] = runItem{
			end: v.Now() + d, dur: d, id: j.ID, model: placementModel(v.Cluster(), p),
			milli: j.Req.TotalMilli(), cpu: j.Req.CPUMilli, mem: j.Req.MemoryMiB,
		}
		s.track(j.ID)
	}
	return true
}

// placementMilli is the GPU milli a placement holds (for a MIG job, its
// instance's share).
func placementMilli(p hwmodel.Placement) int64 {
	var n int64
	for _, sh := range p {
		n += int64(sh.GPUCount()) * int64(sh.Milli)
	}
	return n
}

// placementModel is the GPU model a placement uses (gangs use one), or -1.
func placementModel(c hwmodel.ClusterView, p hwmodel.Placement) int16 {
	for _, sh := range p {
		if sh.GPUs != 0 {
			return int16(c.NodeModel(sh.Node))
		}
	}
	return -1
}
