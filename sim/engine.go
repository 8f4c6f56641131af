package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// JobState is where a job is in its life. Every job is in exactly one.
type JobState uint8

const (
	// Pending: submitted (or not yet), waiting for its dependencies.
	Pending JobState = iota
	// Ready: queued, waiting for the policy to start it.
	Ready
	// Running: an attempt is in progress.
	Running
	// Succeeded and Failed are terminal.
	Succeeded
	Failed
)

var stateNames = [...]string{"pending", "ready", "running", "succeeded", "failed"}

func (s JobState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("JobState(%d)", uint8(s))
}

// Terminal reports whether s is Succeeded or Failed.
func (s JobState) Terminal() bool { return s == Succeeded || s == Failed }

// Outcome is what happened to one job in a run.
//
// Its fields are ordered to pack: a run holds one per job until its
// records are written. The attempt log is Log (or Attempt, one at a
// time): the first attempt is kept in the outcome, from its own fields
// (an attempt's start, wait and placement are the outcome's while it is
// the only one), and only a job that ran again has a log of its own.
type Outcome struct {
	State JobState
	// FailReason says why a job failed, in a fixed vocabulary (FailNone
	// for a job that did not fail); Reason says it in words ("attempt 2
	// failed, no retries left", "dependency x failed", "unsatisfiable:
	// ...").
	FailReason FailReason
	firstEnded endCode // the first attempt's Ended, while log is nil
	Attempts   int32
	Submit     hwmodel.Time
	Ready      hwmodel.Time // when its dependencies were all done
	Start      hwmodel.Time // first attempt's start; == End when it never ran
	End        hwmodel.Time
	Wait       hwmodel.Time // total time ready but not running
	Run        hwmodel.Time // total running time over all attempts
	// Placement is where the last attempt ran (nil if it never ran). It is
	// the placement the policy decided, kept rather than copied (a MIG
	// share's Instance is rewritten while it runs if a reconfiguration
	// moves its instance; afterwards it may name another instance).
	Placement hwmodel.Placement
	// MIGProfile is the profile of the MIG instance the last attempt ran
	// on; "" for other jobs.
	MIGProfile string
	// HardwareFailures counts the attempts lost to injected faults.
	// LostTime is the wall time of attempts that bought no lasting
	// progress: work since the last completed checkpoint when an attempt
	// failed or was preempted (an unfinished checkpoint included), the
	// time it ran on failed hardware until detection, and the restart time
	// of every attempt after a failure. CheckpointTime is the wall time
	// spent on completed checkpoints.
	HardwareFailures int
	LostTime         hwmodel.Time
	CheckpointTime   hwmodel.Time
	// Preemptions counts the job's attempts that a policy preempted;
	// PreemptLost is the part of LostTime they cost: progress not saved
	// when they stopped, their start-up, and the restart time of the
	// attempts after them (Config.PreemptRestart).
	Preemptions int
	PreemptLost hwmodel.Time
	Reason      string
	firstEnd    hwmodel.Time // the first attempt's End, while log is nil
	// log is every attempt, once the job has started a second (or the
	// outcome is a Snapshot's copy); nil before.
	log *[]Attempt
}

// Attempt is one attempt of a job: from its start until it ended, was
// preempted or was lost to a hardware failure. An attempt still running
// when the run stopped has End == -1 and AttemptRunning.
type Attempt struct {
	Start, End hwmodel.Time
	// Wait is the time the job was queued just before this attempt.
	Wait hwmodel.Time
	// Placement is where the attempt ran (kept, not copied: see
	// Outcome.Placement).
	Placement hwmodel.Placement
	Ended     AttemptEnd
}

// AttemptEnd says how an attempt ended.
type AttemptEnd string

const (
	AttemptSucceeded AttemptEnd = "succeeded"        // the job finished
	AttemptFailed    AttemptEnd = "failed"           // a failure the trace records
	AttemptPreempted AttemptEnd = "preempted"        // the policy preempted it
	AttemptHardware  AttemptEnd = "hardware_failure" // a node or GPU failure ended it
	AttemptRunning   AttemptEnd = "running"          // the run stopped first
)

// ReasonUnsatisfiable starts the Reason of a job failed at submission
// because no node of the cluster could ever hold its request.
const ReasonUnsatisfiable = "unsatisfiable: "

// FailReason is why a job failed. runner.Records maps it to the
// vocabulary of the results files (results.ReasonRetriesExhausted and
// the others), which live mode shares; the words are defined there only.
type FailReason uint8

const (
	// FailNone: the job succeeded (or is not terminal).
	FailNone FailReason = iota
	// FailRetriesExhausted: its last attempt failed (a failure the trace
	// records or a hardware failure) and the retry policy allowed no
	// further attempt, the attempts granted by the deadline-aware rule
	// included.
	FailRetriesExhausted
	// FailDeadline: the deadline-aware retry rule gave up because no
	// further attempt could finish in time (Reason is ReasonDeadline).
	FailDeadline
	// FailDependency: a job it depends on failed; it never ran.
	FailDependency
	// FailUnsatisfiable: no node of the cluster could ever hold its
	// request (Reason starts with ReasonUnsatisfiable); it never ran.
	FailUnsatisfiable
)

var failReasonNames = [...]string{"FailNone", "FailRetriesExhausted", "FailDeadline", "FailDependency", "FailUnsatisfiable"}

func (r FailReason) String() string {
	if int(r) < len(failReasonNames) {
		return failReasonNames[r]
	}
	return fmt.Sprintf("FailReason(%d)", uint8(r))
}

// Observation is the cluster state after a batch of simultaneous events.
type Observation struct {
	Queued, Running, InSystem int
	// AllocatedMilli is the GPU milli that jobs hold; DownMilli is the
	// GPU milli out of service after detected faults (not in
	// AllocatedMilli).
	AllocatedMilli, DownMilli int64
	// MIG compute slices (see results.State): of MIG-enabled GPUs, of busy
	// instances, and, only while a MIG job is queued, of free usable
	// instances and of those among them that no queued MIG request fits.
	MIGSlices, MIGBusySlices, MIGFreeSlices, MIGFragSlices int
	// TenantMilli is the GPU milli that each tenant's running jobs hold,
	// indexed like Workload.Tenants (the sum is AllocatedMilli). It is a
	// read-only view of the engine's books, valid only during the Observe
	// call: copy what you keep, and never write to it.
	TenantMilli []int64
	// CoupledMilli is the part of AllocatedMilli that the coupled model
	// (Config.Coupled) holds.
	CoupledMilli int64
}

// Config describes one run. The engine takes ownership of Cluster (it must
// be idle) and never modifies Workload.
type Config struct {
	Cluster  *hwmodel.Cluster
	Workload *workloads.Workload
	Policy   policies.Policy
	// Speeds, when set, makes a job's pace depend on the GPU model it runs
	// on: its durations were measured on its reference model (the job's
	// MeasuredOn, else SpeedReference), and on a model the table rates at
	// r times that speed it makes progress r times as fast (see the
	// package doc). nil: every model runs every job at its measured pace.
	Speeds         *hwmodel.SpeedTable
	SpeedReference hwmodel.ModelID
	// RevealOracle lets policies see each job's true duration (Job.Oracle).
	RevealOracle bool
	// DefaultEstimate is the runtime estimate of jobs whose trace has none
	// (after workloads.FillEstimates, normally none); default 1 h.
	DefaultEstimate hwmodel.Time
	// CheckInvariants re-verifies the engine's books after every event.
	// It costs O(cluster + jobs) per event: meant for tests.
	CheckInvariants bool
	// Observe, if set, is called after every batch of simultaneous events
	// with the state that holds until the next batch.
	Observe func(now hwmodel.Time, o Observation)
	// MIGReconfigure lets the policy repartition MIG GPUs (Reconfigure
	// decisions); without it MIG layouts are static, Reconfigure decisions
	// are rejected, and a MIG job that no instance of the initial layouts
	// matches fails at submission. MIGConvertWhole also lets it turn idle
	// whole GPUs into MIG GPUs and back (a layout for a GPU that is not
	// MIG-enabled, or an empty one); without it the set of MIG GPUs is
	// fixed and a MIG job that no MIG GPU's model can serve fails at
	// submission.
	MIGReconfigure  bool
	MIGConvertWhole bool
	// MIGReconfigTime is how long a reconfigured GPU's new instances stay
	// blocked: the reconfiguration's cost. 0 makes them usable at the same
	// instant (after one more scheduling point).
	MIGReconfigTime hwmodel.Time

	// Faults are injected hardware failures, sorted by At (faults.go and
	// the package doc). Not supported on nodes with MIG-enabled GPUs, nor
	// with MIGConvertWhole.
	Faults []hwmodel.Fault
	// Heartbeat sets failure detection; with faults, 0 fields default to
	// 5 s and 30 s.
	Heartbeat Heartbeat
	// Retry decides what a failed attempt does next; the zero value keeps
	// each job's own MaxRetries.
	Retry RetryPolicy
	// RestartTime is added to every attempt after a failure.
	RestartTime hwmodel.Time
	// PreemptRestart is added to every attempt after a preemption (the
	// cost of rescheduling and reloading a job beyond its start-up), and
	// counted as lost. SaveOnPreempt makes a preempted job save all its
	// progress as it stops (a checkpoint on the preemption signal): only
	// its start-up and PreemptRestart are lost. Without it a preempted
	// job keeps only what its completed checkpoints saved, as a failed
	// one does. A policies.Suspender that suspends sets it.
	PreemptRestart hwmodel.Time
	SaveOnPreempt  bool
	// StartupDelay is added to every attempt, before it makes progress:
	// the start of a process and its CUDA context (3.2-4.8 s for PyTorch
	// on an H200). An interrupted attempt's start-up counts as
	// lost time; a successful attempt's does not.
	StartupDelay hwmodel.Time
	// ProcessorSharing makes fractional jobs (one GPU, GPUMilli < 1000,
	// no MIG) on the same GPU share its compute: each progresses at
	// 1000 / max(1000, S), S the sum of the compute demands
	// (Job.DemandMilli, else GPUMilli) of the GPU's jobs past their
	// start-up. Off by default: traces' durations already include any
	// slow-down. Faults and checkpoints apply (package doc).
	ProcessorSharing bool
	// DefaultCheckpoint applies to jobs without their own Checkpoint.
	DefaultCheckpoint Checkpoint
	// Coupled, when set, shares the cluster with the batch workload
	// (coupled.go); the run lasts until both are done. With Faults it must
	// implement CoupledFaults.
	Coupled Coupled

	// Interval, when > 0, is the decision grid: the policy is called only
	// at multiples of it (the Pollux artifact's 60 s), so a job arriving
	// between two points is first seen at the next one, and a change
	// between them (an end, a wake-up) is heard at the next one. A job
	// that ends between two points ends then (its End). A job the
	// application model times keeps its GPUs until the grid point that
	// learns of its end, as the artifact's jobs do (apps.go); any other
	// releases them at its end, and no one can use them before the next
	// point anyway. 0: the policy is called at every event.
	Interval hwmodel.Time
	// Apps is the application model that times the jobs that train an
	// application (workloads.Job.App): each progresses epoch by epoch at
	// the pace of its current placement, from the end of its start-up
	// (apps.go). Its restarts cost StartupDelay, PreemptRestart and what
	// SaveOnPreempt does not keep, as any job's. Required when a job has
	// an App; other jobs run by their Duration beside them.
	Apps *hwmodel.AppModel
}

// Result is the outcome of a run.
type Result struct {
	Jobs       []Outcome // indexed by job ID (the workload's order)
	Events     int64     // events processed (arrivals, finishes)
	Calls      int64     // policy calls
	Rejections int64     // decisions the engine refused
	End        hwmodel.Time
	// MIGReconfigurations counts the Reconfigure decisions applied;
	// MIGReconfigGPUTime is the GPU-time they blocked (each blocks its GPU
	// for Config.MIGReconfigTime).
	MIGReconfigurations int64
	MIGReconfigGPUTime  hwmodel.Time
	// Faults are the injected faults that happened during the run, in time
	// order.
	Faults []FaultRecord
	// CoupledPreemptions counts the batch jobs preempted to make room for
	// the coupled model (Config.Coupled).
	CoupledPreemptions int64
	// Data is what the jobs read from the storage tier (data.go).
	Data DataStats
}

// InvariantError reports a broken engine invariant: a bug, never bad input.
type InvariantError struct {
	At  hwmodel.Time
	Msg string
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("invariant broken at t=%.6fs: %s", e.At.Seconds(), e.Msg)
}

// jobRun is the engine's books of one job. The fields an attempt's start
// and end read are here, copied from the workload where need be
// (duration, failed attempts, checkpointing, tenant), so that the end of
// a job, whose records are seldom in cache, touches this record and its
// Outcome and nothing else of the job. What the end of a successful
// attempt reads comes first and fills 64 bytes, and the record is padded
// to 128 (jobRunSize), so that in the engine's array, which the allocator
// aligns to a page, that end touches one cache line of it.
type jobRun struct {
	state   JobState
	arrived bool
	started bool
	hasDeps bool // some job depends on it
	// afterFailure: the next attempt follows a failure; backoff: the job
	// waits out a back-off.
	afterFailure bool
	// afterPreempt: the next attempt follows a preemption.
	afterPreempt bool
	backoff      bool
	attempt      int32 // attempts started so far
	tenant       int32
	// Faults, retries and checkpoints: trace failures so far and how many
	// the trace has, the current attempt's checkpoint count, failures so
	// far (retries asked for), the deadline policy's grant (-1: none yet).
	traceFails     int32
	failedAttempts int32
	ckpts          int32
	depsLeft       int32
	start          hwmodel.Time // the current attempt's start
	placement      hwmodel.Placement

	retries  int32
	granted  int32
	queuedAt hwmodel.Time
	duration hwmodel.Time // workloads.Job.Duration
	// saved is the progress saved by completed checkpoints; restart the
	// current attempt's restart time (and start-up delay).
	saved   hwmodel.Time
	restart hwmodel.Time
	ck      Checkpoint // checkpointOf
	// rate is the current attempt's pace relative to the job's measured
	// one (1 without speeds): hwmodel.ScaleDuration(p, rate) is the wall
	// time of p of progress.
	rate float64
}

// jobRunSize is jobRun's size; engine_test.go checks it.
const jobRunSize = 128

// maxIdleCalls bounds the extra scheduling points the engine makes at the
// end of a run when a policy still has news to hear, so a policy that keeps
// proposing rejected decisions cannot loop forever.
const maxIdleCalls = 3

// maxCallsPerInstant bounds the scheduling points of one instant: the
// first, and one more after each that applied a Preempt.
const maxCallsPerInstant = 4

// Engine runs one workload under one policy. It is single-threaded and
// deterministic: events are ordered by (time, sequence), arrivals by their
// position in the workload, and every tie in between is broken the same way
// on every run.
type Engine struct {
	// host is the driver half of the policy contract (the View, the
	// reservations, the Events batch, applying decisions, tenant books),
	// shared with every other driver; the policy schedules through it.
	host policies.Host
	// applyFn is e.apply, bound once so that a scheduling point does not
	// allocate a method value.
	applyFn func(policies.Decision) string

	cfg     Config
	cluster *hwmodel.Cluster
	w       *workloads.Workload
	policy  policies.Policy

	now  hwmodel.Time
	heap eventHeap
	next int            // next arrival in w.Jobs
	jobs []policies.Job // the Host's jobs, written through by the engine
	runs []jobRun
	out  []Outcome
	// tenantMilli mirrors the Host's tenants' AllocatedMilliGPU, for
	// Observation.
	tenantMilli []int64

	dependants    dependants
	queued        int
	running       int
	inSystem      int
	terminal      int
	pendingChange bool
	// preemptedInCall: the current scheduling point applied a Preempt.
	preemptedInCall bool
	// wakeQueued is the time of the latest wake-up event pushed for the
	// policy (0: none outstanding).
	wakeQueued hwmodel.Time
	ran        bool
	// idleCalls counts the scheduling points made with no event left
	// (maxIdleCalls); over is set once step finds the run over; err is
	// the error that stopped it, returned again by later calls.
	idleCalls int
	over      bool
	err       error

	mig migBooks
	flt faultBooks
	shr shareBooks
	// rates are the run's GPU speeds compiled for its classes; nil without.
	rates *hwmodel.Rates
	data  dataBooks

	// coupledMilli is what Config.Coupled holds of the cluster.
	coupledMilli int64

	// apps are the training states of jobs that train an application;
	// gridAt is the latest decision-grid point pushed as an event (0:
	// none).
	apps   appBooks
	gridAt hwmodel.Time

	// fits[:nfits] are requests the cluster can satisfy (satisfiable).
	fits     [4]hwmodel.Request
	nfits    int
	fitsNext int

	res Result
}

// New prepares a run. It fails if the cluster is not idle or a job refers
// to a tenant the workload does not list.
func New(cfg Config) (*Engine, error) {
	if cfg.Cluster == nil || cfg.Workload == nil || cfg.Policy == nil {
		return nil, errors.New("sim: Config needs Cluster, Workload and Policy")
	}
	if cfg.Cluster.AllocatedMilli() != 0 {
		return nil, errors.New("sim: the cluster must be idle at the start of a run")
	}
	if cfg.DefaultEstimate <= 0 {
		cfg.DefaultEstimate = hwmodel.Hour
	}
	w := cfg.Workload
	if cfg.StartupDelay < 0 {
		return nil, errors.New("sim: StartupDelay must be >= 0")
	}
	if cfg.MIGReconfigTime < 0 {
		return nil, errors.New("sim: MIGReconfigTime must be >= 0")
	}
	if cfg.MIGConvertWhole && !cfg.MIGReconfigure {
		return nil, errors.New("sim: MIGConvertWhole needs MIGReconfigure")
	}
	if policies.Suspends(cfg.Policy) {
		cfg.SaveOnPreempt = true // a suspended job keeps its state
	}
	e := &Engine{cfg: cfg, cluster: cfg.Cluster, w: w, policy: cfg.Policy}
	e.mig.init(cfg.Cluster)
	tenantIdx := make(map[string]int, len(w.Tenants))
	tenants := make([]policies.Tenant, 0, len(w.Tenants))
	for i, t := range w.Tenants {
		tenantIdx[t.Name] = i
		tenants = append(tenants, policies.Tenant{Name: t.Name, Weight: t.Weight})
	}
	e.tenantMilli = make([]int64, len(tenants))
	n := len(w.Jobs)
	e.jobs = make([]policies.Job, n)
	e.runs = make([]jobRun, n)
	e.out = make([]Outcome, n) // each with room for its first attempt
	nDeps := 0
	for i := range w.Jobs {
		j := &w.Jobs[i]
		ti, ok := tenantIdx[j.Tenant]
		if !ok {
			return nil, fmt.Errorf("sim: job %q names tenant %q that the workload does not list", j.Name, j.Tenant)
		}
		est := j.Estimate
		if est <= 0 {
			est = cfg.DefaultEstimate
		}
		e.jobs[i] = policies.Job{
			ID: policies.JobID(i), Name: j.Name, Tenant: ti, Priority: j.Priority,
			Submit: j.Submit, Estimate: est, Req: j.Req,
			Class: j.Class, Reference: cfg.SpeedReference,
		}
		if j.MeasuredOn > 0 {
			e.jobs[i].Reference = hwmodel.ModelID(j.MeasuredOn - 1)
		}
		if cfg.RevealOracle {
			e.jobs[i].Oracle = j.Duration
		}
		r := &e.runs[i]
		r.depsLeft = int32(len(j.Deps))
		r.granted = -1
		r.tenant = int32(ti)
		r.duration = j.Duration
		r.rate = 1
		r.failedAttempts = int32(min(j.FailedAttempts, math.MaxInt32))
		r.ck = j.Checkpoint
		if r.ck.Every <= 0 {
			r.ck = cfg.DefaultCheckpoint
		}
		e.out[i].Submit = j.Submit
		for _, d := range j.Deps {
			if d < 0 || d >= n || d == i {
				return nil, fmt.Errorf("sim: job %q has dependency index %d out of range", j.Name, d)
			}
			e.runs[d].hasDeps = true
		}
		nDeps += len(j.Deps)
	}
	e.dependants = newDependants(w.Jobs, nDeps)
	if err := e.host.Init(cfg.Cluster, tenants, e.jobs); err != nil {
		return nil, err
	}
	if err := e.initSpeeds(); err != nil {
		return nil, err
	}
	if err := e.initData(); err != nil {
		return nil, err
	}
	e.applyFn = e.apply
	if _, ok := cfg.Coupled.(CoupledFaults); cfg.Coupled != nil && len(cfg.Faults) > 0 && !ok {
		return nil, errors.New("sim: injected faults need a coupled model that implements CoupledFaults")
	}
	if err := e.initFaults(); err != nil {
		return nil, err
	}
	if err := e.initSharing(); err != nil {
		return nil, err
	}
	if err := e.initApps(); err != nil {
		return nil, err
	}
	return e, nil
}

// Run executes the whole workload, or what RunUntil left of it, and
// returns every job's outcome. It returns a result once; a second call
// returns an error.
func (e *Engine) Run() (*Result, error) {
	if e.ran {
		return nil, errors.New("sim: Engine.Run called twice; build a new Engine for each run")
	}
	e.ran = true
	for {
		more, err := e.step(endOfTime)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	if e.terminal != len(e.jobs) {
		return nil, e.stranded()
	}
	e.res.Jobs = e.out
	e.res.End = e.now
	return &e.res, nil
}

func (e *Engine) nextTime() (hwmodel.Time, bool) {
	t, ok := e.nextBatchTime()
	if e.cfg.Coupled != nil {
		if ct, cok := e.cfg.Coupled.Next(); cok && (!ok || ct < t) {
			return ct, true
		}
	}
	return t, ok
}

func (e *Engine) nextBatchTime() (hwmodel.Time, bool) {
	e.dropStaleWakes()
	hasArrival := e.next < len(e.w.Jobs)
	switch {
	case e.heap.Len() > 0 && hasArrival:
		return min(e.heap.peek().at, e.w.Jobs[e.next].Submit), true
	case e.heap.Len() > 0:
		return e.heap.peek().at, true
	case hasArrival:
		return e.w.Jobs[e.next].Submit, true
	}
	return 0, false
}

// stranded explains why a run ended with jobs that never finished.
func (e *Engine) stranded() error {
	var names []string
	for i := range e.runs {
		if !e.runs[i].state.Terminal() {
			if len(names) < 5 {
				names = append(names, fmt.Sprintf("%s (%s)", e.jobs[i].Name, e.runs[i].state))
			}
		}
	}
	return fmt.Errorf("sim: policy %s left %d jobs unfinished with no event pending, e.g. %s",
		e.policy.Name(), len(e.jobs)-e.terminal, strings.Join(names, ", "))
}

func (e *Engine) arrive(i int) {
	r := &e.runs[i]
	r.arrived = true
	e.inSystem++
	if err := e.satisfiable(&e.jobs[i].Req); err != nil {
		e.failForGood(i, FailUnsatisfiable, ReasonUnsatisfiable+err.Error())
		return
	}
	if reason := e.migServable(e.jobs[i].Req); reason != "" {
		e.failForGood(i, FailUnsatisfiable, ReasonUnsatisfiable+reason)
		return
	}
	if r.depsLeft == 0 {
		// Only successes count dependencies down, so none failed.
		e.makeReady(i)
		return
	}
	for _, d := range e.w.Jobs[i].Deps {
		if e.runs[d].state == Failed {
			e.failForGood(i, FailDependency, "dependency "+e.jobs[d].Name+" failed")
			return
		}
	}
	// It waits for its outstanding dependencies (finish makes it ready).
}

// satisfiable is the cluster's Satisfiable, which depends on the nodes'
// specifications alone, remembering the last few requests it passed: a
// workload repeats a handful of request shapes.
func (e *Engine) satisfiable(r *hwmodel.Request) error {
	for k := range e.fits[:e.nfits] {
		if e.fits[k] == *r {
			return nil
		}
	}
	if err := e.cluster.Satisfiable(*r); err != nil {
		return err
	}
	e.fits[e.fitsNext] = *r
	e.fitsNext = (e.fitsNext + 1) % len(e.fits)
	e.nfits = max(e.nfits, e.fitsNext)
	return nil
}

func (e *Engine) makeReady(i int) {
	r := &e.runs[i]
	r.state = Ready
	e.out[i].Ready = e.now
	e.enqueue(i)
}

func (e *Engine) enqueue(i int) {
	r := &e.runs[i]
	r.state = Ready
	r.queuedAt = e.now
	e.jobs[i].Queued = e.now
	e.queued++
	e.mig.queue(&e.jobs[i].Req, +1)
	e.host.Queue(policies.JobID(i))
	e.pendingChange = true
}

func (e *Engine) finish(ev event) error {
	switch ev.kind {
	case evUnblock:
		e.unblock(int(ev.job), int(ev.attempt))
		return nil
	case evFault:
		return e.faultEvent(int(ev.job))
	case evDetect:
		return e.detectEvent(int(ev.job), int(ev.attempt))
	case evRepair:
		e.repairEvent(int(ev.job), int(ev.attempt))
		return nil
	case evRequeue:
		e.requeueEvent(int(ev.job), ev.attempt)
		return nil
	case evGrid:
		// A point of the decision grid: the instant's scheduling point
		// hears what changed since the last one.
		return nil
	case evWake:
		if ev.at == e.wakeQueued {
			e.wakeQueued = 0
		}
		if e.wakeDue() {
			e.pendingChange = true
		}
		return nil
	}
	i := int(ev.job)
	r := &e.runs[i]
	if r.state != Running || r.attempt != ev.attempt {
		return nil // the attempt was preempted or failed; this finish is stale
	}
	if e.shr.on && e.shr.gpu[i] >= 0 && e.shareEvent(ev) {
		return nil // stale, or the end of its start-up
	}
	if e.flt.on && e.hitTime(i) != noHit {
		// It runs on failed hardware that nobody knows of yet: it made no
		// progress since the fault and stays running until detection.
		return nil
	}
	if r.traceFails < r.failedAttempts {
		// This attempt fails (the trace says so) at its very end.
		r.traceFails++
		e.endAttempt(i, e.now)
		e.stopRunning(i, AttemptFailed)
		e.retryOrFail(i, fmt.Sprintf("attempt %d failed, no retries left", r.attempt))
		return nil
	}
	if r.ckpts != 0 {
		e.out[i].CheckpointTime += hwmodel.Time(r.ckpts) * r.ck.Cost
	}
	e.stopRunning(i, AttemptSucceeded)
	e.setTerminal(i, Succeeded, FailNone, "")
	if e.isApp(i) && e.cfg.Interval > 0 {
		// It ended when its training was done; its GPUs, kept until
		// the grid point that learnt of it, were released now.
		e.out[i].End = e.apps.jobs[i].doneAt
	}
	if !r.hasDeps {
		return nil
	}
	for _, d := range e.dependants.of(i) {
		dr := &e.runs[d]
		dr.depsLeft--
		if dr.depsLeft == 0 && dr.arrived && dr.state == Pending {
			e.makeReady(int(d))
		}
	}
	return nil
}

// stopRunning releases a running job's capacity and books its run time
// and how its attempt ended.
func (e *Engine) stopRunning(i int, why AttemptEnd) {
	r := &e.runs[i]
	e.host.Stop(policies.JobID(i), r.placement)
	e.mig.stopped(i, r.placement)
	e.tenantMilli[r.tenant] = e.host.Tenants()[r.tenant].AllocatedMilliGPU
	o := &e.out[i]
	o.Run += e.now - r.start
	o.End = e.now
	o.endAttempt(e.now, why)
	e.running--
	e.dropRunning(i)
	e.shareStop(i)
	r.state = Pending // transient; the caller sets the next state
	e.pendingChange = true
}

func (e *Engine) setTerminal(i int, s JobState, why FailReason, reason string) {
	r := &e.runs[i]
	r.state = s
	o := &e.out[i]
	o.State = s
	if why != FailNone || reason != "" {
		o.FailReason, o.Reason = why, reason // once terminal: zero until now
	}
	o.End = e.now
	if !r.started {
		o.Start = e.now
	}
	o.Attempts = r.attempt
	e.inSystem--
	e.terminal++
}

// failForGood fails job i for why (reason in words) and, transitively,
// every job that depends on it, for FailDependency.
func (e *Engine) failForGood(i int, why FailReason, reason string) {
	// Only pending jobs get here (a queued job's dependencies have all
	// succeeded), so the policy never holds a job that this fails.
	if !e.runs[i].arrived {
		// A dependant that has not arrived yet fails when it arrives.
		return
	}
	e.setTerminal(i, Failed, why, reason)
	for _, d := range e.dependants.of(i) {
		if !e.runs[d].state.Terminal() && e.runs[d].arrived {
			e.failForGood(int(d), FailDependency, "dependency "+e.jobs[i].Name+" failed")
		}
	}
}

// dependants lists, for each job, the jobs that depend on it, in job
// order: one array of them all and each job's start in it, instead of a
// slice header per job (24 bytes a job, most of them empty). Empty when no
// job has dependencies.
type dependants struct {
	start []int // job i's dependants are list[start[i]:start[i+1]]
	list  []int32
}

// newDependants inverts the jobs' Deps (nDeps of them in all, each index
// already checked).
func newDependants(jobs []workloads.Job, nDeps int) dependants {
	if nDeps == 0 {
		return dependants{}
	}
	start := make([]int, len(jobs)+1)
	for i := range jobs {
		for _, d := range jobs[i].Deps {
			start[d+1]++
		}
	}
	for i := range jobs {
		start[i+1] += start[i]
	}
	list := make([]int32, nDeps)
	next := slices.Clone(start[:len(jobs)])
	for i := range jobs {
		for _, d := range jobs[i].Deps {
			list[next[d]] = int32(i)
			next[d]++
		}
	}
	return dependants{start: start, list: list}
}

// of is job i's dependants.
func (ds dependants) of(i int) []int32 {
	if ds.start == nil {
		return nil
	}
	return ds.list[ds.start[i]:ds.start[i+1]]
}
