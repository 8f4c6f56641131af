package live

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procInfo is what the driver reads of a process in /proc/<pid>/stat.
type procInfo struct {
	state byte   // R, S, D, Z, X, ...
	pgrp  int    // process group
	start uint64 // field 22, starttime: with the pid, names one process
}

func (p procInfo) alive() bool { return p.state != 'Z' && p.state != 'X' }

// noProcess reports whether err from reading /proc/<pid> says that the process
// does not exist (it never did, or it has been reaped).
func noProcess(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// readStat reads /proc/<pid>/stat. exists is false only when the process
// is confirmed gone; any other failure to read (no file descriptor left,
// EACCES, ...) is an error, which says nothing about whether it lives.
func readStat(pid int) (p procInfo, exists bool, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if noProcess(err) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return p, false, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return p, false, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	p.state = f[0][0]
	if p.pgrp, err = strconv.Atoi(f[2]); err != nil {
		return p, false, fmt.Errorf("/proc/%d/stat: pgrp: %w", pid, err)
	}
	if p.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return p, false, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return p, true, nil
}

// procStart returns the start time of process pid and whether it is alive
// (exists and is not a zombie). An error means /proc could not be read:
// the caller must not take the process for dead.
func procStart(pid int) (uint64, bool, error) {
	p, exists, err := readStat(pid)
	if err != nil || !exists || !p.alive() {
		return 0, false, err
	}
	return p.start, true, nil
}

// pids lists the processes in /proc.
func pids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// findMarked scans /proc for live processes whose environment holds marker
// (the driver sets BRIGADE_LIVE_JOB in every child, and children inherit
// it). It finds an attempt launched just before a crash, before its PID
// reached the store, and returns the process group of the earliest such
// process (the job's wrapper, or what is left of its group), 0 when none
// lives. Processes of other users (EACCES) cannot be the driver's; any
// other failure to read is an error.
func findMarked(marker string) (int, error) {
	all, err := pids()
	if err != nil {
		return 0, err
	}
	want := []byte(marker)
	best, bestStart := 0, uint64(0)
	for _, pid := range all {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if noProcess(err) || errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !bytes.Contains(b, want) || !slicesContainsKV(b, want) {
			continue
		}
		p, exists, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		if exists && p.alive() && (best == 0 || p.start < bestStart) {
			best, bestStart = p.pgrp, p.start
		}
	}
	return best, nil
}

// slicesContainsKV reports whether the NUL-separated environment env holds
// kv exactly.
func slicesContainsKV(env, kv []byte) bool {
	for _, e := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(e, kv) {
			return true
		}
	}
	return false
}
