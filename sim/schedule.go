package sim

import (
	"fmt"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// schedule runs one scheduling point through the Host: the policy's call,
// then each decision applied against the true books, any that would break
// a rule rejected and reported at the next call.
func (e *Engine) schedule() error {
	e.pendingChange = false
	e.host.Schedule(e.policy, e.applyFn)
	e.res.Calls++
	if e.apps.err != nil {
		return e.apps.err
	}
	ev := e.host.Events()
	e.res.Rejections += int64(len(ev.Rejected))
	// The policy must hear of rejections and of capacity that preemptions
	// freed at the next instant even if nothing else happens then; the
	// answers to its own Starts and Reconfigures wait for other news.
	e.pendingChange = e.host.HasNews()
	if t, ok := e.host.NextWake(); ok && t != e.wakeQueued {
		e.heap.push(event{at: t, kind: evWake})
		e.wakeQueued = t
	}
	return nil
}

// wakeDue reports whether the policy's wake-up is due now.
func (e *Engine) wakeDue() bool {
	t, ok := e.host.NextWake()
	return ok && t <= e.now
}

// dropStaleWakes pops wake-ups the policy no longer asks for from the top
// of the heap, so that they make no instant of their own (a run would
// otherwise end at a stale wake-up after its last job).
func (e *Engine) dropStaleWakes() {
	for e.heap.Len() > 0 {
		top := e.heap.peek()
		if top.kind != evWake {
			return
		}
		if t, ok := e.host.NextWake(); ok && t == top.at {
			return
		}
		ev := e.heap.pop()
		if ev.at == e.wakeQueued {
			e.wakeQueued = 0
		}
	}
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
		if e.isApp(i) {
			if err := e.appPace(i, d.Placement); err != nil {
				// The model cannot time the job there: a gap in the
				// model's data, which stops the run.
				if e.apps.err == nil {
					e.apps.err = err
				}
				return err.Error()
			}
		}
		if err := e.host.Start(d.Job, d.Placement); err != nil {
			return err.Error()
		}
		e.start(i, d.Placement)
	case policies.Preempt:
		if r.state != Running {
			return fmt.Sprintf("job %s is %s, not running", e.jobs[i].Name, r.state)
		}
		e.preempt(i)
		e.preemptedInCall = true
	default:
		return fmt.Sprintf("unknown decision kind %v", d.Kind)
	}
	return ""
}

// preempt stops running job i and queues it again: what its attempt
// saved is kept (all of it with Config.SaveOnPreempt, unless the attempt
// ran on failed hardware, which saves nothing after the fault), the rest
// is lost, and its next attempt pays Config.PreemptRestart.
func (e *Engine) preempt(i int) {
	cut := e.now
	if e.flt.on {
		cut = min(cut, e.hitTime(i)) // no progress on broken hardware
	}
	lost := e.endAttemptSaving(i, cut, e.cfg.SaveOnPreempt && cut == e.now)
	o := &e.out[i]
	o.Preemptions++
	o.PreemptLost += lost
	e.runs[i].afterPreempt = true
	e.stopRunning(i, AttemptPreempted)
	e.enqueue(i)
}

// checkPlacement verifies that p gives job i exactly what it asked for on
// nodes whose GPU model it accepts: the Host's rule, and the MIG books'
// for a MIG job. A job that trains an application is elastic: any number
// of whole GPUs will do, since the application model rescales its batch
// configuration to the placement (appPace).
func (e *Engine) checkPlacement(i int, p hwmodel.Placement) string {
	if e.jobs[i].Req.WantsMIG() && len(p) > 0 {
		return e.checkMIGPlacement(i, p)
	}
	if e.isApp(i) {
		return e.host.CheckElasticPlacement(policies.JobID(i), p)
	}
	return e.host.CheckPlacement(policies.JobID(i), p)
}

func (e *Engine) start(i int, p hwmodel.Placement) {
	r := &e.runs[i]
	r.state = Running
	r.attempt++
	r.placement = p
	if e.rates != nil {
		r.rate = e.host.Rate(&e.jobs[i], p)
	}
	o := &e.out[i]
	o.startAttempt(Attempt{Start: e.now, End: -1, Wait: e.now - r.queuedAt, Placement: p, Ended: AttemptRunning})
	o.Wait += e.now - r.queuedAt
	if !r.started {
		r.started = true
		o.Start = e.now
	}
	o.Attempts = r.attempt
	o.Placement = p
	if s, ok := migShare(p); ok {
		g := bits.TrailingZeros64(s.GPUs)
		o.MIGProfile = e.mig.profs[e.cluster.NodeModel(s.Node)][e.cluster.MIGInstanceAt(s.Node, g, s.Instance-1).Profile].Name
	}
	j := &e.jobs[i]
	j.Start = e.now
	r.start = e.now
	j.Attempt = int(r.attempt) - 1
	e.mig.started(i, p)
	e.mig.queue(&j.Req, -1)
	e.tenantMilli[r.tenant] = e.host.Tenants()[r.tenant].AllocatedMilliGPU
	e.queued--
	e.running++
	e.addRunning(i)
	length := e.attemptLength(i)
	if g := e.sharedGPU(i, p); g >= 0 {
		up := e.startup(i)
		e.shareStart(i, g, up, length-up)
		return
	}
	e.heap.push(event{at: e.now + length, kind: evFinish, job: int32(i), attempt: r.attempt})
}
