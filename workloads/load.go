package workloads

import (
	"fmt"
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// OfferedLoad is the workload's GPU demand relative to a cluster of gpus
// GPUs over its arrival window: Σ GPUs × share × Duration over all jobs,
// divided by (last Submit − first Submit) × gpus. A MIG job counts as
// the share of a GPU its slices are (MIGSlicesOf / 7). Unlike a generator's
// long-run rate, it is what this finite workload actually asks for, which
// matters with heavy-tailed durations, whose mean a finite sample rarely
// reaches. 0 when the window is empty or gpus <= 0.
func (w *Workload) OfferedLoad(gpus int) float64 {
	if len(w.Jobs) < 2 || gpus <= 0 {
		return 0
	}
	span := (w.Jobs[len(w.Jobs)-1].Submit - w.Jobs[0].Submit).Seconds()
	if span <= 0 {
		return 0
	}
	var gpuSeconds float64
	for i := range w.Jobs {
		r := w.Jobs[i].Req
		share := float64(r.TotalMilli()) / hwmodel.MilliPerGPU
		if !r.MIG.IsZero() {
			share = migGPUShare(r.MIG)
		}
		gpuSeconds += share * w.Jobs[i].Duration.Seconds()
	}
	return gpuSeconds / (span * float64(gpus))
}

// ScaleToLoad stretches or compresses submission times about the first one
// so that OfferedLoad(gpus) becomes load, keeping order and durations.
func (w *Workload) ScaleToLoad(gpus int, load float64) error {
	if !(load > 0) || math.IsInf(load, 0) {
		return fmt.Errorf("load must be a positive number, got %g", load)
	}
	now := w.OfferedLoad(gpus)
	if now <= 0 {
		return fmt.Errorf("the workload has no arrival window or no GPU demand to scale")
	}
	factor := now / load
	first := w.Jobs[0].Submit
	for i := range w.Jobs {
		w.Jobs[i].Submit = first + hwmodel.Time(math.Round(float64(w.Jobs[i].Submit-first)*factor))
	}
	return nil
}
