package policies

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
)

// Time is microseconds since the start of a run (see hwmodel.Time). Drivers
// convert their own clocks to Time at their edge; policies never read a wall
// clock.
type Time = hwmodel.Time

// JobID names a schedulable unit (a job, or one task of a DAG job). IDs are
// dense from 0 in submission order, so they double as slice indices and as
// the final tie-breaker of every order.
type JobID int32

// Job is what a policy knows about one schedulable unit. The driver owns it;
// policies must treat it as read-only.
type Job struct {
	ID JobID
	// Class is the job's class in the run's speed table (0: none, the
	// table's generic speeds); Reference is the GPU model its Estimate and
	// duration were measured on. View.Rate reads them.
	Class     uint16
	Reference hwmodel.ModelID
	// Dataset is the dataset the job reads, as the cluster's dataset
	// index plus one; 0 for none (DataView.DataLocality reads it).
	Dataset  uint16
	Name     string
	Tenant   int // index into View.Tenants()
	Priority int
	Submit   Time // when the job was submitted
	Queued   Time // when it last entered the queue (ready, or back from a failure)
	Start    Time // when the current attempt started; valid while running
	Estimate Time // the user's runtime estimate; never 0 (drivers default it)
	// Oracle is the true duration when the driver was asked to reveal it
	// (SJF with --oracle); zero otherwise.
	Oracle  Time
	Attempt int // 0 for the first attempt
	Req     hwmodel.Request
}

// Tenant is one group of jobs that fair share treats as a unit.
type Tenant struct {
	Name   string
	Weight float64
	// Allocated is what the tenant's running jobs hold now, in milli-GPU,
	// milli-CPU and MiB; fair share reads it.
	AllocatedMilliGPU int64
	AllocatedCPUMilli int64
	AllocatedMemMiB   int64
}

// DecisionKind tells what a Decision asks the driver to do.
type DecisionKind uint8

const (
	// Start runs a queued job on a placement.
	Start DecisionKind = iota + 1
	// Preempt stops a running job and returns it to the queue.
	Preempt
	// Reconfigure repartitions one GPU (Decision.Node, Decision.GPU) into
	// Decision.Layout (hwmodel.Cluster.Reconfigure's rules). The driver
	// refuses it if it would destroy an instance in use, if the GPU is
	// already being reconfigured, if the run does not allow
	// reconfiguration, or if it would turn a whole GPU into a MIG GPU and
	// the run does not allow that; new instances become usable after the
	// driver's reconfiguration time (Events.Unblocked). Decision.Job is
	// ignored (-1 by convention).
	Reconfigure
)

func (k DecisionKind) String() string {
	switch k {
	case Start:
		return "start"
	case Preempt:
		return "preempt"
	case Reconfigure:
		return "reconfigure"
	}
	return fmt.Sprintf("DecisionKind(%d)", uint8(k))
}

// Decision is one thing a policy asks its driver to do.
type Decision struct {
	Kind      DecisionKind
	Job       JobID
	Placement hwmodel.Placement // for Start
	// For Reconfigure: the GPU (node index, GPU index within the node) and
	// its new layout.
	Node, GPU int
	Layout    hwmodel.MIGLayout
}

// Rejection is a decision the driver refused, with the reason.
type Rejection struct {
	Decision Decision
	Reason   string
}

// GPURef names one GPU: a node index and the GPU's index within the node.
type GPURef struct{ Node, GPU int }

// Events is what happened since the policy's previous call. Every job that
// enters the queue appears in Queued exactly once per entry; a job leaves the
// queue only through Started (the driver accepted a Start). Rejected Starts
// leave the job queued, so the policy must keep it.
//
// Every Reconfigure decision is answered at the next call by exactly one
// Reconfigured (applied: the GPU has its new layout, and its new instances
// are blocked) or Rejected; an applied one later appears once in Unblocked,
// when the driver's reconfiguration time is over and its new instances can
// be used. Between the two the GPU is "in flight": a driver rejects another
// Reconfigure of it.
type Events struct {
	Queued       []JobID // became ready, or returned after a failure or preemption
	Started      []JobID // Start decisions the driver applied
	Ended        []JobID // left running: succeeded, failed, or preempted
	Rejected     []Rejection
	Reconfigured []GPURef // Reconfigure decisions the driver applied
	Unblocked    []GPURef // reconfigurations that finished
}

// Reset empties the slices, keeping their storage.
func (e *Events) Reset() {
	e.Queued = e.Queued[:0]
	e.Started = e.Started[:0]
	e.Ended = e.Ended[:0]
	e.Rejected = e.Rejected[:0]
	e.Reconfigured = e.Reconfigured[:0]
	e.Unblocked = e.Unblocked[:0]
}

// View is the read-only window a policy schedules through. Cluster
// returns a hwmodel.ClusterView: the free capacity now, minus whatever the
// policy has already reserved in this call. The view has the cluster's
// queries and none of its mutators (Allocate, Release, Reconfigure,
// UnblockMIG), so the type, not a convention, makes Reserve the only way a
// policy takes capacity; capacity is given back, and layouts changed, only
// by the driver carrying out the policy's decisions.
type View interface {
	Now() Time
	Cluster() hwmodel.ClusterView
	Job(id JobID) *Job
	Tenants() []Tenant
	Events() *Events
	// Rate is how fast job j progresses on placement p relative to the
	// pace its Estimate was measured at: 1 when the run models no GPU
	// speeds, for a placement without GPUs, and on j's Reference model.
	// A job expected to take d there takes hwmodel.ScaleDuration(d, rate).
	Rate(j *Job, p hwmodel.Placement) float64
	// Reserve tentatively takes p's capacity for the rest of this call, so
	// later placements in the same call see it as used. The driver drops all
	// reservations when the call returns and then applies the decisions.
	Reserve(p hwmodel.Placement) error
}

// SpeedView is a View that can tell whether its run models GPU speeds, so
// that a policy can skip the placement-dependent work of expected ends
// when every rate is 1. A View without it models none.
type SpeedView interface {
	View
	HasSpeeds() bool
	// RateOn is View.Rate for a placement on model m.
	RateOn(j *Job, m hwmodel.ModelID) float64
	// MaxRate bounds every rate of the run's jobs on the cluster's
	// models from above, so that a policy can tell from a measured
	// duration alone that a job cannot end by some time anywhere.
	MaxRate() float64
}

// HasSpeeds reports whether v's run models GPU speeds (View.Rate may be
// other than 1).
func HasSpeeds(v View) bool {
	sv, ok := v.(SpeedView)
	return ok && sv.HasSpeeds()
}

// Suspender is a Policy whose preemptions suspend jobs rather than stop
// them: Gandiva's time slicing keeps a suspended job's state, so a driver
// keeps all of a job's progress across its Preempt decisions, whatever
// its checkpoints (the simulator does; a live job keeps what it saves).
// Without it a job longer than the quantum would start over at every
// turn and never finish.
type Suspender interface {
	Policy
	Suspends() bool
}

// Suspends reports whether p suspends the jobs it preempts (Suspender).
func Suspends(p Policy) bool {
	s, ok := p.(Suspender)
	return ok && s.Suspends()
}

// WakeView is a View whose driver calls the policy again at a time the
// policy asks for, even if nothing else happens then: a preemptive order
// whose priorities change with time (a running job crossing a service
// threshold, a quantum running out) asks to be woken when the next one
// changes. Each call's requests replace the previous call's, so a policy
// asks again at every call for what it still wants; within a call the
// earliest time asked for counts, and a time not after Now is ignored.
// A driver may wake the policy later than asked (live mode at its next
// tick; the simulator under a decision interval at the next multiple of
// it), never earlier.
type WakeView interface {
	View
	WakeAt(t Time)
}

// wakeAt asks v for a call at t when v can wake its policy.
func wakeAt(v View, t Time) {
	if wv, ok := v.(WakeView); ok {
		wv.WakeAt(t)
	}
}

// DataView is a View that knows where the cluster's datasets are: a
// policy that weighs data locality asks it. A View without it, or whose
// HasData is false, has no datasets: every job's locality is 1.
type DataView interface {
	View
	HasData() bool
	// DataLocality is d_ij: 1 when node holds job j's dataset now (a
	// replica, or a cached copy whose read has finished), else 0; 1 for a
	// job that reads none.
	DataLocality(j *Job, node int) float64
}

// dataView is v as a DataView when it has data, else nil.
func dataView(v View) DataView {
	if dv, ok := v.(DataView); ok && dv.HasData() {
		return dv
	}
	return nil
}

// Policy orders the queue and places jobs. It is a pure state machine over
// the events the View reports: it must be deterministic (ties broken by
// JobID, randomness only from a stream its constructor was given), must not
// read the wall clock, start goroutines or do I/O.
type Policy interface {
	Name() string
	Schedule(v View) []Decision
}

// AppJob is what an AppView tells of a job that trains an application
// under the run's application model (hwmodel.AppModel): the application,
// the global batch size the job keeps on any GPU count, and its training
// state now (a running job's progress played forward to Now).
type AppJob struct {
	App   *hwmodel.App
	Batch int
	State hwmodel.AppState
}

// AppView is a View whose run times jobs by an application model: a
// policy that sizes jobs by their predicted speed (optimus) reads a job's
// application and training state from it. ok is false for a job that
// trains no application, and AppJob is never ok when the run has no
// application model. Under the model a job may be started on another GPU
// count than it asks for (the driver rescales its batch configuration to
// the placement's GPUs; see sim's application model).
type AppView interface {
	View
	AppJob(id JobID) (AppJob, bool)
}
