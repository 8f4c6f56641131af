package live

import (
	"syscall"
	"testing"
)

// withFDLimit runs f with no file descriptor left to open (RLIMIT_NOFILE
// at the lowest free descriptor), as when local users hold them all.
func withFDLimit(t *testing.T, f func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	lim := old
	lim.Cur = uint64(fd)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// A launch that fails for want of file descriptors (EMFILE) neither spends
// an attempt nor fails the job: it stays queued and starts at a later
// round.
func TestLiveLaunchOutOfFDsKeepsJobQueued(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	d.Submit([]JobSpec{{Name: "a", Command: "true", GPUs: 1}})
	var err error
	withFDLimit(t, func() { err = d.round() })
	if err != nil {
		t.Fatal(err)
	}
	if r := d.recs[0]; r.State != Queued || r.Attempt != 0 || r.Runs != 0 || len(r.Attempts) != 0 {
		t.Fatalf("after EMFILE: %s attempt %d runs %d attempts %v (%s); want queued, nothing spent", r.State, r.Attempt, r.Runs, r.Attempts, r.Reason)
	}
	run(t, d)
	d.Close()
	if r := readState(t, dir)[0]; r.State != Succeeded || r.Attempt != 1 || r.Runs != 1 {
		t.Errorf("a: %s attempt %d runs %d (%s)", r.State, r.Attempt, r.Runs, r.Reason)
	}
}

// A re-adopted job whose /proc entry cannot be read (no descriptor left)
// still runs: only a process confirmed gone has ended.
func TestLiveUnreadableProcIsNotAnEnd(t *testing.T) {
	dir := t.TempDir()
	d := newDriver(t, dir, 1)
	d.Submit([]JobSpec{{Name: "long", Command: "sleep", Args: []string{"30"}, GPUs: 1}})
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	pid := d.recs[0].PID
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	d.Close()
	d2 := reopen(t, dir, 1)
	defer d2.Close()
	if !d2.adopted[0] {
		t.Fatal("not re-adopted")
	}
	var err error
	withFDLimit(t, func() { err = d2.round() })
	if err != nil {
		t.Fatal(err)
	}
	if r := d2.recs[0]; r.State != Running {
		t.Errorf("long: %s (%s) while its process still runs", r.State, r.Reason)
	}
}
