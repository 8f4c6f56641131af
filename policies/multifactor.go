package policies

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// The multifactor order: Slurm's priority/multifactor plugin as Brigade
// can state it. A job's priority is the weighted sum of factors in [0, 1]:
//
//	P = w_age·age + w_fs·fairshare + w_size·jobsize + w_qos·qos
//
//   - age = min(now − Queued, MaxAge) / MaxAge: the wait since the job
//     last became eligible (entered the queue), as Slurm counts age from
//     eligibility.
//   - fairshare = 2^(−U/S), the classic formula: U is the tenant's decayed
//     GPU usage as a share of all tenants' decayed usage (0 when nobody
//     has used anything), S its weight as a share of all tenants' weights
//     (a non-positive weight counts as 1, as in the fair order). Slurm's
//     default is now Fair Tree, which ranks associations down an account
//     tree; Brigade's tenants are one flat level of accounts, for which
//     the classic formula is well defined and needs no tree, so it is the
//     one used.
//   - jobsize = the job's GPU milli over the cluster's (capped at 1), or
//     1 minus that with FavorSmall; a CPU-only job has size 0.
//   - qos = the job's Priority normalised over the priorities this policy
//     has seen in the run: (p − lo)/(hi − lo), lo and hi the smallest and
//     largest seen, 0 included (so non-negative priorities give p/hi, as
//     Slurm divides a QOS priority by the largest); 0 when hi = lo.
//
// Slurm's partition factor is left out: Brigade's cluster is one
// partition, where that factor is the same for every job and changes no
// order.
//
// Usage is GPU-seconds, integrated exactly between calls: each tenant's
// allocation is constant between two calls (ends bring a call; starts
// are applied just after one), so over dt it adds a·H/ln 2·(1 − 2^(−dt/H))
// to a usage that decays to U·2^(−dt/H), H the half-life, the closed form
// of the continuous decay; without decay it adds a·dt. The allocation of
// an interval is View.Tenants() at the call that opened it plus the GPU
// milli that call's starts took, less those the driver then rejected.
//
// As Slurm recomputes every PriorityCalcPeriod, the order is rebuilt only
// when CalcPeriod has passed since the last rebuild (O(n log n): every
// queued job's priority, a sort, then the tree refilled behind its last
// key); in between a job entering the queue gets its priority when the
// call begins, from the factors as of the last rebuild (its age then,
// 0 when it entered since, as Slurm gives a new job), and is inserted in
// O(log n). Every key is evaluated at the same instant, so with only the
// age weight the order is that of queue entry, FCFS's for jobs queued
// once. Usage is integrated at every call in O(tenants).

// Defaults of the multifactor order, Slurm's.
const (
	DefaultMaxAge     = 7 * hwmodel.Day
	DefaultHalfLife   = 7 * hwmodel.Day
	DefaultCalcPeriod = 5 * hwmodel.Minute
)

// Multifactor configures the "multifactor" order. The zero value is
// Slurm's default configuration: every weight 0 (all priorities equal,
// so jobs go by ID), MaxAge, HalfLife and CalcPeriod at their defaults.
type Multifactor struct {
	// Age, Fairshare, JobSize and QOS weigh the factors (Slurm's
	// PriorityWeight*): finite and >= 0; 0 leaves a factor out.
	Age, Fairshare, JobSize, QOS float64
	// MaxAge is the wait at which the age factor reaches 1; 0 means
	// DefaultMaxAge.
	MaxAge Time
	// HalfLife is the half-life of the usage decay; 0 means
	// DefaultHalfLife, negative no decay (Slurm's 0).
	HalfLife Time
	// CalcPeriod is how often the priorities are recomputed; 0 means
	// DefaultCalcPeriod, negative at every call.
	CalcPeriod Time
	// FavorSmall makes the job-size factor favour small jobs.
	FavorSmall bool
}

// canonical maps each default to its zero, so equal configurations
// compare equal.
func (m Multifactor) canonical() Multifactor {
	if m.MaxAge == DefaultMaxAge {
		m.MaxAge = 0
	}
	if m.HalfLife == DefaultHalfLife {
		m.HalfLife = 0
	}
	if m.CalcPeriod == DefaultCalcPeriod {
		m.CalcPeriod = 0
	}
	if m.HalfLife < 0 {
		m.HalfLife = -1
	}
	if m.CalcPeriod < 0 {
		m.CalcPeriod = -1
	}
	return m
}

func (m Multifactor) check() error {
	for _, w := range []float64{m.Age, m.Fairshare, m.JobSize, m.QOS} {
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("multifactor weights must be finite and >= 0, got %v", w)
		}
	}
	if m.MaxAge < 0 {
		return fmt.Errorf("multifactor max age must be >= 0, got %v s", m.MaxAge.Seconds())
	}
	return nil
}

// Where a job is, as the multifactor queue knows it.
const (
	mfNone  uint8 = iota
	mfFresh       // entered since the last call began: no priority yet
	mfTree        // in the tree under key[id]
)

// mfTake is one start of the current call: its tenant and GPU milli.
type mfTake struct {
	id     JobID
	tenant int
	milli  int64
}

// mfQueue is the multifactor order.
type mfQueue struct {
	cfg            Multifactor
	maxAge, period Time
	halfLife       float64 // seconds; 0 for no decay

	t     qtree
	cur   qcursor
	state []uint8 // per job ID
	key   []qitem
	meta  []qmeta
	fresh []JobID
	n     int

	// The books: per tenant, decayed usage in GPU-seconds, the GPU milli
	// held since the last call, and the fair-share factor of the last
	// rebuild.
	usage []float64
	alloc []int64
	fs    []float64
	takes []mfTake
	last  Time // the last call's time
	ticks bool

	calcAt     Time // the last rebuild
	calculated bool
	lo, hi     int // the priority range seen
	totMilli   float64
	sorted     []qitem
}

func newMFQueue(o Options) *mfQueue {
	m := o.Multifactor
	q := &mfQueue{cfg: m, maxAge: m.MaxAge, period: m.CalcPeriod}
	if q.maxAge == 0 {
		q.maxAge = DefaultMaxAge
	}
	switch {
	case m.HalfLife == 0:
		q.halfLife = DefaultHalfLife.Seconds()
	case m.HalfLife > 0:
		q.halfLife = m.HalfLife.Seconds()
	}
	switch {
	case q.period == 0:
		q.period = DefaultCalcPeriod
	case q.period < 0:
		q.period = 0
	}
	q.cur.t = &q.t
	return q
}

func (q *mfQueue) grow(id JobID) {
	if int(id) < len(q.state) {
		return
	}
	n := int(id) + 1
	q.state = slices.Grow(q.state, n-len(q.state))[:n]
	q.state = q.state[:cap(q.state)]
	q.key = slices.Grow(q.key, len(q.state)-len(q.key))[:len(q.state)]
	q.meta = slices.Grow(q.meta, len(q.state)-len(q.meta))[:len(q.state)]
}

// insert notes j as fresh: its priority needs the time and the books,
// which the next begin has.
func (q *mfQueue) insert(j *Job, m qmeta) qitem {
	q.grow(j.ID)
	q.meta[j.ID] = m
	if q.state[j.ID] == mfNone {
		q.state[j.ID] = mfFresh
		q.fresh = append(q.fresh, j.ID)
		q.n++
	}
	return qitem{id: j.ID}
}

func (q *mfQueue) remove(_ qitem, j *Job) {
	if int(j.ID) >= len(q.state) {
		return
	}
	switch q.state[j.ID] {
	case mfTree:
		q.t.delete(q.key[j.ID])
	case mfNone:
		return
	}
	q.state[j.ID] = mfNone // a fresh one stays in q.fresh, skipped by begin
	q.n--
}

func (q *mfQueue) len() int { return q.n }

// tick integrates usage up to now; the scheduler calls it at every call,
// queued jobs or not.
func (q *mfQueue) tick(v View) {
	now := v.Now()
	ts := v.Tenants()
	for len(q.usage) < len(ts) {
		q.usage = append(q.usage, 0)
		q.alloc = append(q.alloc, 0)
	}
	for _, r := range v.Events().Rejected {
		if r.Decision.Kind != Start {
			continue
		}
		for _, tk := range q.takes {
			if tk.id == r.Decision.Job && tk.tenant < len(q.alloc) {
				q.alloc[tk.tenant] -= tk.milli
			}
		}
	}
	q.takes = q.takes[:0]
	if q.ticks && now > q.last {
		dt := (now - q.last).Seconds()
		for i, a := range q.alloc {
			q.usage[i] = decayed(q.usage[i], float64(a)/hwmodel.MilliPerGPU, dt, q.halfLife)
		}
	}
	q.ticks, q.last = true, now
	for i := range q.alloc {
		q.alloc[i] = 0
		if i < len(ts) {
			q.alloc[i] = ts[i].AllocatedMilliGPU
		}
	}
}

// decayed is usage u (GPU-seconds) after dt seconds holding a GPUs, with
// half-life h seconds (0: no decay): u·2^(−dt/h) + a·∫₀^dt 2^(−(dt−s)/h) ds.
func decayed(u, a, dt, h float64) float64 {
	if h == 0 {
		return u + a*dt
	}
	x := -dt * math.Ln2 / h
	return u*math.Exp(x) - a*h/math.Ln2*math.Expm1(x)
}

// fairshare is the classic factor 2^(−U/S) of each tenant, from the usage
// books and the tenants' weights.
func (q *mfQueue) fairshare(ts []Tenant) {
	q.fs = q.fs[:0]
	var totU, totW float64
	for i := range ts {
		totW += tenantWeight(ts[i])
		if i < len(q.usage) {
			totU += q.usage[i]
		}
	}
	for i := range ts {
		u := 0.0
		if i < len(q.usage) && totU > 0 {
			u = q.usage[i] / totU
		}
		q.fs = append(q.fs, math.Exp2(-u/(tenantWeight(ts[i])/totW)))
	}
}

func tenantWeight(t Tenant) float64 {
	if t.Weight > 0 {
		return t.Weight
	}
	return 1
}

// mfFactors are a job's four factors, each in [0, 1].
type mfFactors struct{ Age, Fairshare, JobSize, QOS float64 }

// factors computes job j's factors at now from the last rebuild's
// fair-share factors and the priority range seen.
func (q *mfQueue) factors(j *Job, now Time) mfFactors {
	var f mfFactors
	if w := now - j.Queued; w > 0 {
		f.Age = float64(min(w, q.maxAge)) / float64(q.maxAge)
	}
	f.Fairshare = 1
	if j.Tenant >= 0 && j.Tenant < len(q.fs) {
		f.Fairshare = q.fs[j.Tenant]
	}
	if q.totMilli > 0 && j.Req.GPUs > 0 {
		f.JobSize = min(1, float64(j.Req.TotalMilli())/q.totMilli)
	}
	if q.cfg.FavorSmall {
		f.JobSize = 1 - f.JobSize
	}
	if q.hi > q.lo {
		f.QOS = float64(j.Priority-q.lo) / float64(q.hi-q.lo)
	}
	return f
}

// priority is the weighted sum of f. A NaN (an infinite tenant weight
// leaves a share of 0/0) counts as 0, so that the tree's keys stay
// ordered.
func (m Multifactor) priority(f mfFactors) float64 {
	p := m.Age*f.Age + m.Fairshare*f.Fairshare + m.JobSize*f.JobSize + m.QOS*f.QOS
	if math.IsNaN(p) {
		return 0
	}
	return p
}

func (q *mfQueue) begin(v View, tot *clusterTotals) {
	now := v.Now()
	q.totMilli = tot.gpuMilli
	for _, id := range q.fresh {
		if j := v.Job(id); j != nil && q.state[id] == mfFresh {
			q.lo, q.hi = min(q.lo, j.Priority), max(q.hi, j.Priority)
		}
	}
	if !q.calculated || now-q.calcAt >= q.period {
		q.rebuild(v, now)
	} else {
		for _, id := range q.fresh {
			j := v.Job(id)
			if j == nil || q.state[id] != mfFresh {
				continue
			}
			// Its age is taken at the last rebuild, as all the others'
			// are: 0 for a job that entered since, as Slurm gives a new
			// job, so it never overtakes one that waited longer.
			q.key[id] = qitem{f: -q.cfg.priority(q.factors(j, q.calcAt)), id: id}
			q.state[id] = mfTree
			q.t.insert(q.key[id], q.meta[id])
		}
	}
	q.fresh = q.fresh[:0]
	q.cur.reset()
}

// rebuild recomputes every queued job's priority and refills the tree in
// the new order.
func (q *mfQueue) rebuild(v View, now Time) {
	q.calculated, q.calcAt = true, now
	q.fairshare(v.Tenants())
	q.sorted = q.sorted[:0]
	q.t.ascend(func(it qitem) bool {
		q.sorted = append(q.sorted, it)
		return true
	})
	for _, id := range q.fresh {
		if q.state[id] == mfFresh {
			q.state[id] = mfTree // a second entry of it in fresh is skipped
			q.sorted = append(q.sorted, qitem{id: id})
		}
	}
	for i, it := range q.sorted {
		j := v.Job(it.id)
		if j == nil {
			q.sorted[i].f = math.Inf(1) // cannot happen for a queued job; keep it last
			continue
		}
		q.sorted[i].f = -q.cfg.priority(q.factors(j, now))
	}
	slices.SortFunc(q.sorted, func(a, b qitem) int {
		if c := cmp.Compare(a.f, b.f); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	q.t.reset()
	for _, it := range q.sorted {
		q.key[it.id], q.state[it.id] = it, mfTree
		q.t.insert(it, q.meta[it.id]) // ascending: each goes behind the last
	}
}

func (q *mfQueue) next() (qitem, bool) { return q.cur.next() }
func (q *mfQueue) skip(h *hope) int    { return q.cur.skip(h) }

func (q *mfQueue) take(_ qitem, j *Job, milli int64) {
	q.remove(qitem{}, j)
	q.takes = append(q.takes, mfTake{j.ID, j.Tenant, milli})
	if j.Tenant >= 0 && j.Tenant < len(q.alloc) {
		q.alloc[j.Tenant] += milli
	}
}

// clockedQueue is a queue that follows time at every call, whether or not
// any job is queued (the multifactor order's usage books).
type clockedQueue interface{ tick(v View) }

var _ clockedQueue = (*mfQueue)(nil)
