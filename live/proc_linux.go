package live

import (
	"syscall"
	"unsafe"
)

// waitExited blocks until child pid has exited, without reaping it
// (waitid with WNOWAIT): until the caller reaps it, the zombie keeps its
// pid, and with it the id of its process group, from reuse.
func waitExited(pid int) error {
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, 1 /* P_PID */, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
