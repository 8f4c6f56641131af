package policies

import (
	"fmt"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// kueueJob is what the kueue order keeps per job, by ID.
type kueueJob struct {
	where    uint8 // stNone, stQueued, stWaiting, stStarting, stRunning
	stopping bool  // a Preempt was decided and not yet answered
	cq       int32 // its ClusterQueue (-1: none, or not known yet)
	slot     int32 // the admitted flavor's position in its ClusterQueue (-1: none)
	key      qitem // its pending key while queued
	rkey     qitem // its admitted key while admitted
	use      [NumRes]int64
	pl       hwmodel.Placement // where it runs, from its Start decision
}

// stWaiting: admitted (its quota counted) and waiting for room on the
// nodes of its flavor's model, as a Kueue workload whose pods are
// pending.
const stWaiting = stRunning + 1

// kueueCQ is one ClusterQueue's state: its pending queue, and per flavor
// slot its usage and admitted workloads.
type kueueCQ struct {
	cfg    *ClusterQueue
	cohort int     // index into kueuePolicy.cohorts
	slotOf []int   // flavor index -> slot (position in cfg.Flavors), -1
	q      qtree   // pending: (-priority, queued time, ID)
	wait   qtree   // admitted, waiting for room: the same keys
	cur    qcursor // this call's walk over q
	used   [][NumRes]int64
	adm    []qtree // per slot: admitted, (priority, -admitted time, ID)
	// nom is the job that last preempted for room in this queue, until
	// it is admitted (-1: none): each call tries it first (pre), so the
	// room its victims free goes to it.
	nom JobID
	// Per call: the nominated job still to try, the walk's head, whether
	// the queue is done for this call (StrictFIFO blocked, a preemption
	// issued), and how many inadmissible heads BestEffortFIFO stepped
	// over.
	pre    qitem
	hasPre bool
	// failed remembers heads passed over in this call that fit no flavor
	// and found no victims, while no job was admitted since (gen).
	failed []kueueFail
	gen    uint64
	// The head's place in the admission order (key, and its first
	// fitting flavor slot), for head keyID after keyGen admissions.
	key     kueueOrder
	keySlot int
	keyID   JobID
	keyGen  uint64
	keyPre  bool
	keyOK   bool
	head    qitem
	hasHead bool
	done    bool
	skipped int
}

// front is the job the queue offers next: the nominated one, else the
// walk's head.
func (c *kueueCQ) front() (qitem, bool) {
	if c.hasPre {
		return c.pre, true
	}
	return c.head, c.hasHead
}

// advance moves past the front.
func (c *kueueCQ) advance() {
	if c.hasPre {
		c.hasPre = false
		return
	}
	c.head, c.hasHead = c.cur.next()
}

// kueueFail is a head that could not be admitted nor preempt for: a job
// asking for at least as much of everything, on no more models, of no
// higher priority, cannot either while nothing else changes.
type kueueFail struct {
	use    [NumRes]int64
	models hwmodel.ModelSet
	prio   int
}

// kueueHeld is quota held for a head that preempted.
type kueueHeld struct {
	cq, slot int
	use      [NumRes]int64
}

// kueueCohort is one cohort's pools, per flavor and resource: what its
// ClusterQueues may lend (Σ lendingLimit, or nominal where unset) and how
// much of that is in use (Σ max(0, usage − guaranteed)).
type kueueCohort struct {
	members []int
	pool    [][NumRes]int64
	inUse   [][NumRes]int64
	// lendable is the pool summed over flavors, fair sharing's
	// denominator.
	lendable [NumRes]int64
}

// kueuePolicy is the kueue order (doc.go, "Kueue").
type kueuePolicy struct {
	name    string
	cfg     *Kueue
	placer  Placer
	cqs     []kueueCQ
	cohorts []kueueCohort
	// tenantCQ maps a tenant index to its ClusterQueue (-1: none).
	tenantCQ []int32
	jobs     []kueueJob
	// changes counts changes of usage (charge), so that
	// the memo of failures and the heads' places can tell they are
	// current.
	changes uint64
	// plain drops the memo of failures and the heads' cached places
	// (tests compare the two: they decide the same).
	plain bool
	out   []Decision
	slab  hwmodel.Placement
	// requeue are victims taken back from waiting for room in this call,
	// queued again when it ends (a walk's queue takes no insertion).
	requeue []JobID
	waiting []qitem
	// held is the quota of the heads that preempted in this call, charged
	// until the call ends.
	held []kueueHeld
	// scratch for preemption searches
	cands   []kueueCand
	victims []kueueCand
	saveCQ  [][NumRes]int64
	saveCo  [NumRes]int64
}

// kueueCand is a candidate victim of a preemption.
type kueueCand struct {
	id    JobID
	cq    int
	other bool // from another ClusterQueue of the cohort
	prio  int
	adm   int64 // admitted time
}

// newKueue builds the kueue order over cfg.
func newKueue(label string, placer Placer, cfg *Kueue) (*kueuePolicy, error) {
	if cfg == nil {
		return nil, fmt.Errorf("the kueue order needs Kueue manifests (brigade sim --kueue FILE, or kueue: in a scenario setup)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &kueuePolicy{name: label, cfg: cfg, placer: placer}
	nf := len(cfg.Flavors)
	named := map[string]int{}
	p.cqs = make([]kueueCQ, len(cfg.Queues))
	for i := range cfg.Queues {
		q := &cfg.Queues[i]
		c := &p.cqs[i]
		c.cfg = q
		c.cur.t = &c.q
		c.nom = -1
		c.slotOf = slices.Repeat([]int{-1}, nf)
		for s, fq := range q.Flavors {
			c.slotOf[fq.Flavor] = s
		}
		c.used = make([][NumRes]int64, len(q.Flavors))
		c.adm = make([]qtree, len(q.Flavors))
		k, ok := named[q.Cohort]
		if !ok || q.Cohort == "" {
			// A ClusterQueue without a cohort is a cohort of its own: its
			// pool is its own lendable quota, so what it may use is its
			// nominal quota.
			k = len(p.cohorts)
			p.cohorts = append(p.cohorts, kueueCohort{pool: make([][NumRes]int64, nf), inUse: make([][NumRes]int64, nf)})
			if q.Cohort != "" {
				named[q.Cohort] = k
			}
		}
		c.cohort = k
		co := &p.cohorts[k]
		co.members = append(co.members, i)
		for _, fq := range q.Flavors {
			for r := range NumRes {
				l := lendable(&fq, r)
				co.pool[fq.Flavor][r] += l
				co.lendable[r] += l
			}
		}
	}
	p.saveCQ = make([][NumRes]int64, 0, len(cfg.Queues))
	return p, nil
}

// lendable is what a ClusterQueue lends of resource r on one flavor: its
// lending limit, or all its nominal quota when none is set.
func lendable(fq *Quota, r int) int64 {
	if fq.LendingLimit[r] != NoLimit {
		return fq.LendingLimit[r]
	}
	return fq.Nominal[r]
}

// guaranteed is the part of the nominal quota a ClusterQueue never lends.
func guaranteed(fq *Quota, r int) int64 { return fq.Nominal[r] - lendable(fq, r) }

func (p *kueuePolicy) Name() string { return p.name }

func (p *kueuePolicy) grow(id JobID) {
	for int(id) >= len(p.jobs) {
		p.jobs = append(p.jobs, kueueJob{cq: -1, slot: -1})
	}
}

// usage is what job j counts against a quota: GPU milli, CPU milli and
// memory MiB.
func usage(j *Job) [NumRes]int64 {
	return [NumRes]int64{j.Req.TotalMilli(), j.Req.CPUMilli, j.Req.MemoryMiB}
}

// cqOf is job j's ClusterQueue, by its tenant's LocalQueue (-1: none).
func (p *kueuePolicy) cqOf(v View, j *Job) int {
	if j.Tenant >= len(p.tenantCQ) {
		ts := v.Tenants()
		for t := len(p.tenantCQ); t < len(ts); t++ {
			cq := int32(-1)
			if lq, ok := p.cfg.QueueOf(ts[t].Name); ok {
				cq = int32(p.cfg.Local[lq].Queue)
			}
			p.tenantCQ = append(p.tenantCQ, cq)
		}
	}
	if j.Tenant < 0 || j.Tenant >= len(p.tenantCQ) {
		return -1
	}
	return int(p.tenantCQ[j.Tenant])
}

// enqueue puts j in its ClusterQueue's pending queue, ordered by priority
// (highest first), then the time it entered the queue (Kueue's
// eviction timestamp after a preemption), then ID. A job of no
// ClusterQueue is held: it is never admitted.
func (p *kueuePolicy) enqueue(v View, j *Job) {
	k := &p.jobs[j.ID]
	k.where = stQueued
	k.cq = int32(p.cqOf(v, j))
	if k.cq < 0 {
		return
	}
	k.key = qitem{f: -float64(j.Priority), a: int64(j.Queued), id: j.ID}
	p.cqs[k.cq].q.insert(k.key, qmeta{})
}

// dequeue takes j out of its pending queue.
func (p *kueuePolicy) dequeue(id JobID) {
	k := &p.jobs[id]
	if k.where == stQueued && k.cq >= 0 {
		p.cqs[k.cq].q.delete(k.key)
	}
	k.where = stNone
}

// charge adds (sign +1) or removes (−1) use on slot s of ClusterQueue cq,
// and the cohort's pool in use with it.
func (p *kueuePolicy) charge(cq, s int, use [NumRes]int64, sign int64) {
	p.changes++
	c := &p.cqs[cq]
	fq := &c.cfg.Flavors[s]
	co := &p.cohorts[c.cohort]
	for r := range NumRes {
		g := guaranteed(fq, r)
		before := max(0, c.used[s][r]-g)
		c.used[s][r] += sign * use[r]
		co.inUse[fq.Flavor][r] += max(0, c.used[s][r]-g) - before
	}
}

// admit records job id as admitted on slot s of cq at time now.
func (p *kueuePolicy) admit(id JobID, prio int, cq, s int, use [NumRes]int64, now Time) {
	k := &p.jobs[id]
	k.cq, k.slot, k.use = int32(cq), int32(s), use
	k.rkey = qitem{f: float64(prio), a: -int64(now), id: id}
	p.cqs[cq].adm[s].insert(k.rkey, qmeta{})
	p.charge(cq, s, use, +1)
}

// release undoes admit.
func (p *kueuePolicy) release(id JobID) {
	k := &p.jobs[id]
	if k.slot >= 0 {
		p.cqs[k.cq].adm[k.slot].delete(k.rkey)
		p.charge(int(k.cq), int(k.slot), k.use, -1)
	}
	k.slot, k.stopping = -1, false
}

// absorb brings the queues and usage up to date with the events.
func (p *kueuePolicy) absorb(v View) {
	ev := v.Events()
	for _, rj := range ev.Rejected {
		id := rj.Decision.Job
		if id < 0 || v.Job(id) == nil {
			continue
		}
		p.grow(id)
		k := &p.jobs[id]
		switch rj.Decision.Kind {
		case Start:
			if k.where == stStarting {
				p.release(id)
				p.enqueue(v, v.Job(id))
			}
		case Preempt:
			k.stopping = false
		}
	}
	for _, id := range ev.Started {
		if id < 0 || v.Job(id) == nil {
			continue
		}
		p.grow(id)
		switch k := &p.jobs[id]; k.where {
		case stQueued:
			// Started without this policy deciding it: its flavor is
			// unknown, so it counts against no quota.
			p.dequeue(id)
		case stWaiting:
			p.cqs[k.cq].wait.delete(k.key)
		}
		p.jobs[id].where = stRunning
	}
	for _, id := range ev.Ended {
		if id < 0 {
			continue
		}
		p.grow(id)
		if w := p.jobs[id].where; w == stRunning || w == stStarting {
			p.release(id)
			p.jobs[id].where = stNone
		}
	}
	for _, id := range ev.Queued {
		j := v.Job(id)
		if id < 0 || j == nil {
			continue
		}
		p.grow(id)
		switch k := &p.jobs[id]; k.where {
		case stQueued:
			continue
		case stWaiting:
			p.cqs[k.cq].wait.delete(k.key)
			p.release(id)
		case stRunning, stStarting:
			p.release(id)
		}
		p.enqueue(v, j)
	}
}

// Schedule implements Policy: Kueue's scheduling cycle, repeated until no
// ClusterQueue has a head left to try in this call.
func (p *kueuePolicy) Schedule(v View) []Decision {
	p.out = p.out[:0]
	p.absorb(v)
	for i := range p.cqs {
		c := &p.cqs[i]
		c.cur.reset()
		c.done, c.skipped = false, 0
		c.failed = c.failed[:0]
		c.keyOK = false
		c.head, c.hasHead = c.cur.next()
		c.hasPre = false
		if c.nom >= 0 {
			if k := &p.jobs[c.nom]; k.where == stQueued && int(k.cq) == i {
				c.pre, c.hasPre = k.key, true
			} else {
				c.nom = -1
			}
		}
	}
	// The jobs that preempted go first, so the room their victims freed
	// is theirs; then the admitted jobs waiting for room; then the
	// cycle.
	p.cycle(v, true)
	p.placeWaiting(v)
	p.cycle(v, false)
	for _, h := range p.held {
		p.charge(h.cq, h.slot, h.use, -1)
	}
	p.held = p.held[:0]
	for _, id := range p.requeue {
		p.enqueue(v, v.Job(id))
	}
	p.requeue = p.requeue[:0]
	return p.out
}

// cycle admits, preempts for or passes over the heads of the
// ClusterQueues in Kueue's order until none is left to try in this call;
// with nominated, only the jobs that preempted at an earlier call.
func (p *kueuePolicy) cycle(v View, nominated bool) {
	for {
		best, bestFlavor := -1, -1
		var bestKey kueueOrder
		for i := range p.cqs {
			c := &p.cqs[i]
			for c.hasHead && p.jobs[c.head.id].where != stQueued {
				c.head, c.hasHead = c.cur.next() // the nominated job, admitted
			}
			it, ok := c.front()
			if c.done || !ok || nominated && !c.hasPre {
				continue
			}
			if p.plain || !c.keyOK || c.keyID != it.id || c.keyGen != p.changes || c.keyPre != c.hasPre {
				// The head's place in the order changes only with the head
				// or the usage, so it is computed again then.
				j := v.Job(it.id)
				s, borrows := p.firstFit(i, j)
				c.key = kueueOrder{nominated: c.hasPre, borrows: borrows && s >= 0, prio: j.Priority, queued: j.Queued, cq: i}
				if p.cfg.FairSharing && s >= 0 {
					c.key.share = p.share(i, s, usage(j))
				}
				c.keySlot, c.keyID, c.keyGen, c.keyPre, c.keyOK = s, it.id, p.changes, c.hasPre, true
			}
			if best < 0 || c.key.less(bestKey) {
				best, bestFlavor, bestKey = i, c.keySlot, c.key
			}
		}
		if best < 0 {
			return
		}
		p.try(v, best, bestFlavor)
	}
}

// kueueOrder orders the heads of the ClusterQueues within one cycle: a
// head that preempted at an earlier call first (the room its victims
// freed is its), then those that fit without borrowing, then (with fair
// sharing) the
// lower share after admission, then the higher priority, the earlier
// queued, the ClusterQueue listed first.
type kueueOrder struct {
	nominated bool
	borrows   bool
	share     float64
	prio      int
	queued    Time
	cq        int
}

func (a kueueOrder) less(b kueueOrder) bool {
	switch {
	case a.nominated != b.nominated:
		return a.nominated
	case a.borrows != b.borrows:
		return !a.borrows
	case a.share != b.share:
		return a.share < b.share
	case a.prio != b.prio:
		return a.prio > b.prio
	case a.queued != b.queued:
		return a.queued < b.queued
	}
	return a.cq < b.cq
}

// try admits the head of ClusterQueue i (whose first fitting flavor slot
// is s, −1 for none), preempts for it, or passes it over, and moves the
// queue's walk on.
func (p *kueuePolicy) try(v View, i, s int) {
	c := &p.cqs[i]
	it, _ := c.front()
	j := v.Job(it.id)
	use := usage(j)
	if s >= 0 {
		// Admitted on flavor slot s: its quota is counted from now on,
		// and it starts at once if the flavor's nodes have room.
		c.q.delete(it)
		p.admit(j.ID, j.Priority, i, s, use, v.Now())
		if c.nom == j.ID {
			c.nom = -1
		}
		c.advance()
		if !p.start(v, j) {
			p.jobs[j.ID].where = stWaiting
			c.wait.insert(p.jobs[j.ID].key, qmeta{})
		}
		return
	}
	if !p.plain && c.doomed(j, use, p.changes) {
		p.passOver(c)
		return
	}
	found := false // victims for quota, if not room
	for s := range c.cfg.Flavors {
		if !p.accepts(j, i, s) {
			continue
		}
		victims := p.preemptFor(v, j, i, s, use)
		if len(victims) > 0 {
			found = true
		}
		if len(victims) > 0 && p.roomAfter(v.Cluster(), j, i, s, victims) {
			for _, vc := range victims {
				k := &p.jobs[vc.id]
				if k.where == stWaiting {
					// Admitted but not running: it goes back to its
					// queue without the driver.
					p.cqs[k.cq].wait.delete(k.key)
					p.release(vc.id)
					k.where = stNone
					p.requeue = append(p.requeue, vc.id)
					continue
				}
				k.stopping = true
				p.out = append(p.out, Decision{Kind: Preempt, Job: vc.id})
			}
			// Its quota is held for the rest of the call, as Kueue's cycle
			// does, so that no other head borrows what its victims free.
			p.charge(i, s, use, +1)
			p.held = append(p.held, kueueHeld{i, s, use})
			c.nom = j.ID
			c.done = true // the head waits for its victims to stop
			return
		}
	}
	if !found {
		// Only a failure of quota is remembered: room is not monotone in
		// the request.
		c.noteFailed(j, use, p.changes)
	}
	p.passOver(c)
}

// doomed reports whether a head like j already failed in this call with
// no change of usage since: then it fits nowhere and finds no victims either
// (usage only grew; its candidates are a subset), and is passed over
// without the search.
func (c *kueueCQ) doomed(j *Job, use [NumRes]int64, gen uint64) bool {
	if gen != c.gen {
		c.failed, c.gen = c.failed[:0], gen
		return false
	}
	for _, f := range c.failed {
		if j.Priority <= f.prio && within(j.Req.Models, f.models) &&
			use[0] >= f.use[0] && use[1] >= f.use[1] && use[2] >= f.use[2] {
			return true
		}
	}
	return false
}

// noteFailed remembers a failed head (a few per call).
func (c *kueueCQ) noteFailed(j *Job, use [NumRes]int64, gen uint64) {
	if gen != c.gen {
		c.failed, c.gen = c.failed[:0], gen
	}
	if len(c.failed) < 8 {
		c.failed = append(c.failed, kueueFail{use: use, models: j.Req.Models, prio: j.Priority})
	}
}

// start places admitted job j on the nodes of its flavor's model and
// decides its Start; false when they have no room now.
func (p *kueuePolicy) start(v View, j *Job) bool {
	k := &p.jobs[j.ID]
	cq := &p.cqs[k.cq]
	pl, ok := p.place(v, j, p.cfg.Flavors[cq.cfg.Flavors[k.slot].Flavor].Model)
	if !ok {
		return false
	}
	p.out = append(p.out, Decision{Kind: Start, Job: j.ID, Placement: pl})
	k.where, k.pl = stStarting, pl
	return true
}

// placeWaiting starts the admitted jobs that now have room, in one
// order over every ClusterQueue: priority, then the time they entered
// the queue, then ID.
func (p *kueuePolicy) placeWaiting(v View) {
	p.waiting = p.waiting[:0]
	for i := range p.cqs {
		p.cqs[i].wait.ascend(func(it qitem) bool {
			p.waiting = append(p.waiting, it)
			return true
		})
	}
	slices.SortFunc(p.waiting, func(a, b qitem) int {
		if a.less(b) {
			return -1
		}
		return 1
	})
	for _, it := range p.waiting {
		if p.start(v, v.Job(it.id)) {
			p.cqs[p.jobs[it.id].cq].wait.delete(it)
		}
	}
}

// passOver handles a head that cannot be admitted now: StrictFIFO blocks
// the queue for this call; BestEffortFIFO steps to the next job, at most
// DefaultBackfillDepth times a call.
func (p *kueuePolicy) passOver(c *kueueCQ) {
	if c.hasPre {
		c.hasPre = false // the walk will come to it again
		return
	}
	if c.cfg.Strategy == StrictFIFO || c.skipped >= DefaultBackfillDepth {
		c.done = true
		return
	}
	c.skipped++
	c.advance()
}

// accepts reports whether job j may run on slot s's flavor: its request
// accepts the flavor's GPU model.
func (p *kueuePolicy) accepts(j *Job, cq, s int) bool {
	return j.Req.Models.Accepts(p.cfg.Flavors[p.cqs[cq].cfg.Flavors[s].Flavor].Model)
}

// firstFit is the first flavor slot of ClusterQueue cq where j fits in
// quota, borrowing if it must, and whether it borrows there; −1 if none.
func (p *kueuePolicy) firstFit(cq int, j *Job) (int, bool) {
	use := usage(j)
	for s := range p.cqs[cq].cfg.Flavors {
		if p.accepts(j, cq, s) && p.fits(cq, s, use, true) {
			return s, !p.underNominal(cq, s, use)
		}
	}
	return -1, false
}

// fits reports whether use fits on slot s of ClusterQueue cq: for each
// resource the queue covers, within what it may use: its unused
// guaranteed quota plus what its cohort's pool has left, capped by
// nominal + borrowingLimit, and without borrow also within its nominal
// quota.
func (p *kueuePolicy) fits(cq, s int, use [NumRes]int64, borrow bool) bool {
	c := &p.cqs[cq]
	fq := &c.cfg.Flavors[s]
	co := &p.cohorts[c.cohort]
	for r := range NumRes {
		if !fq.Covered[r] || use[r] == 0 {
			continue
		}
		u := c.used[s][r]
		if !borrow && u+use[r] > fq.Nominal[r] {
			return false
		}
		avail := max(0, guaranteed(fq, r)-u) + co.pool[fq.Flavor][r] - co.inUse[fq.Flavor][r]
		if fq.BorrowingLimit[r] != NoLimit {
			avail = min(avail, fq.Nominal[r]+fq.BorrowingLimit[r]-u)
		}
		if use[r] > avail {
			return false
		}
	}
	return true
}

// underNominal reports whether use added to ClusterQueue cq's usage on
// slot s stays within its nominal quota of every resource it covers.
func (p *kueuePolicy) underNominal(cq, s int, use [NumRes]int64) bool {
	c := &p.cqs[cq]
	fq := &c.cfg.Flavors[s]
	for r := range NumRes {
		if fq.Covered[r] && use[r] > 0 && c.used[s][r]+use[r] > fq.Nominal[r] {
			return false
		}
	}
	return true
}

// borrowing reports whether ClusterQueue cq uses more than its nominal
// quota of some resource on slot s.
func (p *kueuePolicy) borrowing(cq, s int) bool {
	c := &p.cqs[cq]
	fq := &c.cfg.Flavors[s]
	for r := range NumRes {
		if fq.Covered[r] && c.used[s][r] > fq.Nominal[r] {
			return true
		}
	}
	return false
}

// share is ClusterQueue cq's weighted share once use is added on slot s:
// the largest, over resources, of what it borrows (usage above nominal,
// summed over its flavors) over its cohort's lendable total, divided by
// its weight.
func (p *kueuePolicy) share(cq, s int, use [NumRes]int64) float64 {
	c := &p.cqs[cq]
	co := &p.cohorts[c.cohort]
	w := c.cfg.Weight
	best := 0.0
	for r := range NumRes {
		if co.lendable[r] == 0 {
			continue
		}
		var borrowed int64
		for t, fq := range c.cfg.Flavors {
			if !fq.Covered[r] {
				continue
			}
			u := c.used[t][r]
			if t == s {
				u += use[r]
			}
			borrowed += max(0, u-fq.Nominal[r])
		}
		best = max(best, float64(borrowed)/float64(co.lendable[r]))
	}
	switch {
	case best == 0:
		return 0
	case w == 0:
		return math.Inf(1)
	}
	return best / w
}

// place finds room for j on nodes of model m, cut from the slab, and
// reserves it.
func (p *kueuePolicy) place(v View, j *Job, m hwmodel.ModelID) (hwmodel.Placement, bool) {
	c := v.Cluster()
	r := j.Req
	r.Models = hwmodel.Of(m)
	need := 1
	if r.GPUs > 1 {
		need = min(r.GPUs, max(c.NumNodes(), 1))
	}
	if cap(p.slab)-len(p.slab) < need {
		p.slab = make(hwmodel.Placement, 0, max(slabShares, need))
	}
	pl, ok := p.placer.Place(p.slab[len(p.slab):len(p.slab)], c, r)
	if !ok || len(pl) == 0 || v.Reserve(pl) != nil {
		return nil, false
	}
	n := len(pl)
	if spare := p.slab[len(p.slab):cap(p.slab)]; len(spare) >= n && &spare[0] == &pl[0] {
		p.slab = p.slab[:len(p.slab)+n]
	}
	return pl[:n:n], true
}
