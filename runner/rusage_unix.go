//go:build unix

package runner

import (
	"runtime"
	"syscall"
	"time"
)

// processUsage is the CPU time (user and system) this process has used so
// far and its peak resident set in bytes; ok is false when the system
// cannot tell.
func processUsage() (cpu time.Duration, peakRSS int64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peakRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		peakRSS *= 1024 // Linux and the BSDs count kilobytes, Darwin bytes
	}
	return cpu, peakRSS, true
}
