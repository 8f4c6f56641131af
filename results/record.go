package results

import "github.com/brigadesim/brigade/hwmodel"

// JobState is a job's terminal state.
type JobState string

const (
	Succeeded JobState = "succeeded"
	Failed    JobState = "failed"
)

// NotReady is JobRecord.Ready for a job that never became ready; any
// negative Ready reads the same.
const NotReady hwmodel.Time = -1

// JobRecord is the outcome of one job in one run. Times are run time in
// microseconds; a job that never ran (its dependency failed) has Start and
// End equal to the moment it was failed and Attempts == 0.
type JobRecord struct {
	ID int32
	// GPUMilli is the share of each GPU; for a MIG job, the share of the
	// instance its last attempt ran on (0 if it never ran). It sits beside
	// ID, the other 4-byte field, so that neither is padded to 8 bytes.
	GPUMilli int32
	Name     string
	DAG      string
	Tenant   string
	Priority int
	Submit   hwmodel.Time // when the job was submitted
	// Ready is when the job was first queued: when its dependencies had
	// all succeeded (== Submit without deps). It is NotReady for a job
	// that never was: a dependency failed, no node could ever hold it, or
	// the run stopped while it waited for its dependencies. The writers
	// leave ready_s empty (jobs.csv) or null (jobs.parquet) then, rather
	// than write a time it never had.
	Ready hwmodel.Time
	Start hwmodel.Time // start of the first attempt
	End   hwmodel.Time // end of the last attempt
	// Wait is the total time the job spent ready but not running, over all
	// attempts; Run is the total time it ran, over all attempts.
	Wait hwmodel.Time
	Run  hwmodel.Time
	GPUs int
	// MIGProfile is the profile of the MIG instance of the last attempt;
	// empty for other jobs.
	MIGProfile string
	Nodes      string // node names of the last attempt, joined by "+"
	Attempts   int
	State      JobState
	// Hardware failures (all zero in a run without faults or
	// checkpoints): HardwareFailures counts the attempts that a node or
	// GPU failure ended; Lost is the time attempts ran without lasting
	// progress (work since the last completed checkpoint when an attempt
	// failed or was preempted, the time it ran on failed hardware until
	// detection, and restart times; sim.Outcome.LostTime), and Checkpoint
	// the time spent writing checkpoints, both summed over attempts and
	// both included in Run.
	HardwareFailures int
	// Preemptions counts the attempts a policy preempted; PreemptLost is
	// the part of Lost they cost (progress not saved when they stopped,
	// their start-up, the restart of the attempts after them).
	Preemptions int
	PreemptLost hwmodel.Time
	Lost        hwmodel.Time
	Checkpoint  hwmodel.Time
	// Reason says why a failed job failed, in the vocabulary of
	// reasons.go: ReasonRetriesExhausted, ReasonDeadline,
	// ReasonDependencyFailed or ReasonUnsatisfiable; "" for a job that
	// succeeded. ReasonDetail is the driver's own words for it, e.g.
	// "attempt 2 failed, no retries left" or "dependency train-3 failed"
	// ("" when it succeeded).
	Reason       string
	ReasonDetail string
	// CPUMilli and MemoryMiB are the job's request of CPU (thousandths of
	// a core) and memory (MiB) for the whole job, as the workload gives
	// them (hwmodel.Request); 0 when it asks for none.
	CPUMilli  int64
	MemoryMiB int64
	// Deps names the jobs this one waits for (it starts only after they
	// all succeeded), in the workload's order; nil for none. Names hold no
	// ';' (the trace formats forbid it), so the results files join them
	// with ';'.
	Deps []string
	// AttemptLog lists the job's attempts in order (sim.Outcome's
	// AttemptLog); nil or empty when the job never ran.
	AttemptLog []AttemptRecord
}

// AttemptRecord is one attempt of a job: when it started and ended, how
// long the job was queued just before it, its node names joined by "+",
// how it ended (Ended: AttemptSucceeded, AttemptFailed, AttemptPreempted,
// AttemptHardwareFailure, or AttemptRunning if the run stopped first, End
// then -1) and its process's exit code.
type AttemptRecord struct {
	Start, End hwmodel.Time
	Wait       hwmodel.Time
	Nodes      string
	Ended      string
	// ExitCode is the exit code of the attempt's process, or NoExitCode
	// (-1) when it is unknown or does not apply (still running, status
	// lost, and every simulated attempt). The zero value means exit code 0:
	// a writer that does not know must set NoExitCode.
	ExitCode int
}
