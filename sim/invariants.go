package sim

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// check re-verifies the books when Config.CheckInvariants is set: the
// cluster's capacity red line, that every job is in exactly one state and
// the state counters agree with a recount, that no task runs before its
// dependencies succeeded, that terminal jobs stay terminal, and that a job
// has a FailReason exactly when it failed.
func (e *Engine) check() error {
	if !e.cfg.CheckInvariants {
		return nil
	}
	return e.checkAll()
}

// checkAll is check's work, apart so that check inlines into the event
// loop.
func (e *Engine) checkAll() error {
	fail := func(format string, args ...any) error {
		return &InvariantError{At: e.now, Msg: fmt.Sprintf(format, args...)}
	}
	if err := e.cluster.CheckInvariants(); err != nil {
		return fail("cluster: %v", err)
	}
	var queued, running, inSystem, terminal int
	for i := range e.runs {
		r := &e.runs[i]
		switch r.state {
		case Pending:
			if r.arrived {
				inSystem++
			}
		case Ready:
			queued++
			inSystem++
			if !r.arrived {
				return fail("job %s is ready before it was submitted", e.jobs[i].Name)
			}
		case Running:
			running++
			inSystem++
			for _, d := range e.w.Jobs[i].Deps {
				if e.runs[d].state != Succeeded {
					return fail("job %s runs while its dependency %s is %s", e.jobs[i].Name, e.jobs[d].Name, e.runs[d].state)
				}
			}
		case Succeeded, Failed:
			terminal++
			if e.out[i].State != r.state {
				return fail("job %s is %s but its outcome says %s", e.jobs[i].Name, r.state, e.out[i].State)
			}
			if (r.state == Failed) != (e.out[i].FailReason != FailNone) {
				return fail("job %s is %s with fail reason %s", e.jobs[i].Name, r.state, e.out[i].FailReason)
			}
		default:
			return fail("job %s in unknown state %d", e.jobs[i].Name, r.state)
		}
	}
	if queued != e.queued || running != e.running || inSystem != e.inSystem || terminal != e.terminal {
		return fail("counted queued=%d running=%d in-system=%d terminal=%d, books say %d %d %d %d",
			queued, running, inSystem, terminal, e.queued, e.running, e.inSystem, e.terminal)
	}
	var allocated int64
	tenants := e.host.Tenants()
	for i := range tenants {
		allocated += tenants[i].AllocatedMilliGPU
		if e.tenantMilli[i] != tenants[i].AllocatedMilliGPU {
			return fail("tenant %s: Observation view says %d milli-GPU, books say %d", tenants[i].Name, e.tenantMilli[i], tenants[i].AllocatedMilliGPU)
		}
	}
	if err := e.host.CheckBooks(func(yield func(policies.JobID, hwmodel.Placement) bool) {
		for i := range e.runs {
			if e.runs[i].state == Running && !yield(policies.JobID(i), e.runs[i].placement) {
				return
			}
		}
	}); err != nil {
		return fail("%v", err)
	}
	if allocated+e.flt.downMilli+e.coupledMilli != e.cluster.AllocatedMilli() {
		return fail("tenants hold %d milli-GPU, %d is out of service and services hold %d, cluster says %d", allocated, e.flt.downMilli, e.coupledMilli, e.cluster.AllocatedMilli())
	}
	if msg := e.checkFaults(); msg != "" {
		return fail("faults: %s", msg)
	}
	if msg := e.checkMIG(); msg != "" {
		return fail("MIG: %s", msg)
	}
	return nil
}
