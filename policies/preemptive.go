package policies

import (
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// preemptor is the scheduler of the preemptive orders (las, tiresias,
// srtf, gandiva, priority+preempt; preemptorders.go). Their priorities
// rank queued and running jobs together, so at each call it decides which
// jobs should run and makes it so:
//
//  1. Admission, by count. Walk the running jobs and the queue merged in
//     the order's key, admitting each job whose GPU need fits what is
//     left of a budget per GPU model: the model's idle whole GPUs plus
//     what the running jobs on it hold. Admission never blocks the jobs
//     behind one that does not fit (Tiresias' rule), so a small job can
//     run beside a large one that waits. Running jobs the walk does not
//     admit are the victims.
//  2. Preemption. An admitted queued job that the idle whole GPUs cannot
//     hold by count, after the admitted jobs before it, is blocked: the
//     victims on its model are preempted, and nothing is started in this
//     call. The next call, which a driver makes at once after a
//     preemption, admits the same jobs and places them all, in key order,
//     on what the victims left (as the Pollux artifact's Tiresias does:
//     admission first, then placement on the freed capacity).
//  3. Placement. Otherwise the admitted queued jobs are placed in key
//     order. One the placer finds no room for although its count fits
//     (fragmentation: the budget counts GPUs, not nodes) is blocked, and
//     victims that can help are preempted for it; when none can, it is
//     stuck until capacity comes back (a job ends, hardware is repaired:
//     the cluster's allocation falls): it takes no budget meanwhile, and
//     jobs behind it may start in the capacity it could not use. So a
//     preemption is never repeated for a job that it cannot help.
//
// Victims are therefore the running jobs of the lowest keys, as many as
// the budget needs and no more: a running job the budget still has room
// for behind a blocked one keeps running.
//
// The running jobs are kept in a tree by a key that changes only at known
// times (a threshold crossing, the end of a quantum, an estimate running
// out: the order's rekey times, kept in a heap), so nothing is rescanned
// as time passes. A call costs O(log n) for the book-keeping of each
// event, plus O(log n) for each queued job visited; when some running job
// ranks below the best queued one (a preemption may be due), the walk
// also steps through the running jobs in order, O(1) each. The walk stops
// once every model's budget is spent, or after depth queued jobs, never
// passing over the whole queue.
type preemptor struct {
	name   string
	placer Placer
	order  preemptOrder
	depth  int

	jobs  []pjob
	queue qtree
	cur   qcursor
	// running holds the running and starting jobs by their running keys
	// (pjob.rkey); runMilli is their GPU need per model. A job started in
	// a call joins the tree when the call ends (startedNow), as the walk's
	// cursor may be on it.
	running    qtree
	rcur       qcursor
	runMilli   []int64
	startedNow []JobID
	rekeys     keyTimeHeap
	stuck      []JobID
	// allocAfter is the cluster's allocated milli-GPU after the previous
	// call's decisions: less at this call means capacity came back (a
	// job ended, hardware was repaired), which may unstick a job.
	allocAfter int64
	seq        int64

	// per call
	now     Time
	budget  []int64 // per GPU model
	left    int64   // Σ budget
	present hwmodel.ModelSet
	// idle is each model's idle whole GPUs less what the walk admitted
	// on them (milli-GPU); admitted the queued jobs it admitted, in key
	// order; fracAdmitted whether one of them is fractional.
	idle         []int64
	admitted     []admission
	fracAdmitted bool
	victims      []JobID
	due          []JobID
	hope         hope // what nextQueued and fill step over
	// plain turns off the steps over jobs and the early stop, for tests
	// that check they change no decision.
	plain   bool
	tot     clusterTotals
	blocked []JobID
	// blockedModels are the models the blocked jobs accept: only a victim
	// on one of them can help.
	blockedModels hwmodel.ModelSet
	ds            []Decision
	slab          hwmodel.Placement
}

// pjob is what the preemptor keeps of one job.
type pjob struct {
	state pstate
	stuck bool
	// preempting: a Preempt of its current attempt was decided; it is
	// not decided again (a driver may take a while to stop it).
	preempting bool
	// inTree: rkey is its key in running, until rekeyAt (0: for good).
	inTree  bool
	rkey    qitem
	rekeyAt Time
	level   int8  // las, tiresias: its queue
	seq     int64 // las, tiresias: its place in its queue (FIFO)
	key     qitem // its key in the queue while queued
	// service is the order's measure of what the job received before its
	// current attempt: wall time (las, srtf) or GPU-time (tiresias), in µs
	// or GPU·µs. ran is its wall time run over all attempts before the
	// current one; start the current attempt's start.
	service, ran Time
	start        Time
	queuedAt     Time
	milli        int64           // GPU need: GPUs × share, in milli-GPU
	model        hwmodel.ModelID // where it runs (running)
}

type pstate uint8

const (
	pNone pstate = iota
	pQueued
	pStarting // Start decided, not yet answered
	pRunning
)

// preemptOrder is what a preemptive order decides: the keys (lowest
// first) and how they change with time.
type preemptOrder interface {
	// refresh brings the order's state up to now before keys are read
	// (las and tiresias promote starved queued jobs); the running jobs'
	// keys are already current.
	refresh(p *preemptor, v View)
	// queuedKey is a queued job's key; it may change only through
	// p.rekey.
	queuedKey(p *preemptor, j *Job, pj *pjob) qitem
	// runningKey is a running job's key in the running tree, and the time
	// it next changes (0: never). Between those times the tree's order is
	// the order of the keys now (current).
	runningKey(p *preemptor, j *Job, pj *pjob) (qitem, Time)
	// rekeyed is told that a running job's key time came, before its new
	// runningKey is read (las demotes it).
	rekeyed(p *preemptor, j *Job, pj *pjob)
	// current is the key now of a running job whose tree key is k, to be
	// compared with queued jobs' keys.
	current(p *preemptor, k qitem) qitem
	// wake is when the order's keys next change without an event (0:
	// never), asked of the driver after each call.
	wake(p *preemptor, v View) Time
	// mayPreempt reports whether victim may be preempted for the blocked
	// jobs (gandiva: only for one of the same GPU count).
	mayPreempt(p *preemptor, victim *Job) bool
}

var _ Suspender = (*preemptor)(nil)

func (p *preemptor) Name() string { return p.name }

// Suspends implements Suspender: gandiva suspends.
func (p *preemptor) Suspends() bool {
	_, ok := p.order.(gandivaOrder)
	return ok
}

func (p *preemptor) grow(id JobID) {
	if int(id) >= len(p.jobs) {
		p.jobs = slices.Grow(p.jobs, int(id)+1-len(p.jobs))
		p.jobs = p.jobs[:cap(p.jobs)]
	}
}

// serviceNow is job j's attained service now by the measure of gpuTime
// (GPU-time) or wall time.
func (p *preemptor) serviceNow(pj *pjob, gpuTime bool) Time {
	s := pj.service
	if pj.state == pRunning || pj.state == pStarting {
		d := p.now - pj.start
		if gpuTime {
			d = Time(int64(d) * pj.milli / hwmodel.MilliPerGPU)
		}
		s += d
	}
	return s
}

func (p *preemptor) enqueue(v View, j *Job) {
	pj := &p.jobs[j.ID]
	pj.state = pQueued
	pj.queuedAt = j.Queued
	pj.milli0(j)
	pj.key = p.order.queuedKey(p, j, pj)
	p.queue.insert(pj.key, metaOf(j, 0))
	if w, ok := p.order.(queueWatcher); ok {
		w.queued(p, j, pj)
	}
}

// queueWatcher is an order that wants to know when a job is queued.
type queueWatcher interface {
	queued(p *preemptor, j *Job, pj *pjob)
}

// rekey moves a queued job to the key its order now gives it.
func (p *preemptor) rekey(j *Job, pj *pjob) {
	p.queue.delete(pj.key)
	pj.key = p.order.queuedKey(p, j, pj)
	p.queue.insert(pj.key, metaOf(j, 0))
}

// stopped books the attempt that just ended into the job's service.
func (p *preemptor) stopped(v View, id JobID) {
	pj := &p.jobs[id]
	if pj.state == pRunning || pj.state == pStarting {
		j := v.Job(id)
		pj.service = p.serviceNow(pj, p.gpuTime())
		if j != nil && p.now > pj.start {
			pj.ran += p.now - pj.start
		}
		p.dropRunning(id)
	}
	pj.state, pj.preempting = pNone, false
}

// addRunning books a job that runs or starts: now into the running tree,
// or when the call ends if the call started it (later).
func (p *preemptor) addRunning(v View, id JobID, later bool) {
	pj := &p.jobs[id]
	p.growModels()
	p.runMilli[pj.model] += pj.milli
	if later {
		p.startedNow = append(p.startedNow, id)
		return
	}
	p.plant(v.Job(id), pj)
}

// plant puts a running job into the tree by its key now, and books when
// that key changes.
func (p *preemptor) plant(j *Job, pj *pjob) {
	pj.rkey, pj.rekeyAt = p.order.runningKey(p, j, pj)
	pj.inTree = true
	p.running.insert(pj.rkey, qmeta{})
	if pj.rekeyAt > 0 {
		p.rekeys.push(keyTime{at: pj.rekeyAt, id: j.ID, start: pj.start})
	}
}

func (p *preemptor) dropRunning(id JobID) {
	pj := &p.jobs[id]
	p.runMilli[pj.model] -= pj.milli
	if pj.inTree {
		p.running.delete(pj.rkey)
		pj.inTree = false
	} else if k := slices.Index(p.startedNow, id); k >= 0 {
		p.startedNow = slices.Delete(p.startedNow, k, k+1)
	}
	pj.rekeyAt = 0
}

// growModels sizes the per-model books.
func (p *preemptor) growModels() {
	if n := numModels(); len(p.runMilli) < n {
		p.runMilli = append(p.runMilli, make([]int64, n-len(p.runMilli))...)
		p.budget = make([]int64, n)
	}
}

// rekeyDue moves the running jobs whose key time has come to their new
// keys, in the order of their keys before (so that las demotes jobs that
// cross at once in their queue's order).
func (p *preemptor) rekeyDue(v View) {
	p.due = p.due[:0]
	for len(p.rekeys) > 0 && p.rekeys[0].at <= p.now {
		e := p.rekeys.pop()
		if p.live(e) {
			p.due = append(p.due, e.id)
		}
	}
	if len(p.due) == 0 {
		return
	}
	slices.SortFunc(p.due, func(a, b JobID) int { return p.jobs[a].rkey.cmp(p.jobs[b].rkey) })
	for _, id := range p.due {
		pj := &p.jobs[id]
		j := v.Job(id)
		p.running.delete(pj.rkey)
		p.order.rekeyed(p, j, pj)
		p.plant(j, pj)
	}
}

// live reports whether a rekey time is still its job's.
func (p *preemptor) live(e keyTime) bool {
	pj := &p.jobs[e.id]
	return pj.inTree && pj.start == e.start && pj.rekeyAt == e.at
}

// nextRekey is the earliest pending rekey time after now (0: none),
// dropping the stale ones on top.
func (p *preemptor) nextRekey() Time {
	for len(p.rekeys) > 0 {
		if e := p.rekeys[0]; p.live(e) {
			return e.at
		}
		p.rekeys.pop()
	}
	return 0
}

// keyTime is a running job's key time.
type keyTime struct {
	at    Time
	id    JobID
	start Time // the attempt it belongs to
}

// keyTimeHeap is a binary min-heap by (at, id), by hand rather than
// through container/heap, whose interface boxes each pushed value.
type keyTimeHeap []keyTime

func (h keyTimeHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].id < h[j].id
}

func (h *keyTimeHeap) push(e keyTime) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s.less(i, up) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *keyTimeHeap) pop() keyTime {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

func (p *preemptor) gpuTime() bool {
	o, ok := p.order.(*lasOrder)
	return ok && o.gpuTime
}

// absorb brings the books up to date with the call's events.
func (p *preemptor) absorb(v View) {
	ev := v.Events()
	for _, rj := range ev.Rejected {
		id := rj.Decision.Job
		if rj.Decision.Kind != Start || id < 0 {
			continue
		}
		p.grow(id)
		if p.jobs[id].state == pStarting {
			p.stopped(v, id)
			if j := v.Job(id); j != nil {
				p.enqueue(v, j)
			}
		}
	}
	for _, id := range ev.Started {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		p.grow(id)
		pj := &p.jobs[id]
		switch pj.state {
		case pQueued:
			// Started without this policy deciding it (a driver restoring
			// state): its model is a guess, the first it accepts.
			p.queue.delete(pj.key)
			pj.state = pNone
		}
		if pj.state == pNone {
			pj.milli = needMilli(j.Req)
			pj.model = firstModel(j.Req.Models, p.present)
			pj.state, pj.start = pRunning, j.Start
			p.addRunning(v, id, false)
		}
		if pj.start != j.Start && pj.inTree {
			// The driver started it later than decided (live mode):
			// its key and key times follow the real start.
			p.running.delete(pj.rkey)
			pj.start = j.Start
			p.plant(j, pj)
		}
		pj.state, pj.start = pRunning, j.Start
	}
	for _, id := range ev.Ended {
		if id < 0 {
			continue
		}
		p.grow(id)
		p.stopped(v, id)
	}
	if len(p.stuck) > 0 && (len(ev.Ended) > 0 || v.Cluster().AllocatedMilli() < p.allocAfter) {
		// Capacity came back: a stuck job may fit now.
		for _, s := range p.stuck {
			p.jobs[s].stuck = false
		}
		p.stuck = p.stuck[:0]
	}
	for _, id := range ev.Queued {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		p.grow(id)
		switch p.jobs[id].state {
		case pQueued:
			continue
		case pRunning, pStarting:
			p.stopped(v, id)
		}
		p.enqueue(v, j)
	}
}

// needMilli is a request's GPU need in milli-GPU.
func needMilli(r hwmodel.Request) int64 {
	if r.GPUs <= 0 {
		return 0
	}
	return int64(r.GPUs) * int64(max(r.GPUMilli, 0))
}

// firstModel is the first model of present that s accepts (0 if none).
func firstModel(s, present hwmodel.ModelSet) hwmodel.ModelID {
	for m := range numModels() {
		id := hwmodel.ModelID(m)
		if present&hwmodel.Of(id) != 0 && s.Accepts(id) {
			return id
		}
	}
	return 0
}

// Schedule implements Policy. The returned slice is reused by the next
// call.
func (p *preemptor) Schedule(v View) []Decision {
	p.now = v.Now()
	if p.present == 0 {
		// The models present must be known before the events: a job
		// started without this policy (a driver adopting running jobs
		// after a restart) is booked under the first of them it accepts.
		p.setBudget(v.Cluster())
	}
	p.absorb(v)
	p.ds = p.ds[:0]
	c := v.Cluster()
	p.rekeyDue(v)
	p.order.refresh(p, v)
	if p.queue.len() == 0 {
		// Nothing waits: nothing to start or preempt.
		p.finish(v, c)
		return p.ds
	}

	// When no running job ranks below the best queued one, none can be
	// preempted: the queued jobs take what is idle, in order (the walk
	// would admit exactly those that fit).
	p.cur.t, p.rcur.t = &p.queue, &p.running
	p.cur.reset()
	p.setBudget(c)
	best, _ := p.cur.next()
	slow := false
	if last, ok := p.running.max(); ok {
		slow = !p.order.current(p, last).less(best)
	}
	if !slow {
		for m, milli := range p.runMilli {
			p.budget[m] -= milli
			p.left -= milli
		}
	}

	// Admission, by count: the walk merges the running jobs and the queue
	// by key and gives each the budget it needs while the budget lasts.
	p.victims, p.blocked, p.blockedModels = p.victims[:0], p.blocked[:0], 0
	p.admitted, p.fracAdmitted = p.admitted[:0], false
	p.setIdle(c)
	p.cur.reset()
	p.rcur.reset()
	visited := 0
	qi, qok := p.nextQueued(&visited)
	var ri qitem
	rok := false
	if slow {
		ri, rok = p.rcur.next()
	}
	for rok || qok {
		// Without a blocked job, the running jobs change nothing once the
		// queue's walk is over (only a blocked job's victims are
		// preempted), nor once the budget is spent (they can take none,
		// and no queued job can be admitted and blocked). An admitted
		// fractional job may turn out blocked when placed, so with one
		// the walk goes on through the running jobs.
		mayBlock := len(p.blocked) > 0 || p.fracAdmitted
		if (!qok || visited >= p.depth) && (!rok || !mayBlock) {
			break
		}
		if p.spent() && (!rok || !mayBlock) {
			if !qok {
				break
			}
			rok = false
		}
		if rok && (!qok || visited >= p.depth || p.order.current(p, ri).less(qi)) {
			id := ri.id
			ri, rok = p.rcur.next()
			pj := &p.jobs[id]
			if p.budget[pj.model] >= pj.milli {
				p.take(pj.model, pj.milli)
			} else {
				p.victims = append(p.victims, id)
			}
			continue
		}
		id := qi.id
		visited++
		qi, qok = p.nextQueued(&visited)
		pj := &p.jobs[id]
		if pj.stuck {
			continue
		}
		j := v.Job(id)
		if m, ok := p.admit(j, pj.milli0(j)); ok {
			p.admitted = append(p.admitted, admission{id: id, model: m})
		}
	}

	// Preemption: the admitted jobs the idle GPUs cannot hold by count
	// (blocked) need the victims' capacity. While it is being freed
	// nothing starts: the next call, which a driver makes at once after
	// a preemption, places every admitted job in key order on what the
	// victims left, so that a job placed first does not take the capacity
	// the preemptions were for.
	if len(p.blocked) > 0 && p.preemptVictims(v) {
		p.finish(v, c)
		return p.ds
	}

	// Placement: the admitted jobs in key order. One that does not fit
	// although its count does (fragmentation: the budget counts GPUs, not
	// nodes) is blocked, and victims that can help are preempted for it;
	// if none can, it is stuck.
	p.blocked, p.blockedModels = p.blocked[:0], 0
	for _, a := range p.admitted {
		j := v.Job(a.id)
		if p.jobs[a.id].milli == 0 {
			// Preempting GPU jobs cannot help it: it starts or waits.
			p.start(v, c, a.id, j.Req)
			continue
		}
		r := j.Req
		r.Models = hwmodel.Of(a.model)
		if !p.start(v, c, a.id, r) {
			p.blocked = append(p.blocked, a.id)
			p.blockedModels |= hwmodel.Of(a.model)
		}
	}
	if len(p.blocked) > 0 && !p.preemptVictims(v) {
		// Nothing to free for them: they wait for capacity to change, and
		// the jobs behind them may use what is idle now.
		for _, id := range p.blocked {
			p.jobs[id].stuck = true
			p.stuck = append(p.stuck, id)
		}
		p.fill(v, c)
	}
	p.finish(v, c)
	return p.ds
}

// admission is one queued job the walk admitted, on GPU model model.
type admission struct {
	id    JobID
	model hwmodel.ModelID
}

// preemptVictims preempts the victims on the blocked jobs' models that
// the order lets go, and reports whether capacity is on its way back
// for them (a victim preempted now or earlier and still stopping).
func (p *preemptor) preemptVictims(v View) bool {
	freeing := false
	for _, id := range p.victims {
		pj := &p.jobs[id]
		if p.blockedModels&hwmodel.Of(pj.model) == 0 || !p.order.mayPreempt(p, v.Job(id)) {
			continue
		}
		freeing = true
		if !pj.preempting {
			pj.preempting = true
			p.ds = append(p.ds, Decision{Kind: Preempt, Job: id})
		}
	}
	return freeing
}

// finish ends a call: the wake-up the order wants, and the allocation
// the call leaves.
func (p *preemptor) finish(v View, c hwmodel.ClusterView) {
	for _, id := range p.startedNow {
		p.plant(v.Job(id), &p.jobs[id])
	}
	p.startedNow = p.startedNow[:0]
	if t := p.order.wake(p, v); t > p.now {
		wakeAt(v, t)
	}
	p.allocAfter = c.AllocatedMilli()
}

// milli0 is job j's GPU need (kept once known).
func (pj *pjob) milli0(j *Job) int64 {
	if pj.milli == 0 {
		pj.milli = needMilli(j.Req)
	}
	return pj.milli
}

// setBudget sets each model's budget: its idle whole GPUs plus what the
// running jobs on it hold.
func (p *preemptor) setBudget(c hwmodel.ClusterView) {
	p.growModels()
	p.present, p.left = 0, 0
	for m := range p.budget {
		id := hwmodel.ModelID(m)
		p.budget[m] = 0
		if c.GPUsOfModel(id) > 0 {
			p.present |= hwmodel.Of(id)
			p.budget[m] = int64(c.FreeWholeGPUsAccepted(hwmodel.Of(id))) * hwmodel.MilliPerGPU
		}
		p.budget[m] += p.runMilli[m]
		p.left += p.budget[m]
	}
}

// spent reports whether no model has budget left.
func (p *preemptor) spent() bool { return p.left <= 0 }

// take takes milli of model m's budget.
func (p *preemptor) take(m hwmodel.ModelID, milli int64) {
	p.budget[m] -= milli
	p.left -= milli
}

// setIdle sets each model's idle whole GPUs now, in milli-GPU, which the
// admission walk counts down as it admits whole-GPU jobs.
func (p *preemptor) setIdle(c hwmodel.ClusterView) {
	n := numModels()
	if len(p.idle) < n {
		p.idle = make([]int64, n)
	}
	for m := range n {
		p.idle[m] = 0
		if p.present&hwmodel.Of(hwmodel.ModelID(m)) != 0 {
			p.idle[m] = int64(c.FreeWholeGPUsAccepted(hwmodel.Of(hwmodel.ModelID(m)))) * hwmodel.MilliPerGPU
		}
	}
}

// admit admits queued job j, by count, on a GPU model whose budget holds
// its need: the first (by ID) whose idle GPUs also hold it, else the
// first with budget, where it is blocked until victims free their
// capacity. A job admitted on a model runs on that model only, so that
// the budgets stay the capacity's. A fractional job counts as held by the
// idle GPUs (it may fit beside others; placement says). A CPU-only job
// takes no GPU budget and is admitted on no model.
func (p *preemptor) admit(j *Job, milli int64) (hwmodel.ModelID, bool) {
	if milli == 0 {
		return 0, true
	}
	whole := j.Req.GPUMilli >= hwmodel.MilliPerGPU
	first, found := hwmodel.ModelID(0), false
	for m := range numModels() {
		id := hwmodel.ModelID(m)
		if p.present&hwmodel.Of(id) == 0 || !j.Req.Models.Accepts(id) || p.budget[m] < milli {
			continue
		}
		if !whole || p.idle[m] >= milli {
			p.take(id, milli)
			if whole {
				p.idle[m] -= milli
			} else {
				p.fracAdmitted = true
			}
			return id, true
		}
		if !found {
			first, found = id, true
		}
	}
	if found {
		p.take(first, milli)
		p.blocked = append(p.blocked, j.ID)
		p.blockedModels |= hwmodel.Of(first)
	}
	return first, found
}

// start places queued job id for request r (its own, or narrowed to one
// model) now and decides its Start; false if it does not fit now.
func (p *preemptor) start(v View, c hwmodel.ClusterView, id JobID, r hwmodel.Request) bool {
	j := v.Job(id)
	need := 1
	if j.Req.GPUs > 1 {
		need = min(j.Req.GPUs, max(c.NumNodes(), 1))
	}
	if cap(p.slab)-len(p.slab) < need {
		p.slab = make(hwmodel.Placement, 0, max(slabShares, need))
	}
	pl, ok := p.placer.Place(p.slab[len(p.slab):len(p.slab)], c, r)
	if !ok || len(pl) == 0 || v.Reserve(pl) != nil {
		return false
	}
	p.slab = p.slab[:len(p.slab)+len(pl)]
	pj := &p.jobs[id]
	p.queue.delete(pj.key)
	pj.state = pStarting
	pj.start = p.now
	pj.milli = needMilli(j.Req)
	pj.model = c.NodeModel(pl[0].Node)
	p.addRunning(v, id, true)
	p.ds = append(p.ds, Decision{Kind: Start, Job: id, Placement: pl})
	return true
}

// fill starts, in key order, queued jobs that fit now (at most depth
// visited), whatever their budget: capacity that admitted jobs cannot use
// is not left idle. Runs of jobs too large for what is idle are stepped
// over a leaf at a time.
func (p *preemptor) fill(v View, c hwmodel.ClusterView) {
	p.tot.update(c)
	p.hope = hope{
		freeMilli: int64(c.TotalGPUs())*hwmodel.MilliPerGPU - c.AllocatedMilli(),
		idle:      int32(c.FreeWholeGPUsAccepted(hwmodel.AnyModel)),
		gangAbove: int32(p.tot.minNodeGPUs),
	}
	for p.hope.nodeIdle < p.hope.idle && c.HasNodeWithIdleGPUs(hwmodel.AnyModel, int(p.hope.nodeIdle)+1) {
		p.hope.nodeIdle++
	}
	p.cur.reset()
	for visited := 0; visited < p.depth; visited++ {
		// Starting jobs only takes capacity, so what could not fit
		// before one starts cannot fit after.
		if !p.plain {
			if n := p.cur.skip(&p.hope); n > 0 {
				visited += n - 1
				continue
			}
		}
		it, ok := p.cur.next()
		if !ok {
			return
		}
		if pj := &p.jobs[it.id]; pj.state == pQueued && !pj.stuck {
			if p.start(v, c, it.id, v.Job(it.id).Req) {
				p.hopeAfterStart(c, pj.milli)
			}
		}
	}
}

// hopeAfterStart narrows fill's hope by a job that started.
func (p *preemptor) hopeAfterStart(c hwmodel.ClusterView, milli int64) {
	h := &p.hope
	h.freeMilli -= milli
	h.idle = int32(c.FreeWholeGPUsAccepted(hwmodel.AnyModel))
	for h.nodeIdle > 0 && !c.HasNodeWithIdleGPUs(hwmodel.AnyModel, int(h.nodeIdle)) {
		h.nodeIdle--
	}
}

// nextQueued is the walk's next queued job, after stepping over (and
// counting as visited) runs of jobs that no model's budget has room for:
// the walk would visit them to no effect, and budgets only shrink as it
// goes on.
func (p *preemptor) nextQueued(visited *int) (qitem, bool) {
	most := int64(0)
	for _, b := range p.budget {
		most = max(most, b)
	}
	gpus := int32(min(most/hwmodel.MilliPerGPU, math.MaxInt32))
	p.hope = hope{freeMilli: most, idle: gpus, nodeIdle: gpus}
	for !p.plain && *visited < p.depth {
		n := p.cur.skip(&p.hope)
		if n == 0 {
			break
		}
		*visited += n
	}
	return p.cur.next()
}
