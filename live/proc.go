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
	"time"
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

// eachMarked scans /proc once and calls fn for every live process and
// every BRIGADE_LIVE_JOB entry of its environment that starts with prefix
// (the driver sets one in every child, and children inherit it).
// Processes of other users (EACCES) cannot be the driver's; any other
// failure to read is an error.
func eachMarked(prefix string, fn func(pid int, p procInfo, marker []byte)) error {
	all, err := pids()
	if err != nil {
		return err
	}
	want := []byte(prefix)
	for _, pid := range all {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if noProcess(err) || errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err != nil {
			return err
		}
		if !bytes.Contains(b, want) {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if !bytes.HasPrefix(kv, want) {
				continue
			}
			p, exists, err := readStat(pid)
			if err != nil {
				return err
			}
			if exists && p.alive() {
				fn(pid, p, kv)
			}
		}
	}
	return nil
}

// scanMarked returns, for each BRIGADE_LIVE_JOB marker starting with
// prefix that a live process carries, the process group of its earliest
// process (the job's wrapper, or what is left of its group). It finds
// attempts launched just before a crash, before their PID reached the
// store.
func scanMarked(prefix string) (map[string]int, error) {
	type hit struct {
		pgrp  int
		start uint64
	}
	best := map[string]hit{}
	err := eachMarked(prefix, func(_ int, p procInfo, marker []byte) {
		if h, ok := best[string(marker)]; !ok || p.start < h.start {
			best[string(marker)] = hit{p.pgrp, p.start}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(best))
	for k, h := range best {
		out[k] = h.pgrp
	}
	return out, nil
}

// groupMembers counts the live processes (zombies are not) of process
// group pgid, whose leader started at leaderStart (0: unknown). A group
// outlives its leader while members remain, and its id cannot be reused
// meanwhile: so if a live process now holds pid pgid with another start
// time, the group we knew is gone.
func groupMembers(pgid int, leaderStart uint64) (int, error) {
	if pgid <= 0 {
		return 0, nil
	}
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return 0, nil
	}
	lead, exists, err := readStat(pgid)
	if err != nil {
		return 0, err
	}
	if exists && lead.alive() && leaderStart != 0 && lead.start != leaderStart {
		return 0, nil
	}
	all, err := pids()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range all {
		p, exists, err := readStat(pid)
		if err != nil {
			return 0, err
		}
		if exists && p.alive() && p.pgrp == pgid {
			n++
		}
	}
	return n, nil
}

// signalGroup sends sig to every live process of group pgid, whose
// leader started at leaderStart, but the leader itself when exceptLeader
// is set (a job's wrapper must outlive its command to record its exit
// status).
func signalGroup(pgid int, leaderStart uint64, sig syscall.Signal, exceptLeader bool) error {
	if pgid <= 0 {
		return nil
	}
	lead, exists, err := readStat(pgid)
	if err != nil {
		return err
	}
	if exists && lead.alive() && leaderStart != 0 && lead.start != leaderStart {
		return nil // the group we knew is gone; pgid is another's now
	}
	all, err := pids()
	if err != nil {
		return err
	}
	for _, pid := range all {
		if exceptLeader && pid == pgid {
			continue
		}
		if p, exists, err := readStat(pid); err == nil && exists && p.alive() && p.pgrp == pgid {
			_ = syscall.Kill(pid, sig)
		}
	}
	return nil
}

// stopGroup SIGKILLs process group pgid, whose leader started at
// leaderStart, until none of its processes lives, waiting up to wait; it
// reports whether none does. It signals the group only right after
// groupMembers found members in it: while they live the id cannot be
// another group's.
func stopGroup(pgid int, leaderStart uint64, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		n, err := groupMembers(pgid, leaderStart)
		if err != nil || n == 0 {
			return n == 0, err
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(pause)
	}
}

// stopAttempt stops what lives of an attempt: its process group
// (stopGroup) and then any process that left the group (setsid, setpgid)
// but carries the attempt's marker in its environment (stopMarked). It
// reports whether nothing of it lives, waiting up to wait for each.
func stopAttempt(pgid int, leaderStart uint64, marker string, wait time.Duration) (bool, error) {
	if pgid > 0 {
		if empty, err := stopGroup(pgid, leaderStart, wait); !empty || err != nil {
			return false, err
		}
	}
	return stopMarked(marker, wait)
}

// stopMarked SIGKILLs every live process whose environment holds exactly
// marker (an attempt's BRIGADE_LIVE_JOB entry) until none lives, waiting
// up to wait; it reports whether none does. A process that cleared its
// environment is out of its reach. A pid is signalled only while it still
// has the start time it had when the scan found it, so a pid freed and
// reused meanwhile is left alone.
func stopMarked(marker string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		procs, err := markedProcs(marker)
		if err != nil || len(procs) == 0 {
			return err == nil, err
		}
		for _, p := range procs {
			if s, ok, err := procStart(p.pid); err == nil && ok && s == p.start {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(pause)
	}
}

// markedProc is a live process found by markedProcs.
type markedProc struct {
	pid   int
	start uint64
}

// markedProcs lists the live processes whose environment holds exactly
// marker.
func markedProcs(marker string) ([]markedProc, error) {
	var out []markedProc
	err := eachMarked(marker, func(pid int, p procInfo, kv []byte) {
		if len(kv) == len(marker) {
			out = append(out, markedProc{pid, p.start})
		}
	})
	return out, err
}

// bootID names this boot of the machine ("" when unknown): a process
// recorded under another boot id was stopped by the reboot, and its pid
// may now be another process's.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
