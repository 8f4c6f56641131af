package sim

import (
	"fmt"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// The engine is the policy's View: policies.View methods below.

// Now is the simulated time of the scheduling point.
func (e *Engine) Now() hwmodel.Time { return e.now }

// Cluster is the live capacity book, including this call's reservations.
func (e *Engine) Cluster() *hwmodel.Cluster { return e.cluster }

// Job returns the policy's view of job id, or nil for an unknown id.
func (e *Engine) Job(id policies.JobID) *policies.Job {
	if id < 0 || int(id) >= len(e.jobs) {
		return nil
	}
	return &e.jobs[id]
}

// Tenants lists tenants with what their running jobs hold now.
func (e *Engine) Tenants() []policies.Tenant { return e.tenants }

// Events is what happened since the previous call.
func (e *Engine) Events() *policies.Events { return &e.events }

// Reserve takes capacity for the rest of the current call.
func (e *Engine) Reserve(p hwmodel.Placement) error {
	if !e.inCall {
		return fmt.Errorf("sim: Reserve outside Schedule")
	}
	if err := e.cluster.Allocate(p); err != nil {
		return err
	}
	e.reserved = append(e.reserved, p)
	return nil
}

// schedule runs one scheduling point: call the policy, drop its
// reservations, then apply each decision against the true books, rejecting
// (and reporting at the next call) any that would break a rule.
func (e *Engine) schedule() error {
	e.pendingChange = false
	e.inCall = true
	decisions := e.policy.Schedule(e)
	e.inCall = false
	e.res.Calls++
	for k := len(e.reserved) - 1; k >= 0; k-- {
		e.cluster.Release(e.reserved[k])
	}
	clear(e.reserved)
	e.reserved = e.reserved[:0]
	e.events.Reset()
	for _, d := range decisions {
		if reason := e.apply(d); reason != "" {
			e.res.Rejections++
			e.events.Rejected = append(e.events.Rejected, policies.Rejection{Decision: d, Reason: reason})
		}
	}
	// The policy must hear of rejections and of capacity that preemptions
	// freed at the next instant even if nothing else happens then.
	e.pendingChange = len(e.events.Rejected) > 0 || len(e.events.Ended) > 0
	return nil
}

// apply carries out one decision, or returns why it cannot.
func (e *Engine) apply(d policies.Decision) string {
	if d.Kind == policies.Reconfigure {
		return e.reconfigure(d)
	}
	if d.Job < 0 || int(d.Job) >= len(e.jobs) {
		return fmt.Sprintf("job %d does not exist", d.Job)
	}
	i := int(d.Job)
	r := &e.runs[i]
	switch d.Kind {
	case policies.Start:
		if r.state != Ready {
			return fmt.Sprintf("job %s is %s, not ready", e.jobs[i].Name, r.state)
		}
		if reason := e.checkPlacement(i, d.Placement); reason != "" {
			return reason
		}
		if err := e.cluster.Allocate(d.Placement); err != nil {
			return err.Error()
		}
		e.start(i, d.Placement)
	case policies.Preempt:
		if r.state != Running {
			return fmt.Sprintf("job %s is %s, not running", e.jobs[i].Name, r.state)
		}
		cut := e.now
		if e.flt.on {
			cut = min(cut, e.hitTime(i))
		}
		e.endAttempt(i, cut)
		e.stopRunning(i, AttemptPreempted)
		e.enqueue(i)
	default:
		return fmt.Sprintf("unknown decision kind %v", d.Kind)
	}
	return ""
}

// checkPlacement verifies that p gives job i exactly what it asked for on
// nodes whose GPU model it accepts.
func (e *Engine) checkPlacement(i int, p hwmodel.Placement) string {
	req := e.jobs[i].Req
	if len(p) == 0 {
		return "empty placement"
	}
	if req.WantsMIG() {
		return e.checkMIGPlacement(i, p)
	}
	var cpu, mem int64
	for _, s := range p {
		if s.Node < 0 || s.Node >= e.cluster.NumNodes() {
			return fmt.Sprintf("node %d does not exist", s.Node)
		}
		if s.GPUs != 0 && !req.Models.Accepts(e.cluster.Node(s.Node).Model) {
			return fmt.Sprintf("node %s has %s GPUs, job accepts %s", e.cluster.Node(s.Node).Name,
				hwmodel.Model(e.cluster.Node(s.Node).Model).Name, req.Models)
		}
		if s.Instance != 0 {
			return fmt.Sprintf("share names MIG instance %d, job %s asks for no MIG instance", s.Instance-1, e.jobs[i].Name)
		}
		if s.GPUs != 0 && s.Milli != req.GPUMilli {
			return fmt.Sprintf("share of %d milli per GPU, job asks for %d", s.Milli, req.GPUMilli)
		}
		cpu += s.CPUMilli
		mem += s.MemoryMiB
	}
	if n := p.GPUCount(); n != req.GPUs {
		return fmt.Sprintf("placement has %d GPUs, job asks for %d", n, req.GPUs)
	}
	if cpu != req.CPUMilli || mem != req.MemoryMiB {
		return fmt.Sprintf("placement gives %d milli-CPU and %d MiB, job asks for %d and %d", cpu, mem, req.CPUMilli, req.MemoryMiB)
	}
	return ""
}

func (e *Engine) start(i int, p hwmodel.Placement) {
	r := &e.runs[i]
	r.state = Running
	r.attempt++
	r.placement = p
	o := &e.out[i]
	o.Wait += e.now - r.queuedAt
	o.AttemptLog = append(o.AttemptLog, Attempt{Start: e.now, End: -1, Wait: e.now - r.queuedAt, Placement: p, Ended: AttemptRunning})
	if !r.started {
		r.started = true
		r.firstStart = e.now
		o.Start = e.now
	}
	o.Attempts = int(r.attempt)
	o.Placement = p
	if s, ok := migShare(p); ok {
		g := bits.TrailingZeros64(s.GPUs)
		o.MIGProfile = e.mig.profs[e.cluster.NodeModel(s.Node)][e.cluster.MIGInstanceAt(s.Node, g, s.Instance-1).Profile].Name
	}
	j := &e.jobs[i]
	j.Start = e.now
	j.Attempt = int(r.attempt) - 1
	e.mig.started(i, p)
	e.mig.queue(&j.Req, -1)
	t := &e.tenants[j.Tenant]
	t.AllocatedMilliGPU += p.Milli()
	e.tenantMilli[j.Tenant] = t.AllocatedMilliGPU
	t.AllocatedCPUMilli += j.Req.CPUMilli
	t.AllocatedMemMiB += j.Req.MemoryMiB
	e.queued--
	e.running++
	e.events.Started = append(e.events.Started, policies.JobID(i))
	e.addRunning(i)
	length := e.attemptLength(i)
	if g := e.sharedGPU(i, p); g >= 0 {
		e.shareStart(i, g, r.restart, length-r.restart)
		return
	}
	e.heap.push(event{at: e.now + length, kind: evFinish, job: int32(i), attempt: r.attempt})
}
