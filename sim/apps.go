package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// The application model (Config.Apps) and the decision grid
// (Config.Interval): how the Pollux artifact's simulator times jobs,
// as an option of the engine that any policy runs under.
//
// A job that trains an application (workloads.Job.App) has no duration:
// it has a training state (progress and epoch, hwmodel.AppState) that an
// attempt advances at the pace of its placement (hwmodel.AppRun) from the
// end of its start-up. When an attempt starts, the engine plays the rest
// of the training forward on that placement to find when it ends, cut
// into the same pieces the grid cuts it into (the artifact advances every
// job one interval at a time, and its epoch ends are rounded to whole
// seconds within each piece, so the cut changes the result); when an
// attempt is preempted with Config.SaveOnPreempt, the state is advanced to
// the preemption the same way and kept. Without SaveOnPreempt an
// interrupted attempt keeps nothing, as a job without checkpoints.

// appBooks are the training states of the jobs that train an
// application; nil app for other jobs.
type appBooks struct {
	on   bool
	jobs []appJob
	// err is the first placement the model could not time (a decision
	// the engine cannot carry out): it stops the run.
	err error
}

type appJob struct {
	app *hwmodel.App
	cfg hwmodel.AppConfig
	// cfgGPUs is the GPU count cfg is for: the request, until a policy
	// places the job on another count.
	cfgGPUs int
	state   hwmodel.AppState
	run     hwmodel.AppRun // the current attempt's pace
	// from is when the current attempt's training starts (after its
	// start-up); doneAt when its training will be done if it runs on,
	// the job's end (appLength).
	from, doneAt hwmodel.Time
}

// initApps checks the jobs that train an application against the model.
func (e *Engine) initApps() error {
	if e.cfg.Interval < 0 {
		return errors.New("sim: Interval must be >= 0")
	}
	n := 0
	for i := range e.w.Jobs {
		if e.w.Jobs[i].App != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if e.cfg.Apps == nil {
		j := &e.w.Jobs[0]
		for k := range e.w.Jobs {
			if e.w.Jobs[k].App != "" {
				j = &e.w.Jobs[k]
				break
			}
		}
		return fmt.Errorf("sim: job %q (%s) trains application %q, which needs an application model (Config.Apps)", j.Name, j.Source, j.App)
	}
	if e.cfg.ProcessorSharing {
		return errors.New("sim: jobs that train an application cannot share GPUs (ProcessorSharing)")
	}
	b := &e.apps
	b.on = true
	b.jobs = make([]appJob, len(e.w.Jobs))
	for i := range e.w.Jobs {
		j := &e.w.Jobs[i]
		if j.App == "" {
			continue
		}
		a, ok := e.cfg.Apps.App(j.App)
		if !ok {
			return fmt.Errorf("sim: job %q (%s): the application model has no application %q (it has %v)", j.Name, j.Source, j.App, e.cfg.Apps.Names())
		}
		if j.Req.WantsMIG() || j.Req.GPUMilli != hwmodel.MilliPerGPU {
			return fmt.Errorf("sim: job %q (%s) trains an application: it must ask for whole GPUs", j.Name, j.Source)
		}
		if j.Checkpoint.Every > 0 || e.cfg.DefaultCheckpoint.Every > 0 {
			return fmt.Errorf("sim: job %q (%s) trains an application: checkpoints are not modelled for it (use SaveOnPreempt)", j.Name, j.Source)
		}
		c, err := a.Config(j.Req.GPUs, j.BatchSize)
		if err != nil {
			return fmt.Errorf("sim: job %q (%s): %v", j.Name, j.Source, err)
		}
		b.jobs[i] = appJob{app: a, cfg: c, cfgGPUs: j.Req.GPUs}
	}
	e.host.SetAppJobs(e.appJob)
	return nil
}

// appJob answers policies.AppView.AppJob: job id's application, batch
// size and training state now (a running attempt's progress played
// forward to now on the grid's pieces, without changing the books).
func (e *Engine) appJob(id policies.JobID) (policies.AppJob, bool) {
	i := int(id)
	if i < 0 || i >= len(e.jobs) || !e.isApp(i) {
		return policies.AppJob{}, false
	}
	aj := &e.apps.jobs[i]
	s := aj.state
	if e.runs[i].state == Running && e.now > aj.from {
		e.appAdvance(i, &s, aj.from, e.now)
	}
	return policies.AppJob{App: aj.app, Batch: e.w.Jobs[i].BatchSize, State: s}, true
}

// isApp reports whether job i trains an application.
func (e *Engine) isApp(i int) bool { return e.apps.on && e.apps.jobs[i].app != nil }

// appPace sets job i's batch configuration and pace for placement p, or
// says why the model cannot time it there. The configuration is that of
// p's GPU count, which is the job's request unless the policy chose
// another (jobs that train an application are elastic: the batch size
// stays, the per-GPU batch and accumulation steps follow the GPUs, as the
// artifact's simulator rescales a job on every reallocation).
func (e *Engine) appPace(i int, p hwmodel.Placement) error {
	aj := &e.apps.jobs[i]
	if n := p.GPUCount(); n != aj.cfgGPUs {
		c, err := aj.app.Config(n, e.w.Jobs[i].BatchSize)
		if err != nil {
			return fmt.Errorf("sim: job %q at %gs: %v", e.jobs[i].Name, e.now.Seconds(), err)
		}
		aj.cfg, aj.cfgGPUs = c, n
	}
	var counts []int
	last := -1
	for _, s := range p {
		g := bits.OnesCount64(s.GPUs)
		if s.Node == last && len(counts) > 0 {
			counts[len(counts)-1] += g
			continue
		}
		counts = append(counts, g)
		last = s.Node
	}
	r, err := aj.app.Run(counts, aj.cfg)
	if err != nil {
		return fmt.Errorf("sim: job %q at %gs: %v", e.jobs[i].Name, e.now.Seconds(), err)
	}
	aj.run = r
	return nil
}

// gridAfter is the first point of the decision grid after t (Interval >
// 0).
func (e *Engine) gridAfter(t hwmodel.Time) hwmodel.Time {
	return (t/e.cfg.Interval + 1) * e.cfg.Interval
}

// appAdvance trains job i's state s from time from to time to, in the
// pieces the grid cuts, and reports when it finished if it did.
func (e *Engine) appAdvance(i int, s *hwmodel.AppState, from, to hwmodel.Time) (hwmodel.Time, bool) {
	r := &e.apps.jobs[i].run
	t := from
	for t < to {
		end := to
		if e.cfg.Interval > 0 {
			end = min(end, e.gridAfter(t))
		}
		secs := math.Inf(1)
		if end != endOfTime {
			secs = (end - t).Seconds()
		}
		used, done := r.Advance(s, secs)
		if done {
			return t + hwmodel.FromSeconds(used), true
		}
		if end == endOfTime {
			// Cannot happen: Advance without a limit trains to the end.
			return endOfTime, false
		}
		t = end
	}
	return to, false
}

// appLength is the wall time from from until job i's attempt, training
// on the pace appPace set, releases its GPUs: when its training is done
// (which it records as the job's end), or on the decision grid the end
// of the piece of time in which it finds itself done. That is the grid
// point after the end, or a whole interval after it when the end falls
// on a grid point by rounding in the next piece (an epoch's last fraction
// of a second rounded to 0): the artifact learns of an end only when it
// advances the interval that holds it, and the job keeps its GPUs until
// then.
func (e *Engine) appLength(i int, from hwmodel.Time) hwmodel.Time {
	aj := &e.apps.jobs[i]
	aj.from = from
	s := aj.state
	t := from
	for {
		next := endOfTime
		if e.cfg.Interval > 0 {
			next = e.gridAfter(t)
		}
		if end, done := e.appAdvance(i, &s, t, next); done {
			aj.doneAt = end
			if next == endOfTime {
				return end - from
			}
			return next - from
		}
		t = next
	}
}

// appEndAttempt books job i's interrupted attempt: with saveAll its
// training up to cut is kept, else none of it. It returns the wall time
// lost.
func (e *Engine) appEndAttempt(i int, cut hwmodel.Time, saveAll bool) hwmodel.Time {
	r := &e.runs[i]
	aj := &e.apps.jobs[i]
	bought := hwmodel.Time(0)
	if saveAll && cut > aj.from {
		e.appAdvance(i, &aj.state, aj.from, cut)
		bought = cut - aj.from
	}
	lost := (e.now - r.start) - (r.restart - e.cfg.StartupDelay) - bought
	e.out[i].LostTime += lost
	return lost
}
