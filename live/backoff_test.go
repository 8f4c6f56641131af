package live

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A job that fails at once with a large retry budget is retried with an
// exponential back-off, not relaunched in a tight loop.
func TestLiveRetryBackoff(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Tick: 5 * time.Millisecond, ExitWhenDone: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Submit([]JobSpec{{Name: "storm", Command: "false", Retries: 100}})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()
	// Default back-off: 1 s, then 2 s: two launches in 1.5 s.
	if r := readState(t, dir)[0]; r.Runs > 2 {
		t.Errorf("storm: %d launches in 1.5 s; want at most 2 with the default back-off", r.Runs)
	}
}

// The retry budget, and with it a record's attempt history, is bounded.
func TestParseJobsRetriesBounded(t *testing.T) {
	_, err := ParseJobs("f.yaml", []byte("jobs:\n- name: a\n  command: x\n  retries: 1000000\n"))
	if err == nil || !strings.Contains(err.Error(), "retries:") {
		t.Errorf("retries: 1000000 accepted (%v)", err)
	}
	if _, err := ParseJobs("f.yaml", []byte(fmt.Sprintf("jobs:\n- name: a\n  command: x\n  retries: %d\n", MaxRetries))); err != nil {
		t.Errorf("retries: %d refused: %v", MaxRetries, err)
	}
}

// The back-off is kept in the state file: a restart does not cut it short.
// The k-th retry waits Backoff·BackoffFactor^(k−1), as in brigade sim.
func TestLiveBackoffSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{time.Unix(1000, 0)}
	open := func() *Driver {
		d, err := Open(Config{GPUs: FakeGPUs(1), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
			LogDir: filepath.Join(dir, "logs"), Clock: clk, Tick: 5 * time.Millisecond, Backoff: 10 * time.Second, BackoffFactor: 3})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open()
	d.Submit([]JobSpec{{Name: "flaky", Command: "false", Retries: 2}})
	// endAttempt runs rounds until the running attempt has ended.
	endAttempt := func(d *Driver) {
		for range 1000 {
			if err := d.round(); err != nil {
				t.Fatal(err)
			}
			if d.recs[0].State != Running {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatal("attempt did not end")
	}
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	endAttempt(d)
	if r := d.recs[0]; r.State != Queued || r.NotBefore != r.Queued+10e6 {
		t.Fatalf("after attempt 1: %s not_before %d queued %d; want a 10 s back-off", r.State, r.NotBefore, r.Queued)
	}
	d.Close()
	d = open()
	clk.t = clk.t.Add(9 * time.Second)
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	if r := d.recs[0]; r.State != Queued || r.Runs != 1 {
		t.Fatalf("9 s into a 10 s back-off: %s runs %d", r.State, r.Runs)
	}
	clk.t = clk.t.Add(time.Second)
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	if r := d.recs[0]; r.Runs != 2 {
		t.Fatalf("back-off over: runs %d", r.Runs)
	}
	endAttempt(d)
	if r := d.recs[0]; r.NotBefore != r.Queued+30e6 {
		t.Errorf("second retry: not_before %d, queued %d; want 30 s", r.NotBefore, r.Queued)
	}
	d.Close()
}
