package live

import (
	"fmt"
	"testing"
	"time"
)

// A kill -9 between the commit of a round's starts (their records written
// as running, no PID yet) and their launch leaves running records of jobs
// whose command never ran. The restart must queue them again without
// spending an attempt: they end as if the crash had not happened.
func TestLiveRequeuesJobsThatNeverLaunched(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 4)
	specs := make([]JobSpec, 12)
	for i := range specs {
		specs[i] = JobSpec{Name: fmt.Sprintf("j%02d", i), Command: "true", GPUs: 1}
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	// What round() commits before launching: the first four as running.
	for i := range 4 {
		r := d.recs[i]
		r.State, r.Attempt, r.Runs, r.GPUs, r.Milli, r.Start = Running, 1, 1, []int{i}, 1000, int64(d.now())
	}
	if err := d.st.put(d.recs[:4]...); err != nil {
		t.Fatal(err)
	}
	d.Close() // killed before any launch
	d2 := reopen(t, dir, 4)
	run(t, d2)
	d2.Close()
	for _, r := range readState(t, dir) {
		if r.State != Succeeded || r.Attempt != 1 || r.Runs != 1 || len(r.Attempts) != 1 || r.Attempts[0].Exit != 0 {
			t.Errorf("%s: %s attempt %d runs %d attempts %+v (%s); want succeeded at its first attempt",
				r.Spec.Name, r.State, r.Attempt, r.Runs, r.Attempts, r.Reason)
		}
	}
}

// crashAt makes the next round panic at hook point (as kill -9 would stop
// it there) and abandons the driver.
func crashAt(t *testing.T, d *Driver, point string, nth int) {
	t.Helper()
	seen := 0
	crashHook = func(p string) {
		if p == point {
			if seen++; seen == nth {
				panic("crash at " + p)
			}
		}
	}
	defer func() { crashHook = nil }()
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Fatalf("no crash at %s", point)
			}
		}()
		for range 100 {
			if err := d.round(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	d.Close()
}

// The same with the driver's own records: killed after the starts are
// committed and before any launch, or after a launch and before its PID
// is committed. Jobs that never ran are queued again unspent; the one
// launched is found by its marker and not run twice.
func TestLiveCrashInLaunchLoop(t *testing.T) {
	for _, point := range []string{"starts", "launched"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			d := newDriver(t, dir, 4)
			specs := make([]JobSpec, 12)
			for i := range specs {
				specs[i] = JobSpec{Name: fmt.Sprintf("j%02d", i), Command: "sleep", Args: []string{"0.1"}, GPUs: 1}
			}
			d.Submit(specs)
			crashAt(t, d, point, 1)
			d2 := reopen(t, dir, 4)
			run(t, d2)
			d2.Close()
			for _, r := range readState(t, dir) {
				if r.State != Succeeded || r.Attempt != 1 || r.Runs != 1 || len(r.Attempts) != 1 {
					t.Errorf("%s: %s attempt %d runs %d attempts %+v (%s); want succeeded at its first attempt",
						r.Spec.Name, r.State, r.Attempt, r.Runs, r.Attempts, r.Reason)
				}
			}
		})
	}
}
