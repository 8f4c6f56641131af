package policies

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
)

// Host is the driver half of the contract, written once: the View a
// policy schedules through, the reservations of one call, the Events
// batch, the application of decisions in order with their rejections,
// and the tenant books over GPU, CPU and memory. Every driver embeds a
// Host (the simulator's Engine, live mode's Driver, the test fake) and
// adds only what is its own: its clock, what a job is, and how a decision
// is carried out.
//
// A driver tells the Host of each transition as it makes it:
//
//	h.Queue(id)       a job entered the queue (ready, retried, preempted)
//	h.Start(id, p)    a job took p: allocated in the cluster, booked to its tenant
//	h.Stop(id, p)     a running job gave p back: released and unbooked
//	h.Reconfigured(g) a Reconfigure was applied; h.Unblocked(g) when it is usable
//
// and calls h.Schedule(policy, apply) at a scheduling point, an instant
// at which h.HasNews() holds; apply
// carries out one decision and returns "" or why it refused it. The Host
// guarantees that the policy sees each transition once, in the order the
// driver made them, and that every decision is answered once, by a Start
// it reported or by a Rejection.
type Host struct {
	cluster *hwmodel.Cluster
	jobs    []Job
	// tenantOf is each job's Tenant, copied at Init and AddJob: the books
	// read it at every start and end, and a job's record is large and
	// seldom in cache when it ends.
	tenantOf []int32
	tenants  []Tenant
	events   Events
	reserved []hwmodel.Placement
	// held: while Schedule applies decisions, reserved[held:] are still
	// allocated (Schedule, adoptable).
	held   int
	inCall bool
	// applying is set while Schedule applies the call's decisions, whose
	// Starts and Reconfigures are answers, not news.
	applying bool
	// news: the batch holds something besides those answers.
	news bool
	now  Time
	// rates are the run's GPU speeds; nil when it models none. maxRate is
	// the largest rate of any job's (class, reference) on the cluster's
	// models; pairs are those seen, so AddJob adds only new ones.
	rates   *hwmodel.Rates
	maxRate float64
	pairs   map[uint32]bool
	// data: the jobs read the cluster's datasets (DataView).
	data bool
	// wake is when the policy asked to be called again (0: never);
	// asking collects the current call's requests.
	wake, asking Time
	// appJob answers AppView.AppJob; nil when the run has no application
	// model.
	appJob func(JobID) (AppJob, bool)
}

var (
	_ SpeedView = (*Host)(nil)
	_ DataView  = (*Host)(nil)
	_ WakeView  = (*Host)(nil)
	_ AppView   = (*Host)(nil)
)

// SetAppJobs sets where AppJob's answers come from: the driver's
// application model (nil: none).
func (h *Host) SetAppJobs(f func(JobID) (AppJob, bool)) { h.appJob = f }

// AppJob implements AppView.
func (h *Host) AppJob(id JobID) (AppJob, bool) {
	if h.appJob == nil {
		return AppJob{}, false
	}
	return h.appJob(id)
}

// Init sets the cluster, tenants and jobs the Host books; the tenants'
// books start as given (usually empty). jobs[i].ID must be i; the Host
// keeps the slice, so a driver that allocated it may go on writing its
// jobs' fields (Queued, Start, Attempt) through it; a job's Tenant must
// not change.
func (h *Host) Init(c *hwmodel.Cluster, tenants []Tenant, jobs []Job) error {
	tenantOf := make([]int32, len(jobs))
	for i := range jobs {
		if jobs[i].ID != JobID(i) {
			return fmt.Errorf("policies: job %d has ID %d; IDs must be dense from 0", i, jobs[i].ID)
		}
		tenantOf[i] = int32(jobs[i].Tenant)
	}
	*h = Host{cluster: c, jobs: jobs, tenantOf: tenantOf, tenants: tenants}
	return nil
}

// AddJob appends a job, giving it the next ID, and returns the ID. It
// does not queue it.
func (h *Host) AddJob(j Job) JobID {
	j.ID = JobID(len(h.jobs))
	h.jobs = append(h.jobs, j)
	h.tenantOf = append(h.tenantOf, int32(j.Tenant))
	if h.rates != nil {
		h.notePair(&h.jobs[len(h.jobs)-1])
	}
	return j.ID
}

// AddTenant appends a tenant with empty books and returns its index.
func (h *Host) AddTenant(name string, weight float64) int {
	h.tenants = append(h.tenants, Tenant{Name: name, Weight: weight})
	return len(h.tenants) - 1
}

// SetSpeeds makes the run model GPU speeds: View.Rate answers from r
// (compiled for the jobs' classes). nil turns speeds off.
func (h *Host) SetSpeeds(r *hwmodel.Rates) {
	h.rates, h.maxRate, h.pairs = r, 1, nil
	if r == nil {
		return
	}
	h.pairs = make(map[uint32]bool)
	for i := range h.jobs {
		h.notePair(&h.jobs[i])
	}
}

// notePair raises maxRate to j's fastest rate on the cluster's models,
// once per (class, reference) pair.
func (h *Host) notePair(j *Job) {
	key := uint32(j.Class)<<8 | uint32(j.Reference)
	if h.pairs[key] {
		return
	}
	h.pairs[key] = true
	for m := uint64(h.cluster.ModelsPresent()); m != 0; m &= m - 1 {
		on := hwmodel.ModelID(bits.TrailingZeros64(m))
		h.maxRate = max(h.maxRate, h.rates.Rate(j.Class, j.Reference, on))
	}
}

// MaxRate implements SpeedView.
func (h *Host) MaxRate() float64 {
	if h.rates == nil {
		return 1
	}
	return h.maxRate
}

// RateOn implements SpeedView.
func (h *Host) RateOn(j *Job, m hwmodel.ModelID) float64 {
	if h.rates == nil {
		return 1
	}
	return h.rates.Rate(j.Class, j.Reference, m)
}

// SetData tells the Host that jobs read the cluster's datasets.
func (h *Host) SetData(on bool) { h.data = on }

// HasData implements DataView.
func (h *Host) HasData() bool { return h.data }

// DataLocality implements DataView.
func (h *Host) DataLocality(j *Job, node int) float64 {
	if j.Dataset == 0 || h.cluster.DataLocal(node, int(j.Dataset)-1, h.now) {
		return 1
	}
	return 0
}

// HasSpeeds implements SpeedView.
func (h *Host) HasSpeeds() bool { return h.rates != nil }

// Rate implements View: j's speed on the GPU model of p (a gang runs on
// one model) relative to its Reference model, times its class's factor
// for how p is spread (hwmodel.Cluster.SpreadOf) when p spans nodes.
func (h *Host) Rate(j *Job, p hwmodel.Placement) float64 {
	if h.rates == nil || len(p) == 0 || p[0].GPUs == 0 {
		return 1
	}
	r := h.RateOn(j, h.cluster.NodeModel(p[0].Node))
	if len(p) > 1 {
		r *= h.rates.Spread(j.Class, h.cluster.SpreadOf(p))
	}
	return r
}

// NumJobs is how many jobs the Host holds.
func (h *Host) NumJobs() int { return len(h.jobs) }

// SetNow sets the time the policy sees.
func (h *Host) SetNow(t Time) { h.now = t }

// Now implements View.
func (h *Host) Now() Time { return h.now }

// Cluster implements View: a read-only view of the capacity book, with
// this call's reservations taken while a call runs. The Host keeps the
// *hwmodel.Cluster itself; the policy reaches it only through Reserve.
func (h *Host) Cluster() hwmodel.ClusterView { return h.cluster.View() }

// Job implements View; nil for an unknown id. The driver writes through
// the same pointer.
func (h *Host) Job(id JobID) *Job {
	if id < 0 || int(id) >= len(h.jobs) {
		return nil
	}
	return &h.jobs[id]
}

// Tenants implements View.
func (h *Host) Tenants() []Tenant { return h.tenants }

// Events implements View.
func (h *Host) Events() *Events { return &h.events }

// errReserveOutsideCall is what Reserve returns between calls.
var errReserveOutsideCall = errors.New("policies: Reserve outside Schedule")

// Reserve implements View.
func (h *Host) Reserve(p hwmodel.Placement) error {
	if !h.inCall {
		return errReserveOutsideCall
	}
	if err := h.cluster.Allocate(p); err != nil {
		return err
	}
	h.reserved = append(h.reserved, p)
	return nil
}

// Queue reports that job id entered the queue.
func (h *Host) Queue(id JobID) {
	h.events.Queued = append(h.events.Queued, id)
	h.news = true
}

// Start allocates p for job id, books it to the job's tenant and reports
// the start. It fails, changing nothing, when p does not fit. While
// Schedule applies a call's decisions, a p that is the next reservation
// still held (adoptable) takes it over instead of being allocated again:
// it fits by construction. Any other p first drops the reservations still
// held, as Schedule would have before applying anything.
func (h *Host) Start(id JobID, p hwmodel.Placement) error {
	if h.held < len(h.reserved) {
		if samePlacement(p, h.reserved[h.held]) {
			h.held++
			h.started(id, p)
			return nil
		}
		h.dropHeld()
	}
	if err := h.cluster.Allocate(p); err != nil {
		return err
	}
	h.started(id, p)
	return nil
}

func (h *Host) started(id JobID, p hwmodel.Placement) {
	h.book(id, p, +1)
	h.events.Started = append(h.events.Started, id)
	h.news = h.news || !h.applying
}

// Stop releases p, which job id held, unbooks it and reports the end.
func (h *Host) Stop(id JobID, p hwmodel.Placement) {
	h.cluster.Release(p)
	h.book(id, p, -1)
	h.events.Ended = append(h.events.Ended, id)
	h.news = true
}

// book adds (sign +1) or removes (-1) what p holds to job id's tenant: the
// placement's GPU milli, CPU and memory, which a driver has checked equal
// the job's request.
func (h *Host) book(id JobID, p hwmodel.Placement, sign int64) {
	t := &h.tenants[h.tenantOf[id]]
	t.AllocatedMilliGPU += sign * p.Milli()
	var cpu, mem int64
	for _, s := range p {
		cpu += s.CPUMilli
		mem += s.MemoryMiB
	}
	t.AllocatedCPUMilli += sign * cpu
	t.AllocatedMemMiB += sign * mem
}

// CheckPlacement returns why p cannot be job id's placement, or "": it
// must be non-empty, on existing nodes whose GPU model the job accepts,
// with the job's share per GPU, GPU count, CPU and memory exactly. A MIG
// job's placement names one instance, which only the driver's MIG books
// can check; it is refused here.
func (h *Host) CheckPlacement(id JobID, p hwmodel.Placement) string {
	return h.checkPlacement(id, p, false)
}

// CheckElasticPlacement is CheckPlacement for a job whose GPU count the
// driver lets the policy choose (a job training an application under an
// application model, which rescales its batch configuration to the
// placement): p must have whole GPUs of an accepted model, of any count
// above 0, and CPU and memory are not checked against the request (they
// scale with the GPUs; the application model does not time them).
func (h *Host) CheckElasticPlacement(id JobID, p hwmodel.Placement) string {
	return h.checkPlacement(id, p, true)
}

func (h *Host) checkPlacement(id JobID, p hwmodel.Placement, elastic bool) string {
	j := h.Job(id)
	if j == nil {
		return fmt.Sprintf("job %d does not exist", id)
	}
	req := &j.Req
	if len(p) == 0 {
		return "empty placement"
	}
	if req.WantsMIG() {
		return fmt.Sprintf("job %s asks for a MIG instance, which this driver cannot place", j.Name)
	}
	var cpu, mem int64
	for _, s := range p {
		if s.Node < 0 || s.Node >= h.cluster.NumNodes() {
			return fmt.Sprintf("node %d does not exist", s.Node)
		}
		if s.GPUs != 0 && !req.Models.Accepts(h.cluster.NodeModel(s.Node)) {
			return fmt.Sprintf("node %s has %s GPUs, job accepts %s", h.cluster.Node(s.Node).Name,
				hwmodel.Model(h.cluster.Node(s.Node).Model).Name, req.Models)
		}
		if s.Instance != 0 {
			return fmt.Sprintf("share names MIG instance %d, job %s asks for no MIG instance", s.Instance-1, j.Name)
		}
		if s.GPUs != 0 && s.Milli != req.GPUMilli {
			return fmt.Sprintf("share of %d milli per GPU, job asks for %d", s.Milli, req.GPUMilli)
		}
		cpu += s.CPUMilli
		mem += s.MemoryMiB
	}
	if elastic {
		if p.GPUCount() == 0 || req.GPUMilli != hwmodel.MilliPerGPU {
			return fmt.Sprintf("placement has %d whole GPUs; an elastic job needs at least one", p.GPUCount())
		}
		return ""
	}
	if n := p.GPUCount(); n != req.GPUs {
		return fmt.Sprintf("placement has %d GPUs, job asks for %d", n, req.GPUs)
	}
	if cpu != req.CPUMilli || mem != req.MemoryMiB {
		return fmt.Sprintf("placement gives %d milli-CPU and %d MiB, job asks for %d and %d", cpu, mem, req.CPUMilli, req.MemoryMiB)
	}
	return ""
}

// Reconfigured reports an applied Reconfigure of GPU g.
func (h *Host) Reconfigured(g GPURef) {
	h.events.Reconfigured = append(h.events.Reconfigured, g)
	h.news = h.news || !h.applying
}

// Unblocked reports that GPU g's reconfiguration is over.
func (h *Host) Unblocked(g GPURef) {
	h.events.Unblocked = append(h.events.Unblocked, g)
	h.news = true
}

// HasNews reports whether the policy has something to hear: a transition
// since the last call other than the answers to that call's own Starts
// and Reconfigures (a rejection, a preemption's end, an arrival, an end,
// an unblocked GPU, an adopted job). A driver calls the policy when, and
// only when, it has news. A call whose batch holds only those answers
// would meet the state the last call left, but EASY backfill would
// compute its reservation again with the jobs it just backfilled running
// and could backfill more: the simulator never makes that call, so no
// driver may, or a live run and its replay part.
func (h *Host) HasNews() bool { return h.news || (h.wake > 0 && h.now >= h.wake) }

// WakeAt implements WakeView.
func (h *Host) WakeAt(t Time) {
	if h.inCall && t > h.now && (h.asking == 0 || t < h.asking) {
		h.asking = t
	}
}

// NextWake is when the policy asked, at its last call, to be called
// again; false when it did not ask. A driver makes a scheduling point
// then (or at its next chance after): HasNews holds from that time on.
func (h *Host) NextWake() (Time, bool) { return h.wake, h.wake > 0 }

// Schedule runs one scheduling point: it calls the policy with this Host
// as its View, drops the call's reservations (latest first; in effect:
// a Start that matches the next one takes it over, which leaves the same
// books), starts a new Events batch, and applies the decisions in order
// through apply, which
// returns "" when it carried a decision out (reporting it through Start,
// Stop, Queue or Reconfigured) or why it refused it; a refusal becomes a
// Rejection of the next batch. It returns the policy's decisions.
func (h *Host) Schedule(p Policy, apply func(Decision) string) []Decision {
	h.inCall = true
	h.asking = 0
	decisions := p.Schedule(h)
	h.inCall = false
	h.wake = h.asking
	h.held = 0
	h.events.Reset()
	h.news = false
	h.applying = true
	for _, d := range decisions {
		// The capacity the call reserved is released and taken again by
		// its Starts: while decisions are Starts of the reservations in
		// order, each keeps its reservation (Start) instead, which leaves
		// the same books. Anything else drops what is still held first.
		next := h.held
		if next < len(h.reserved) && !adoptable(d, h.reserved[next]) {
			h.dropHeld()
		}
		if reason := apply(d); reason != "" {
			h.events.Rejected = append(h.events.Rejected, Rejection{Decision: d, Reason: reason})
			h.news = true
		}
		if h.held == next {
			h.dropHeld() // not taken over: refused before Start, or no Start
		}
	}
	h.dropHeld()
	h.applying = false
	clear(h.reserved)
	h.reserved = h.reserved[:0]
	h.held = 0
	return decisions
}

// dropHeld releases the reservations still held (latest first).
func (h *Host) dropHeld() {
	for k := len(h.reserved) - 1; k >= h.held; k-- {
		h.cluster.Release(h.reserved[k])
	}
	h.held = len(h.reserved)
}

// adoptable reports whether decision d may take over reservation r: a
// Start of exactly r, with no MIG instance (a driver checks an instance's
// state in its books, where a held reservation would show it busy).
// Rejections other than Start's capacity check read nothing that the
// held reservations change.
func adoptable(d Decision, r hwmodel.Placement) bool {
	if d.Kind != Start || !samePlacement(d.Placement, r) {
		return false
	}
	for _, s := range r {
		if s.Instance != 0 {
			return false
		}
	}
	return true
}

// samePlacement reports whether a and b are the same slice.
func samePlacement(a, b hwmodel.Placement) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// CheckBooks verifies the tenant books against the jobs the driver says
// are running with their placements: each tenant's GPU, CPU and memory
// equal the sum over its running jobs. Drivers call it from their
// invariant checks; the conformance suite calls it after every step.
func (h *Host) CheckBooks(running func(yield func(JobID, hwmodel.Placement) bool)) error {
	want := make([]Tenant, len(h.tenants))
	for id, p := range running {
		t := &want[h.jobs[id].Tenant]
		t.AllocatedMilliGPU += p.Milli()
		for _, s := range p {
			t.AllocatedCPUMilli += s.CPUMilli
			t.AllocatedMemMiB += s.MemoryMiB
		}
	}
	for i, t := range h.tenants {
		w := want[i]
		if t.AllocatedMilliGPU != w.AllocatedMilliGPU || t.AllocatedCPUMilli != w.AllocatedCPUMilli || t.AllocatedMemMiB != w.AllocatedMemMiB {
			return fmt.Errorf("tenant %s books %d milli-GPU, %d milli-CPU, %d MiB; its running jobs hold %d, %d, %d",
				t.Name, t.AllocatedMilliGPU, t.AllocatedCPUMilli, t.AllocatedMemMiB, w.AllocatedMilliGPU, w.AllocatedCPUMilli, w.AllocatedMemMiB)
		}
	}
	return nil
}
