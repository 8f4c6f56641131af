//go:build unix && !linux

package controlplane

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr: without Pdeathsig (Linux only) a killed test process can
// leave its children running; Stop and the process group still work.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

func killGroup(p *os.Process) error { return signalGroup(p, syscall.SIGKILL) }
