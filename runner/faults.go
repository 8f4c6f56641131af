package runner

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// Faults is the fault injection of a comparison: random failures from a
// failure model, named or traced failures, and how the orchestrator detects
// them, retries and checkpoints. The zero value injects nothing.
type Faults struct {
	// Model draws random node and GPU failures (hwmodel.FailureModel);
	// its zero value draws none.
	Model hwmodel.FailureModel
	// Horizon bounds the drawn failures' start times; 0 means
	// FaultHorizon(workload).
	Horizon hwmodel.Time
	// Named are failures given one by one (--fail, --fail-trace), already
	// resolved against the cluster; they are merged with the drawn ones.
	Named []hwmodel.Fault
	// Heartbeat interval and timeout; 0 takes the engine's defaults.
	HeartbeatInterval, HeartbeatTimeout hwmodel.Time
	// Retry is the retry policy's kind: trace (default, ""), none, fixed
	// or deadline; MaxRetries caps fixed and deadline; Backoff > 0 is the
	// first retry's back-off, multiplied by BackoffFactor (0: 2) for each
	// further one.
	Retry         string
	MaxRetries    int
	Backoff       hwmodel.Time
	BackoffFactor float64
	// RestartTime is how long a retried attempt takes to restart (loading
	// its last checkpoint) before it makes progress again.
	RestartTime hwmodel.Time
	// CheckpointEvery and CheckpointCost are the checkpointing of jobs whose
	// trace gives none: every CheckpointEvery of progress, costing
	// CheckpointCost. 0 turns it off.
	CheckpointEvery, CheckpointCost hwmodel.Time
}

// Injects reports whether any failure can happen.
func (f *Faults) Injects() bool { return f != nil && (f.Model.Enabled() || len(f.Named) > 0) }

// FaultHorizonFactor multiplies (last submission + longest job) in
// FaultHorizon.
const FaultHorizonFactor = 10

// FaultHorizon is how far ahead random failures are drawn when
// Faults.Horizon is 0: FaultHorizonFactor × (the last submission time + the
// longest job's duration). A run rarely lasts that long, even with
// retries; failures drawn beyond its end are never reached and cost
// nothing but their books, and a run that outlives the horizon sees no
// random failures after it.
func FaultHorizon(w *workloads.Workload) hwmodel.Time {
	var last, longest hwmodel.Time
	for i := range w.Jobs {
		last = max(last, w.Jobs[i].Submit)
		longest = max(longest, w.Jobs[i].Duration)
	}
	return FaultHorizonFactor * max(last+longest, hwmodel.Hour)
}

// Schedule is the failures every policy of the comparison faces: the
// model's draws from seed's failure stream (hwmodel.FailureStream, so
// neither the policy nor the workload's stream changes them) up to the
// horizon, merged with the named ones and sorted.
func (f *Faults) Schedule(c *hwmodel.Cluster, w *workloads.Workload, seed uint64) ([]hwmodel.Fault, error) {
	if f == nil {
		return nil, nil
	}
	if err := f.Model.Validate(); err != nil {
		return nil, fmt.Errorf("failure model: %w", err)
	}
	var out []hwmodel.Fault
	if f.Model.Enabled() {
		h := f.Horizon
		if h <= 0 {
			h = FaultHorizon(w)
		}
		out = f.Model.Schedule(c, h, seed)
	}
	for _, x := range f.Named {
		if err := x.Validate(c); err != nil {
			return nil, fmt.Errorf("failure %s: %w", x, err)
		}
	}
	out = append(out, f.Named...)
	hwmodel.SortFaults(out)
	return out, nil
}
