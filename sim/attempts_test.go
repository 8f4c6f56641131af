package sim_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// checkAttemptLog: each job's AttemptLog agrees with its Outcome: one entry
// per attempt, in time order, their waits and run times summing to Wait and
// Run, the first starting at Start, the last ending at End with the job's
// state, every earlier one ended by a failure or a preemption.
func checkAttemptLog(t testing.TB, w *workloads.Workload, res *sim.Result) {
	t.Helper()
	for i, o := range res.Jobs {
		name := w.Jobs[i].Name
		log := o.Log()
		if len(log) != int(o.Attempts) {
			t.Fatalf("job %s: %d attempts, %d in its log", name, o.Attempts, len(log))
		}
		if len(log) == 0 {
			continue
		}
		var wait, run hwmodel.Time
		for k, a := range log {
			if a.End < a.Start || a.Wait < 0 || (k > 0 && a.Start < log[k-1].End) {
				t.Fatalf("job %s attempt %d: start %d end %d wait %d out of order", name, k, a.Start, a.End, a.Wait)
			}
			if len(a.Placement) == 0 {
				t.Fatalf("job %s attempt %d has no placement", name, k)
			}
			if k < len(log)-1 && a.Ended != sim.AttemptFailed && a.Ended != sim.AttemptPreempted && a.Ended != sim.AttemptHardware {
				t.Fatalf("job %s attempt %d of %d ended %q", name, k, len(log), a.Ended)
			}
			wait += a.Wait
			run += a.End - a.Start
		}
		last := log[len(log)-1]
		if wait != o.Wait || run != o.Run || log[0].Start != o.Start || last.End != o.End {
			t.Fatalf("job %s: log gives wait %d run %d start %d end %d; outcome %d %d %d %d", name, wait, run, log[0].Start, last.End, o.Wait, o.Run, o.Start, o.End)
		}
		if (o.State == sim.Succeeded) != (last.Ended == sim.AttemptSucceeded) {
			t.Fatalf("job %s %s, its last attempt ended %q", name, o.State, last.Ended)
		}
	}
}
