package controlplane

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in a process group of its own, so that Stop
// (and a cancelled build) can signal it and everything it started, and
// asks the kernel to kill it when its parent dies, so that a test binary
// killed by go test's timeout or by kill -9 leaves no apiserver behind.
// Pdeathsig follows the thread that started the child; Go does not end
// its threads unless a goroutine exits while locked to one, which this
// package never does.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

func killGroup(p *os.Process) error { return signalGroup(p, syscall.SIGKILL) }
