package serving

import "github.com/brigadesim/brigade/sim"

// Hardware faults (sim.Config.Faults) reach replicas through
// sim.CoupledFaults. When a node or GPU under a replica breaks, the replica
// stops answering at once, as a failed replica does: its requests in
// flight fail and the gateway keeps sending it requests, which fail, until
// outlier detection ejects it. When the orchestrator detects the fault
// (the batch engine's heartbeat rule), the replica's GPUs are given back
// (the engine takes them out of service until the repair) and a
// replacement is asked for, which pays the load time wherever it is
// placed. A replica that was draining is not replaced.

var _ sim.CoupledFaults = (*model)(nil)

// on reports whether replica r holds GPU gpu of node n (any of n's GPUs
// when gpu < 0).
func (r *replica) on(n, gpu int) bool {
	if r.placement == nil || r.state == repGone {
		return false
	}
	for _, sh := range r.placement {
		if sh.Node == n && (gpu < 0 || sh.GPUs&(1<<gpu) != 0) {
			return true
		}
	}
	return false
}

// Broken implements sim.CoupledFaults.
func (m *model) Broken(a *sim.Access, n, gpu int) error {
	m.advance(a.Now())
	if m.err != nil || m.done {
		return m.err
	}
	for _, s := range m.svcs {
		for _, r := range s.replicas {
			if r.on(n, gpu) && !r.lost {
				r.lost = true
				s.res.ReplicasLost++
				if !r.failed {
					m.breakReplica(s, r)
				}
				m.recount(s, r)
			}
		}
	}
	return nil
}

// Detected implements sim.CoupledFaults.
func (m *model) Detected(a *sim.Access, n, gpu int) error {
	now := a.Now()
	m.advance(now)
	if m.err != nil || m.done {
		return m.err
	}
	for _, s := range m.svcs {
		for _, r := range s.replicas {
			if !r.on(n, gpu) {
				continue
			}
			replace := r.state != repDraining
			if err := m.release(a, s, r); err != nil {
				return err
			}
			if replace {
				m.newReplica(s, now)
			}
		}
	}
	m.computeNext()
	return nil
}
