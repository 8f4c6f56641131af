package policytest

import (
	"fmt"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// Scenario is a small workload a driver runs to completion under a
// policy: the same scenario means the same thing to every driver.
type Scenario struct {
	Name    string
	Nodes   []hwmodel.Node
	Tenants []policies.Tenant
	Jobs    []Job // in submission order; job i gets JobID i
	// MIGReconfigure: the driver must let the policy repartition MIG
	// GPUs (the scenario cannot finish otherwise).
	MIGReconfigure bool
}

// Job is one job of a scenario.
type Job struct {
	Name     string
	Tenant   int
	Priority int
	Submit   policies.Time
	// Duration is how long each attempt runs; Estimate is what the user
	// told the policy (0: Duration).
	Duration, Estimate policies.Time
	Req                hwmodel.Request
	// Fails is how many attempts fail at their end before one succeeds;
	// the driver retries each (so every job of a scenario ends well).
	Fails int
}

// Outcome is what a driver reports of a scenario's run.
type Outcome struct {
	Succeeded, Failed int
	// Starts lists job IDs in the order their attempts started.
	Starts []policies.JobID
}

// Reference runs a scenario under p on the shared Host: a discrete-event
// driver in its smallest complete form (arrivals, ends, retries at once,
// preemption back to the queue, no MIG reconfiguration). It is the
// driver the policy suite runs every policy on, and is itself checked by
// the driver suite.
func Reference(sc Scenario, p policies.Policy) (Outcome, error) {
	cluster, err := hwmodel.NewCluster(sc.Nodes)
	if err != nil {
		return Outcome{}, err
	}
	r := &reference{sc: sc, policy: p}
	jobs := make([]policies.Job, len(sc.Jobs))
	for i, j := range sc.Jobs {
		est := j.Estimate
		if est == 0 {
			est = j.Duration
		}
		jobs[i] = policies.Job{ID: policies.JobID(i), Name: j.Name, Tenant: j.Tenant, Priority: j.Priority,
			Submit: j.Submit, Queued: j.Submit, Estimate: max(est, 1), Req: j.Req}
	}
	if err := r.h.Init(cluster, slices.Clone(sc.Tenants), jobs); err != nil {
		return Outcome{}, err
	}
	r.running = make([]bool, len(jobs))
	r.queued = make([]bool, len(jobs))
	r.placed = make([]hwmodel.Placement, len(jobs))
	r.attempt = make([]int, len(jobs))
	r.ends = make([]policies.Time, len(jobs))
	return r.run()
}

type reference struct {
	sc      Scenario
	policy  policies.Policy
	h       policies.Host
	running []bool
	queued  []bool
	placed  []hwmodel.Placement
	attempt []int
	ends    []policies.Time
	out     Outcome
	done    int
}

// maxCalls bounds a run, so a policy that never starts anything ends it.
const maxCalls = 100_000

func (r *reference) run() (Outcome, error) {
	next, now := 0, policies.Time(0)
	for calls := 0; r.done < len(r.sc.Jobs); calls++ {
		if calls == maxCalls {
			return r.out, fmt.Errorf("policytest: %d calls and %d of %d jobs done", maxCalls, r.done, len(r.sc.Jobs))
		}
		// The next instant: an arrival or an end; the same instant again
		// while the policy has news it has not heard (a rejection, an end).
		t, ok := policies.Time(-1), false
		if next < len(r.sc.Jobs) {
			t, ok = r.sc.Jobs[next].Submit, true
		}
		for i, run := range r.running {
			if run && (!ok || r.ends[i] < t) {
				t, ok = r.ends[i], true
			}
		}
		if w, wok := r.h.NextWake(); wok && (!ok || w < t) {
			t, ok = w, true // the policy asked to be called then
		}
		if r.h.HasNews() {
			t, ok = now, true
		}
		if !ok {
			return r.out, fmt.Errorf("policytest: %d jobs queued and nothing running: the policy starts nothing", len(r.sc.Jobs)-r.done)
		}
		now = max(now, t)
		r.h.SetNow(now)
		for i := range r.running {
			if r.running[i] && r.ends[i] == now {
				r.end(i, now)
			}
		}
		for next < len(r.sc.Jobs) && r.sc.Jobs[next].Submit == now {
			r.enqueue(next, now)
			next++
		}
		r.h.Schedule(r.policy, func(d policies.Decision) string { return r.apply(d, now) })
	}
	return r.out, nil
}

func (r *reference) enqueue(i int, now policies.Time) {
	r.queued[i] = true
	r.h.Job(policies.JobID(i)).Queued = now
	r.h.Queue(policies.JobID(i))
}

func (r *reference) end(i int, now policies.Time) {
	r.stop(i)
	if r.attempt[i] <= r.sc.Jobs[i].Fails {
		r.enqueue(i, now)
		return
	}
	r.out.Succeeded++
	r.done++
}

func (r *reference) stop(i int) {
	r.h.Stop(policies.JobID(i), r.placed[i])
	r.running[i], r.placed[i] = false, nil
}

func (r *reference) apply(d policies.Decision, now policies.Time) string {
	if d.Kind == policies.Reconfigure {
		return "the reference driver keeps MIG layouts static"
	}
	i := int(d.Job)
	if d.Job < 0 || i >= len(r.sc.Jobs) {
		return fmt.Sprintf("job %d does not exist", d.Job)
	}
	switch d.Kind {
	case policies.Start:
		if !r.queued[i] {
			return fmt.Sprintf("job %d is not queued", d.Job)
		}
		if reason := r.h.CheckPlacement(d.Job, d.Placement); reason != "" {
			return reason
		}
		if err := r.h.Start(d.Job, d.Placement); err != nil {
			return err.Error()
		}
		r.queued[i], r.running[i], r.placed[i] = false, true, d.Placement
		r.attempt[i]++
		r.ends[i] = now + max(r.sc.Jobs[i].Duration, 1)
		j := r.h.Job(d.Job)
		j.Start, j.Attempt = now, r.attempt[i]-1
		r.out.Starts = append(r.out.Starts, d.Job)
	case policies.Preempt:
		if !r.running[i] {
			return fmt.Sprintf("job %d is not running", d.Job)
		}
		r.stop(i)
		r.attempt[i]-- // a preempted attempt is not one of its failures
		r.enqueue(i, now)
	default:
		return fmt.Sprintf("unknown decision kind %v", d.Kind)
	}
	return ""
}
