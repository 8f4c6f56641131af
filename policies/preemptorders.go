package policies

import (
	"container/heap"
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// The preemptive orders: each gives the preemptor (preemptive.go) its
// keys, lowest first, for queued and for running jobs.

// MaxThresholds bounds the service thresholds of las and tiresias: at
// most MaxThresholds+1 queues.
const MaxThresholds = 7

// Default service thresholds: tiresias' one threshold of 16 GPU-hours (two
// queues, as the Pollux artifact runs it); las' queues double from one
// hour of service.
var (
	DefaultTiresiasThresholds = []Time{16 * hwmodel.Hour}
	DefaultLASThresholds      = []Time{hwmodel.Hour, 2 * hwmodel.Hour, 4 * hwmodel.Hour, 8 * hwmodel.Hour, 16 * hwmodel.Hour}
)

// DefaultQuantum is gandiva's time slice.
const DefaultQuantum = 30 * hwmodel.Minute

// lasOrder is least attained service over K discretised queues: las
// measures service in wall time running, tiresias (two-dimensional LAS)
// in GPU-time (running time × GPUs). A job enters queue k when its
// service reaches thresholds[k-1]; queues are served in order and FIFO
// within one, by the time a job entered it (arrival or demotion; a
// preempted job keeps its place). A running job crossing a threshold is
// demoted at the scheduling point at or after the crossing, which the
// order asks its driver for. With promote > 0 (the starvation knob) a
// queued job below the top queue that has waited promote times the wall
// time it has run goes back to the top queue with its service reset.
type lasOrder struct {
	gpuTime    bool
	thresholds []Time
	promote    float64
	// starving holds the queued jobs below the top queue by the time
	// they would be promoted (lazily: an entry is checked when popped).
	starving promoHeap
}

func (o *lasOrder) level(service Time) int8 {
	k := int8(0)
	for _, t := range o.thresholds {
		if service < t {
			break
		}
		k++
	}
	return k
}

func (o *lasOrder) refresh(p *preemptor, v View) {
	for len(o.starving) > 0 && o.starving[0].at <= p.now {
		e := heap.Pop(&o.starving).(promo)
		pj := &p.jobs[e.id]
		if pj.state != pQueued || pj.queuedAt != e.queuedAt || pj.level == 0 {
			continue
		}
		pj.level, pj.service = 0, 0
		p.seq++
		pj.seq = p.seq
		p.rekey(v.Job(e.id), pj)
	}
}

func (o *lasOrder) queuedKey(p *preemptor, j *Job, pj *pjob) qitem {
	if l := o.level(pj.service); l != pj.level || pj.seq == 0 {
		pj.level = l
		p.seq++
		pj.seq = p.seq
	}
	return qitem{a: int64(pj.level), b: pj.seq, id: j.ID}
}

func (o *lasOrder) queued(p *preemptor, j *Job, pj *pjob) {
	if o.promote > 0 && pj.level > 0 {
		at := pj.queuedAt + Time(math.Ceil(o.promote*float64(pj.ran)))
		heap.Push(&o.starving, promo{at: at, id: j.ID, queuedAt: pj.queuedAt})
	}
}

// runningKey: a running job's key changes when its service crosses its
// queue's threshold.
func (o *lasOrder) runningKey(p *preemptor, j *Job, pj *pjob) (qitem, Time) {
	k := qitem{a: int64(pj.level), b: pj.seq, id: j.ID}
	if int(pj.level) >= len(o.thresholds) {
		return k, 0
	}
	left := o.thresholds[pj.level] - p.serviceNow(pj, o.gpuTime)
	if o.gpuTime {
		if pj.milli <= 0 {
			return k, 0
		}
		left = Time(math.Ceil(float64(left) * hwmodel.MilliPerGPU / float64(pj.milli)))
	}
	return k, p.now + max(left, 1)
}

// rekeyed demotes a running job that crossed a threshold to the tail of
// the queue its service is in now.
func (o *lasOrder) rekeyed(p *preemptor, j *Job, pj *pjob) {
	if l := o.level(p.serviceNow(pj, o.gpuTime)); l > pj.level {
		pj.level = l
		p.seq++
		pj.seq = p.seq
	}
}

func (o *lasOrder) current(_ *preemptor, k qitem) qitem { return k }

// wake is the earliest threshold crossing of a running job, or the
// earliest promotion, while jobs wait.
func (o *lasOrder) wake(p *preemptor, v View) Time {
	if p.queue.len() == 0 {
		return 0
	}
	t := p.nextRekey()
	if len(o.starving) > 0 && o.starving[0].at > p.now && (t == 0 || o.starving[0].at < t) {
		t = o.starving[0].at
	}
	return t
}

func (o *lasOrder) mayPreempt(*preemptor, *Job) bool { return true }

// promo is one queued job's promotion time.
type promo struct {
	at, queuedAt Time
	id           JobID
}

// promoHeap orders promotions by time, then job ID.
type promoHeap []promo

func (h promoHeap) Len() int { return len(h) }
func (h promoHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].id < h[j].id
}
func (h promoHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *promoHeap) Push(x any)   { *h = append(*h, x.(promo)) }
func (h *promoHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// srtfOrder is shortest remaining time first on the users' estimates:
// remaining = Estimate − wall time run so far (at least 0), ties going
// to the running job, then by ID. A running job's remaining time only
// shrinks, so keys change only at events: it asks for no wake-ups.
type srtfOrder struct{}

func (srtfOrder) refresh(*preemptor, View) {}

func (srtfOrder) queuedKey(p *preemptor, j *Job, pj *pjob) qitem {
	return qitem{a: int64(max(j.Estimate-pj.ran, 0)), b: 1, id: j.ID}
}

// runningKey: while its estimate lasts, a running job's remaining time
// is Estimate − ran − (now − start), so its tree key is that plus now,
// which time does not change; once the estimate is used up its remaining
// time is 0 and it sorts before those that have some left, by ID.
func (srtfOrder) runningKey(p *preemptor, j *Job, pj *pjob) (qitem, Time) {
	left := j.Estimate - pj.ran
	if left > math.MaxInt64-pj.start {
		return qitem{a: math.MaxInt64, id: j.ID}, 0 // never runs out
	}
	end := pj.start + left
	if end <= p.now {
		return qitem{a: math.MinInt64, id: j.ID}, 0
	}
	return qitem{a: int64(end), id: j.ID}, end
}

func (srtfOrder) rekeyed(*preemptor, *Job, *pjob) {}

func (srtfOrder) current(p *preemptor, k qitem) qitem {
	if k.a == math.MinInt64 {
		k.a = 0
	} else {
		k.a -= int64(p.now)
	}
	return k
}

func (srtfOrder) wake(*preemptor, View) Time       { return 0 }
func (srtfOrder) mayPreempt(*preemptor, *Job) bool { return true }

// priorityPreemptOrder is priority with eviction, as Kubernetes preempts:
// higher priority first; at equal priority running jobs before queued
// ones (a job never evicts one of its own priority), running jobs by
// start (so the most recently started are the victims among equals),
// queued ones by the time they were queued.
type priorityPreemptOrder struct{}

func (priorityPreemptOrder) refresh(*preemptor, View) {}

func (priorityPreemptOrder) queuedKey(p *preemptor, j *Job, pj *pjob) qitem {
	return qitem{f: -float64(j.Priority), a: 1, b: int64(pj.queuedAt), id: j.ID}
}

func (priorityPreemptOrder) runningKey(p *preemptor, j *Job, pj *pjob) (qitem, Time) {
	return qitem{f: -float64(j.Priority), a: 0, b: int64(pj.start), id: j.ID}, 0
}

func (priorityPreemptOrder) rekeyed(*preemptor, *Job, *pjob) {}

func (priorityPreemptOrder) current(_ *preemptor, k qitem) qitem { return k }

func (priorityPreemptOrder) wake(*preemptor, View) Time       { return 0 }
func (priorityPreemptOrder) mayPreempt(*preemptor, *Job) bool { return true }

// gandivaOrder is Gandiva-style time slicing: a running job keeps its GPUs
// for a quantum; after it, it competes with the queued jobs by the time
// its quantum ended against theirs of queueing (round robin), and is
// suspended for a queued job of the same GPU count that waited longer.
type gandivaOrder struct{ quantum Time }

func (gandivaOrder) refresh(*preemptor, View) {}

func (gandivaOrder) queuedKey(p *preemptor, j *Job, pj *pjob) qitem {
	return qitem{a: 1, b: int64(pj.queuedAt), id: j.ID}
}

// runningKey: a running job's key changes when its quantum ends.
func (o gandivaOrder) runningKey(p *preemptor, j *Job, pj *pjob) (qitem, Time) {
	if end := pj.start + o.quantum; p.now < end {
		return qitem{a: 0, b: int64(pj.start), id: j.ID}, end
	}
	return qitem{a: 1, b: int64(pj.start + o.quantum), id: j.ID}, 0
}

func (gandivaOrder) rekeyed(*preemptor, *Job, *pjob) {}

func (gandivaOrder) current(_ *preemptor, k qitem) qitem { return k }

// wake is the earliest end of a running job's quantum while jobs wait.
func (o gandivaOrder) wake(p *preemptor, v View) Time {
	if p.queue.len() == 0 {
		return 0
	}
	return p.nextRekey()
}

// mayPreempt: only for a blocked job of the same GPU count.
func (gandivaOrder) mayPreempt(p *preemptor, victim *Job) bool {
	for _, id := range p.blocked {
		if p.jobs[id].milli == needMilli(victim.Req) {
			return true
		}
	}
	return false
}

var (
	_ preemptOrder = (*lasOrder)(nil)
	_ queueWatcher = (*lasOrder)(nil)
	_ preemptOrder = srtfOrder{}
	_ preemptOrder = priorityPreemptOrder{}
	_ preemptOrder = gandivaOrder{}
)
