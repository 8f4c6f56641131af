package policies

import (
	"fmt"
	"slices"
)

// KueuePlain makes a kueue policy decide without its memo of failures
// and its cached head places, for tests that compare the two.
func KueuePlain(p Policy) { p.(*kueuePolicy).plain = true }

// CheckPreemptor checks a preemptive order's books after a call: the
// running tree holds exactly the running and starting jobs, in the order
// of their keys now computed from scratch (so no key time was missed),
// and the per-model GPU need is their sum.
func CheckPreemptor(p Policy, v View) error {
	pr, ok := p.(*preemptor)
	if !ok {
		return nil
	}
	if len(pr.startedNow) > 0 {
		return fmt.Errorf("%d jobs started in the call are not in the running tree", len(pr.startedNow))
	}
	milli := make([]int64, len(pr.runMilli))
	running := 0
	for id := range pr.jobs {
		pj := &pr.jobs[id]
		if pj.state != pRunning && pj.state != pStarting {
			if pj.inTree {
				return fmt.Errorf("job %d is in the running tree in state %d", id, pj.state)
			}
			continue
		}
		running++
		milli[pj.model] += pj.milli
		if !pj.inTree {
			return fmt.Errorf("running job %d is not in the running tree", id)
		}
	}
	if running != pr.running.len() {
		return fmt.Errorf("%d jobs run, the running tree holds %d", running, pr.running.len())
	}
	if !slices.Equal(milli, pr.runMilli) {
		return fmt.Errorf("GPU need per model %v, books say %v", milli, pr.runMilli)
	}
	var prev qitem
	var err error
	first := true
	pr.running.ascend(func(k qitem) bool {
		pj := &pr.jobs[k.id]
		if k != pj.rkey {
			err = fmt.Errorf("job %d: tree key %+v, its own %+v", k.id, k, pj.rkey)
			return false
		}
		now := naiveRunningKey(pr, v.Job(k.id), pj)
		if now != pr.order.current(pr, k) {
			err = fmt.Errorf("job %d at %v: key now %+v, from the tree %+v", k.id, pr.now, now, pr.order.current(pr, k))
			return false
		}
		if !first && !prev.less(now) {
			err = fmt.Errorf("job %d at %v: key %+v is not after %+v", k.id, pr.now, now, prev)
			return false
		}
		prev, first = now, false
		return true
	})
	return err
}

// naiveRunningKey is a running job's key now, computed from its history
// alone, as the orders define it.
func naiveRunningKey(p *preemptor, j *Job, pj *pjob) qitem {
	switch o := p.order.(type) {
	case *lasOrder:
		return qitem{a: int64(o.level(p.serviceNow(pj, o.gpuTime))), b: pj.seq, id: j.ID}
	case srtfOrder:
		return qitem{a: int64(max(j.Estimate-pj.ran-(p.now-pj.start), 0)), id: j.ID}
	case priorityPreemptOrder:
		return qitem{f: -float64(j.Priority), b: int64(pj.start), id: j.ID}
	case gandivaOrder:
		if p.now < pj.start+o.quantum {
			return qitem{b: int64(pj.start), id: j.ID}
		}
		return qitem{a: 1, b: int64(pj.start + o.quantum), id: j.ID}
	}
	panic(fmt.Sprintf("no naive key for %T", p.order))
}

// PreemptorPlain makes a preemptive order walk every job its walk
// reaches, for tests that compare it with the steps over jobs.
func PreemptorPlain(p Policy) { p.(*preemptor).plain = true }
