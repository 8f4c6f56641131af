package results

// The failure vocabulary: why a job failed (JobRecord.Reason, the reason
// column of jobs.parquet and jobs.csv) and how an attempt ended
// (AttemptRecord.Ended, the ended column of attempts.parquet). It is
// defined here once and shared by every driver: the simulator's outcomes
// are mapped to it (runner.Records) and live mode's export writes the same
// words, so a live run and its replay can be compared job by job. The free
// text beside it (JobRecord.ReasonDetail) is each driver's own.
//
// A job's reason says what ended the job, never how its last attempt ended
// (that is the attempt's Ended): a process exiting non-zero is an attempt
// that ended AttemptFailed, with its ExitCode, and the job fails with
// ReasonRetriesExhausted only if no retry was left.
const (
	// ReasonRetriesExhausted: its last attempt failed (a non-zero exit, a
	// failure the trace records, or a node or GPU failure) and the retry
	// policy allowed no further attempt. Under the deadline-aware rule, a
	// job that used up the attempts it was granted ends here too.
	ReasonRetriesExhausted = "retries_exhausted"
	// ReasonDeadline: the deadline-aware retry rule gave up after a failed
	// attempt, because no further attempt could finish before the job's
	// deadline (sim.ReasonDeadline).
	ReasonDeadline = "deadline"
	// ReasonDependencyFailed: a job it depends on (its DAG parent, directly
	// or through others) failed, so it never ran.
	ReasonDependencyFailed = "dependency_failed"
	// ReasonUnsatisfiable: no node of the cluster (no GPU of the machine)
	// could ever hold its request, so it failed at submission and never
	// ran.
	ReasonUnsatisfiable = "unsatisfiable"
)

// How an attempt ended (AttemptRecord.Ended). No attempt ends for a
// deadline: the deadline is consulted only after an attempt has failed.
const (
	AttemptSucceeded = "succeeded" // the job finished (live: exit code 0)
	// AttemptFailed: the attempt failed on its own: a failure the trace
	// records (sim), a non-zero exit or a lost process (live).
	AttemptFailed          = "failed"
	AttemptPreempted       = "preempted"        // the policy preempted it
	AttemptHardwareFailure = "hardware_failure" // a node or GPU failure ended it
	AttemptRunning         = "running"          // the run stopped first; End is -1
)

// NoExitCode is AttemptRecord.ExitCode when the exit code is unknown or
// does not apply: an attempt still running, a process whose status was
// lost, and every attempt of the simulator, which runs no process.
const NoExitCode = -1

// JobReasons lists the job reasons, in the order of their declaration.
func JobReasons() []string {
	return []string{ReasonRetriesExhausted, ReasonDeadline, ReasonDependencyFailed, ReasonUnsatisfiable}
}

// AttemptEnds lists the ways an attempt ends, in the order of their
// declaration.
func AttemptEnds() []string {
	return []string{AttemptSucceeded, AttemptFailed, AttemptPreempted, AttemptHardwareFailure, AttemptRunning}
}
