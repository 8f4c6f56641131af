package sim

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
)

// GPU-model speeds (Config.Speeds; see the package doc). A job's attempt
// runs at one rate, fixed when it starts: its placement's model does not
// change while it runs, and a gang runs on one model. Progress is counted
// in the job's measured time (its reference model's), wall time is
// progress scaled by hwmodel.ScaleDuration, so every computation that
// turns one into the other (an attempt's length, its checkpoints, what an
// interrupted attempt keeps) agrees to the microsecond.

// initSpeeds checks the speed table against the models the run uses and
// hands the compiled rates to the Host, which answers View.Rate with them.
func (e *Engine) initSpeeds() error {
	t := e.cfg.Speeds
	if t == nil {
		return nil
	}
	models := hwmodel.Of(e.cfg.SpeedReference)
	for n := range e.cluster.NumNodes() {
		if e.cluster.NodeGPUs(n) > 0 {
			models |= hwmodel.Of(e.cluster.NodeModel(n))
		}
	}
	for i := range e.w.Jobs {
		if m := e.w.Jobs[i].MeasuredOn; m > 0 {
			if int(m-1) >= hwmodel.NumModels() {
				return fmt.Errorf("sim: job %q: measured_on names GPU model id %d, which the catalogue lacks", e.w.Jobs[i].Name, m-1)
			}
			models |= hwmodel.Of(hwmodel.ModelID(m - 1))
		}
	}
	if err := t.Check(models); err != nil {
		return err
	}
	e.rates = t.Compile(e.w.Classes)
	e.host.SetSpeeds(e.rates)
	return nil
}

// checkpointEnd is the wall time, from the end of its start-up, at which
// the k-th checkpoint of job i's current attempt ends: k checkpoints'
// progress at the attempt's rate, and k checkpoint costs.
func (e *Engine) checkpointEnd(i int, k int64) hwmodel.Time {
	r := &e.runs[i]
	return hwmodel.ScaleDuration(hwmodel.Time(k)*r.ck.Every, r.rate) + hwmodel.Time(k)*r.ck.Cost
}

// checkpointsBy is how many checkpoints job i's current attempt completed
// within u of wall time after its start-up (at most the attempt's count).
func (e *Engine) checkpointsBy(i int, u hwmodel.Time) int64 {
	r := &e.runs[i]
	ck := r.ck
	if r.rate == 1 {
		return min(int64(r.ckpts), int64(u/(ck.Every+ck.Cost)))
	}
	// A first guess from the real-valued period, then the exact integer
	// ends decide: checkpointEnd is increasing in k.
	k := min(int64(r.ckpts), int64(float64(u)/(float64(ck.Every)/r.rate+float64(ck.Cost))))
	for k > 0 && e.checkpointEnd(i, k) > u {
		k--
	}
	for k < int64(r.ckpts) && e.checkpointEnd(i, k+1) <= u {
		k++
	}
	return k
}
