package live

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// terminate asks r's attempt to end: SIGTERM to every process of its
// group but the wrapper (which must live to record the command's exit
// status), then, after Config.Grace, SIGKILL to the whole group. A job
// that checkpoints on SIGTERM ($BRIGADE_CHECKPOINT_DIR) resumes from it.
func (d *Driver) terminate(r *Record) {
	pid, start, grace, marker := r.PID, r.PIDStart, d.cfg.Grace, d.marker(r)
	if pid <= 0 {
		return
	}
	go func() {
		_ = signalGroup(pid, start, syscall.SIGTERM, true)
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			if n, err := groupMembers(pid, start); err == nil && n == 0 {
				return
			}
			select {
			case <-d.dead:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		_, _ = stopAttempt(pid, start, marker, stopWait)
	}()
}

// exitWrapper runs a job's command ("$@") between two writes to
// $BRIGADE_EXIT_FILE (an absolute path): "started" before the command, so
// that a file exists if and only if the command may have run (the wrapper
// does not run it when the write fails), then its exit status appended
// after it, before exiting with that status. A restarted driver, which is
// not the job's parent, reads how the job ended there. Shell builtins
// only (printf, redirections): nothing depends on the job's PATH. The
// status is appended to a file that already holds a few bytes, so it needs
// no new disk block: a disk filled by the job does not lose it.
const exitWrapper = `printf 'started\n' > "$BRIGADE_EXIT_FILE" || exit 125
"$@"
c=$?
printf '%d\n' "$c" >> "$BRIGADE_EXIT_FILE"
exit $c`

// exitPath is where the wrapper of r's current attempt writes (the nonce
// keeps files of another state file apart).
func (d *Driver) exitPath(r *Record) string {
	return filepath.Join(d.cfg.LogDir, ".exit", fmt.Sprintf("%s.%d.%d", d.nonce, r.ID, r.Attempt))
}

// exitState is what an exit file says.
type exitState int

const (
	notStarted  exitState = iota // no file: the command never ran
	startedOnly                  // the command started; no status recorded
	exited                       // the command ended with the recorded status
)

// readExit reads an exit file written by exitWrapper. Something else at
// the path (a link, a device) counts as started without a status, and is
// never followed nor read beyond a few bytes. An error (other than the
// file's absence) says nothing about the attempt: read again later.
func readExit(path string) (exitState, int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notStarted, 0, nil
	case errors.Is(err, syscall.ELOOP):
		return startedOnly, 0, nil
	case err != nil:
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return startedOnly, 0, nil
	}
	b := make([]byte, 64)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	lines := strings.Split(string(b[:n]), "\n")
	// "started\n<code>\n": the status counts only when its line is whole.
	if len(lines) >= 3 && lines[0] == "started" {
		if code, err := strconv.Atoi(lines[1]); err == nil {
			return exited, code, nil
		}
	}
	return startedOnly, 0, nil
}

// oldExitCode reads the exit file of an attempt launched by an older
// version, whose wrapper wrote only "<code>\n", renamed into place.
func (d *Driver) oldExitCode(r *Record) (int, bool) {
	b, err := os.ReadFile(d.exitPath(r))
	if err != nil || len(b) > 32 {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil
}

// dropExitFiles removes the exit files of attempts whose end the store now
// holds (never before: a crash in between would lose the status).
func (d *Driver) dropExitFiles(recs []*Record) {
	for _, r := range recs {
		if r.State == Running {
			continue
		}
		if r.ExitFile != "" {
			os.Remove(r.ExitFile)
		} else {
			os.Remove(d.exitPath(r))
		}
	}
}

func (d *Driver) launch(r *Record) error {
	argv := []string{"/bin/sh", "-c", exitWrapper, "brigade-job"}
	if r.Spec.Shell {
		argv = append(argv, "/bin/sh", "-c", r.Spec.Command)
	} else {
		argv = append(argv, r.Spec.Command)
		argv = append(argv, r.Spec.Args...)
	}
	if err := os.MkdirAll(filepath.Dir(r.ExitFile), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.Spec.Workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	env := os.Environ()
	keys := make([]string, 0, len(r.Spec.Env))
	for k := range r.Spec.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+r.Spec.Env[k])
	}
	uuids := make([]string, len(r.GPUs))
	for i, g := range r.GPUs {
		uuids[i] = d.cfg.GPUs[g].UUID
		if r.MIGInstance > 0 {
			uuids[i] = d.migUUIDs[g][r.MIGInstance-1]
		}
	}
	ckpt := d.checkpointDir(r)
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		return err
	}
	env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(uuids, ","), d.marker(r),
		"BRIGADE_JOB_NAME="+r.Spec.Name, "BRIGADE_ATTEMPT="+strconv.Itoa(r.Attempt), "BRIGADE_EXIT_FILE="+r.ExitFile,
		"BRIGADE_CHECKPOINT_DIR="+ckpt, "BRIGADE_GRACE_S="+strconv.FormatFloat(d.cfg.Grace.Seconds(), 'f', -1, 64))
	cmd.Env = env
	f, err := os.OpenFile(filepath.Join(d.cfg.LogDir, r.Spec.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "== brigade live: %s attempt %d on GPUs %v ==\n", r.Spec.Name, r.Attempt, uuids)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	pid := cmd.Process.Pid
	r.PID = pid
	// 0 when /proc cannot be read now: a restart then finds the process
	// by its marker.
	r.PIDStart, _, _ = procStart(pid)
	id, attempt, start, marker := r.ID, r.Attempt, r.PIDStart, d.marker(r)
	go func() {
		// The wrapper's end is its attempt's end only once nothing of its
		// process group lives: a daemon it left, or its command when the
		// wrapper alone was killed, would go on using the GPUs.
		waited := waitExited(pid) == nil
		select {
		case <-d.dead:
			_ = cmd.Wait() // abandoned: whoever opens the store next settles it
			f.Close()
			return
		default:
		}
		if waited {
			// The unreaped wrapper keeps the group's id from reuse.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		err := cmd.Wait()
		f.Close()
		code, sig := 0, 0
		if err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ee.ExitCode() >= 0 {
					code = ee.ExitCode()
				}
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					sig = int(ws.Signal())
				}
			}
		}
		for {
			// A process that left the group (setsid) but carries the
			// attempt's marker goes too.
			if empty, err := stopAttempt(pid, start, marker, stopWait); empty && err == nil {
				break
			}
			select {
			case <-d.dead:
				return
			case <-time.After(time.Second):
			}
		}
		d.mu.Lock()
		d.exits = append(d.exits, exitMsg{id, attempt, code, sig})
		d.mu.Unlock()
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}()
	return nil
}

// checkpointDir is r's checkpoint folder, the same for every attempt:
// LOGS/checkpoints/<name>. An attempt finds there what the previous one
// saved before it was stopped.
func (d *Driver) checkpointDir(r *Record) string {
	return filepath.Join(d.cfg.LogDir, "checkpoints", r.Spec.Name)
}

// crashHook, set by tests, is called at the points where a kill -9 is the
// most delicate: "starts" (a round's starts committed, none launched),
// "launched" (one launched, its PID not yet committed) and "ended" (a
// round's ends committed, their exit files not yet removed).
var crashHook func(point string)
