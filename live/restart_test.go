package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reopen reopens the store of an abandoned driver, as a restart after
// kill -9 would.
func reopen(t *testing.T, dir string, gpus int) *Driver {
	t.Helper()
	return newDriver(t, dir, gpus)
}

func readState(t *testing.T, dir string) []*Record {
	t.Helper()
	recs, err := ReadState(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// finishWhileDown launches specs in one round, abandons the driver (as kill
// -9 would) while they run, waits for them to end, and restarts.
func finishWhileDown(t *testing.T, dir string, d *Driver, specs []JobSpec, wait time.Duration) []*Record {
	t.Helper()
	if _, err := d.Submit(specs); err != nil {
		t.Fatal(err)
	}
	if err := d.round(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	time.Sleep(wait)
	d2 := reopen(t, dir, 2)
	run(t, d2)
	d2.Close()
	return readState(t, dir)
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	for range 200 {
		b, err := os.ReadFile(path)
		if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func killLeftover(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}
