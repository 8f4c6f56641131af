package policies

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// qitem is a queued job under a static order key, compared by (f, a, b,
// id) (qitem.less). Which fields a key uses depends on the order; unused
// ones are zero. id is always the last tie-breaker, so keys are unique.
type qitem struct {
	f  float64 // priority: the negated static score (ascending = best first)
	a  int64   // FCFS: Submit; SJF: duration
	b  int64   // SJF: Submit
	id JobID
}

// queue is a policy's index of queued jobs. insert and remove are O(log n)
// (O(1) for the FCFS pattern, see qtree); a walk over the queue in order
// goes through begin, then next (the next job not yet visited in this
// call) and take (the visited job is being started: drop it and account
// for it), and skip (step over jobs none of which could start).
type queue interface {
	insert(j *Job, m qmeta) qitem // returns the key, which remove needs
	remove(it qitem, j *Job)
	len() int
	begin(v View, tot *clusterTotals)
	next() (qitem, bool)
	// skip steps over jobs that next would visit next and none of which
	// could start, by h (qcursor.skip), and returns how many it stepped
	// over (0 when it did not).
	skip(h *hope) int
	take(it qitem, j *Job, milli int64) // milli: the GPU milli its placement holds
}

// keyFunc computes a job's static order key.
type keyFunc func(j *Job) qitem

// treeQueue is one ordered queue (FCFS, SJF, priority).
type treeQueue struct {
	t   qtree
	key keyFunc
	cur qcursor
}

func newTreeQueue(key keyFunc) *treeQueue {
	q := &treeQueue{key: key}
	q.cur.t = &q.t
	return q
}

func (q *treeQueue) insert(j *Job, m qmeta) qitem {
	it := q.key(j)
	q.t.insert(it, m)
	return it
}

func (q *treeQueue) remove(it qitem, _ *Job)        { q.t.delete(it) }
func (q *treeQueue) len() int                       { return q.t.len() }
func (q *treeQueue) begin(View, *clusterTotals)     { q.cur.reset() }
func (q *treeQueue) next() (qitem, bool)            { return q.cur.next() }
func (q *treeQueue) skip(h *hope) int               { return q.cur.skip(h) }
func (q *treeQueue) take(it qitem, _ *Job, _ int64) { q.t.delete(it) }

// clusterTotals is a cluster's static capacity, for dominant shares.
type clusterTotals struct {
	c        hwmodel.ClusterView
	n        int
	gpuMilli float64
	cpu      float64
	mem      float64
	present  hwmodel.ModelSet // GPU models the cluster has
	// minNodeGPUs is the least, over the models present, of the GPUs of
	// the model's largest node: a request for at most this many GPUs that
	// accepts some present model is never a gang.
	minNodeGPUs int
	// gen counts the updates that recomputed the totals, so that a score
	// computed from them can tell it is still current.
	gen uint64
}

func (t *clusterTotals) update(c hwmodel.ClusterView) {
	if t.c == c && t.n == c.NumNodes() {
		return
	}
	t.c, t.n = c, c.NumNodes()
	t.gen++
	t.gpuMilli = float64(c.TotalGPUs()) * hwmodel.MilliPerGPU
	var cpu, mem int64
	t.present = 0
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		cpu += n.CPUMilli
		mem += n.MemoryMiB
		if n.GPUs > 0 {
			t.present |= hwmodel.Of(n.Model)
		}
	}
	t.cpu, t.mem = float64(cpu), float64(mem)
	t.minNodeGPUs = 0
	for m := range numModels() {
		if id := hwmodel.ModelID(m); t.present.Accepts(id) {
			if n := c.MaxNodeGPUs(hwmodel.Of(id)); t.minNodeGPUs == 0 || n < t.minNodeGPUs {
				t.minNodeGPUs = n
			}
		}
	}
}

// dominant is the largest of the three shares, skipping empty resources.
func (t *clusterTotals) dominant(gpu, cpu, mem int64) float64 {
	d := 0.0
	if t.gpuMilli > 0 {
		d = max(d, float64(gpu)/t.gpuMilli)
	}
	if t.cpu > 0 {
		d = max(d, float64(cpu)/t.cpu)
	}
	if t.mem > 0 {
		d = max(d, float64(mem)/t.mem)
	}
	return d
}

// fairTenant is one tenant's FCFS queue and its state during a walk.
type fairTenant struct {
	t      *qtree
	cur    qcursor
	live   bool // may still have unvisited jobs in this walk
	weight float64
	gpu    int64 // allocation, from View.Tenants plus this call's starts
	cpu    int64
	mem    int64
	score  float64 // dominant share / weight
	// scored: score is that of the books and totals noted here, which
	// most calls find unchanged (its divisions are then saved).
	scored           bool
	sWeight          float64
	sGPU, sCPU, sMem int64
	sGen             uint64
}

// fairQueue is weighted dominant-resource fair share across tenants: each
// tenant keeps an FCFS queue, and the next job comes from the tenant with
// queued jobs whose dominant share divided by its weight is smallest (ties
// by tenant index). Shares are read from View.Tenants at the start of a
// call and updated locally as the call starts jobs. A pick is O(tenants)
// plus O(log n) to advance that tenant's queue.
type fairQueue struct {
	ten []*fairTenant
	n   int
	tot *clusterTotals
}

func newFairQueue() *fairQueue { return &fairQueue{} }

func fairKey(j *Job) qitem { return qitem{a: int64(j.Submit), id: j.ID} }

func (q *fairQueue) tenant(i int) *fairTenant {
	if i < 0 {
		i = 0 // a driver bug; keep the job schedulable rather than lose it
	}
	for len(q.ten) <= i {
		t := &fairTenant{t: new(qtree)}
		t.cur.t = t.t
		q.ten = append(q.ten, t)
	}
	return q.ten[i]
}

func (q *fairQueue) insert(j *Job, m qmeta) qitem {
	it := fairKey(j)
	if q.tenant(j.Tenant).t.insert(it, m) {
		q.n++
	}
	return it
}

func (q *fairQueue) remove(it qitem, j *Job) {
	if q.tenant(j.Tenant).t.delete(it) {
		q.n--
	}
}

func (q *fairQueue) len() int { return q.n }

func (q *fairQueue) begin(v View, tot *clusterTotals) {
	q.tot = tot
	ts := v.Tenants()
	for i, t := range q.ten {
		t.cur.reset()
		t.live = t.t.len() > 0
		t.weight, t.gpu, t.cpu, t.mem = 1, 0, 0, 0
		if i < len(ts) {
			if ts[i].Weight > 0 {
				t.weight = ts[i].Weight
			}
			t.gpu, t.cpu, t.mem = ts[i].AllocatedMilliGPU, ts[i].AllocatedCPUMilli, ts[i].AllocatedMemMiB
		}
		if !t.scored || t.sGen != tot.gen || t.sWeight != t.weight || t.sGPU != t.gpu || t.sCPU != t.cpu || t.sMem != t.mem {
			t.rescore(tot)
		}
	}
}

// pick is the live tenant that the walk takes its next job from, with
// that job ready at its cursor; nil when every tenant is done.
func (q *fairQueue) pick() *fairTenant {
	for {
		var p *fairTenant
		for _, t := range q.ten {
			if t.live && (p == nil || t.score < p.score) {
				p = t
			}
		}
		if p == nil || p.cur.sync() {
			return p
		}
		p.live = false // visited all its jobs in this walk
	}
}

func (q *fairQueue) next() (qitem, bool) {
	if t := q.pick(); t != nil {
		return t.cur.next()
	}
	return qitem{}, false
}

// skip steps over jobs of the tenant next would take from: its score
// stays the lowest until the walk starts a job, so next would visit them
// in a row.
func (q *fairQueue) skip(h *hope) int {
	if t := q.pick(); t != nil {
		return t.cur.skip(h)
	}
	return 0
}

func (q *fairQueue) take(it qitem, j *Job, milli int64) {
	t := q.tenant(j.Tenant)
	if t.t.delete(it) {
		q.n--
	}
	t.gpu += milli
	t.cpu += j.Req.CPUMilli
	t.mem += j.Req.MemoryMiB
	t.rescore(q.tot)
}

// rescore computes the score from the books and notes what it used.
func (t *fairTenant) rescore(tot *clusterTotals) {
	t.score = tot.dominant(t.gpu, t.cpu, t.mem) / t.weight
	t.scored, t.sGen, t.sWeight, t.sGPU, t.sCPU, t.sMem = true, tot.gen, t.weight, t.gpu, t.cpu, t.mem
}
