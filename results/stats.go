package results

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// JobStats is what Summarize and the plots read of a JobRecord: 112 bytes
// against the record's 296 and its attempt log, so that a run whose
// records went to their files as they were made (JobFiles) keeps these
// until its summary, whose shared starvation threshold waits for every
// policy's run, and its plots are made.
type JobStats struct {
	ID               int32
	GPUMilli         int32
	GPUs             int32
	Attempts         int32
	HardwareFailures int32
	Preemptions      int32
	state            statsState
	Priority         int
	Tenant           string
	Submit, End      hwmodel.Time
	Wait, Run        hwmodel.Time
	Lost, Checkpoint hwmodel.Time
	PreemptLost      hwmodel.Time
}

// statsState is a JobRecord's State as Summarize tells them apart.
type statsState uint8

const (
	statsOther statsState = iota
	statsSucceeded
	statsFailed
)

// StatsOf is j's JobStats. Counts beyond int32 are cut to it, as the
// Parquet columns cut them.
func StatsOf(j *JobRecord) JobStats {
	s := JobStats{
		ID: j.ID, GPUMilli: j.GPUMilli, GPUs: int32(j.GPUs), Attempts: int32(j.Attempts), HardwareFailures: int32(j.HardwareFailures),
		Preemptions: int32(min(j.Preemptions, math.MaxInt32)), PreemptLost: j.PreemptLost,
		Priority: j.Priority, Tenant: j.Tenant,
		Submit: j.Submit, End: j.End, Wait: j.Wait, Run: j.Run, Lost: j.Lost, Checkpoint: j.Checkpoint,
	}
	switch j.State {
	case Succeeded:
		s.state = statsSucceeded
	case Failed:
		s.state = statsFailed
	}
	return s
}

// Stats is StatsOf every record of jobs, in order.
func Stats(jobs []JobRecord) []JobStats {
	out := make([]JobStats, len(jobs))
	for i := range jobs {
		out[i] = StatsOf(&jobs[i])
	}
	return out
}

// Succeeded and Failed are whether the job's State was Succeeded, Failed.
func (s *JobStats) Succeeded() bool { return s.state == statsSucceeded }
func (s *JobStats) Failed() bool    { return s.state == statsFailed }

// Finished is whether the job succeeded or failed.
func (s *JobStats) Finished() bool { return s.state != statsOther }

// Ran is whether the job finished having run at least once: the jobs the
// wait, JCT and slowdown distributions (and the plots' CDFs) are over.
func (s *JobStats) Ran() bool { return s.Finished() && s.Attempts > 0 }

// BoundedSlowdown is BoundedSlowdown of the job's record.
func (s *JobStats) BoundedSlowdown(tau hwmodel.Time) float64 {
	return boundedSlowdown(s.End-s.Submit, s.Run, tau)
}

// jobList is a run's jobs as Summarize reads them, records or JobStats:
// each record's JobStats is made as it is read, not all at once.
type jobList struct {
	recs  []JobRecord
	stats []JobStats
}

func (l jobList) len() int {
	if l.recs != nil {
		return len(l.recs)
	}
	return len(l.stats)
}

func (l jobList) at(i int) JobStats {
	if l.recs != nil {
		return StatsOf(&l.recs[i])
	}
	return l.stats[i]
}
