package controlplane

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests use stand-in programs, so they run without the real build.

func TestStartReportsAFailingProgramAndCleansUp(t *testing.T) {
	bin := t.TempDir()
	for name, body := range map[string]string{
		EtcdBinary:      "echo 'listen tcp 127.0.0.1: bind: address already in use' >&2; exit 3",
		APIServerBinary: "exit 0",
		KWOKBinary:      "exit 0",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	cp, err := Start(context.Background(), Options{BinDir: bin, Dir: state, Timeout: 20 * time.Second})
	if err == nil || cp != nil {
		t.Fatalf("Start = %v, %v: want an error", cp, err)
	}
	for _, want := range []string{"etcd exited before it was healthy", "exit status 3", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state folder survives a failed Start: %v", err)
	}
}

func TestStartRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o644)
	bin := t.TempDir()
	for _, tl := range tools {
		os.WriteFile(filepath.Join(bin, tl.name), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	}
	_, err := Start(context.Background(), Options{BinDir: bin, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("Start removed a file of the folder it refused: %v", err)
	}
}

func TestStartRejectsAnIncompleteBinDir(t *testing.T) {
	_, err := Start(context.Background(), Options{BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "lacks kube-apiserver, etcd or kwok") {
		t.Fatalf("err = %v", err)
	}
}

// TestChildrenDieWithTheTestProcess kills, with SIGKILL, a process that
// started a child the way Start does, and checks the child goes too.
func TestChildrenDieWithTheTestProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
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

// alive reports whether pid runs (a zombie, which nobody may reap in a
// container, counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
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
