package policies

import (
	"cmp"
	"math"
	"math/bits"
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

// reservation is the EASY backfill reservation of the first blocked job.
type reservation struct {
	gpu bool // counted in GPU milli (a GPU job) or CPU and memory (a CPU-only job)
	// models is what the reservation protects: the one GPU model on which
	// the blocked job's need is met first, or all the models it accepts if
	// it never is. Only GPUs of these models count against the extra.
	models   hwmodel.ModelSet
	accepted hwmodel.ModelSet // the blocked job's models present in the cluster
	perModel [64]int64        // gpu mode: idle milli per model at the walk's point
	now      Time
	shadow   Time
	avail    int64 // gpu mode: milli of the chosen model; else CPU
	need     int64
	availM   int64 // memory (cpu mode)
	needM    int64
	done     bool
	free     bool // the blocked job is a MIG job: backfill is unconstrained
}

// settle checks whether the need is met; in gpu mode on one model m.
func (r *reservation) settle(m int) {
	if r.gpu {
		if m >= 0 && r.perModel[m] >= r.need {
			r.done, r.models, r.avail = true, hwmodel.Of(hwmodel.ModelID(m)), r.perModel[m]
		}
		return
	}
	r.done = r.avail >= r.need && r.availM >= r.needM
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

// reserveFor computes the EASY reservation of the first blocked job j.
//
// It is count-based, the usual approximation: walking running jobs in
// order of estimated end (overdue ones count as ending now), it adds up
// what each releases until the blocked job's need is met. A GPU job counts
// GPU milli per model, since a placement never mixes models (idle whole
// GPUs now, plus what running jobs on that model release), and the need is
// met on the first model that reaches it (lowest model ID on a tie); a
// CPU-only job counts CPU and memory cluster-wide, since that is what
// blocks it. The time the need is met is the shadow time, and what is left
// over on that model then, every job that ends by it released (ties at
// the shadow time included), is the extra. It ignores which node frees what,
// so the blocked job may still not fit at the shadow time (fragmentation,
// a node short of CPU), and a fractional job's need is its share but only
// whole idle GPUs count as available. If the running jobs never free
// enough (capacity held outside this policy's knowledge), the shadow is the
// last estimated end and the extra is zero.
func (s *scheduler) reserveFor(v View, j *Job) {
	c := v.Cluster()
	r := &s.res
	*r = reservation{now: v.Now(), shadow: v.Now()}
	if j.Req.WantsMIG() {
		r.free = true // see mig.go: nothing behind a MIG head can delay it
		return
	}
	if j.Req.GPUs > 0 {
		r.gpu, r.need = true, j.Req.TotalMilli()
		for m := 0; m < numModels(); m++ {
			id := hwmodel.ModelID(m)
			if j.Req.Models.Accepts(id) && c.GPUsOfModel(id) > 0 {
				r.accepted |= hwmodel.Of(id)
				r.perModel[m] = int64(c.FreeWholeGPUsAccepted(hwmodel.Of(id))) * hwmodel.MilliPerGPU
			}
		}
		for m := 0; m < numModels() && !r.done; m++ {
			if r.accepted&hwmodel.Of(hwmodel.ModelID(m)) != 0 {
				r.settle(m)
			}
		}
	} else {
		for i := 0; i < c.NumNodes(); i++ {
			r.avail += c.FreeCPU(i)
			r.availM += c.FreeMemory(i)
		}
		r.need, r.needM = j.Req.CPUMilli, j.Req.MemoryMiB
		r.settle(-1)
	}
	// The walk goes on past the job that meets the need while ends tie
	// with the shadow time (overdue jobs end now: when the need is met
	// before the walk, they tie with it).
	s.running.ascend(s.step)
	if !r.done {
		if last, ok := s.running.max(); ok {
			r.shadow = max(r.now, Time(last.a))
		}
		r.avail, r.availM = r.need, r.needM // extra zero
		r.models = r.accepted
		if r.models == hwmodel.AnyModel {
			r.models = j.Req.Models // no accepted GPUs at all; it cannot run
		}
	}
}

func (s *scheduler) walkStep(it runItem) bool {
	r := &s.res
	end := max(r.now, it.end)
	if r.done {
		// The need is met; jobs that end at the shadow time too release
		// their share at it, so the extra counts them as well.
		if end != r.shadow {
			return false
		}
		switch {
		case !r.gpu:
			r.avail += it.cpu
			r.availM += it.mem
		case it.model >= 0 && r.models == hwmodel.Of(hwmodel.ModelID(it.model)):
			r.avail += it.milli
		}
		return true
	}
	r.shadow = end
	if r.gpu {
		if it.model >= 0 && r.accepted&hwmodel.Of(hwmodel.ModelID(it.model)) != 0 {
			r.perModel[it.model] += it.milli
			r.settle(int(it.model))
		}
	} else {
		r.avail += it.cpu
		r.availM += it.mem
		r.settle(-1)
	}
	return true
}

// within reports whether every model a accepts is accepted by b.
func within(a, b hwmodel.ModelSet) bool {
	return b == hwmodel.AnyModel || (a != hwmodel.AnyModel && a&^b == 0)
}

// onlyOn reports whether every GPU model of the cluster that a accepts is
// in b, i.e. any placement of a request accepting a lands on b's models.
func (t *clusterTotals) onlyOn(a, b hwmodel.ModelSet) bool {
	if b == hwmodel.AnyModel {
		return true
	}
	if a == hwmodel.AnyModel {
		a = t.present
	}
	return a&t.present&^b == 0
}

// cannotBackfill reports that no queued job could start now, so the rest
// of the backfill walk would start nothing and may stop. It holds when
// every queued job asks for GPUs (no CPU-only or MIG job) and either none
// could fit (no fractional request, and the smallest asks for more whole
// GPUs than are idle in the whole cluster), or none passes the
// reservation's test: every placement lands on the reserved models, the
// smallest request is more than the extra, and the shortest duration ends
// after the shadow time. The queue-wide minimums bound those of the jobs
// the walk has left, so it stops only where it would start nothing more.
// In an overloaded cluster, whose overdue jobs put the shadow time at now,
// the walk thus ends once the extra or the idle GPUs are spent instead of
// visiting BackfillDepth jobs.
func (s *scheduler) cannotBackfill(c hwmodel.ClusterView, now Time) bool {
	b := &s.queued
	if b.cpuOnly > 0 || b.mig > 0 {
		return false
	}
	m, ok := b.minMilli()
	if !ok || (b.frac == 0 && m > int64(c.FreeWholeGPUsAccepted(hwmodel.AnyModel))*hwmodel.MilliPerGPU) {
		return true // no GPU job queued, or none fits
	}
	r := &s.res
	if r.free || !r.gpu || !s.tot.onlyOn(hwmodel.AnyModel, r.models) || m <= r.avail-r.need {
		return false
	}
	return b.minDurationBound() > stretch(r.shadow-now, s.maxRate)
}

// stretch is the longest measured duration that takes at most t at rate
// (>= 1): t·rate rounded up, saturating; t itself at rate 1.
func stretch(t Time, rate float64) Time {
	if rate == 1 || t <= 0 {
		return t
	}
	x := math.Ceil(float64(t) * rate)
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return Time(x)
}

// skipHopeless steps the backfill walk over whole leaves of the queue none
// of whose jobs could start (hope.hopeless), counting them as visited as
// the walk would have, and returns the new count. Visiting them would
// start nothing and change nothing (a job that fails the tests is not
// even placed), so the walk goes on exactly as it would have, or stops
// where it would have at BackfillDepth.
func (s *scheduler) skipHopeless(visited int) int {
	for visited <= s.depth {
		n := s.q.skip(&s.hope)
		if n == 0 {
			break
		}
		visited += n
	}
	return visited
}

// hope holds what decides, from a leaf's summary, that none of its jobs
// could start now behind the reservation: set after the reservation and
// after each start.
type hope struct {
	freeMilli int64 // GPU milli free in the cluster
	idle      int32 // idle whole GPUs in the cluster
	nodeIdle  int32 // the most idle whole GPUs on one node
	gangAbove int32 // requests above this many GPUs may be gangs
	test      bool  // GPU jobs must pass the reservation's test:
	extra     int64 // use at most this much GPU milli
	within    Time  // or have at most this duration
}

func (h *hope) set(s *scheduler, c hwmodel.ClusterView, now Time) {
	r := &s.res
	h.freeMilli = int64(c.TotalGPUs())*hwmodel.MilliPerGPU - c.AllocatedMilli()
	h.idle = int32(c.FreeWholeGPUsAccepted(hwmodel.AnyModel))
	h.nodeIdle = 0
	for h.nodeIdle < h.idle && c.HasNodeWithIdleGPUs(hwmodel.AnyModel, int(h.nodeIdle)+1) {
		h.nodeIdle++
	}
	h.gangAbove = int32(s.tot.minNodeGPUs)
	h.test = r.gpu && !r.free && s.tot.onlyOn(hwmodel.AnyModel, r.models)
	// A queued duration is measured on its job's reference model; on the
	// fastest model of the run it takes 1/maxRate of that.
	h.extra, h.within = r.avail-r.need, stretch(r.shadow-now, s.maxRate)
}

// hopeless reports that no job summarised by q could start: none is
// CPU-only or MIG, and in every size class either no request could fit (a
// fractional one needs its milli free somewhere; a whole one as many idle
// GPUs on one node, or in the cluster if it may be a gang) or none passes
// the reservation's test (within the extra or ending by the shadow time).
func (h *hope) hopeless(q *qsum) bool {
	if q.other > 0 {
		return false
	}
	for c := range numClasses {
		if q.minDur[c] != math.MaxInt64 && h.possible(c, q.minSize[c], q.minDur[c]) {
			return false
		}
	}
	return true
}

// hopelessJob is hopeless for one job.
func (h *hope) hopelessJob(m qmeta) bool {
	return m.class != classOther && !h.possible(int(m.class), m.size, m.dur)
}

// possible reports whether a request of size class c, size and duration
// (a class's least of each) might fit and pass the reservation's test.
func (h *hope) possible(c int, size int32, dur Time) bool {
	var fits bool
	milli := int64(size)
	if c == 0 {
		fits = milli <= h.freeMilli
	} else {
		fits = size <= h.nodeIdle || (classHi[c] > h.gangAbove && size <= h.idle)
		milli *= hwmodel.MilliPerGPU
	}
	return fits && (!h.test || milli <= h.extra || dur <= h.within)
}

// backlog summarises the queued jobs for cannotBackfill: how many ask for
// no GPU, for a MIG instance, or for a fraction of one GPU, and for the
// GPU jobs that are not MIG the multiset of their GPU milli and a
// histogram of their durations.
type backlog struct {
	cpuOnly int
	mig     int
	frac    int
	milli   []milliCount // ascending by milli, no zero counts
	dur     [65]int32    // by bits.Len64(duration)
}

type milliCount struct {
	milli int64
	n     int
}

// add counts job j, of duration d, in (sign +1) or out (-1).
func (b *backlog) add(j *Job, d Time, sign int) {
	switch {
	case j.Req.GPUs == 0:
		b.cpuOnly += sign
		return
	case j.Req.WantsMIG():
		b.mig += sign
		return
	case j.Req.Fractional():
		b.frac += sign
	}
	b.dur[bits.Len64(uint64(d))] += int32(sign)
	m := j.Req.TotalMilli()
	k, found := slices.BinarySearchFunc(b.milli, m, func(c milliCount, m int64) int { return cmp.Compare(c.milli, m) })
	switch {
	case found:
		if b.milli[k].n += sign; b.milli[k].n == 0 {
			b.milli = slices.Delete(b.milli, k, k+1)
		}
	case sign > 0:
		b.milli = slices.Insert(b.milli, k, milliCount{m, 1})
	}
}

// minMilli is the smallest GPU milli a queued GPU job asks for.
func (b *backlog) minMilli() (int64, bool) {
	if len(b.milli) == 0 {
		return 0, false
	}
	return b.milli[0].milli, true
}

// minDurationBound is a lower bound of the shortest duration of a queued
// GPU job (within a factor of two; MaxInt64 when there is none).
func (b *backlog) minDurationBound() Time {
	for k, n := range b.dur {
		if n > 0 {
			if k == 0 {
				return 0
			}
			return Time(1) << (k - 1)
		}
	}
	return math.MaxInt64
}

// backfillOne starts j if it fits now and cannot delay the reservation:
// it ends by the shadow time, or it uses only the reservation's extra.
// Under speeds its end depends on where it lands: a job that could end by
// the shadow time on the fastest model is placed, then tested where it
// landed.
func (s *scheduler) backfillOne(v View, c hwmodel.ClusterView, now Time, it qitem, j *Job) {
	r := &s.res
	d := s.duration(j)
	if r.free || now+hwmodel.ScaleDuration(d, s.maxRate) <= r.shadow {
		p, ok := s.placeJob(v, c, j)
		if !ok {
			return
		}
		if r.free || now+hwmodel.ScaleDuration(d, v.Rate(j, p)) <= r.shadow {
			s.commit(v, it, j, p)
			return
		}
		s.backfillWithinExtra(v, c, it, j, p)
		return
	}
	if !r.gpu {
		if j.Req.CPUMilli > r.avail-r.need || j.Req.MemoryMiB > r.availM-r.needM {
			return
		}
	} else if j.Req.TotalMilli() > r.avail-r.need && j.Req.GPUs > 0 && s.tot.onlyOn(j.Req.Models, r.models) {
		return // wherever it lands it would eat into the reservation
	}
	p, ok := s.placeJob(v, c, j)
	if !ok {
		return
	}
	s.backfillWithinExtra(v, c, it, j, p)
}

// backfillWithinExtra starts j on p if p takes no more of what the
// reservation protects than its extra, and books what it took.
func (s *scheduler) backfillWithinExtra(v View, c hwmodel.ClusterView, it qitem, j *Job, p hwmodel.Placement) {
	r := &s.res
	if !r.gpu {
		if j.Req.CPUMilli > r.avail-r.need || j.Req.MemoryMiB > r.availM-r.needM {
			return
		}
		if s.commit(v, it, j, p) {
			r.avail -= j.Req.CPUMilli
			r.availM -= j.Req.MemoryMiB
		}
		return
	}
	milli := j.Req.TotalMilli()
	counts := false
	if m := placementModel(c, p); m >= 0 && r.models.Accepts(hwmodel.ModelID(m)) {
		if milli > r.avail-r.need {
			return
		}
		counts = true
	}
	if s.commit(v, it, j, p) && counts {
		r.avail -= milli
	}
}
