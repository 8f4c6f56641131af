package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// admit brings request i to the gateway: to a replica, or its queue.
func (m *model) admit(s *service, i int32) {
	now := m.now
	q := &m.reqs[i]
	cb := &s.classes[q.class]
	c := &s.spec.Classes[q.class]
	q.gate = now
	s.integrate(now)
	if s.fo != nil && s.fo.open {
		m.divert(s, i, true)
		return
	}
	if r := m.route(s, cb.priority); r != nil {
		m.dispatch(s, r, i)
		return
	}
	if !m.anyHealthy(s) {
		m.fail(s, i, false)
		return
	}
	q.state = reqQueued
	s.queued++
	s.lanes[cb.lane].push(int64(i)<<32 | int64(q.gen))
	if c.Timeout > 0 {
		m.heap.push(event{at: max(q.arrive+c.Timeout, now), kind: evTimeout, a: i, gen: q.gen})
	}
}

// pull dispatches queued requests while some replica takes them.
func (m *model) pull(s *service, now hwmodel.Time) {
	for s.queued > 0 {
		li, i := -1, int32(-1)
		for k := range s.lanes {
			l := &s.lanes[k]
			for l.size > 0 {
				v := l.peek()
				j := int32(v >> 32)
				if q := &m.reqs[j]; q.state == reqQueued && q.gen == uint32(v) {
					li, i = k, j
					break
				}
				l.drop() // timed out
			}
			if li >= 0 {
				break
			}
		}
		if li < 0 {
			return
		}
		r := m.route(s, s.classes[m.reqs[i].class].priority)
		if r == nil {
			return
		}
		s.lanes[li].drop()
		s.integrate(now)
		s.queued--
		m.dispatch(s, r, i)
	}
}

// route picks a replica for a request of class priority prio, or nil.
func (m *model) route(s *service, prio int) *replica {
	maxc := s.spec.Replica.MaxConcurrent
	open := func(r *replica, limit int) bool {
		return r.state == repReady && !r.ejected && r.inflight < limit
	}
	var best *replica
	switch s.spec.Routing {
	case RoundRobin:
		n := len(s.replicas)
		for k := 0; k < n; k++ {
			r := s.replicas[(s.rr+k)%n]
			if open(r, maxc) {
				s.rr = (s.rr + k + 1) % n
				return r
			}
		}
	case LatencyAware:
		var bestScore float64
		for _, r := range s.replicas {
			if open(r, maxc) {
				score := r.ewma * float64(1+r.inflight)
				if best == nil || score < bestScore {
					best, bestScore = r, score
				}
			}
		}
	case PriorityLanes:
		if prio >= s.topPrio {
			return leastOutstanding(s, maxc, open)
		}
		limit := maxc - s.spec.Health.LaneHeadroom
		for _, r := range s.replicas {
			if open(r, limit) && (best == nil || r.inflight > best.inflight) {
				best = r
			}
		}
	default: // LeastOutstanding
		return leastOutstanding(s, maxc, open)
	}
	return best
}

func leastOutstanding(s *service, maxc int, open func(*replica, int) bool) *replica {
	var best *replica
	for _, r := range s.replicas {
		if open(r, maxc) && (best == nil || r.inflight < best.inflight) {
			best = r
		}
	}
	return best
}
