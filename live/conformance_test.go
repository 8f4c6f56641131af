package live

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/policies/policytest"
)

// fakeRun is one attempt of a fake process: when it ends and how.
type fakeRun struct {
	id      int32
	attempt int
	end     time.Time
	code    int
}

// fakeProcs replaces process launches with the wrapper's protocol played
// by the test: "started" in the exit file at launch, the status appended
// and an exitMsg posted when the attempt's time is up.
type fakeProcs struct {
	d       *Driver
	clock   *fakeClock
	running []fakeRun
	// length and code give an attempt's run time and exit status.
	length func(r *Record) time.Duration
	code   func(r *Record) int
	starts []policies.JobID
}

func (f *fakeProcs) launch(r *Record) error {
	if err := os.WriteFile(r.ExitFile, []byte("started\n"), 0o644); err != nil {
		return err
	}
	r.PID = 0
	f.running = append(f.running, fakeRun{id: r.ID, attempt: r.Attempt, end: f.clock.t.Add(f.length(r)), code: f.code(r)})
	f.starts = append(f.starts, policies.JobID(r.ID))
	return nil
}

// stop plays a preempted job that stops on its SIGTERM at once.
func (f *fakeProcs) stop(r *Record) {
	for i := range f.running {
		if f.running[i].id == r.ID {
			f.running[i].end, f.running[i].code = f.clock.t, 143
		}
	}
}

// deliver ends the attempts whose time is up, in ID order.
func (f *fakeProcs) deliver() error {
	slices.SortFunc(f.running, func(a, b fakeRun) int { return int(a.id - b.id) })
	keep := f.running[:0]
	for _, run := range f.running {
		if run.end.After(f.clock.t) {
			keep = append(keep, run)
			continue
		}
		r := f.d.recs[run.id]
		fh, err := os.OpenFile(r.ExitFile, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		fmt.Fprintf(fh, "%d\n", run.code)
		fh.Close()
		f.d.exits = append(f.d.exits, exitMsg{id: run.id, attempt: run.attempt, code: run.code})
	}
	f.running = keep
	return nil
}

// next is the earliest end of a running attempt (ok false: none).
func (f *fakeProcs) next() (time.Time, bool) {
	var t time.Time
	for _, run := range f.running {
		if t.IsZero() || run.end.Before(t) {
			t = run.end
		}
	}
	return t, !t.IsZero()
}

// runScenario runs a conformance scenario on a live driver with a fake
// clock and fake processes: jobs are submitted at their times, attempts
// last their durations, the first Fails attempts of a job exit 1.
func runScenario(t *testing.T, sc policytest.Scenario, p policies.Policy) policytest.Outcome {
	t.Helper()
	if len(sc.Nodes) != 1 {
		t.Fatalf("live runs one node; scenario %s has %d", sc.Name, len(sc.Nodes))
	}
	n := sc.Nodes[0]
	dir := t.TempDir()
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: epoch}
	weights := map[string]float64{}
	for _, tn := range sc.Tenants {
		weights[tn.Name] = tn.Weight
	}
	gpus := FakeGPUs(n.GPUs)
	d, err := Open(Config{GPUs: gpus, Policy: "fcfs", State: filepath.Join(dir, "state.db"), LogDir: filepath.Join(dir, "logs"),
		Clock: clock, Backoff: -1, Machine: Machine{CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, TenantWeights: weights}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.policy = p
	procs := &fakeProcs{d: d, clock: clock,
		length: func(r *Record) time.Duration {
			return time.Duration(sc.Jobs[r.ID].Duration) * time.Microsecond
		},
		code: func(r *Record) int {
			if r.Attempt <= sc.Jobs[r.ID].Fails {
				return 1
			}
			return 0
		}}
	d.launchFn = procs.launch
	d.stopFn = procs.stop
	specs := make([]JobSpec, len(sc.Jobs))
	for i, j := range sc.Jobs {
		s := JobSpec{Name: j.Name, Command: "true", CPUMilli: j.Req.CPUMilli, MemoryMiB: j.Req.MemoryMiB,
			Tenant: sc.Tenants[j.Tenant].Name, Priority: j.Priority, Retries: j.Fails}
		switch {
		case j.Req.GPUs == 1 && j.Req.GPUMilli < hwmodel.MilliPerGPU:
			s.GPUMilli = j.Req.GPUMilli
		default:
			s.GPUs = j.Req.GPUs
		}
		if est := j.Estimate; est > 0 {
			s.Estimate = fmt.Sprintf("%dus", est)
		} else {
			s.Estimate = fmt.Sprintf("%dus", j.Duration)
		}
		specs[i] = s
	}
	next := 0
	for step := 0; ; step++ {
		if step == 10_000 {
			t.Fatalf("%d steps and the run has not ended", step)
		}
		now := hwmodel.Time(clock.t.Sub(epoch).Microseconds())
		for next < len(specs) && sc.Jobs[next].Submit <= now {
			if _, err := d.Submit(specs[next : next+1]); err != nil {
				t.Fatal(err)
			}
			next++
		}
		if err := procs.deliver(); err != nil {
			t.Fatal(err)
		}
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		for _, id := range d.later {
			d.host.Queue(id)
		}
		d.later = d.later[:0]
		if d.host.HasNews() {
			continue // the policy has news: another round at this instant
		}
		if _, ok := procs.next(); ok {
			if end, _ := procs.next(); !end.After(clock.t) {
				continue // a preempted attempt ended at this instant
			}
		}
		if next == len(specs) && d.Pending() == 0 {
			break
		}
		// The next instant: an arrival or an attempt's end.
		var at time.Time
		if next < len(specs) {
			at = epoch.Add(time.Duration(sc.Jobs[next].Submit) * time.Microsecond)
		}
		if end, ok := procs.next(); ok && (at.IsZero() || end.Before(at)) {
			at = end
		}
		if at.IsZero() {
			t.Fatalf("nothing runs and %d jobs wait: the run is stuck", d.Pending())
		}
		clock.t = at
	}
	var out policytest.Outcome
	preemptions := 0
	for _, r := range d.recs {
		preemptions += r.Preemptions
		for _, a := range r.Attempts {
			if a.Preempted != (a.Reason == ReasonPreempted) {
				t.Errorf("%s: attempt %+v: preempted flag and reason disagree", r.Spec.Name, a)
			}
		}
		switch r.State {
		case Succeeded:
			out.Succeeded++
		case Failed:
			out.Failed++
		}
	}
	out.Starts = procs.starts
	if strings.HasSuffix(p.Name(), "+preemptor") && preemptions == 0 {
		t.Error("the preempting policy ran and no attempt was preempted: live rejected its Preempts")
	}
	return out
}

// The live driver keeps the policy contract, on fake processes and a
// fake clock: the conformance suite's scenarios under built-in,
// preempting and adversarial policies, deterministically.
func TestDriverConformance(t *testing.T) {
	policytest.TestDriver(t, runScenario, policytest.DriverOptions{Deterministic: true})
}
