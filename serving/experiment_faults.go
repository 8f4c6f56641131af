package serving

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Faults is an experiment's hardware fault injection (docs/serving.md,
// "Faults"), the experiment file's faults section: random node and GPU
// failures drawn from a failure model, failures named one by one, how the
// orchestrator detects them (heartbeats) and how the batch jobs they hit
// are retried. A replica whose node or GPU breaks stops answering; at the
// detection it is released and replaced (serving/faults.go).
type Faults struct {
	// Model draws random failures (hwmodel.FailureModel): node_mtbf,
	// gpu_mtbf, distribution, weibull_shape, node_repair, gpu_repair.
	Model hwmodel.FailureModel
	// Fail are named failures as written, in hwmodel.ParseFault's syntax
	// ("dgx-h100-003@40m+2h", "dgx-h100-003/gpu2@1h+30m");
	// RunnerFaults resolves them against the cluster.
	Fail []string
	// Heartbeat interval and timeout (sim.Heartbeat).
	HeartbeatInterval, HeartbeatTimeout hwmodel.Time
	// Retry is the batch jobs' retry policy: trace, none, fixed or
	// deadline; MaxRetries caps fixed and deadline.
	Retry      string
	MaxRetries int
	// RestartTime is how long a retried batch attempt restarts before it
	// progresses (sim.Config.RestartTime).
	RestartTime hwmodel.Time
}

// Defaults of the faults section (docs/serving.md): repairs as brigade
// sim's --node-repair and --gpu-repair, detection as the batch engine's.
const (
	DefaultNodeRepair = 2 * hwmodel.Hour
	DefaultGPURepair  = 4 * hwmodel.Hour
	DefaultRetry      = sim.RetryFixed
	DefaultMaxRetries = 3
)

var (
	expRepairs   = []string{"fixed", "exponential", "lognormal"}
	expFailDists = []string{"exponential", "weibull"}
	expRetries   = []string{sim.RetryTrace, sim.RetryNone, sim.RetryFixed, sim.RetryDeadline}
)

// faultsSection is the faults section's schema (experiment_file.go).
type faultsSection struct {
	NodeMTBF          duration    `json:"node_mtbf"`
	GPUMTBF           duration    `json:"gpu_mtbf"`
	Distribution      string      `json:"distribution"`
	WeibullShape      float64     `json:"weibull_shape"`
	NodeRepair        *repairFile `json:"node_repair"`
	GPURepair         *repairFile `json:"gpu_repair"`
	Fail              []string    `json:"fail" config:"max=100000"`
	HeartbeatInterval positive    `json:"heartbeat_interval"`
	HeartbeatTimeout  positive    `json:"heartbeat_timeout"`
	Retry             string      `json:"retry"`
	MaxRetries        *int        `json:"max_retries"`
	RestartTime       duration    `json:"restart_time"`
}

// repairFile is a repair time: a duration (fixed), or {kind, mean, sigma}.
type repairFile hwmodel.RepairModel

func (r *repairFile) UnmarshalConfig(v config.Value) {
	if v.IsScalar() {
		var mean positive
		mean.UnmarshalConfig(v)
		*r = repairFile{Kind: "fixed", Mean: hwmodel.Time(mean)}
		return
	}
	var m struct {
		Kind  string   `json:"kind"`
		Mean  positive `json:"mean" config:"required"`
		Sigma float64  `json:"sigma"`
	}
	v.Decode(&m)
	*r = repairFile{Kind: m.Kind, Mean: hwmodel.Time(m.Mean), Sigma: m.Sigma}
}

// faults turns the section into Faults, the defaults filled: repairs as
// brigade sim's --node-repair and --gpu-repair, detection as the batch
// engine's.
func (f *faultsSection) faults() *Faults {
	x := &Faults{Fail: f.Fail, HeartbeatInterval: hwmodel.Time(f.HeartbeatInterval), HeartbeatTimeout: hwmodel.Time(f.HeartbeatTimeout),
		Retry: f.Retry, MaxRetries: DefaultMaxRetries, RestartTime: hwmodel.Time(f.RestartTime)}
	x.Model = hwmodel.FailureModel{NodeMTBF: hwmodel.Time(f.NodeMTBF), GPUMTBF: hwmodel.Time(f.GPUMTBF),
		Distribution: f.Distribution, WeibullShape: f.WeibullShape}
	if f.MaxRetries != nil {
		x.MaxRetries = *f.MaxRetries
	}
	if x.Model.Distribution == "" {
		x.Model.Distribution = "exponential"
	}
	for _, r := range []struct {
		dst *hwmodel.RepairModel
		src *repairFile
		def hwmodel.Time
	}{{&x.Model.NodeRepair, f.NodeRepair, DefaultNodeRepair}, {&x.Model.GPURepair, f.GPURepair, DefaultGPURepair}} {
		if r.src != nil {
			*r.dst = hwmodel.RepairModel(*r.src)
		}
		if r.dst.Kind == "" {
			r.dst.Kind = "fixed"
		}
		if r.dst.Mean == 0 {
			r.dst.Mean = r.def
		}
	}
	if x.HeartbeatInterval == 0 {
		x.HeartbeatInterval = sim.DefaultHeartbeatInterval
	}
	if x.HeartbeatTimeout == 0 {
		x.HeartbeatTimeout = sim.DefaultHeartbeatTimeout
	}
	if x.Retry == "" {
		x.Retry = DefaultRetry
	}
	return x
}

// Check reports what is wrong with the faults section (named failures
// are resolved against the cluster by Experiment.Check).
func (x *Faults) Check(p *config.Errors) {
	m := &x.Model
	if m.NodeMTBF < 0 {
		p.Add("node_mtbf", "want a duration >= 0 (0: no random node failures)")
	}
	if m.GPUMTBF < 0 {
		p.Add("gpu_mtbf", "want a duration >= 0 (0: no random GPU failures)")
	}
	if !m.Enabled() && len(x.Fail) == 0 {
		p.Add("", "injects nothing; give node_mtbf, gpu_mtbf or fail")
	}
	switch m.Distribution {
	case "exponential":
		if m.WeibullShape != 0 {
			p.Add("weibull_shape", "is for distribution weibull")
		}
	case "weibull":
		if !(m.WeibullShape > 0) || m.WeibullShape > 100 {
			p.Add("weibull_shape", "want a shape in (0, 100] (< 1: infant mortality, > 1: wear-out), got %g", m.WeibullShape)
		}
	default:
		p.Add("distribution", "unknown distribution %q (known: %s)", m.Distribution, strings.Join(expFailDists, ", "))
	}
	for _, r := range []struct {
		f string
		r hwmodel.RepairModel
	}{{"node_repair", m.NodeRepair}, {"gpu_repair", m.GPURepair}} {
		if !slices.Contains(expRepairs, r.r.Kind) {
			p.Add(r.f+".kind", "unknown repair kind %q (known: %s)", r.r.Kind, strings.Join(expRepairs, ", "))
		}
		if r.r.Mean <= 0 || r.r.Mean > maxHorizon {
			p.Add(r.f, "want a mean repair time > 0 and at most 366 days, got %s", fmtDur(r.r.Mean))
		}
		switch {
		case r.r.Kind == "lognormal" && (!(r.r.Sigma > 0) || r.r.Sigma > 10):
			p.Add(r.f+".sigma", "want a log-space standard deviation in (0, 10], got %g", r.r.Sigma)
		case r.r.Kind != "lognormal" && r.r.Sigma != 0:
			p.Add(r.f+".sigma", "is for kind lognormal")
		}
	}
	if x.HeartbeatInterval <= 0 {
		p.Add("heartbeat_interval", "want a duration > 0")
	}
	if x.HeartbeatTimeout < x.HeartbeatInterval {
		p.Add("heartbeat_timeout", "want a timeout of at least the interval (%s), got %s", fmtDur(x.HeartbeatInterval), fmtDur(x.HeartbeatTimeout))
	}
	if !slices.Contains(expRetries, x.Retry) {
		p.Add("retry", "unknown retry policy %q (known: %s)", x.Retry, strings.Join(expRetries, ", "))
	}
	if x.MaxRetries < 0 || x.MaxRetries > 1_000_000 {
		p.Add("max_retries", "want 0 to 1000000, got %d", x.MaxRetries)
	}
	if x.RestartTime < 0 {
		p.Add("restart_time", "want a duration >= 0")
	}
	if err := m.Validate(); err != nil && p.Count() == 0 {
		p.Add("", "%v", err) // a backstop: the checks above should say it first
	}
}

// checkNamedFaults reports the named failures that c cannot resolve.
func (e *Experiment) checkNamedFaults(c *hwmodel.Cluster, p *config.Errors) {
	if e.Faults == nil {
		return
	}
	for i, s := range e.Faults.Fail {
		if _, err := hwmodel.ParseFault(s, c); err != nil {
			p.Add(fmt.Sprintf("faults.fail[%d]", i), "%v", err)
		}
	}
}

// FaultsOn reports whether variant i runs with the experiment's faults:
// when the experiment has a faults section, unless the variant says
// faults: off.
func (e *Experiment) FaultsOn(i int) bool {
	if e.Faults == nil {
		return false
	}
	return len(e.Variants) == 0 || e.Variants[i].Faults != SwitchOff
}

// RunnerFaults maps the faults section onto a runner.Faults for cluster
// c, the named failures resolved against it (nil without a faults
// section). Its Schedule draws the failures every variant with faults on,
// and the batch-only baseline, face.
func (e *Experiment) RunnerFaults(c *hwmodel.Cluster) (*runner.Faults, error) {
	x := e.Faults
	if x == nil {
		return nil, nil
	}
	p := e.errors()
	e.checkNamedFaults(c, p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	out := &runner.Faults{Model: x.Model, HeartbeatInterval: x.HeartbeatInterval, HeartbeatTimeout: x.HeartbeatTimeout,
		Retry: x.Retry, MaxRetries: x.MaxRetries, RestartTime: x.RestartTime}
	for _, s := range x.Fail {
		f, err := hwmodel.ParseFault(s, c)
		if err != nil {
			return nil, err // checked above
		}
		out.Named = append(out.Named, f)
	}
	return out, nil
}

// FaultHorizon is how far ahead an experiment's random failures are
// drawn: its horizon, or runner.FaultHorizon of the batch workload w (nil:
// none) if that is longer, since the run lasts until the batch jobs end.
func (e *Experiment) FaultHorizon(w *workloads.Workload) hwmodel.Time {
	h := e.Spec.Horizon
	if w != nil && len(w.Jobs) > 0 {
		h = max(h, runner.FaultHorizon(w))
	}
	return h
}

// SimFaults sets a batch engine configuration's fault injection: the
// failures (copied), detection, retries and restart time of f.
func SimFaults(sc *sim.Config, f *runner.Faults, schedule []hwmodel.Fault) {
	sc.Faults = slices.Clone(schedule)
	sc.Heartbeat = sim.Heartbeat{Interval: f.HeartbeatInterval, Timeout: f.HeartbeatTimeout}
	sc.Retry = sim.RetryPolicy{Kind: f.Retry, Max: f.MaxRetries, BackoffBase: f.Backoff, BackoffFactor: f.BackoffFactor}
	sc.RestartTime = f.RestartTime
	sc.DefaultCheckpoint = sim.Checkpoint{Every: f.CheckpointEvery, Cost: f.CheckpointCost}
}
