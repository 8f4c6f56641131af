package live

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// stopWait bounds how long the driver waits for a process group it has
// SIGKILLed to be gone.
const stopWait = 10 * time.Second

// ending is what the driver saw of the end of an attempt's wrapper.
type ending struct {
	reaped bool // the driver was its parent and reaped it: code and signal hold
	code   int  // its exit status (-1 when killed by a signal)
	signal int  // the signal that killed it, 0 if none
	killed bool // the driver stopped group members that outlived it
}

// settle ends r's current attempt, whose process group is gone, as its
// exit file and e say, and reports whether the command ever ran:
//
//   - no exit file: the wrapper never started the command (the driver was
//     killed before the launch, or the wrapper before its first line, or
//     the file could not be created): the start is undone (unstart), the
//     attempt not spent;
//   - an exit status in the file: the attempt ended with it;
//   - "started" only: the status was lost. If the driver reaped the
//     wrapper, the status it got counts (a wrapper killed by a signal is a
//     failed attempt); if the driver had to stop the group, or the machine
//     restarted, the command was stopped before its end: a failed attempt,
//     retried as its spec says. Otherwise the whole group ended while the
//     driver was down and nobody knows how: it may have succeeded, so it
//     is not rerun; it fails with reason "exit status lost".
//
// Records of older versions (no ExitFile) keep their rules: the old file
// format, else failed with exit -1, or unspent if no PID was recorded.
func (d *Driver) settle(r *Record, e ending) (ran bool, err error) {
	if r.ExitFile == "" {
		switch code, ok := d.oldExitCode(r); {
		case ok:
			d.finish(r, code, "")
		case e.reaped:
			d.finish(r, e.code, signalReason(e.signal))
		case r.PID == 0:
			d.unstart(r)
			return false, nil
		default:
			d.finish(r, -1, "process gone after a restart")
		}
		return true, nil
	}
	st, code, err := readExit(r.ExitFile)
	if err != nil {
		return false, err
	}
	switch {
	case st == notStarted:
		d.unstart(r)
		return false, nil
	case st == exited:
		d.finish(r, code, "")
	case e.reaped:
		d.finish(r, e.code, signalReason(e.signal))
	case e.killed:
		d.finish(r, -1, "stopped: its command still ran after its wrapper had ended")
	case r.Boot != d.boot:
		d.finish(r, -1, "the machine restarted while it ran")
	default:
		d.end(r, -1, ReasonExitLost, false)
	}
	return true, nil
}

// ReasonExitLost is the reason of an attempt whose process group ended
// while the driver was down without recording an exit status (its
// wrapper was killed, or its exit file could not be written): the job
// fails without a retry, since it may have succeeded.
const ReasonExitLost = "exit status lost: its process group ended while the driver was down, recording no exit status; not rerun, as it may have succeeded"

func signalReason(sig int) string {
	if sig == 0 {
		return ""
	}
	return fmt.Sprintf("its wrapper was killed by signal %d (%v)", sig, syscall.Signal(sig))
}

func (d *Driver) placementOf(r *Record) hwmodel.Placement {
	var mask uint64
	for _, g := range r.GPUs {
		mask |= 1 << g
	}
	cpu, mem := r.Spec.CPUMilli, r.Spec.MemoryMiB
	if mask == 0 {
		return hwmodel.Placement{{Node: 0, CPUMilli: cpu, MemoryMiB: mem}}
	}
	if r.MIGInstance > 0 && len(r.GPUs) == 1 {
		return hwmodel.Placement{d.cluster.MIGShare(0, r.GPUs[0], r.MIGInstance-1, cpu, mem)}
	}
	return hwmodel.Placement{{Node: 0, GPUs: mask, Milli: r.Milli, CPUMilli: cpu, MemoryMiB: mem}}
}

// finish moves a record out of Running after an exit (code -1: unknown),
// to Succeeded, Failed, or back to Queued when retries remain.
func (d *Driver) finish(r *Record, code int, reason string) { d.end(r, code, reason, true) }

// end is finish; retry false fails the job whatever retries it has left.
func (d *Driver) end(r *Record, code int, reason string, retry bool) {
	now := int64(d.now())
	preempted := r.Preempting && code != 0
	if preempted {
		reason = ReasonPreempted
	}
	r.Attempts = append(r.Attempts, AttemptRecord{Queued: r.Queued, Start: r.Start, End: now,
		GPUs: slices.Clone(r.GPUs), Milli: r.Milli, Exit: code, Reason: reason, Preempted: preempted})
	r.Exit, r.Reason, r.PID, r.PIDStart, r.Preempting = code, reason, 0, 0, false
	switch {
	case code == 0:
		r.State, r.End = Succeeded, now
	case preempted:
		// Back to the queue at once, its retries unspent, as the
		// simulator returns a preempted job.
		r.Preemptions++
		r.State, r.Queued = Queued, now
		d.job(r).Queued = hwmodel.Time(now)
	case retry && r.Spec.Deadline != "" && d.deadlineGivesUp(r, now):
		r.State, r.End = Failed, now
	case retry && r.Attempt-r.Preemptions <= r.Spec.Retries:
		r.State, r.Queued = Queued, now
		d.job(r).Queued = hwmodel.Time(now)
		r.NotBefore = now + int64(d.backoff(r.Attempt))
	default:
		r.State, r.End = Failed, now
	}
	d.cfg.Metrics.moved(r, Running)
}

// deadlineGivesUp applies brigade sim's deadline-aware retry rule to r,
// whose attempt has just failed: at its first failure it is granted
// hwmodel.DeadlineAttempts(time left, estimate, retries) retries; it gives
// up when they are spent (retries exhausted) or when its estimate no
// longer fits before the deadline (DeadlineMissed). A live run knows no
// restart time, nor what a checkpoint saved, so the attempt needed is the
// whole estimate.
func (d *Driver) deadlineGivesUp(r *Record, now int64) bool {
	dl, err := hwmodel.ParseDuration(r.Spec.Deadline)
	if err != nil || dl <= 0 {
		return false
	}
	remaining := hwmodel.Time(r.Submit) + dl - hwmodel.Time(now)
	if r.Granted == 0 {
		r.Granted = hwmodel.DeadlineAttempts(remaining, r.Spec.estimate(), r.Spec.Retries)
	}
	failures := r.Attempt - r.Preemptions
	switch {
	case failures > r.Granted:
		return true
	case r.Spec.estimate() > remaining:
		r.DeadlineMissed = true
		us := func(t hwmodel.Time) time.Duration { return time.Duration(t) * time.Microsecond }
		r.Reason = fmt.Sprintf("deadline: %s left before the deadline, the estimate is %s", us(max(remaining, 0)), us(r.Spec.estimate()))
		return true
	}
	return false
}

// ReasonPreempted is the reason of an attempt the policy preempted.
const ReasonPreempted = "preempted"

// transient reports whether a launch error is a shortage that passes
// (EMFILE, ENFILE, EAGAIN, ENOMEM, ENOSPC, ...) rather than a fault of the
// job's spec (a missing workdir, EACCES): the first leaves the job queued
// with its attempt unspent, the second fails the attempt. A command that
// does not exist is no launch error: the wrapper starts and reports 127.
func transient(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EAGAIN, syscall.ENOMEM,
		syscall.ENOSPC, syscall.EDQUOT, syscall.ENOBUFS, syscall.EINTR, syscall.ETXTBSY} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// unstart undoes the start of r's current attempt, whose command never
// ran: the job is queued again where it was (same Queued time), with
// Attempt and Runs as before the start and no attempt recorded.
func (d *Driver) unstart(r *Record) {
	r.Attempt--
	r.Runs--
	r.State, r.PID, r.PIDStart, r.MIGInstance = Queued, 0, 0, 0
	r.Start, r.GPUs, r.Milli = 0, nil, 0
	if n := len(r.Attempts); n > 0 {
		a := r.Attempts[n-1]
		r.Start, r.GPUs, r.Milli = a.Start, slices.Clone(a.GPUs), a.Milli
	}
	j := d.job(r)
	j.Attempt, j.Start = max(r.Attempt-1, 0), hwmodel.Time(r.Start)
	d.cfg.Metrics.unstarted(r)
}

// backoff is the delay before the k-th retry.
func (d *Driver) backoff(k int) hwmodel.Time {
	if d.cfg.Backoff <= 0 {
		return 0
	}
	return hwmodel.RetryBackoff(hwmodel.Time(d.cfg.Backoff.Microseconds()), d.cfg.BackoffFactor, k)
}

// enqueue tells the policy that r is queued, now or, in retry back-off,
// when its NotBefore comes (dueWaiting).
func (d *Driver) enqueue(r *Record) {
	if r.NotBefore > int64(d.now()) {
		d.waiting = append(d.waiting, r.ID)
		return
	}
	d.host.Queue(policies.JobID(r.ID))
}

// dueWaiting queues the jobs whose back-off is over, in ID order, and
// returns how long until the next one's ends (0: none waits).
func (d *Driver) dueWaiting() time.Duration {
	now := int64(d.now())
	slices.Sort(d.waiting)
	next := int64(0)
	keep := d.waiting[:0]
	for _, id := range d.waiting {
		r := d.recs[id]
		switch {
		case r.State != Queued:
		case r.NotBefore <= now:
			d.host.Queue(policies.JobID(id))
		default:
			keep = append(keep, id)
			if next == 0 || r.NotBefore < next {
				next = r.NotBefore
			}
		}
	}
	d.waiting = keep
	if next == 0 {
		return 0
	}
	return time.Duration(next-now) * time.Microsecond
}
