package sim

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// preemptOnce runs Inner and, at its first call at or after At, preempts
// job 0 if it is running; before At it asks to be woken at At, so the
// preemption happens at At exactly though nothing else happens then.
type preemptOnce struct {
	Inner policies.Policy
	At    hwmodel.Time
	done  bool
	ds    []policies.Decision
}

func (p *preemptOnce) Name() string { return "preempt-once" }

func (p *preemptOnce) Schedule(v policies.View) []policies.Decision {
	p.ds = append(p.ds[:0], p.Inner.Schedule(v)...)
	switch {
	case p.done:
	case v.Now() < p.At:
		v.(policies.WakeView).WakeAt(p.At)
	default:
		p.done = true
		p.ds = append(p.ds, policies.Decision{Kind: policies.Preempt, Job: 0})
	}
	return p.ds
}

// A 100 s job checkpointing every 30 s (no cost) is preempted at 50 s and
// started again at once; each attempt after a preemption restarts for
// 10 s. Worked by hand:
//   - keeping its checkpoints only, it saved 30 s of work and lost 20 s;
//     the second attempt restarts 50..60 and runs the remaining 70 s:
//     it ends at 130 s; lost 20 + 10 = 30 s, all of it to the preemption;
//   - saving on preemption, it keeps all 50 s and ends at 50+10+50 = 110 s,
//     losing only the 10 s restart.
func TestPreemptionCost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		save      bool
		end, lost hwmodel.Time
	}{
		{"checkpoints only", false, 130 * sec, 30 * sec},
		{"save on preemption", true, 110 * sec, 10 * sec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := jobsWorkload(t, oneJob("a", 0, 100*sec, 1))
			res, _ := runFaults(t, Config{Cluster: nodesCluster(t, 1, 1), Workload: w,
				Policy:            &preemptOnce{Inner: policies.MustParseSpec("fcfs").MustNew(), At: 50 * sec},
				DefaultCheckpoint: Checkpoint{Every: 30 * sec}, PreemptRestart: 10 * sec, SaveOnPreempt: tc.save})
			o := res.Jobs[0]
			if o.End != tc.end || o.LostTime != tc.lost || o.PreemptLost != tc.lost || o.Preemptions != 1 || o.Attempts != 2 {
				t.Errorf("end %v, lost %v, preemption lost %v, %d preemptions, %d attempts; want end %v, lost %v (all to 1 preemption), 2 attempts",
					o.End, o.LostTime, o.PreemptLost, o.Preemptions, o.Attempts, tc.end, tc.lost)
			}
			if log := o.Log(); len(log) != 2 || log[0].End != 50*sec || log[0].Ended != AttemptPreempted {
				t.Errorf("attempts %+v, want the first preempted at 50 s", log)
			}
		})
	}
}

// A wake-up the policy no longer asks for makes no instant: the run ends
// with its last job, not at the stale wake-up.
func TestStaleWakeMakesNoInstant(t *testing.T) {
	w := jobsWorkload(t, oneJob("a", 0, 100*sec, 1))
	pol := &wakeOnce{Inner: policies.MustParseSpec("fcfs").MustNew(), At: 500 * sec}
	res, seen := runFaults(t, Config{Cluster: nodesCluster(t, 1, 1), Workload: w, Policy: pol})
	if res.Jobs[0].End != 100*sec {
		t.Fatalf("job ends at %v, want 100 s", res.Jobs[0].End)
	}
	if last := seen[len(seen)-1].at; last != 100*sec {
		t.Errorf("last instant %v, want 100 s: the wake-up at 500 s asked for at 0 was dropped at the next call", last)
	}
	if pol.calls != 2 {
		t.Errorf("%d calls, want 2 (at 0 and at 100 s)", pol.calls)
	}
}

// wakeOnce asks, at its first call only, to be woken at At.
type wakeOnce struct {
	Inner policies.Policy
	At    hwmodel.Time
	calls int
}

func (p *wakeOnce) Name() string { return "wake-once" }

func (p *wakeOnce) Schedule(v policies.View) []policies.Decision {
	p.calls++
	if p.calls == 1 {
		v.(policies.WakeView).WakeAt(p.At)
	}
	return p.Inner.Schedule(v)
}
