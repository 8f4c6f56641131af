//go:build linux

package controlplane

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The parent-death signal that takes the programs with a killed test
// process is Linux's (proc_linux.go), so its test builds there only.

// TestChildrenDieWithTheTestProcess kills, with SIGKILL, a process that
// started a child the way Start does, and checks the child goes too.
func TestChildrenDieWithTheTestProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperParentOfSleep$")
	cmd.Env = append(os.Environ(), "BRIGADE_TEST_PARENT_OF_SLEEP="+pidFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; pid == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if i > 300 {
			cmd.Process.Kill()
			t.Fatal("helper never reported its child")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !alive(pid) {
		t.Fatalf("child %d not running before the kill", pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for i := 0; alive(pid); i++ {
		if i > 100 {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d outlived its killed parent by 5 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHelperParentOfSleep is the process the test above kills.
func TestHelperParentOfSleep(t *testing.T) {
	pidFile := os.Getenv("BRIGADE_TEST_PARENT_OF_SLEEP")
	if pidFile == "" {
		return // run only as the child process of the test above
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{Dir: t.TempDir()}
	p, err := cp.spawn(filepath.Dir(sleep), filepath.Base(sleep), "sleep.log", "300")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pidFile, []byte(strconv.Itoa(p.cmd.Process.Pid)+"\n"), 0o644)
	time.Sleep(time.Minute)
}
