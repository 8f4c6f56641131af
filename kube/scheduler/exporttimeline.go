package scheduler

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
)

// exportTimeline rebuilds the run's timeline from the exported jobs:
// each is queued from its arrival, runs from its start holding its GPUs
// (queued again between a preempted attempt and the next), and leaves at
// its end (a job cut by the export's end still holds them
// then). Summarize reads GPU utilisation, queue lengths and Little's law
// from it, as it does from a simulation's.
func exportTimeline(jobs []results.JobRecord, totalGPUs int, end hwmodel.Time) *results.Timeline {
	type event struct {
		t         hwmodel.Time
		dq, dr, d int
		alloc     int64
	}
	var evs []event
	for _, j := range jobs {
		evs = append(evs, event{t: j.Submit, dq: 1, d: 1})
		if j.Attempts == 0 {
			continue
		}
		milli := int64(j.GPUs) * int64(j.GPUMilli)
		// A preempted attempt gives its GPUs back and queues the job
		// again until the next.
		for _, a := range j.AttemptLog[:max(len(j.AttemptLog)-1, 0)] {
			evs = append(evs, event{t: a.Start, dq: -1, dr: 1, alloc: milli}, event{t: a.End, dq: 1, dr: -1, alloc: -milli})
		}
		start := j.Start
		if n := len(j.AttemptLog); n > 0 {
			start = j.AttemptLog[n-1].Start
		}
		evs = append(evs, event{t: start, dq: -1, dr: 1, alloc: milli})
		if j.State != "running" { // cut by the export: holds its GPUs to the end
			evs = append(evs, event{t: j.End, dr: -1, d: -1, alloc: -milli})
		}
	}
	// At one instant, ends first, then arrivals, then starts: capacity is
	// freed before it is taken again, and a job arrives before it starts.
	rank := func(e event) int {
		switch {
		case e.dr < 0:
			return 0
		case e.dr > 0:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(rank(a), rank(b))
	})
	tl := results.NewTimeline(hwmodel.Hour, int64(totalGPUs)*hwmodel.MilliPerGPU)
	var st results.State
	for _, e := range evs {
		st.Queued += e.dq
		st.Running += e.dr
		st.InSystem += e.d
		st.AllocatedMilli += e.alloc
		tl.Observe(e.t, st)
	}
	tl.Close(max(end, 0))
	return tl
}
