package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func newDriver(t *testing.T, dir string, gpus int) *Driver {
	t.Helper()
	d, err := Open(Config{GPUs: FakeGPUs(gpus), Policy: "fcfs", State: filepath.Join(dir, "state.db"),
		LogDir: filepath.Join(dir, "logs"), Clock: &fakeClock{time.Unix(1000, 0)}, Tick: 5 * time.Millisecond, ExitWhenDone: true, Backoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func run(t *testing.T, d *Driver) { t.Helper(); runFor(t, d, 60*time.Second) }

// runFor is run with a limit: a guard against a driver that never ends,
// not a measure of speed.
func runFor(t *testing.T, d *Driver, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLiveJobsEndAndRetry(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 2)
	specs := []JobSpec{
		{Name: "ok", Command: "true"},
		{Name: "bad", Command: "false", Retries: 2},
		{Name: "three", Command: "sh -c 'exit 3'", Shell: true},
		{Name: "env", Command: "sh", Args: []string{"-c", "echo CVD=$CUDA_VISIBLE_DEVICES"}, GPUs: 2},
		{Name: "nap", Command: "sleep", Args: []string{"0.1"}, GPUMilli: 500},
		{Name: "huge", Command: "true", GPUs: 3},
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	d.Close()
	recs, err := ReadState(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		st   State
		exit int
		runs int
	}{"ok": {Succeeded, 0, 1}, "bad": {Failed, 1, 3}, "three": {Failed, 3, 1}, "env": {Succeeded, 0, 1}, "nap": {Succeeded, 0, 1}, "huge": {Failed, -1, 0}}
	for _, r := range recs {
		w := want[r.Spec.Name]
		if r.State != w.st || r.Exit != w.exit || r.Runs != w.runs {
			t.Errorf("%s: state %s exit %d runs %d, want %+v", r.Spec.Name, r.State, r.Exit, r.Runs, w)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "logs", "env.log"))
	if err != nil || !strings.Contains(string(b), "CVD=GPU-fake-0000,GPU-fake-0001") {
		t.Errorf("env.log: %q %v", b, err)
	}
}

func TestLiveReadoptsRunningProcess(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	d.Submit([]JobSpec{{Name: "long", Command: "sleep", Args: []string{"0.5"}, GPUs: 1}, {Name: "after", Command: "true", GPUs: 1}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	d.Close() // abandoned: "long" keeps running
	d2 := newDriver(t, dir, 1)
	if !d2.adopted[0] {
		t.Fatalf("long was not re-adopted")
	}
	run(t, d2)
	d2.Close()
	recs, _ := ReadState(filepath.Join(dir, "state.db"))
	for _, r := range recs {
		if r.Runs != 1 || r.State == Queued || r.State == Running {
			t.Errorf("%s: state %s runs %d", r.Spec.Name, r.State, r.Runs)
		}
	}
	if recs[1].Start < recs[0].Start {
		t.Errorf("after started before long")
	}
}

// TestLiveManyJobs submits many trivially short jobs on 4 fake GPUs,
// abandons the driver midway (no cleanup, as kill -9 would) and restarts
// from the same store: every job ends exactly once, having run exactly
// once (none is lost, none reruns). BRIGADE_LIVE_JOBS sets
// the count (CI runs 10000); the default is 1000.
func TestLiveManyJobs(t *testing.T) {
	n := 1000
	if s := os.Getenv("BRIGADE_LIVE_JOBS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	d := newDriver(t, dir, 4)
	specs := make([]JobSpec, n)
	for i := range specs {
		// No retries: a job whose process ended while the driver was down
		// left its exit status in its wrapper's file, so none reruns.
		specs[i] = JobSpec{Name: fmt.Sprintf("j%05d", i), Command: "true", GPUs: 1 + i%2}
	}
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for d.Pending() > n/2 {
		if err := d.round(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	lat := d.Latencies
	decs := d.Decisions
	d.Close() // abandoned midway
	d2 := newDriver(t, dir, 4)
	// A guard against a hang, scaled to the jobs: 10,000 real processes
	// under -race on 2 shared cores take minutes.
	runFor(t, d2, 60*time.Second+time.Duration(n)*50*time.Millisecond)
	el := time.Since(t0)
	d2.Close()
	lat = append(lat, d2.Latencies...)
	decs += d2.Decisions
	recs, err := ReadState(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for _, r := range recs {
		if r.State != Succeeded || r.Runs != 1 {
			t.Errorf("%s: state %s runs %d exit %d (%s)", r.Spec.Name, r.State, r.Runs, r.Exit, r.Reason)
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		t.Logf("%d jobs in %v (%.0f jobs/s); %d Schedule calls with %d decisions; per call p50 %v p99 %v",
			n, el, float64(n)/el.Seconds(), len(lat), decs, lat[len(lat)/2], lat[len(lat)*99/100])
	}
}

// The exit status of a job that ends while the driver is down is not lost:
// its wrapper writes it to a file the restarted driver reads, whether the
// job ended before the restart or after it was re-adopted. A job that
// succeeded is not rerun; one that failed keeps its real exit code.
func TestLiveExitStatusSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 2)
	d.Submit([]JobSpec{
		{Name: "ok-early", Command: "true", GPUs: 1},
		{Name: "bad-late", Command: "sleep 0.3; exit 3", Shell: true, GPUs: 1},
	})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	d.Close() // abandoned; ok-early ends at once, bad-late after the restart
	time.Sleep(100 * time.Millisecond)
	d2 := newDriver(t, dir, 2)
	if !d2.adopted[1] || d2.adopted[0] {
		t.Fatalf("adopted %v: want only bad-late", d2.adopted)
	}
	run(t, d2)
	d2.Close()
	recs, _ := ReadState(filepath.Join(dir, "state.db"))
	if r := recs[0]; r.State != Succeeded || r.Exit != 0 || r.Runs != 1 {
		t.Errorf("ok-early: %s exit %d runs %d (%s); want succeeded once", r.State, r.Exit, r.Runs, r.Reason)
	}
	if r := recs[1]; r.State != Failed || r.Exit != 3 || r.Runs != 1 {
		t.Errorf("bad-late: %s exit %d runs %d (%s); want failed with exit 3", r.State, r.Exit, r.Runs, r.Reason)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "logs", ".exit", "*")); len(left) != 0 {
		t.Errorf("exit files left behind: %v", left)
	}
}
