package live

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonLaunchers start a job's daemon in its process group, and out of
// it (setsid): either way the daemon carries the attempt's marker.
var daemonLaunchers = []struct{ name, prefix string }{
	{"in its group", ""},
	{"out of its group", "setsid "},
}

// A job that leaves a daemon behind, in its process group or out of it,
// must not hand its GPU on while the daemon runs: the group and every
// process with the attempt's marker are killed when the job's wrapper
// ends, before the next job starts there.
func TestLiveKillsLeftoverDaemon(t *testing.T) {
	for _, l := range daemonLaunchers {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			d := newDriver(t, dir, 1)
			pidf := filepath.Join(dir, "daemon.pid")
			seen := filepath.Join(dir, "seen")
			d.Submit([]JobSpec{
				{Name: "forks", Command: fmt.Sprintf("%ssleep 30 & echo $! > %s; exit 0", l.prefix, pidf), Shell: true, GPUs: 1},
				{Name: "next", Command: fmt.Sprintf("cat /proc/$(cat %s)/stat > %s 2>/dev/null; true", pidf, seen), Shell: true, GPUs: 1},
			})
			run(t, d)
			d.Close()
			pid := readPid(t, pidf)
			killLeftover(t, pid)
			b, _ := os.ReadFile(seen)
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] != "Z" && f[2] != "X" {
				t.Errorf("the next job started beside the first one's daemon (state %s)", f[2])
			}
			if alive(pid) {
				t.Errorf("daemon %d still runs after its job ended", pid)
			}
			for _, r := range readState(t, dir) {
				if r.State != Succeeded {
					t.Errorf("%s: %s (%s)", r.Spec.Name, r.State, r.Reason)
				}
			}
		})
	}
}

// Killing only a job's wrapper must not let its retry start while the
// command it ran still runs: the attempt ends when its group is gone.
func TestLiveKilledWrapperDoesNotOverlapRetry(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	lock, journal := filepath.Join(dir, "lock"), filepath.Join(dir, "journal")
	cmd := fmt.Sprintf(`exec 9>>%s; flock -n 9 || { echo overlap >> %s; exit 9; }; echo "start $BRIGADE_ATTEMPT" >> %s; if [ "$BRIGADE_ATTEMPT" = 1 ]; then sleep 5; fi`, lock, journal, journal)
	d.Submit([]JobSpec{{Name: "held", Command: cmd, Shell: true, GPUs: 1, Retries: 1}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	r := d.recs[0]
	for range 200 {
		if b, _ := os.ReadFile(journal); strings.Contains(string(b), "start 1") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	d.Close()
	b, _ := os.ReadFile(journal)
	if strings.Contains(string(b), "overlap") {
		t.Errorf("the retry started while the killed wrapper's command still ran:\n%s", b)
	}
	if r := readState(t, dir)[0]; r.State != Succeeded || r.Runs != 2 {
		t.Errorf("held: %s runs %d (%s); want succeeded at its retry", r.State, r.Runs, r.Reason)
	}
}

// A re-adopted job whose wrapper ended while the driver was down, but whose
// daemon still runs, in its group or out of it, has not ended until the
// daemon is gone: the restarted driver stops it before it hands the GPU on.
func TestLiveReadoptedJobEndsWithItsGroup(t *testing.T) {
	for _, l := range daemonLaunchers {
		t.Run(l.name, func(t *testing.T) {
			dir := t.TempDir()
			d := newDriver(t, dir, 1)
			pidf := filepath.Join(dir, "daemon.pid")
			recs := finishWhileDown(t, dir, d, []JobSpec{
				{Name: "forks", Command: fmt.Sprintf("%ssleep 30 & echo $! > %s; exit 0", l.prefix, pidf), Shell: true, GPUs: 1},
			}, 300*time.Millisecond)
			pid := readPid(t, pidf)
			killLeftover(t, pid)
			if alive(pid) {
				t.Errorf("daemon %d of an ended job still runs after the restart", pid)
			}
			if r := recs[0]; r.State != Succeeded || r.Runs != 1 {
				t.Errorf("forks: %s runs %d (%s)", r.State, r.Runs, r.Reason)
			}
		})
	}
}
