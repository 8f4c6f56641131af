package live

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// Pending is the state of a job waiting for its dependencies (JobSpec.Deps)
// to succeed; it enters the queue when the last of them does, and fails
// when one of them fails.
const Pending State = "pending"

// ReasonDependencyPrefix starts the reason of a job failed because a
// dependency failed: "dependency NAME failed".
const ReasonDependencyPrefix = "dependency "

// depState is what r's dependencies allow: Queued when all succeeded,
// Failed (with the failed one's name) when one failed, Pending otherwise.
// find resolves a name to its record (nil: not submitted yet).
func depState(r *Record, find func(string) *Record) (State, string) {
	state := Queued
	for _, name := range r.Spec.Deps {
		p := find(name)
		switch {
		case p != nil && p.State == Failed:
			return Failed, name
		case p == nil || p.State != Succeeded:
			state = Pending
		}
	}
	return state, ""
}

func (d *Driver) byName(name string) *Record {
	if id, ok := d.names[name]; ok {
		return d.recs[id]
	}
	return nil
}

// failOnDep fails pending r because its dependency name failed.
func (d *Driver) failOnDep(r *Record, name string, now int64) {
	r.State, r.End, r.Reason = Failed, now, ReasonDependencyPrefix+name+" failed"
	r.DepFailed = true
}

// propagate moves the pending dependants of the records in changed that
// have ended: into the queue when all their dependencies succeeded,
// failed when one failed (and so on down the DAG). It returns the records
// it changed, which the caller commits with changed and then queues.
func (d *Driver) propagate(changed []*Record) []*Record {
	now := int64(d.now())
	var out []*Record
	work := append([]*Record(nil), changed...)
	for len(work) > 0 {
		r := work[0]
		work = work[1:]
		if r.State != Succeeded && r.State != Failed {
			continue
		}
		for _, cid := range d.dependants[r.Spec.Name] {
			c := d.recs[cid]
			if c.State != Pending {
				continue
			}
			switch st, failed := depState(c, d.byName); st {
			case Failed:
				d.failOnDep(c, failed, now)
				d.cfg.Metrics.moved(c, Pending)
				out = append(out, c)
				work = append(work, c)
			case Queued:
				c.State, c.Queued = Queued, now
				d.job(c).Queued = hwmodel.Time(now)
				d.cfg.Metrics.moved(c, Pending)
				out = append(out, c)
			}
		}
	}
	return out
}
