package policies

import (
	"github.com/google/btree"

	"github.com/brigadesim/brigade/hwmodel"
)

// qitem is a queued job under a static order key. Which fields a key uses
// depends on the order; unused ones are zero. id is always the last
// tie-breaker, so keys are unique.
type qitem struct {
	f  float64 // priority: the negated static score (ascending = best first)
	a  int64   // FCFS: Submit; SJF: duration
	b  int64   // SJF: Submit
	id JobID
}

// after is the smallest key strictly greater than it: ids are integers and
// the last field of every order.
func (it qitem) after() qitem { it.id++; return it }

func lessFCFS(x, y qitem) bool {
	if x.a != y.a {
		return x.a < y.a
	}
	return x.id < y.id
}

func lessSJF(x, y qitem) bool {
	if x.a != y.a {
		return x.a < y.a
	}
	if x.b != y.b {
		return x.b < y.b
	}
	return x.id < y.id
}

func lessPriority(x, y qitem) bool {
	if x.f != y.f {
		return x.f < y.f
	}
	return x.id < y.id
}

const btreeDegree = 32

// queue is a policy's index of queued jobs. insert and remove are O(log n);
// a walk over the queue in order goes through begin, then next (the next
// job not yet visited in this call) and take (the visited job is being
// started: drop it and account for it).
type queue interface {
	insert(j *Job) qitem // returns the key, which remove needs
	remove(it qitem, j *Job)
	len() int
	begin(v View, tot *clusterTotals)
	next() (qitem, bool)
	take(it qitem, j *Job, milli int64) // milli: the GPU milli its placement holds
}

// keyFunc computes a job's static order key.
type keyFunc func(j *Job) qitem

// cursorBatch bounds how many keys a cursor copies out of its tree at once.
const cursorBatch = 128

// cursor walks a tree in order, one call's walk at a time. It copies keys
// out in batches (2, 4, ... up to cursorBatch), so a long backfill walk
// costs one descent per batch instead of one per job, while a strict call
// that looks at one or two jobs copies only a couple. Deleting keys it has
// already returned is allowed during a walk; inserting is not (nothing is
// inserted while Schedule walks).
type cursor struct {
	t       *btree.BTreeG[qitem]
	buf     []qitem
	pos     int
	want    int
	last    qitem
	started bool
	end     bool
	fill    func(qitem) bool // c.fillOne, bound once
}

func newCursor(t *btree.BTreeG[qitem]) *cursor {
	c := &cursor{t: t, buf: make([]qitem, 0, cursorBatch)}
	c.fill = c.fillOne
	return c
}

func (c *cursor) fillOne(it qitem) bool {
	c.buf = append(c.buf, it)
	return len(c.buf) < c.want
}

func (c *cursor) reset() {
	c.buf, c.pos, c.want, c.started, c.end = c.buf[:0], 0, 2, false, false
}

func (c *cursor) next() (qitem, bool) {
	if c.pos == len(c.buf) {
		if c.end {
			return qitem{}, false
		}
		c.buf, c.pos = c.buf[:0], 0
		if c.started {
			c.t.AscendGreaterOrEqual(c.last.after(), c.fill)
		} else {
			c.t.Ascend(c.fill)
		}
		c.started = true
		c.end = len(c.buf) < c.want
		c.want = min(2*c.want, cursorBatch)
		if len(c.buf) == 0 {
			return qitem{}, false
		}
	}
	it := c.buf[c.pos]
	c.pos++
	c.last = it
	return it, true
}

// treeQueue is one ordered queue (FCFS, SJF, priority).
type treeQueue struct {
	t   *btree.BTreeG[qitem]
	key keyFunc
	cur *cursor
}

func newTreeQueue(less btree.LessFunc[qitem], key keyFunc) *treeQueue {
	t := btree.NewG(btreeDegree, less)
	return &treeQueue{t: t, key: key, cur: newCursor(t)}
}

func (q *treeQueue) insert(j *Job) qitem {
	it := q.key(j)
	q.t.ReplaceOrInsert(it)
	return it
}

func (q *treeQueue) remove(it qitem, _ *Job)        { q.t.Delete(it) }
func (q *treeQueue) len() int                       { return q.t.Len() }
func (q *treeQueue) begin(View, *clusterTotals)     { q.cur.reset() }
func (q *treeQueue) next() (qitem, bool)            { return q.cur.next() }
func (q *treeQueue) take(it qitem, _ *Job, _ int64) { q.t.Delete(it) }

// clusterTotals is a cluster's static capacity, for dominant shares.
type clusterTotals struct {
	c        hwmodel.ClusterView
	n        int
	gpuMilli float64
	cpu      float64
	mem      float64
	present  hwmodel.ModelSet // GPU models the cluster has
}

func (t *clusterTotals) update(c hwmodel.ClusterView) {
	if t.c == c && t.n == c.NumNodes() {
		return
	}
	t.c, t.n = c, c.NumNodes()
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
	t      *btree.BTreeG[qitem]
	cur    *cursor
	live   bool // may still have unvisited jobs in this walk
	weight float64
	gpu    int64 // allocation, from View.Tenants plus this call's starts
	cpu    int64
	mem    int64
	score  float64 // dominant share / weight
}

// fairQueue is weighted dominant-resource fair share across tenants: each
// tenant keeps an FCFS queue, and the next job comes from the tenant with
// queued jobs whose dominant share divided by its weight is smallest (ties
// by tenant index). Shares are read from View.Tenants at the start of a
// call and updated locally as the call starts jobs. A pick is O(tenants)
// plus O(log n) to advance that tenant's queue.
type fairQueue struct {
	ten  []fairTenant
	free *btree.FreeListG[qitem]
	n    int
	tot  *clusterTotals
}

func newFairQueue() *fairQueue {
	return &fairQueue{free: btree.NewFreeListG[qitem](btree.DefaultFreeListSize)}
}

func fairKey(j *Job) qitem { return qitem{a: int64(j.Submit), id: j.ID} }

func (q *fairQueue) tenant(i int) *fairTenant {
	if i < 0 {
		i = 0 // a driver bug; keep the job schedulable rather than lose it
	}
	for len(q.ten) <= i {
		t := btree.NewWithFreeListG(btreeDegree, lessFCFS, q.free)
		q.ten = append(q.ten, fairTenant{t: t, cur: newCursor(t)})
	}
	return &q.ten[i]
}

func (q *fairQueue) insert(j *Job) qitem {
	it := fairKey(j)
	if _, dup := q.tenant(j.Tenant).t.ReplaceOrInsert(it); !dup {
		q.n++
	}
	return it
}

func (q *fairQueue) remove(it qitem, j *Job) {
	if _, ok := q.tenant(j.Tenant).t.Delete(it); ok {
		q.n--
	}
}

func (q *fairQueue) len() int { return q.n }

func (q *fairQueue) begin(v View, tot *clusterTotals) {
	q.tot = tot
	ts := v.Tenants()
	for i := range q.ten {
		t := &q.ten[i]
		t.cur.reset()
		t.live = t.t.Len() > 0
		t.weight, t.gpu, t.cpu, t.mem = 1, 0, 0, 0
		if i < len(ts) {
			if ts[i].Weight > 0 {
				t.weight = ts[i].Weight
			}
			t.gpu, t.cpu, t.mem = ts[i].AllocatedMilliGPU, ts[i].AllocatedCPUMilli, ts[i].AllocatedMemMiB
		}
		t.score = tot.dominant(t.gpu, t.cpu, t.mem) / t.weight
	}
}

func (q *fairQueue) next() (qitem, bool) {
	for {
		pick := -1
		for i := range q.ten {
			if q.ten[i].live && (pick < 0 || q.ten[i].score < q.ten[pick].score) {
				pick = i
			}
		}
		if pick < 0 {
			return qitem{}, false
		}
		t := &q.ten[pick]
		if it, ok := t.cur.next(); ok {
			return it, true
		}
		t.live = false // visited all its jobs in this walk
	}
}

func (q *fairQueue) take(it qitem, j *Job, milli int64) {
	t := q.tenant(j.Tenant)
	if _, ok := t.t.Delete(it); ok {
		q.n--
	}
	t.gpu += milli
	t.cpu += j.Req.CPUMilli
	t.mem += j.Req.MemoryMiB
	t.score = q.tot.dominant(t.gpu, t.cpu, t.mem) / t.weight
}
