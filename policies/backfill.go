package policies

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

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
