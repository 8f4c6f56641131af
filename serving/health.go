package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// observeLatency feeds the circuit breaker one completed request.
func (m *model) observeLatency(s *service, r *replica, ratio float64) {
	h := &s.spec.Health
	r.ewma = h.EWMAWeight*ratio + (1-h.EWMAWeight)*r.ewma
	r.seen++
	r.consecErrs = 0
	if !h.Enabled || r.state != repReady {
		return
	}
	if r.probing > 0 {
		r.probing--
		if ratio > h.LatencyRatio {
			m.eject(s, r)
		} else if r.probing == 0 {
			r.seen, r.ewma = 0, 1
		}
		return
	}
	if r.seen >= h.MinRequests && r.ewma > h.LatencyRatio {
		m.eject(s, r)
	}
}

func (m *model) observeError(s *service, r *replica) {
	h := &s.spec.Health
	r.consecErrs++
	if h.Enabled && (r.probing > 0 || r.consecErrs >= h.ConsecutiveErrors) {
		m.eject(s, r)
	}
}

func (m *model) eject(s *service, r *replica) {
	if r.ejected {
		return
	}
	h := &s.spec.Health
	ejected, ready := 0, 0
	for _, x := range s.replicas {
		if x.state == repReady {
			ready++
			if x.ejected {
				ejected++
			}
		}
	}
	if ejected+1 > ready*h.MaxEjectedPct/100 {
		return
	}
	r.ejected = true
	m.recount(s, r)
	r.ejections++
	r.book.Ejections++
	r.probing = 0
	r.consecErrs = 0
	s.res.Ejections++
	m.heap.push(event{at: m.now + h.EjectFor*hwmodel.Time(r.ejections), kind: evProbe, a: int32(s.idx), b: int32(r.id), gen: uint32(r.ejections)})
}
