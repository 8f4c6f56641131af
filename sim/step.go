package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// endOfTime is a limit that no event reaches: Run steps to it.
const endOfTime = hwmodel.Time(math.MaxInt64)

// RunUntil processes every instant at or before t, each as Run does: the
// events due then, then one scheduling point, including the extra
// scheduling points at the end of a run (maxIdleCalls). Afterwards the
// next instant, if any, is after t, and the clock reads t (Now, and the
// waiting and running times of Snapshot), since nothing happens in
// between; if the run is over, it stays at the run's last instant, its
// end. A run stepped by RunUntil and a run made by Run alone are the same
// run: Run, called afterwards, finishes what is left and returns the
// Result. RunUntil fails for a t before Now, after Run, and with the error
// that stopped the run when an earlier call stopped on one.
func (e *Engine) RunUntil(t hwmodel.Time) error {
	if e.ran {
		return errors.New("sim: RunUntil called after Run")
	}
	if t < e.now {
		return fmt.Errorf("sim: RunUntil(%gs): the engine is already at %gs", t.Seconds(), e.now.Seconds())
	}
	for {
		more, err := e.step(t)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if !e.over {
		// The next instant is after t (step found it so), so moving the
		// clock to t changes no event's order and no instant's time.
		e.now = t
		e.host.SetNow(t)
	}
	return nil
}

// step processes the next instant if it is at or before limit: every
// event due then (finishes and other engine events first, in heap order,
// then arrivals in workload order), the coupled model, then one scheduling
// point if the policy has news. It reports false, having processed
// nothing, when the next instant is after limit or the run is over.
func (e *Engine) step(limit hwmodel.Time) (bool, error) {
	if e.err != nil {
		return false, e.err
	}
	if e.over {
		return false, nil
	}
	if e.allDone() {
		e.over = true
		return false, nil
	}
	t, ok := e.nextTime()
	if !ok {
		// Nothing left to happen, but the policy has not yet heard of a
		// rejection or a preemption: give it a few more calls now.
		if !e.pendingChange || e.idleCalls == maxIdleCalls {
			e.over = true
			return false, nil
		}
		t = e.now
	}
	if t > limit {
		return false, nil
	}
	if !ok {
		e.idleCalls++
	}
	if err := e.instant(t); err != nil {
		e.err = err
		return false, err
	}
	return true, nil
}

// allDone reports a run with faults whose jobs are all done: later faults
// and repairs change nothing, so the run ends without them.
func (e *Engine) allDone() bool {
	return e.flt.on && e.terminal == len(e.jobs) && e.next == len(e.w.Jobs) && !e.pendingChange && !e.coupledPending()
}

// instant processes time t: its events, the coupled model, one scheduling
// point, and the Observe hook.
func (e *Engine) instant(t hwmodel.Time) error {
	if t < e.now {
		return &InvariantError{At: e.now, Msg: fmt.Sprintf("time went backwards to %d", t)}
	}
	e.now = t
	e.host.SetNow(t)
	// Apply every event at this instant before asking the policy, so
	// one scheduling point sees all simultaneous arrivals and finishes.
	for e.heap.Len() > 0 && e.heap.peek().at == t {
		ev := e.heap.pop()
		e.res.Events++
		if err := e.finish(ev); err != nil {
			return err
		}
		if err := e.check(); err != nil {
			return err
		}
	}
	for e.next < len(e.w.Jobs) && e.w.Jobs[e.next].Submit == t {
		e.arrive(e.next)
		e.next++
		e.res.Events++
		if err := e.check(); err != nil {
			return err
		}
	}
	if err := e.stepCoupled(e.pendingChange); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		return err
	}
	if e.cfg.Interval > 0 && t%e.cfg.Interval != 0 {
		// Off the decision grid: what changed waits for the next point.
		if e.pendingChange {
			if g := e.gridAfter(t); g != e.gridAt {
				e.heap.push(event{at: g, kind: evGrid})
				e.gridAt = g
			}
		}
		e.observe()
		return nil
	}
	// A call that preempted is followed by another at the same instant,
	// so that the policy can place what it freed at once (a preemptive
	// order swaps jobs within one instant); a few at most, so that a
	// policy that preempts at every call cannot stop the clock.
	for calls := 0; e.pendingChange && calls < maxCallsPerInstant; calls++ {
		e.preemptedInCall = false
		if err := e.schedule(); err != nil {
			return err
		}
		if err := e.check(); err != nil {
			return err
		}
		if !e.preemptedInCall {
			break
		}
	}
	e.observe()
	return nil
}

// observe calls the Observe hook with the state after the instant.
func (e *Engine) observe() {
	if e.cfg.Observe != nil {
		o := Observation{Queued: e.queued, Running: e.running, InSystem: e.inSystem,
			AllocatedMilli: e.cluster.AllocatedMilli() - e.flt.downMilli, DownMilli: e.flt.downMilli,
			TenantMilli: e.tenantMilli, CoupledMilli: e.coupledMilli}
		e.observeMIG(&o)
		e.cfg.Observe(e.now, o)
	}
}

// Now is the engine's clock: the last instant processed, or the time
// RunUntil stepped to if that is later and the run is not over.
func (e *Engine) Now() hwmodel.Time { return e.now }

// Next is the next instant the engine would process, and false when the
// run is over. It is the time of the earliest pending event, which may
// turn out stale when processed (the finish of an attempt that has since
// failed or been preempted); an instant that only repeats Now (a last
// scheduling point for a policy with news) is reported as Now.
func (e *Engine) Next() (hwmodel.Time, bool) {
	if e.err != nil || e.over {
		return 0, false
	}
	if e.allDone() {
		return 0, false
	}
	if t, ok := e.nextTime(); ok {
		return t, true
	}
	if e.pendingChange && e.idleCalls < maxIdleCalls {
		return e.now, true
	}
	return 0, false
}

// Snapshot is the engine's state at one instant. It is a copy: later
// steps do not change it, and changing it changes nothing in the engine.
type Snapshot struct {
	Now hwmodel.Time
	// Done: the run is over, nothing is left to process.
	Done bool
	// Jobs is indexed by job ID (the workload's order).
	Jobs []JobStatus
	// Nodes is indexed like the cluster's nodes.
	Nodes []NodeStatus
	// Tenants are the tenants' books, indexed like Workload.Tenants.
	Tenants []policies.Tenant
	// The engine's counters: jobs queued, running, submitted and not
	// terminal, terminal.
	Queued, Running, InSystem, Terminal int
	// AllocatedMilli and DownMilli are as in Observation.
	AllocatedMilli, DownMilli int64
	// Events, Calls, Rejections and MIGReconfigurations so far, as the
	// Result counts them.
	Events, Calls, Rejections, MIGReconfigurations int64
	// Faults are the injected faults that have happened so far.
	Faults []FaultRecord
}

// JobStatus is one job in a Snapshot: its books in Outcome as if the run
// stopped now, with these differences from a finished run's Outcome:
// State is the job's state now; Start is -1 until an attempt starts and
// End is -1 until the job is terminal; a running attempt's Log entry has
// End -1 and Ended AttemptRunning. Wait and Run count the time queued or
// running until now. Placement and Log are copies.
type JobStatus struct {
	Name   string
	Tenant string
	// Submitted: the job's submission time has come (a Pending job that
	// is not Submitted has yet to arrive).
	Submitted bool
	// Backoff: the job is Pending while it waits out a retry back-off.
	Backoff bool
	Outcome
}

// NodeStatus is one node's books in a Snapshot.
type NodeStatus struct {
	Name  string
	Model hwmodel.ModelID
	// FreeCPUMilli and FreeMemoryMiB are what no job and no out-of-service
	// block holds.
	FreeCPUMilli, FreeMemoryMiB int64
	// Failed: a fault of the whole node has happened and is not detected
	// yet (its jobs still count as running). DownUntil is when the node
	// comes back into service after a detected fault, -1 while it is in
	// service.
	Failed    bool
	DownUntil hwmodel.Time
	GPUs      []GPUStatus
}

// GPUStatus is one GPU's books in a Snapshot.
type GPUStatus struct {
	// FreeMilli is the GPU's free capacity (0 while it is out of
	// service); a MIG GPU's is that of its free instances.
	FreeMilli int32
	// Failed and DownUntil are NodeStatus's, for a fault of this GPU
	// alone.
	Failed    bool
	DownUntil hwmodel.Time
	// MIG is the GPU's current layout (nil for a whole GPU), MIGBusy the
	// instances that jobs hold and MIGBlocked those that a
	// reconfiguration keeps unusable (bit k: instance k).
	MIG                 hwmodel.MIGLayout
	MIGBusy, MIGBlocked uint64
}

// Snapshot copies the engine's state now. It costs O(jobs + GPUs +
// attempts): meant for tests and tools that step the engine, not for the
// event loop.
func (e *Engine) Snapshot() Snapshot {
	c := e.cluster
	s := Snapshot{
		Now: e.now, Queued: e.queued, Running: e.running, InSystem: e.inSystem, Terminal: e.terminal,
		AllocatedMilli: c.AllocatedMilli() - e.flt.downMilli, DownMilli: e.flt.downMilli,
		Events: e.res.Events, Calls: e.res.Calls, Rejections: e.res.Rejections,
		MIGReconfigurations: e.res.MIGReconfigurations,
		Faults:              slices.Clone(e.res.Faults),
		Tenants:             slices.Clone(e.host.Tenants()),
	}
	_, more := e.Next()
	s.Done = !more
	s.Jobs = make([]JobStatus, len(e.jobs))
	for i := range e.jobs {
		r := &e.runs[i]
		js := JobStatus{Name: e.jobs[i].Name, Tenant: e.w.Jobs[i].Tenant, Submitted: r.arrived, Backoff: r.backoff, Outcome: e.out[i]}
		o := &js.Outcome
		// The log first, while the fields its first attempt is read from
		// are the run's.
		log := slices.Clone(o.Log())
		for k := range log {
			log[k].Placement = slices.Clone(log[k].Placement)
		}
		o.log = &log
		o.State = r.state
		o.Attempts = r.attempt
		if !r.started {
			o.Start = -1
		}
		if !r.state.Terminal() {
			o.End = -1
		}
		switch r.state {
		case Ready:
			o.Wait += e.now - r.queuedAt
		case Running:
			o.Run += e.now - e.jobs[i].Start
		}
		o.Placement = slices.Clone(o.Placement)
		s.Jobs[i] = js
	}
	s.Nodes = make([]NodeStatus, c.NumNodes())
	for n := range s.Nodes {
		ns := NodeStatus{Name: c.Node(n).Name, Model: c.NodeModel(n),
			FreeCPUMilli: c.FreeCPU(n), FreeMemoryMiB: c.FreeMemory(n), DownUntil: -1,
			GPUs: make([]GPUStatus, c.NodeGPUs(n))}
		if e.flt.on {
			ns.Failed = e.flt.nodeHits[n] > 0
			if e.flt.nodeBlock[n] != nil {
				ns.DownUntil = e.flt.nodeUntil[n]
			}
		}
		for g := range ns.GPUs {
			gs := GPUStatus{FreeMilli: c.FreeMilli(n, g), DownUntil: -1}
			if e.flt.on {
				fg := e.flt.gpuBase[n] + g
				gs.Failed = e.flt.gpuHits[fg] > 0
				if e.flt.gpuBlocked[fg] {
					gs.DownUntil = e.flt.gpuUntil[fg]
				}
			}
			if c.IsMIG(n, g) {
				gs.MIG = c.MIGLayoutOf(n, g)
				gs.MIGBusy, gs.MIGBlocked = c.MIGBusy(n, g), c.MIGBlocked(n, g)
			}
			ns.GPUs[g] = gs
		}
		s.Nodes[n] = ns
	}
	return s
}
