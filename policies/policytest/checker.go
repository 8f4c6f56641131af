package policytest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// CheckerOptions say what a driver may do that the contract allows but a
// plain run does not.
type CheckerOptions struct {
	// Adopts: the driver may report jobs as Started without a Start
	// decision (a live driver re-adopting processes after a restart).
	// Their placements are unknown, so the books are not checked while
	// one runs.
	Adopts bool
	// TrustNoPolicy skips the checks of the policy's half (for a test
	// policy that issues invalid decisions on purpose).
	TrustNoPolicy bool
	// HeldOutside: the cluster may hold capacity that no running job
	// holds (failed hardware blocked by the driver, MIG instances that do
	// not exist, services beside the batch jobs), so only "at least what
	// the running jobs hold" is checked, not equality.
	HeldOutside bool
}

// Checker wraps a policy and checks, at every call, that the driver
// calling it keeps the contract (policies/contract.go):
//
//   - time never goes backwards;
//   - every decision of the previous call is answered exactly once: a
//     Start by Started or a Rejection, a Preempt by Ended or a Rejection,
//     a Reconfigure by Reconfigured or a Rejection; nothing else is
//     rejected or started;
//   - the batch holds news: something besides those answers (the
//     simulator's rule for when to call, policies.Host.HasNews);
//   - a job leaves the queue only by starting, is queued once per entry,
//     and ends only while running;
//   - the tenant books equal what the running jobs hold, in GPU milli,
//     CPU and memory, and the cluster holds at least that (exactly that
//     unless HeldOutside): the previous call's reservations were dropped;
//   - within the call, Reserve takes exactly the capacity asked for.
//
// It also checks the policy's half: every Start names a queued job once
// and its placement was reserved in the same call, so a call's starts fit
// together. Log records every call's decisions, for determinism checks.
type Checker struct {
	inner policies.Policy
	opt   CheckerOptions

	started bool
	last    policies.Time
	issued  []policies.Decision
	running map[policies.JobID]hwmodel.Placement // nil placement: adopted
	// stopping are jobs whose Preempt was applied but whose processes a
	// live driver is still stopping: their Ended comes at a later call.
	stopping map[policies.JobID]bool
	queued   map[policies.JobID]bool

	reserved []string // this call's reservations, as placement keys
	reconfig int      // Reconfigure decisions applied
	errs     []error
	log      strings.Builder
	calls    int
}

var _ policies.Policy = (*Checker)(nil)

// Wrap returns a Checker around p.
func Wrap(p policies.Policy, opt CheckerOptions) *Checker {
	return &Checker{inner: p, opt: opt, running: map[policies.JobID]hwmodel.Placement{}, queued: map[policies.JobID]bool{},
		stopping: map[policies.JobID]bool{}}
}

// Name implements policies.Policy: the wrapped policy's name.
func (c *Checker) Name() string { return c.inner.Name() }

// maxErrors bounds what a broken driver makes the Checker keep.
const maxErrors = 20

func (c *Checker) fail(format string, a ...any) {
	if len(c.errs) < maxErrors {
		c.errs = append(c.errs, fmt.Errorf("call %d: %s", c.calls, fmt.Sprintf(format, a...)))
	}
}

// Err returns the violations found so far (nil when none).
func (c *Checker) Err() error { return errors.Join(c.errs...) }

// Log is every call's time and decisions, one line per call.
func (c *Checker) Log() string { return c.log.String() }

// Calls is how many calls the Checker has seen.
func (c *Checker) Calls() int { return c.calls }

func placementKey(p hwmodel.Placement) string { return fmt.Sprint(p) }

// Schedule implements policies.Policy: check the events, call the wrapped
// policy through a checking View, check its decisions.
func (c *Checker) Schedule(v policies.View) []policies.Decision {
	c.calls++
	now := v.Now()
	if c.started && now < c.last {
		c.fail("time went backwards from %d to %d", c.last, now)
	}
	c.started, c.last = true, now
	c.checkAnswers(v)
	c.applyEvents(v)
	c.checkBooks(v)

	c.reserved = c.reserved[:0]
	ds := c.inner.Schedule(&checkingView{View: v, c: c})
	if !c.opt.TrustNoPolicy {
		c.checkDecisions(v, ds)
	}
	c.issued = append(c.issued[:0], ds...)
	fmt.Fprintf(&c.log, "%d:", now)
	for _, d := range ds {
		fmt.Fprintf(&c.log, " %s/%d/%v/%d.%d/%v", d.Kind, d.Job, d.Placement, d.Node, d.GPU, d.Layout)
	}
	c.log.WriteByte('\n')
	return ds
}

func sameDecision(a, b policies.Decision) bool {
	return a.Kind == b.Kind && a.Job == b.Job && a.Node == b.Node && a.GPU == b.GPU &&
		placementKey(a.Placement) == placementKey(b.Placement) && fmt.Sprint(a.Layout) == fmt.Sprint(b.Layout)
}

// checkAnswers matches the previous call's decisions with this batch: a
// decision is answered by the rejection that carries it, else by being
// applied (Started, Ended, Reconfigured); each answer counts once, and
// nothing is started, reconfigured or rejected that no decision asked.
func (c *Checker) checkAnswers(v policies.View) {
	ev := v.Events()
	rejected := make([]bool, len(ev.Rejected))
	startedBy := map[policies.JobID]int{}
	for _, id := range ev.Started {
		startedBy[id]++
	}
	ended := map[policies.JobID]int{}
	for _, id := range ev.Ended {
		ended[id]++
	}
	reconfigured := map[policies.GPURef]int{}
	for _, g := range ev.Reconfigured {
		reconfigured[g]++
	}
	take := func(m map[policies.JobID]int, id policies.JobID) bool {
		if m[id] > 0 {
			m[id]--
			return true
		}
		return false
	}
	for _, d := range c.issued {
		k := -1
		for i, r := range ev.Rejected {
			if !rejected[i] && sameDecision(r.Decision, d) {
				k = i
				break
			}
		}
		if k >= 0 {
			rejected[k] = true
			if ev.Rejected[k].Reason == "" {
				c.fail("rejection of %s of job %d gives no reason", d.Kind, d.Job)
			}
			continue
		}
		applied := false
		switch d.Kind {
		case policies.Start:
			applied = take(startedBy, d.Job)
		case policies.Preempt:
			// Applied at once (Ended now) or in flight: a driver that
			// gives the job's processes a grace period to stop reports
			// the end at a later call.
			if !take(ended, d.Job) {
				c.stopping[d.Job] = true
			}
			applied = true
		case policies.Reconfigure:
			g := policies.GPURef{Node: d.Node, GPU: d.GPU}
			if reconfigured[g] > 0 {
				reconfigured[g]--
				applied = true
				c.reconfig++
			}
		}
		if !applied {
			c.fail("%s of job %d (node %d GPU %d) was neither applied nor rejected", d.Kind, d.Job, d.Node, d.GPU)
		}
	}
	for id := range c.stopping {
		if _, answered := ended[id]; answered {
			delete(c.stopping, id) // its end, whenever it comes, answers it
		}
	}
	for k, done := range rejected {
		if !done {
			c.fail("rejection of %s of job %d (%s) answers no decision of the previous call", ev.Rejected[k].Decision.Kind, ev.Rejected[k].Decision.Job, ev.Rejected[k].Reason)
		}
	}
	news := len(ev.Queued)+len(ev.Ended)+len(ev.Rejected)+len(ev.Unblocked) > 0
	for id, n := range startedBy {
		if n > 0 && !c.opt.Adopts {
			c.fail("job %d reported started %d time(s) without a Start decision", id, n)
		}
		news = news || n > 0
	}
	for g, n := range reconfigured {
		if n > 0 {
			c.fail("GPU %d/%d reported reconfigured without a Reconfigure decision", g.Node, g.GPU)
		}
		news = news || n > 0
	}
	if !news {
		c.fail("called without news: the batch holds only the answers to the previous call's starts and reconfigurations, a point at which the simulator does not call")
	}
}

// Reconfigurations is how many Reconfigure decisions the driver applied.
func (c *Checker) Reconfigurations() int { return c.reconfig }

// Stopping is how many preemptions are still in flight.
func (c *Checker) Stopping() int { return len(c.stopping) }

// applyEvents moves jobs between the Checker's queue and running set, in
// the only order a batch can hold them: answers first (a start of the
// previous call), then ends, then (re-)entries to the queue.
func (c *Checker) applyEvents(v policies.View) {
	ev := v.Events()
	placed := map[policies.JobID]hwmodel.Placement{}
	for _, d := range c.issued {
		if d.Kind == policies.Start {
			placed[d.Job] = d.Placement
		}
	}
	for _, id := range ev.Started {
		if _, ok := c.running[id]; ok {
			c.fail("job %d started while running", id)
		}
		if !c.queued[id] && !c.opt.Adopts {
			c.fail("job %d started without being queued", id)
		}
		delete(c.queued, id)
		c.running[id] = placed[id]
	}
	for _, id := range ev.Ended {
		if _, ok := c.running[id]; !ok {
			c.fail("job %d ended while not running", id)
		}
		delete(c.running, id)
	}
	for _, id := range ev.Queued {
		if v.Job(id) == nil {
			c.fail("unknown job %d queued", id)
			continue
		}
		if c.queued[id] {
			c.fail("job %d queued twice without starting", id)
		}
		if _, ok := c.running[id]; ok {
			c.fail("job %d queued while running", id)
		}
		c.queued[id] = true
	}
}

// checkBooks compares the tenant books and the cluster with what the
// running jobs hold.
func (c *Checker) checkBooks(v policies.View) {
	tenants := v.Tenants()
	want := make([][3]int64, len(tenants))
	var milli int64
	for id, p := range c.running {
		if p == nil {
			return // an adopted job: its placement is the driver's alone
		}
		j := v.Job(id)
		if j == nil || j.Tenant < 0 || j.Tenant >= len(tenants) {
			c.fail("running job %d has no valid tenant", id)
			return
		}
		w := &want[j.Tenant]
		w[0] += p.Milli()
		milli += p.Milli()
		for _, s := range p {
			w[1] += s.CPUMilli
			w[2] += s.MemoryMiB
		}
	}
	for i, t := range tenants {
		got := [3]int64{t.AllocatedMilliGPU, t.AllocatedCPUMilli, t.AllocatedMemMiB}
		if got != want[i] {
			c.fail("tenant %s books %v (milli-GPU, milli-CPU, MiB); its running jobs hold %v", t.Name, got, want[i])
		}
	}
	held := v.Cluster().AllocatedMilli()
	switch {
	case held < milli:
		c.fail("cluster holds %d milli-GPU, less than the running jobs' %d", held, milli)
	case held > milli && !c.opt.HeldOutside:
		c.fail("cluster holds %d milli-GPU, the running jobs %d: reservations or ended jobs were not released", held, milli)
	}
}

// checkDecisions checks the policy's half of the call.
func (c *Checker) checkDecisions(v policies.View, ds []policies.Decision) {
	starts := map[policies.JobID]bool{}
	reserved := slices.Clone(c.reserved)
	for _, d := range ds {
		if d.Kind != policies.Start {
			continue
		}
		if starts[d.Job] {
			c.fail("policy started job %d twice in one call", d.Job)
		}
		starts[d.Job] = true
		if !c.queued[d.Job] {
			c.fail("policy started job %d, which is not queued", d.Job)
		}
		k := slices.Index(reserved, placementKey(d.Placement))
		if k < 0 {
			c.fail("policy started job %d on %v without reserving it", d.Job, d.Placement)
			continue
		}
		reserved = slices.Delete(reserved, k, k+1)
	}
}

// checkingView is the View the wrapped policy sees: the driver's, with
// Reserve checked.
type checkingView struct {
	policies.View
	c *Checker
}

// HasSpeeds passes the driver's answer through (policies.SpeedView).
func (w *checkingView) HasSpeeds() bool { return policies.HasSpeeds(w.View) }

// HasData passes the driver's answer through (policies.DataView).
func (w *checkingView) HasData() bool {
	dv, ok := w.View.(policies.DataView)
	return ok && dv.HasData()
}

// DataLocality passes the driver's answer through (policies.DataView).
func (w *checkingView) DataLocality(j *policies.Job, node int) float64 {
	return w.View.(policies.DataView).DataLocality(j, node)
}

// MaxRate passes the driver's answer through (policies.SpeedView).
func (w *checkingView) MaxRate() float64 { return w.View.(policies.SpeedView).MaxRate() }

// RateOn passes the driver's answer through (policies.SpeedView).
func (w *checkingView) RateOn(j *policies.Job, m hwmodel.ModelID) float64 {
	return w.View.(policies.SpeedView).RateOn(j, m)
}

func (w *checkingView) Reserve(p hwmodel.Placement) error {
	before := w.View.Cluster().AllocatedMilli()
	err := w.View.Reserve(p)
	after := w.View.Cluster().AllocatedMilli()
	switch {
	case err == nil && after-before != p.Milli():
		w.c.fail("Reserve(%v) took %d milli-GPU, want %d", p, after-before, p.Milli())
	case err != nil && after != before:
		w.c.fail("a failed Reserve(%v) changed the cluster by %d milli-GPU", p, after-before)
	}
	if err == nil {
		w.c.reserved = append(w.c.reserved, placementKey(p))
	}
	return err
}
