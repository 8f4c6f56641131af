package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/policies"
)

// recover rebuilds the in-memory books from the store: queued jobs are
// queued again (same Submit, so same place); a running job whose wrapper
// is still the same live process is re-adopted; any other running job is
// settled as its process group and exit file say (settle): ended with its
// exit status, queued again unspent if its command never ran, or failed.
// Members of its group that outlived the wrapper are stopped first.
func (d *Driver) recover() error {
	recs, err := d.st.all()
	if err != nil {
		return err
	}
	var marked map[string]int // one /proc scan, when a PID is missing
	var changed []*Record
	for _, r := range recs {
		d.addJob(r)
		d.cfg.Metrics.recovered(r)
		switch r.State {
		case Queued:
			d.enqueue(r)
		case Running:
			adopted, err := d.recoverRunning(r, &marked)
			if err != nil {
				return fmt.Errorf("live: %s: %w", r.Spec.Name, err)
			}
			changed = append(changed, r)
			if !adopted && r.State == Queued {
				d.enqueue(r)
			}
		}
	}
	// A job whose dependencies ended while it was pending moves on now
	// (its parents' ends and its move are committed together, so this
	// finds nothing unless the state file is older).
	for _, r := range d.recs {
		if r.State != Pending {
			continue
		}
		switch st, failed := depState(r, d.byName); st {
		case Failed:
			d.failOnDep(r, failed, int64(d.now()))
			changed = append(changed, r)
		case Queued:
			r.State = Queued
			changed = append(changed, r)
			d.enqueue(r)
		}
	}
	changed = append(changed, d.propagate(changed)...)
	if err := d.st.put(changed...); err != nil {
		return err
	}
	d.dropExitFiles(changed)
	d.dropStaleExitFiles()
	return nil
}

// dropStaleExitFiles removes the exit files of this state file whose
// attempt the store holds as ended: a crash between committing an end and
// removing its file leaves them.
func (d *Driver) dropStaleExitFiles() {
	dir := filepath.Join(d.cfg.LogDir, ".exit")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), d.nonce+".")
		if !ok {
			continue // another state file's
		}
		id, attempt, _ := strings.Cut(rest, ".")
		i, err1 := strconv.Atoi(id)
		a, err2 := strconv.Atoi(attempt)
		if err1 != nil || err2 != nil || i < 0 || i >= len(d.recs) {
			continue
		}
		if r := d.recs[i]; r.State != Running || r.Attempt != a {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// recoverRunning re-adopts or settles a job the store holds as running.
func (d *Driver) recoverRunning(r *Record, marked *map[string]int) (bool, error) {
	if r.Boot != "" && r.Boot != d.boot {
		// The machine restarted: the process is gone, and its pid may
		// now be another's.
		_, err := d.settle(r, ending{})
		return false, err
	}
	if r.PID == 0 || r.PIDStart == 0 {
		// Launched just before a crash, its PID (or start time) not yet
		// in the store: look for its marker.
		if *marked == nil {
			m, err := scanMarked("BRIGADE_LIVE_JOB=" + d.nonce + ".")
			if err != nil {
				return false, fmt.Errorf("cannot look for its process: %w", err)
			}
			*marked = m
		}
		if pg := (*marked)[d.marker(r)]; pg > 0 {
			r.PID = pg
			s, ok, err := procStart(pg)
			if err != nil {
				return false, fmt.Errorf("cannot tell whether pid %d runs: %w", pg, err)
			}
			if ok {
				r.PIDStart = s
			}
		}
	}
	if r.PID == 0 {
		_, err := d.settle(r, ending{})
		return false, err
	}
	s, ok, err := procStart(r.PID)
	if err != nil {
		return false, fmt.Errorf("cannot tell whether pid %d runs: %w", r.PID, err)
	}
	if ok && s == r.PIDStart {
		p := d.placementOf(r)
		if d.host.Start(policies.JobID(r.ID), p) == nil {
			d.place[r.ID] = p
			d.adopted[r.ID] = true
			fmt.Fprintf(d.cfg.Log, "live: re-adopted %s (pid %d)\n", r.Spec.Name, r.PID)
			return true, nil
		}
		// Its GPUs are no longer there to hold: it cannot go on.
		fmt.Fprintf(d.cfg.Log, "live: %s (pid %d) runs on GPUs this machine no longer offers; stopping it\n", r.Spec.Name, r.PID)
	}
	// The wrapper is gone (or must go): whatever of its group lives is
	// stopped before the attempt ends, so that its GPUs are free.
	n, err := groupMembers(r.PID, r.PIDStart)
	if err != nil {
		return false, fmt.Errorf("cannot read process group %d: %w", r.PID, err)
	}
	killed := n > 0
	if killed {
		empty, err := stopGroup(r.PID, r.PIDStart, stopWait)
		if err != nil {
			return false, fmt.Errorf("cannot stop process group %d: %w", r.PID, err)
		}
		if !empty {
			return false, fmt.Errorf("process group %d still runs %v after SIGKILL", r.PID, stopWait)
		}
		fmt.Fprintf(d.cfg.Log, "live: %s: stopped what was left of its process group %d\n", r.Spec.Name, r.PID)
	}
	// What left the group (setsid) but carries the attempt's marker.
	if empty, err := stopMarked(d.marker(r), stopWait); err != nil || !empty {
		return false, fmt.Errorf("cannot stop the processes of %s attempt %d that left its process group: %v", r.Spec.Name, r.Attempt, err)
	}
	_, err = d.settle(r, ending{killed: killed})
	return false, err
}
