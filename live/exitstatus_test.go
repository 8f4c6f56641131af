package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With a relative --logs (the default) and a job with a workdir, the exit
// status must still reach the restarted driver: a job that succeeded while
// the driver was down is not run again.
func TestLiveExitStatusWithRelativeLogsAndWorkdir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Open(Config{GPUs: FakeGPUs(2), Policy: "fcfs", State: "state.db", LogDir: "logs",
		Tick: 5 * time.Millisecond, ExitWhenDone: true})
	if err != nil {
		t.Fatal(err)
	}
	recs := finishWhileDown(t, dir, d, []JobSpec{{Name: "w", Command: "sleep", Args: []string{"0.2"}, Workdir: work, GPUs: 1, Retries: 2}}, 500*time.Millisecond)
	if r := recs[0]; r.State != Succeeded || r.Runs != 1 {
		t.Errorf("w: %s runs %d exit %d (%s); want succeeded, run once", r.State, r.Runs, r.Exit, r.Reason)
	}
}

// The wrapper must not depend on the job's PATH.
func TestLiveExitStatusWithoutPath(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 2)
	recs := finishWhileDown(t, dir, d, []JobSpec{{Name: "nopath", Command: "/bin/sleep", Args: []string{"0.2"},
		Env: map[string]string{"PATH": "/nonexistent"}, GPUs: 1, Retries: 2}}, 500*time.Millisecond)
	if r := recs[0]; r.State != Succeeded || r.Runs != 1 {
		t.Errorf("nopath: %s runs %d exit %d (%s); want succeeded, run once", r.State, r.Runs, r.Exit, r.Reason)
	}
}

// When the exit status cannot be written (a full disk: here every write
// goes to /dev/full) while the driver is down, the restarted driver cannot
// know how the job ended; it must not run it again, since it may have
// succeeded.
func TestLiveExitStatusLostIsNotRerun(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 2)
	sabotage := `f="$BRIGADE_EXIT_FILE"; ln -sf /dev/full "$f.tmp"; rm -f "$f"; ln -s /dev/full "$f"; sleep 0.2`
	recs := finishWhileDown(t, dir, d, []JobSpec{{Name: "full", Command: sabotage, Shell: true, GPUs: 1, Retries: 2}}, 500*time.Millisecond)
	r := recs[0]
	if r.Runs != 1 {
		t.Errorf("full: ran %d times (%s %s); want once", r.Runs, r.State, r.Reason)
	}
	if r.State != Failed || !strings.Contains(r.Reason, "exit status lost") {
		t.Errorf("full: %s (%s); want failed, exit status lost", r.State, r.Reason)
	}
}
