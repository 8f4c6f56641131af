package policies

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// Data locality in policies: the seed order, whose score weighs a job's
// locality d_ij, and the local option, a locality-aware placement with
// delay scheduling. Both read DataView; without datasets every job's
// locality is 1.

// seedQueue is the seed's order: each job's score w_p·priority +
// w_d·d_i + w_w·hours waited, highest first, then job ID. d_i is the best
// locality the job could have now: 1 when some node holding its dataset
// has room for it (or it reads none), else 0. The waiting term is
// compensation for waiting, as the seed's prose says: it raises the
// score. d_i changes with what is free, so the order is computed afresh
// at every call, O(queue · log queue) plus a scan of the nodes per
// dataset queued.
type seedQueue struct {
	wp, wd, ww float64
	ids        []JobID
	pos        map[JobID]int
	order      []qitem
	k          int
	// local is, per dataset, the nodes that hold it as of call number
	// calls (recomputed when older), kept between calls for its memory.
	local map[uint16]*localNodes
	calls int
}

type localNodes struct {
	nodes []int32
	call  int
}

func newSeedQueue(o Options) *seedQueue {
	return &seedQueue{wp: weight(o.PriorityWeight), wd: weight(o.DataWeight), ww: weight(o.WaitWeightPerHour), pos: map[JobID]int{}}
}

func (q *seedQueue) insert(j *Job, _ qmeta) qitem {
	if _, ok := q.pos[j.ID]; !ok {
		q.pos[j.ID] = len(q.ids)
		q.ids = append(q.ids, j.ID)
	}
	return qitem{id: j.ID}
}

func (q *seedQueue) remove(it qitem, _ *Job) {
	k, ok := q.pos[it.id]
	if !ok {
		return
	}
	last := q.ids[len(q.ids)-1]
	q.ids[k] = last
	q.pos[last] = k
	q.ids = q.ids[:len(q.ids)-1]
	delete(q.pos, it.id)
}

func (q *seedQueue) len() int { return len(q.ids) }

func (q *seedQueue) begin(v View, _ *clusterTotals) {
	dv := dataView(v)
	c := v.Cluster()
	now := v.Now()
	q.calls++
	q.order = q.order[:0]
	for _, id := range q.ids {
		j := v.Job(id)
		if j == nil {
			continue
		}
		score := q.wp*float64(j.Priority) + q.ww*float64(now-j.Queued)/float64(hwmodel.Hour)
		if q.wd != 0 {
			score += q.wd * q.bestLocality(dv, c, j)
		}
		q.order = append(q.order, qitem{f: -score, id: id})
	}
	slices.SortFunc(q.order, func(a, b qitem) int {
		if c := cmp.Compare(a.f, b.f); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	q.k = 0
}

// bestLocality is d_i: 1 when j reads no dataset, or a node holding it
// has room for j now; else 0.
func (q *seedQueue) bestLocality(dv DataView, c hwmodel.ClusterView, j *Job) float64 {
	if dv == nil || j.Dataset == 0 {
		return 1
	}
	if q.local == nil {
		q.local = map[uint16]*localNodes{}
	}
	ln := q.local[j.Dataset]
	if ln == nil {
		ln = &localNodes{call: -1}
		q.local[j.Dataset] = ln
	}
	if ln.call != q.calls {
		ln.nodes, ln.call = ln.nodes[:0], q.calls
		for i := range c.NumNodes() {
			if dv.DataLocality(j, i) == 1 {
				ln.nodes = append(ln.nodes, int32(i))
			}
		}
	}
	for _, i := range ln.nodes {
		if fitsOn(c, &j.Req, int(i)) {
			return 1
		}
	}
	return 0
}

func (q *seedQueue) next() (qitem, bool) {
	for q.k < len(q.order) {
		it := q.order[q.k]
		q.k++
		if _, ok := q.pos[it.id]; ok {
			return it, true
		}
	}
	return qitem{}, false
}

func (q *seedQueue) skip(*hope) int { return 0 }

func (q *seedQueue) take(it qitem, j *Job, _ int64) { q.remove(it, j) }

// fitsOn reports whether request r fits on node i now (a single-node
// request: whole GPUs, a share of one, or none; not MIG).
func fitsOn(c hwmodel.ClusterView, r *hwmodel.Request, i int) bool {
	if r.WantsMIG() || !nodeFits(c, i, r.CPUMilli, r.MemoryMiB) {
		return false
	}
	switch {
	case r.GPUs == 0:
		return true
	case !r.Models.Accepts(c.NodeModel(i)):
		return false
	case r.Fractional():
		for g := range c.NodeGPUs(i) {
			if c.FreeMilli(i, g) >= r.GPUMilli {
				return true
			}
		}
		return false
	}
	return c.FreeWholeGPUs(i) >= r.GPUs
}

// placeLocal places j on the first node (in node order) that holds its
// dataset and has room: O(nodes). Gangs and MIG jobs are not placed
// here.
func (s *scheduler) placeLocal(dv DataView, c hwmodel.ClusterView, j *Job) (hwmodel.Placement, bool) {
	r := &j.Req
	if r.WantsMIG() || r.GPUs > c.MaxNodeGPUs(r.Models) {
		return nil, false
	}
	for i := range c.NumNodes() {
		if dv.DataLocality(j, i) != 1 || !fitsOn(c, r, i) {
			continue
		}
		if cap(s.slab)-len(s.slab) < 1 {
			s.slab = make(hwmodel.Placement, 0, slabShares)
		}
		dst := s.slab[len(s.slab):len(s.slab)]
		sh := hwmodel.Share{Node: i, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}
		switch {
		case r.GPUs == 0:
		case r.Fractional():
			g := 0
			for c.FreeMilli(i, g) < r.GPUMilli {
				g++
			}
			sh.GPUs, sh.Milli = 1<<uint(g), r.GPUMilli
		default:
			sh.GPUs, sh.Milli = idleMask(c, i, r.GPUs), hwmodel.MilliPerGPU
		}
		return append(dst, sh), true
	}
	return nil, false
}

// waitsForData reports whether j, which found no node holding its data,
// should wait for one rather than go remote: delay scheduling, for at
// most LocalDelay since it was queued.
func (s *scheduler) waitsForData(v View, j *Job) bool {
	return s.localDelay > 0 && v.Now()-j.Queued < s.localDelay
}
