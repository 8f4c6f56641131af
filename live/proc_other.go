//go:build !linux

package live

import "errors"

// waitExited is Linux only (waitid with WNOWAIT); elsewhere the caller
// reaps the wrapper first and stops its group after.
func waitExited(pid int) error { return errors.New("live: waitid: Linux only") }
