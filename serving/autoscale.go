package serving

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// autoscale decides s's replica count at a tick.
func (m *model) autoscale(s *service, now hwmodel.Time) {
	as := s.spec.Autoscale
	s.integrate(now)
	dSys, dInf, dReady := s.intSys-s.tickSys, s.intInflight-s.tickInflight, s.intReady-s.tickReady
	s.tickSys, s.tickInflight, s.tickReady = s.intSys, s.intInflight, s.intReady
	var observed float64
	switch as.Metric {
	case MetricLatency:
		observed = s.tickLat.quantile(0.95) / 1e6
	case MetricTTFT:
		observed = s.tickTTFT.quantile(0.95) / 1e6
	case MetricITL:
		observed = s.tickITL.quantile(0.95) / 1e6
	case MetricQueue:
		if dReady > 0 {
			observed = (dSys - dInf) / dReady
		} else if dSys > dInf {
			observed = math.Inf(1)
		}
	case MetricUtilisation:
		if dReady > 0 {
			observed = dInf / (dReady * float64(s.spec.Replica.MaxConcurrent))
		}
	default: // MetricConcurrency
		if dReady > 0 {
			observed = dSys / dReady
		} else if dSys > 0 {
			observed = math.Inf(1)
		}
	}
	s.tickLat.reset()
	s.tickTTFT.reset()
	s.tickITL.reset()
	active := 0 // pending, loading and ready replicas
	for _, r := range s.replicas {
		if r.state == repPending || r.state == repLoading || r.state == repReady {
			active++
		}
	}
	desired := active
	ratio := observed / as.Target
	switch {
	case s.ready == 0:
		// Nothing serves, so the metric says nothing. Scale from zero
		// to one replica when requests came (they found no replica and
		// failed, or wait); with replicas on the way, wait for them.
		if active == 0 && (dSys > 0 || s.tickArrivals > 0) {
			desired = 1
		}
	case as.Target > 0 && math.Abs(ratio-1) > 0.1: // Kubernetes' default tolerance
		desired = int(math.Ceil(float64(s.ready) * ratio))
	}
	if as.OnAlert != "" && m.alertFiring(as.OnAlert) {
		desired = max(desired, active+as.Step)
	}
	s.tickArrivals = 0
	desired = min(max(desired, s.spec.Replicas.Min), s.spec.Replicas.Max)
	// Kubernetes' default scale-up policy: at most double, or add four,
	// per period, so one noisy reading cannot jump to the maximum.
	desired = min(desired, active+max(active, 4))
	switch {
	case desired > active && now-s.lastUp >= as.ScaleUpCooldown:
		for k := active; k < desired; k++ {
			m.newReplica(s, now)
			s.res.ScaleOuts++
		}
		s.lastUp, s.lastChange = now, now
	case desired < active && now-s.lastChange >= as.ScaleDownCooldown:
		m.scaleIn(s, active-desired, now)
		s.lastChange = now
	}
}

// scaleIn removes k replicas: those waiting for GPUs first, then loading
// ones, then ready ones (ejected or failed first, then the newest), which
// drain.
func (m *model) scaleIn(s *service, k int, now hwmodel.Time) {
	pick := func(ok func(r *replica) bool) *replica {
		for j := len(s.replicas) - 1; j >= 0; j-- {
			if r := s.replicas[j]; ok(r) {
				return r
			}
		}
		return nil
	}
	for ; k > 0; k-- {
		r := pick(func(r *replica) bool { return r.state == repPending })
		if r == nil {
			r = pick(func(r *replica) bool { return r.state == repLoading })
		}
		if r == nil {
			r = pick(func(r *replica) bool { return r.state == repReady && (r.ejected || r.failed) })
		}
		if r == nil {
			r = pick(func(r *replica) bool { return r.state == repReady })
		}
		if r == nil {
			return
		}
		s.res.ScaleIns++
		switch r.state {
		case repPending:
			m.waiting--
			r.state = repGone
		case repLoading:
			r.state = repDraining // released at the next step, idle
			r.epoch++
		default:
			s.integrate(now)
			s.ready--
			r.state = repDraining
			m.recount(s, r)
			if r.cb != nil {
				r.lastDone = m.decodeDrainBound(s, r, now)
			} else if r.it != nil {
				r.lastDone = m.iterDrainBound(s, r, now)
			}
		}
	}
}
