package sim

import "github.com/brigadesim/brigade/hwmodel"

// endCode is an AttemptEnd in one byte, for the first attempt an Outcome
// keeps in its own fields.
type endCode uint8

// endNames are the AttemptEnds by endCode; 0 is no attempt.
var endNames = [...]AttemptEnd{"", AttemptRunning, AttemptSucceeded, AttemptFailed, AttemptPreempted, AttemptHardware}

func codeOf(e AttemptEnd) endCode {
	switch e {
	case AttemptRunning:
		return 1
	case AttemptSucceeded:
		return 2
	case AttemptFailed:
		return 3
	case AttemptPreempted:
		return 4
	case AttemptHardware:
		return 5
	}
	panic("sim: no code for attempt end " + string(e))
}

// Attempt is the job's attempt k (0 ≤ k < Attempts), without building
// the log.
func (o *Outcome) Attempt(k int) Attempt {
	if o.log != nil {
		return (*o.log)[k]
	}
	if k != 0 || o.firstEnded == 0 {
		panic("sim: no such attempt")
	}
	return Attempt{Start: o.Start, End: o.firstEnd, Wait: o.Wait, Placement: o.Placement, Ended: endNames[o.firstEnded]}
}

// Log lists the job's attempts in order (len == Attempts). The slice is
// the outcome's own log for a job that ran more than once, a new one
// otherwise; an attempt's Placement is the engine's either way.
func (o *Outcome) Log() []Attempt {
	switch {
	case o.log != nil:
		return *o.log
	case o.firstEnded == 0:
		return nil
	}
	return []Attempt{o.Attempt(0)}
}

// startAttempt logs a new attempt a, before start() adds a's wait to
// Wait. The first stays in the outcome's fields (start() sets Start, Wait
// and Placement to a's); a second moves both into a log of their own.
func (o *Outcome) startAttempt(a Attempt) {
	switch {
	case o.log != nil:
		*o.log = append(*o.log, a)
	case o.firstEnded == 0:
		o.firstEnd, o.firstEnded = a.End, codeOf(a.Ended)
	default:
		log := []Attempt{o.Attempt(0), a}
		o.log = &log
	}
}

// endAttempt books how the last attempt ended.
func (o *Outcome) endAttempt(at hwmodel.Time, why AttemptEnd) {
	switch {
	case o.log != nil:
		log := *o.log
		log[len(log)-1].End, log[len(log)-1].Ended = at, why
	case o.firstEnded != 0:
		o.firstEnd, o.firstEnded = at, codeOf(why)
	}
}

// SetLog makes log the job's attempt log and Attempts its length, for an
// outcome made outside a run (a test's, a tool's).
func (o *Outcome) SetLog(log []Attempt) {
	o.log, o.Attempts = &log, int32(len(log))
}
