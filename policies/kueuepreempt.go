package policies

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// preemptFor returns the admitted workloads whose preemption lets job j
// of ClusterQueue cq fit on slot s, chosen as Kueue chooses them; nil
// when no set of candidates would do. The returned slice is scratch,
// valid until the next call.
//
// Candidates: with withinClusterQueue, the queue's own workloads of lower
// priority (LowerPriority), or also of equal priority that entered the
// queue after j (LowerOrNewerEqualPriority); with reclaimWithinCohort,
// the workloads of the cohort's other ClusterQueues that borrow on the
// flavor (Any), or those of lower priority (LowerPriority). They are
// taken in order (other ClusterQueues first, then lower priority, then
// the most recently admitted, then the higher ID) until j fits; a candidate of
// another ClusterQueue is skipped once that queue no longer borrows.
// Then each victim but the last is given back, last to first, when j
// still fits without it, so only as many are preempted as needed.
//
// Which rule j must fit by follows Kueue: with only its own queue's
// candidates, it may borrow; with borrowWithinCohort (LowerPriority) it
// may borrow, preempting in other queues only below the threshold (the
// maxPriorityThreshold, or j's priority − 1, whichever is lower) unless
// it fits within nominal quota, and a victim above the threshold takes
// the right to borrow away; otherwise, when j fits within its nominal
// quota it reclaims without borrowing, and failing that it may borrow
// with its own queue's candidates only.
func (p *kueuePolicy) preemptFor(v View, j *Job, cq, s int, use [NumRes]int64) []kueueCand {
	c := &p.cqs[cq]
	pre := c.cfg.Preemption
	f := c.cfg.Flavors[s].Flavor
	p.cands = p.cands[:0]
	if w := pre.WithinClusterQueue; w == PreemptLowerPriority || w == PreemptLowerOrNewerEqualPriority {
		c.adm[s].ascend(func(it qitem) bool {
			prio := int(it.f)
			if prio > j.Priority || prio == j.Priority && w != PreemptLowerOrNewerEqualPriority {
				return false // admitted workloads are in ascending priority
			}
			if p.jobs[it.id].stopping || prio == j.Priority && !newer(v.Job(it.id), j) {
				return true
			}
			p.cands = append(p.cands, kueueCand{id: it.id, cq: cq, prio: prio, adm: -it.a})
			return true
		})
	}
	same := len(p.cands)
	co := &p.cohorts[c.cohort]
	if r := pre.ReclaimWithinCohort; r == PreemptAny || r == PreemptLowerPriority {
		for _, o := range co.members {
			os := p.cqs[o].slotOf[f]
			if o == cq || os < 0 || !p.borrowing(o, os) {
				continue
			}
			p.cqs[o].adm[os].ascend(func(it qitem) bool {
				prio := int(it.f)
				if r == PreemptLowerPriority && prio >= j.Priority {
					return false
				}
				if !p.jobs[it.id].stopping {
					p.cands = append(p.cands, kueueCand{id: it.id, cq: o, other: true, prio: prio, adm: -it.a})
				}
				return true
			})
		}
	}
	if len(p.cands) == 0 {
		return nil
	}
	slices.SortFunc(p.cands, func(a, b kueueCand) int {
		if a.other != b.other {
			if a.other {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(b.adm, a.adm), cmp.Compare(b.id, a.id))
	})
	if same == len(p.cands) {
		return p.minimal(j, cq, s, use, p.cands, true, nil)
	}
	if pre.BorrowWithinCohort == PreemptLowerPriority {
		thr := j.Priority - 1
		if t := pre.MaxPriorityThreshold; t != nil && *t < thr {
			thr = *t
		}
		cands := p.cands
		if !p.underNominal(cq, s, use) {
			cands = slices.DeleteFunc(cands, func(k kueueCand) bool { return k.other && k.prio > thr })
		}
		return p.minimal(j, cq, s, use, cands, true, &thr)
	}
	if p.underNominal(cq, s, use) {
		if vs := p.minimal(j, cq, s, use, p.cands, false, nil); len(vs) > 0 {
			return vs
		}
	}
	own := slices.DeleteFunc(p.cands, func(k kueueCand) bool { return k.other })
	return p.minimal(j, cq, s, use, own, true, nil)
}

// newer reports whether a entered the queue after b (ties: the higher
// ID is the newer).
func newer(a, b *Job) bool {
	return a.Queued > b.Queued || a.Queued == b.Queued && a.ID > b.ID
}

// minimal takes cands in order off the books until use fits on slot s of
// cq (with borrowing if borrow), then gives back every victim but the
// last that is not needed, last to first; the books are as before when
// it returns. nil when the candidates do not make room.
func (p *kueuePolicy) minimal(j *Job, cq, s int, use [NumRes]int64, cands []kueueCand, borrow bool, thr *int) []kueueCand {
	f := p.cqs[cq].cfg.Flavors[s].Flavor
	p.victims = p.victims[:0]
	ok := false
	for _, k := range cands {
		ks := p.cqs[k.cq].slotOf[f]
		if k.other {
			if !p.borrowing(k.cq, ks) {
				continue
			}
			if thr != nil && k.prio > *thr {
				borrow = false
			}
		}
		p.charge(k.cq, ks, p.jobs[k.id].use, -1)
		p.victims = append(p.victims, k)
		if p.fits(cq, s, use, borrow) {
			ok = true
			break
		}
	}
	if ok {
		for i := len(p.victims) - 2; i >= 0; i-- {
			k := p.victims[i]
			ks := p.cqs[k.cq].slotOf[f]
			p.charge(k.cq, ks, p.jobs[k.id].use, +1)
			if p.fits(cq, s, use, borrow) {
				p.victims = slices.Delete(p.victims, i, i+1)
				continue
			}
			p.charge(k.cq, ks, p.jobs[k.id].use, -1)
		}
	}
	for _, k := range p.victims {
		p.charge(k.cq, p.cqs[k.cq].slotOf[f], p.jobs[k.id].use, +1)
	}
	if !ok {
		p.victims = p.victims[:0]
		return nil
	}
	return p.victims
}

// roomAfter reports whether job j would find room on the nodes of slot
// s's GPU model once the victims that run there have stopped: a
// preemption is made only then, since victims whose quota lets the head
// in but whose GPUs do not (a whole-node job and victims spread over
// several nodes) would be preempted for nothing, and the room they free
// taken by others. It counts, per node of the model, free CPU and memory
// and each GPU's free milli, plus what the victims hold there: one node
// with j.GPUs GPUs of j's share, or for a gang enough whole GPUs over
// the model's nodes. O(nodes of the model + victims).
func (p *kueuePolicy) roomAfter(c hwmodel.ClusterView, j *Job, cq, s int, victims []kueueCand) bool {
	m := p.cfg.Flavors[p.cqs[cq].cfg.Flavors[s].Flavor].Model
	r := j.Req
	if r.WantsMIG() {
		return true // MIG instances are not counted here: as before
	}
	gang := r.GPUs > c.MaxNodeGPUs(hwmodel.Of(m))
	wholeGPUs := 0
	for n := range c.NumNodes() {
		if c.NodeModel(n) != m {
			continue
		}
		cpu, mem := c.FreeCPU(n), c.FreeMemory(n)
		var extra [hwmodel.MaxGPUsPerNode]int32
		for _, vc := range victims {
			for _, sh := range p.jobs[vc.id].pl {
				if sh.Node != n {
					continue
				}
				cpu += sh.CPUMilli
				mem += sh.MemoryMiB
				for g := range c.NodeGPUs(n) {
					if sh.GPUs&(1<<g) != 0 {
						extra[g] += sh.Milli
					}
				}
			}
		}
		fit := 0
		for g := range c.NodeGPUs(n) {
			free := c.FreeMilli(n, g) + extra[g]
			if r.GPUs > 0 && free >= r.GPUMilli {
				fit++
			}
			if free >= hwmodel.MilliPerGPU {
				wholeGPUs++
			}
		}
		if !gang && cpu >= r.CPUMilli && mem >= r.MemoryMiB && fit >= r.GPUs {
			return true
		}
	}
	return gang && wholeGPUs >= r.GPUs
}
