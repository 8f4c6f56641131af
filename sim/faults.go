package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// Checkpoint is a job's progress-based checkpointing (workloads.Checkpoint).
type Checkpoint = workloads.Checkpoint

// Heartbeat configures failure detection. Node n sends heartbeats at
// phase_n + k·Interval for every integer k, with phase_n =
// n·Interval / (number of nodes) (integer division), so the cluster's
// heartbeats are spread over the interval. See the package doc for the
// detection rules.
type Heartbeat struct {
	Interval, Timeout hwmodel.Time
}

// Default heartbeat settings, used when Config.Faults is not empty and the
// corresponding field is 0.
const (
	DefaultHeartbeatInterval = 5 * hwmodel.Second
	DefaultHeartbeatTimeout  = 30 * hwmodel.Second
)

// Retry policy kinds (RetryPolicy.Kind).
const (
	RetryTrace    = "trace"    // the job's own MaxRetries (the default, "" too)
	RetryNone     = "none"     // no retries
	RetryFixed    = "fixed"    // at most RetryPolicy.Max retries
	RetryDeadline = "deadline" // deadline-aware: see hwmodel.DeadlineAttempts
)

// RetryPolicy decides whether a failed attempt is retried. It applies to
// every failure: hardware failures and the trace's FailedAttempts.
type RetryPolicy struct {
	Kind string
	// Max is the retry cap of "fixed" and "deadline" (R_max).
	Max int
	// BackoffBase > 0 turns on exponential back-off: the k-th retry of a
	// job re-enters the queue BackoffBase·BackoffFactor^(k−1) after the
	// failure (BackoffFactor defaults to 2).
	BackoffBase   hwmodel.Time
	BackoffFactor float64
}

// ReasonDeadline is the Reason of a job that the deadline-aware retry
// policy failed because no further attempt could finish in time (its
// FailReason is FailDeadline).
const ReasonDeadline = "deadline"

// FaultRecord is what became of one injected fault.
type FaultRecord struct {
	At hwmodel.Time
	// Detected is when the orchestrator learnt of it (At for a fault on
	// hardware already known to be out of service; -1 if the run ended
	// first).
	Detected hwmodel.Time
	// Repaired is when this fault's own repair is due, At+Repair, or
	// Detected if that is later (capacity comes back at detection then).
	// Capacity taken out by overlapping faults comes back at the latest of
	// their repairs.
	Repaired  hwmodel.Time
	Node, GPU int // GPU -1: the whole node
	// JobsHit counts the running attempts that the fault killed.
	JobsHit int
}

const noHit = hwmodel.Time(math.MaxInt64)

// faultBooks is the engine's state of failed and out-of-service hardware.
type faultBooks struct {
	on bool
	// Per node: the earliest At of its undetected node faults (noHit when
	// none), how many are undetected, when they will be detected, until
	// when the node is out of service, and the share that blocks it while
	// it is (nil when it is not).
	nodeHitAt  []hwmodel.Time
	nodeHits   []int32
	nodeDetect []hwmodel.Time
	nodeUntil  []hwmodel.Time
	nodeBlock  []hwmodel.Placement
	// Per GPU, by node then GPU (gpuBase): the same for GPU faults, and
	// whether a one-GPU blocking share holds it.
	gpuBase    []int
	gpuHitAt   []hwmodel.Time
	gpuHits    []int32
	gpuUntil   []hwmodel.Time
	gpuBlocked []bool
	downMilli  int64
	// running lists the running jobs (swap-removed), so a detection visits
	// only them.
	running []int32
	runPos  []int32
}

// initFaults validates the fault configuration and prepares the books.
func (e *Engine) initFaults() error {
	cfg := &e.cfg
	if cfg.RestartTime < 0 {
		return errors.New("sim: RestartTime must be >= 0")
	}
	if cfg.DefaultCheckpoint.Every < 0 || cfg.DefaultCheckpoint.Cost < 0 {
		return errors.New("sim: DefaultCheckpoint times must be >= 0")
	}
	if cfg.DefaultCheckpoint.Cost > 0 && cfg.DefaultCheckpoint.Every == 0 {
		return errors.New("sim: DefaultCheckpoint has a Cost but no Every")
	}
	r := &cfg.Retry
	switch r.Kind {
	case "":
		r.Kind = RetryTrace
	case RetryTrace, RetryNone, RetryFixed, RetryDeadline:
	default:
		return fmt.Errorf("sim: unknown retry policy %q (want trace, none, fixed or deadline)", r.Kind)
	}
	if r.Max < 0 {
		return errors.New("sim: Retry.Max must be >= 0")
	}
	if r.BackoffBase < 0 {
		return errors.New("sim: Retry.BackoffBase must be >= 0")
	}
	if r.BackoffBase > 0 && r.BackoffFactor == 0 {
		r.BackoffFactor = 2
	}
	if r.BackoffFactor < 0 || math.IsNaN(r.BackoffFactor) || math.IsInf(r.BackoffFactor, 0) {
		return errors.New("sim: Retry.BackoffFactor must be finite and >= 0")
	}
	if len(cfg.Faults) == 0 {
		return nil
	}
	if cfg.MIGConvertWhole {
		return errors.New("sim: faults are not supported with MIGConvertWhole")
	}
	hb := &cfg.Heartbeat
	if hb.Interval == 0 {
		hb.Interval = DefaultHeartbeatInterval
	}
	if hb.Timeout == 0 {
		hb.Timeout = DefaultHeartbeatTimeout
	}
	if hb.Interval < 0 || hb.Timeout < hb.Interval {
		return fmt.Errorf("sim: heartbeat interval %v and timeout %v: want 0 < interval <= timeout", hb.Interval, hb.Timeout)
	}
	c := e.cluster
	nn := c.NumNodes()
	f := &e.flt
	f.on = true
	f.nodeHitAt = make([]hwmodel.Time, nn)
	f.nodeHits = make([]int32, nn)
	f.nodeDetect = make([]hwmodel.Time, nn)
	f.nodeUntil = make([]hwmodel.Time, nn)
	f.nodeBlock = make([]hwmodel.Placement, nn)
	f.gpuBase = make([]int, nn+1)
	for n := 0; n < nn; n++ {
		f.nodeHitAt[n] = noHit
		f.gpuBase[n+1] = f.gpuBase[n] + c.NodeGPUs(n)
	}
	ng := f.gpuBase[nn]
	f.gpuHitAt = make([]hwmodel.Time, ng)
	f.gpuHits = make([]int32, ng)
	f.gpuUntil = make([]hwmodel.Time, ng)
	f.gpuBlocked = make([]bool, ng)
	for g := range f.gpuHitAt {
		f.gpuHitAt[g] = noHit
	}
	f.runPos = make([]int32, len(e.jobs))
	var prev hwmodel.Time
	for k, ft := range cfg.Faults {
		switch {
		case ft.At < 0 || ft.Repair < 0:
			return fmt.Errorf("sim: fault %d: At and Repair must be >= 0", k)
		case ft.At < prev:
			return fmt.Errorf("sim: fault %d: faults must be sorted by At", k)
		case ft.Node < 0 || ft.Node >= nn:
			return fmt.Errorf("sim: fault %d: node %d does not exist", k, ft.Node)
		case ft.GPU < -1 || ft.GPU >= c.NodeGPUs(ft.Node):
			return fmt.Errorf("sim: fault %d: node %s has no GPU %d", k, c.Node(ft.Node).Name, ft.GPU)
		}
		for g := 0; g < c.NodeGPUs(ft.Node); g++ {
			if c.IsMIG(ft.Node, g) {
				return fmt.Errorf("sim: fault %d: node %s has MIG-enabled GPUs; faults are supported only on nodes without them", k, c.Node(ft.Node).Name)
			}
		}
		prev = ft.At
		e.heap.push(event{at: ft.At, kind: evFault, job: int32(k)})
	}
	return nil
}

// lastHeartbeat is node n's last heartbeat strictly before t.
func (e *Engine) lastHeartbeat(n int, t hwmodel.Time) hwmodel.Time {
	iv := e.cfg.Heartbeat.Interval
	phase := hwmodel.Time(int64(n) * int64(iv) / int64(e.cluster.NumNodes()))
	k := floorDiv(int64(t-1-phase), int64(iv))
	return phase + hwmodel.Time(k)*iv
}

// nextHeartbeat is node n's first heartbeat at or after t.
func (e *Engine) nextHeartbeat(n int, t hwmodel.Time) hwmodel.Time {
	return e.lastHeartbeat(n, t) + e.cfg.Heartbeat.Interval
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// faultEvent handles evFault: the hardware breaks now.
func (e *Engine) faultEvent(k int) error {
	ft := e.cfg.Faults[k]
	f := &e.flt
	rec := len(e.res.Faults)
	e.res.Faults = append(e.res.Faults, FaultRecord{At: ft.At, Node: ft.Node, GPU: ft.GPU, Detected: -1})
	n := ft.Node
	if ft.GPU < 0 {
		if f.nodeBlock[n] != nil {
			// Known to be out of service already: only the repair moves.
			e.res.Faults[rec].Detected = e.now
			e.res.Faults[rec].Repaired = max(e.now, ft.End())
			e.extendNode(n, ft.End())
			return nil
		}
		if f.nodeHits[n] == 0 {
			f.nodeHitAt[n] = e.now
			f.nodeDetect[n] = e.lastHeartbeat(n, e.now) + e.cfg.Heartbeat.Timeout
		}
		f.nodeHits[n]++
		e.heap.push(event{at: f.nodeDetect[n], kind: evDetect, job: int32(rec), attempt: int32(k)})
		e.shareFreeze(n, -1)
		return e.coupledFault(n, -1, false)
	}
	g := f.gpuBase[n] + ft.GPU
	if f.nodeBlock[n] != nil || f.gpuBlocked[g] {
		e.res.Faults[rec].Detected = e.now
		e.res.Faults[rec].Repaired = max(e.now, ft.End())
		e.extendGPU(n, ft.GPU, ft.End())
		return nil
	}
	at := e.nextHeartbeat(n, e.now)
	if f.nodeHits[n] > 0 {
		// The node is dead but not yet known to be: its silence reports
		// the GPU too.
		at = f.nodeDetect[n]
	}
	if f.gpuHits[g] == 0 {
		f.gpuHitAt[g] = e.now
	}
	f.gpuHits[g]++
	e.heap.push(event{at: at, kind: evDetect, job: int32(rec), attempt: int32(k)})
	e.shareFreeze(n, ft.GPU)
	return e.coupledFault(n, ft.GPU, false)
}

// detectEvent handles evDetect: the orchestrator learns of fault k (record
// rec). The jobs on the failed hardware fail and go to the retry policy;
// its free capacity goes out of service until its repair.
func (e *Engine) detectEvent(rec, k int) error {
	ft := e.cfg.Faults[k]
	f := &e.flt
	n := ft.Node
	r := &e.res.Faults[rec]
	r.Detected = e.now
	r.Repaired = max(e.now, ft.End())
	e.pendingChange = true
	if ft.GPU < 0 {
		// The jobs' progress stopped at the fault: fail them while the
		// books still say when it struck.
		r.JobsHit = e.failJobsOn(n, -1)
		f.nodeHits[n]--
		if f.nodeHits[n] == 0 {
			f.nodeHitAt[n] = noHit
		} else {
			f.nodeHitAt[n] = e.now // later undetected faults: no job is there now
		}
		e.shareThaw(n, -1)
		if err := e.coupledFault(n, -1, true); err != nil {
			return err
		}
		e.extendNode(n, ft.End())
		return nil
	}
	g := f.gpuBase[n] + ft.GPU
	r.JobsHit = e.failJobsOn(n, ft.GPU)
	f.gpuHits[g]--
	if f.gpuHits[g] == 0 {
		f.gpuHitAt[g] = noHit
	} else {
		f.gpuHitAt[g] = e.now
	}
	e.shareThaw(n, ft.GPU)
	if err := e.coupledFault(n, ft.GPU, true); err != nil {
		return err
	}
	e.extendGPU(n, ft.GPU, ft.End())
	return nil
}

// extendNode keeps node n out of service until at least until, blocking
// its free capacity if it is not blocked yet.
func (e *Engine) extendNode(n int, until hwmodel.Time) {
	f := &e.flt
	if until <= f.nodeUntil[n] {
		return
	}
	f.nodeUntil[n] = until
	if until <= e.now {
		return
	}
	if f.nodeBlock[n] == nil {
		var mask uint64
		for g := 0; g < e.cluster.NodeGPUs(n); g++ {
			if !f.gpuBlocked[f.gpuBase[n]+g] {
				mask |= 1 << g
				f.downMilli += hwmodel.MilliPerGPU
			}
		}
		s := hwmodel.Share{Node: n, GPUs: mask, CPUMilli: e.cluster.FreeCPU(n), MemoryMiB: e.cluster.FreeMemory(n)}
		if mask != 0 {
			s.Milli = hwmodel.MilliPerGPU
		}
		p := hwmodel.Placement{s}
		if err := e.cluster.Allocate(p); err != nil {
			panic(fmt.Sprintf("sim: blocking failed node %s: %v", e.cluster.Node(n).Name, err))
		}
		f.nodeBlock[n] = p
	}
	e.heap.push(event{at: until, kind: evRepair, job: int32(n), attempt: -1})
}

// extendGPU keeps GPU g of node n out of service until at least until.
func (e *Engine) extendGPU(n, gpu int, until hwmodel.Time) {
	f := &e.flt
	g := f.gpuBase[n] + gpu
	if until <= f.gpuUntil[g] {
		return
	}
	f.gpuUntil[g] = until
	if until <= e.now {
		return
	}
	if f.nodeBlock[n] == nil && !f.gpuBlocked[g] {
		e.blockGPU(n, gpu)
	}
	e.heap.push(event{at: until, kind: evRepair, job: int32(n), attempt: int32(gpu)})
}

func (e *Engine) gpuBlock(n, gpu int) hwmodel.Placement {
	return hwmodel.Placement{{Node: n, GPUs: 1 << gpu, Milli: hwmodel.MilliPerGPU}}
}

func (e *Engine) blockGPU(n, gpu int) {
	if err := e.cluster.Allocate(e.gpuBlock(n, gpu)); err != nil {
		panic(fmt.Sprintf("sim: blocking failed GPU %d of node %s: %v", gpu, e.cluster.Node(n).Name, err))
	}
	e.flt.gpuBlocked[e.flt.gpuBase[n]+gpu] = true
	e.flt.downMilli += hwmodel.MilliPerGPU
}

// repairEvent handles evRepair: node n (gpu -1) or one of its GPUs comes
// back into service if its repair is due now (stale events are dropped).
func (e *Engine) repairEvent(n, gpu int) {
	f := &e.flt
	if gpu < 0 {
		if f.nodeBlock[n] == nil || f.nodeUntil[n] != e.now {
			return
		}
		e.cluster.Release(f.nodeBlock[n])
		f.downMilli -= int64(f.nodeBlock[n][0].GPUCount()) * hwmodel.MilliPerGPU
		f.nodeBlock[n] = nil
		for g := 0; g < e.cluster.NodeGPUs(n); g++ {
			fg := f.gpuBase[n] + g
			switch {
			case f.gpuBlocked[fg] && f.gpuUntil[fg] <= e.now:
				e.unblockGPU(n, g)
			case !f.gpuBlocked[fg] && f.gpuUntil[fg] > e.now:
				e.blockGPU(n, g)
			}
		}
		e.pendingChange = true
		return
	}
	fg := f.gpuBase[n] + gpu
	if f.gpuUntil[fg] != e.now || f.nodeBlock[n] != nil || !f.gpuBlocked[fg] {
		return // stale, or the node's repair will return it
	}
	e.unblockGPU(n, gpu)
	e.pendingChange = true
}

func (e *Engine) unblockGPU(n, gpu int) {
	e.cluster.Release(e.gpuBlock(n, gpu))
	e.flt.gpuBlocked[e.flt.gpuBase[n]+gpu] = false
	e.flt.downMilli -= hwmodel.MilliPerGPU
}

// failJobsOn fails every running attempt with a share on node n (on its
// GPU gpu when gpu >= 0), in job order, and returns how many.
func (e *Engine) failJobsOn(n, gpu int) int {
	var hit []int32
	for _, i := range e.flt.running {
		for _, s := range e.runs[i].placement {
			if s.Node == n && (gpu < 0 || s.GPUs&(1<<gpu) != 0) {
				hit = append(hit, i)
				break
			}
		}
	}
	sortInt32(hit)
	for _, i := range hit {
		cut := e.hitTime(int(i))
		if cut > e.now {
			cut = e.now
		}
		e.endAttempt(int(i), cut)
		e.stopRunning(int(i), AttemptHardware)
		e.out[i].HardwareFailures++
		e.retryOrFail(int(i), fmt.Sprintf("attempt %d lost to a hardware failure, no retries left", e.runs[i].attempt))
	}
	return len(hit)
}

func sortInt32(a []int32) {
	for k := 1; k < len(a); k++ {
		for m := k; m > 0 && a[m] < a[m-1]; m-- {
			a[m], a[m-1] = a[m-1], a[m]
		}
	}
}

// hitTime is the earliest At of an undetected fault under job i's
// placement, or noHit.
func (e *Engine) hitTime(i int) hwmodel.Time {
	f := &e.flt
	t := noHit
	for _, s := range e.runs[i].placement {
		t = min(t, f.nodeHitAt[s.Node])
		for m := s.GPUs; m != 0; m &= m - 1 {
			t = min(t, f.gpuHitAt[f.gpuBase[s.Node]+bits.TrailingZeros64(m)])
		}
	}
	return t
}

// checkpointOf is job i's checkpointing: its own, else the run's default
// (New copies it into the job's books).
func (e *Engine) checkpointOf(i int) Checkpoint { return e.runs[i].ck }

// attemptLength sets up job i's attempt starting now and returns its wall
// time: restart (after a failure), the remaining work, and the checkpoints
// it takes on the way (none at the very end).
func (e *Engine) attemptLength(i int) hwmodel.Time {
	r := &e.runs[i]
	r.restart = 0
	if r.afterFailure {
		r.restart = e.cfg.RestartTime
		r.afterFailure = false
		e.out[i].LostTime += r.restart
	}
	if r.afterPreempt {
		r.restart += e.cfg.PreemptRestart
		r.afterPreempt = false
		e.out[i].LostTime += e.cfg.PreemptRestart
		e.out[i].PreemptLost += e.cfg.PreemptRestart
	}
	// The start-up delay, like the restart, comes before any progress;
	// so does reading the data the placement lacks.
	r.restart += e.cfg.StartupDelay
	read := e.readFor(i, r.placement, r.restart)
	if e.data.on {
		e.data.read[i] = read
	}
	if e.isApp(i) {
		return r.restart + read + e.appLength(i, e.now+r.restart+read)
	}
	w := r.duration
	ck := r.ck
	r.ckpts = 0
	if ck.Every > 0 {
		r.ckpts = int32(int64((w-1)/ck.Every) - int64(r.saved/ck.Every))
	}
	return r.restart + read + hwmodel.ScaleDuration(w-r.saved, r.rate) + hwmodel.Time(r.ckpts)*ck.Cost
}

// startup is job i's current attempt's time before progress: restart,
// start-up delay and data read.
func (e *Engine) startup(i int) hwmodel.Time {
	if e.data.on {
		return e.runs[i].restart + e.data.read[i]
	}
	return e.runs[i].restart
}

// endAttempt books job i's interrupted attempt (before stopRunning): the
// checkpoints completed by cut (progress stops at cut, the fault's time,
// or now) are kept, the rest of the attempt's wall time until now is lost.
func (e *Engine) endAttempt(i int, cut hwmodel.Time) hwmodel.Time {
	return e.endAttemptSaving(i, cut, false)
}

// endAttemptSaving is endAttempt; with saveAll the attempt also keeps the
// progress it made after its last checkpoint (a job that saves as it is
// preempted). It returns the wall time it booked as lost.
func (e *Engine) endAttemptSaving(i int, cut hwmodel.Time, saveAll bool) hwmodel.Time {
	if e.isApp(i) {
		return e.appEndAttempt(i, cut, saveAll)
	}
	r := &e.runs[i]
	s := r.start
	ck := r.ck
	var k int64
	// kept is the wall time from the end of the start-up to the end of
	// the last completed checkpoint.
	var kept hwmodel.Time
	switch {
	case saveAll:
		u := cut - s - e.startup(i)
		if u <= 0 {
			break
		}
		// The progress of u wall time less its completed checkpoints'
		// pauses, at the attempt's rate: the inverse of ScaleDuration,
		// capped below the job's end (an attempt that reached it has
		// finished, not been preempted) and, mid-checkpoint, at the
		// progress that checkpoint saves. Under processor sharing the
		// sharing books say how far it got, in µs at its full speed.
		ran := float64(u)
		sharing := e.shr.on && e.shr.gpu[i] >= 0
		if sharing {
			ran, _ = e.shareProgress(i)
			if ck.Every > 0 {
				k = min(int64(r.ckpts), int64(ran/(float64(ck.Every)/r.rate+float64(ck.Cost))))
			}
		} else if ck.Every > 0 {
			k = e.checkpointsBy(i, u)
		}
		done := hwmodel.Time((ran - float64(hwmodel.Time(k)*ck.Cost)) * r.rate)
		if ck.Every > 0 {
			done = min(done, hwmodel.Time(k+1)*ck.Every)
		}
		done = max(0, min(done, r.duration-r.saved-1))
		r.saved += done
		// The wall time that bought it; the rest (start-up, an unfinished
		// checkpoint) is lost. Under sharing, in proportion.
		bought := hwmodel.ScaleDuration(done, r.rate)
		if work := ran - float64(hwmodel.Time(k)*ck.Cost); sharing && work > 0 {
			bought = hwmodel.Time(float64(u-hwmodel.Time(k)*ck.Cost) * min(1, float64(done)/(work*r.rate)))
		}
		o := &e.out[i]
		o.CheckpointTime += hwmodel.Time(k) * ck.Cost
		lost := (e.now - s) - (r.restart - e.cfg.StartupDelay) - hwmodel.Time(k)*ck.Cost - bought
		o.LostTime += lost
		return lost
	case ck.Every > 0 && e.shr.on && e.shr.gpu[i] >= 0:
		// Under processor sharing progress is not wall time: the sharing
		// books say how far the job got (frozen since a fault) and when its
		// last checkpoint ended.
		p, at := e.shareProgress(i)
		k = min(int64(r.ckpts), int64(p/(float64(ck.Every)/r.rate+float64(ck.Cost))))
		if k > 0 {
			kept = at - s - e.startup(i)
		}
	case ck.Every > 0:
		if u := cut - s - e.startup(i); u > 0 {
			k = e.checkpointsBy(i, u)
		}
		kept = e.checkpointEnd(i, k)
	}
	r.saved += hwmodel.Time(k) * ck.Every
	o := &e.out[i]
	o.CheckpointTime += hwmodel.Time(k) * ck.Cost
	// r.restart's failure part is booked as lost already; its start-up
	// part is lost here, with the rest of the interrupted attempt.
	lost := (e.now - s) - (r.restart - e.cfg.StartupDelay) - kept
	o.LostTime += lost
	return lost
}

// retryOrFail sends job i, whose attempt just failed (it is Pending after
// stopRunning), to the retry policy: back to the queue (after a back-off
// if configured), or failed for good.
func (e *Engine) retryOrFail(i int, reason string) {
	r := &e.runs[i]
	r.retries++
	j := &e.w.Jobs[i]
	var limit int
	switch e.cfg.Retry.Kind {
	case RetryNone:
	case RetryFixed:
		limit = e.cfg.Retry.Max
	case RetryDeadline:
		limit = e.cfg.Retry.Max
		if j.Deadline > 0 {
			remaining := j.Submit + j.Deadline - e.now
			if r.granted < 0 {
				r.granted = int32(hwmodel.DeadlineAttempts(remaining, e.jobs[i].Estimate, e.cfg.Retry.Max))
			}
			limit = int(r.granted)
			need := e.cfg.RestartTime + max(0, e.jobs[i].Estimate-r.saved)
			if int(r.retries) <= limit && need > remaining {
				e.failForGood(i, FailDeadline, ReasonDeadline)
				return
			}
		}
	default:
		limit = j.MaxRetries
	}
	if int(r.retries) > limit {
		e.failForGood(i, FailRetriesExhausted, reason)
		return
	}
	r.afterFailure = true
	if b := e.cfg.Retry.BackoffBase; b > 0 {
		r.backoff = true
		d := hwmodel.RetryBackoff(b, e.cfg.Retry.BackoffFactor, int(r.retries))
		e.heap.push(event{at: e.now + d, kind: evRequeue, job: int32(i), attempt: r.attempt})
		return
	}
	e.enqueue(i)
}

// requeueEvent handles evRequeue: job i's back-off is over.
func (e *Engine) requeueEvent(i int, attempt int32) {
	r := &e.runs[i]
	if !r.backoff || r.attempt != attempt || r.state != Pending {
		return
	}
	r.backoff = false
	e.enqueue(i)
}

// addRunning and dropRunning keep the running list when faults are on.
func (e *Engine) addRunning(i int) {
	if !e.flt.on {
		return
	}
	e.flt.runPos[i] = int32(len(e.flt.running))
	e.flt.running = append(e.flt.running, int32(i))
}

func (e *Engine) dropRunning(i int) {
	if !e.flt.on {
		return
	}
	f := &e.flt
	p := f.runPos[i]
	last := f.running[len(f.running)-1]
	f.running[p] = last
	f.runPos[last] = p
	f.running = f.running[:len(f.running)-1]
}

// checkFaults verifies that no running job uses out-of-service capacity and
// that the down books agree with a recount.
func (e *Engine) checkFaults() string {
	f := &e.flt
	if !f.on {
		return ""
	}
	if len(f.running) != e.running {
		return fmt.Sprintf("running list holds %d jobs, books say %d", len(f.running), e.running)
	}
	var down int64
	for n := range f.nodeBlock {
		if f.nodeBlock[n] != nil {
			down += int64(f.nodeBlock[n][0].GPUCount()) * hwmodel.MilliPerGPU
			// At the repair's own instant the block stands until the repair
			// event's turn (another event of the instant may come first).
			if f.nodeUntil[n] < e.now {
				return fmt.Sprintf("node %s still blocked after its repair at %d", e.cluster.Node(n).Name, f.nodeUntil[n])
			}
		}
		for g := 0; g < e.cluster.NodeGPUs(n); g++ {
			fg := f.gpuBase[n] + g
			if f.gpuBlocked[fg] {
				down += hwmodel.MilliPerGPU
				if f.nodeBlock[n] != nil && f.nodeBlock[n][0].GPUs&(1<<g) != 0 {
					return fmt.Sprintf("node %s GPU %d blocked twice", e.cluster.Node(n).Name, g)
				}
			}
		}
	}
	if down != f.downMilli {
		return fmt.Sprintf("counted %d milli out of service, books say %d", down, f.downMilli)
	}
	for _, i := range f.running {
		if e.runs[i].state != Running {
			return fmt.Sprintf("job %s on the running list is %s", e.jobs[i].Name, e.runs[i].state)
		}
		for _, s := range e.runs[i].placement {
			if f.nodeBlock[s.Node] != nil {
				return fmt.Sprintf("job %s runs on out-of-service node %s", e.jobs[i].Name, e.cluster.Node(s.Node).Name)
			}
			for m := s.GPUs; m != 0; m &= m - 1 {
				if f.gpuBlocked[f.gpuBase[s.Node]+bits.TrailingZeros64(m)] {
					return fmt.Sprintf("job %s runs on out-of-service GPU %d of node %s", e.jobs[i].Name, bits.TrailingZeros64(m), e.cluster.Node(s.Node).Name)
				}
			}
		}
	}
	return ""
}
