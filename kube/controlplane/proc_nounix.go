//go:build !unix

package controlplane

import (
	"os"
	"os/exec"
	"syscall"
)

// The control plane needs Unix (process groups, flock); these keep the
// package compiling elsewhere, where lockFile refuses to start.
func setProcAttr(cmd *exec.Cmd) {}

func signalGroup(p *os.Process, sig syscall.Signal) error { return p.Kill() }

func killGroup(p *os.Process) error { return p.Kill() }
