package serving

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

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
	faultsFields = []string{"node_mtbf", "gpu_mtbf", "distribution", "weibull_shape", "node_repair", "gpu_repair", "fail", "heartbeat_interval", "heartbeat_timeout", "retry", "max_retries", "restart_time"}
	repairFields = []string{"kind", "mean", "sigma"}
	expRepairs   = []string{"fixed", "exponential", "lognormal"}
	expFailDists = []string{"exponential", "weibull"}
	expRetries   = []string{sim.RetryTrace, sim.RetryNone, sim.RetryFixed, sim.RetryDeadline}
)

const maxNamedFails = 100_000

func (d *expDecoder) faults(n *yaml.Node) *Faults {
	f := d.fields(n, "faults", faultsFields)
	if f == nil {
		return nil
	}
	x := &Faults{MaxRetries: -1}
	m := &x.Model
	if v, ok := f["node_mtbf"]; ok {
		m.NodeMTBF = d.duration(v, "faults.node_mtbf")
	}
	if v, ok := f["gpu_mtbf"]; ok {
		m.GPUMTBF = d.duration(v, "faults.gpu_mtbf")
	}
	if v, ok := f["distribution"]; ok {
		m.Distribution = d.str(v, "faults.distribution")
	}
	if v, ok := f["weibull_shape"]; ok {
		m.WeibullShape = d.float(v, "faults.weibull_shape")
	}
	if v, ok := f["node_repair"]; ok {
		m.NodeRepair = d.repair(v, "faults.node_repair")
	}
	if v, ok := f["gpu_repair"]; ok {
		m.GPURepair = d.repair(v, "faults.gpu_repair")
	}
	if v, ok := f["fail"]; ok {
		for i, s := range d.list(v, "faults.fail", maxNamedFails) {
			fp := fmt.Sprintf("faults.fail[%d]", i)
			s = d.resolve(s)
			d.lines[fp] = s.Line
			x.Fail = append(x.Fail, d.str(s, fp))
		}
	}
	if v, ok := f["heartbeat_interval"]; ok {
		x.HeartbeatInterval = d.positive(v, "faults.heartbeat_interval")
	}
	if v, ok := f["heartbeat_timeout"]; ok {
		x.HeartbeatTimeout = d.positive(v, "faults.heartbeat_timeout")
	}
	if v, ok := f["retry"]; ok {
		x.Retry = d.str(v, "faults.retry")
	}
	if v, ok := f["max_retries"]; ok {
		if x.MaxRetries = d.int(v, "faults.max_retries"); x.MaxRetries < 0 {
			d.p.at(v.Line, "faults.max_retries", "want 0 to 1000000, got %d", x.MaxRetries)
		}
	}
	if v, ok := f["restart_time"]; ok {
		x.RestartTime = d.duration(v, "faults.restart_time")
	}
	return x
}

// repair reads a repair time: a duration (fixed) or {kind, mean, sigma}.
func (d *expDecoder) repair(n *yaml.Node, path string) hwmodel.RepairModel {
	if n.Kind == yaml.ScalarNode {
		return hwmodel.RepairModel{Kind: "fixed", Mean: d.positive(n, path)}
	}
	var r hwmodel.RepairModel
	f := d.fields(n, path, repairFields)
	if f == nil {
		return r
	}
	if v, ok := f["kind"]; ok {
		r.Kind = d.str(v, path+".kind")
	}
	if v, ok := f["mean"]; ok {
		r.Mean = d.positive(v, path+".mean")
	} else {
		d.p.at(n.Line, path+".mean", "required field is missing; want the mean repair time, like \"2h\"")
	}
	if v, ok := f["sigma"]; ok {
		r.Sigma = d.float(v, path+".sigma")
	}
	return r
}

// positive reads a duration that must be > 0 when given (left out, it
// takes the default).
func (d *expDecoder) positive(n *yaml.Node, path string) hwmodel.Time {
	t := d.duration(n, path)
	if t == 0 && n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if v, err := hwmodel.ParseDuration(n.Value); err == nil && v == 0 {
			d.p.at(n.Line, path, "want a duration > 0, got %q (leave it out for the default)", n.Value)
		}
	}
	return t
}

func (x *Faults) fillDefaults() {
	m := &x.Model
	if m.Distribution == "" {
		m.Distribution = "exponential"
	}
	for _, r := range []struct {
		r   *hwmodel.RepairModel
		def hwmodel.Time
	}{{&m.NodeRepair, DefaultNodeRepair}, {&m.GPURepair, DefaultGPURepair}} {
		if r.r.Kind == "" {
			r.r.Kind = "fixed"
		}
		if r.r.Mean == 0 {
			r.r.Mean = r.def
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
	if x.MaxRetries < 0 {
		x.MaxRetries = DefaultMaxRetries
	}
}

// validateFaults checks the faults section; named failures are resolved
// against the cluster when it needs no file (a preset or an inline spec;
// LoadExperiment and CheckCluster resolve them against a spec file's).
func (e *Experiment) validateFaults(p *expProblems) {
	x := e.Faults
	m := &x.Model
	if m.NodeMTBF < 0 {
		p.add("faults.node_mtbf", "want a duration >= 0 (0: no random node failures)")
	}
	if m.GPUMTBF < 0 {
		p.add("faults.gpu_mtbf", "want a duration >= 0 (0: no random GPU failures)")
	}
	if !m.Enabled() && len(x.Fail) == 0 {
		p.add("faults", "injects nothing; give node_mtbf, gpu_mtbf or fail")
	}
	switch m.Distribution {
	case "exponential":
		if m.WeibullShape != 0 {
			p.add("faults.weibull_shape", "is for distribution weibull")
		}
	case "weibull":
		if !(m.WeibullShape > 0) || m.WeibullShape > 100 {
			p.add("faults.weibull_shape", "want a shape in (0, 100] (< 1: infant mortality, > 1: wear-out), got %g", m.WeibullShape)
		}
	default:
		p.add("faults.distribution", "unknown distribution %q (known: %s)", m.Distribution, strings.Join(expFailDists, ", "))
	}
	for _, r := range []struct {
		f string
		r hwmodel.RepairModel
	}{{"faults.node_repair", m.NodeRepair}, {"faults.gpu_repair", m.GPURepair}} {
		if !slices.Contains(expRepairs, r.r.Kind) {
			p.add(r.f+".kind", "unknown repair kind %q (known: %s)", r.r.Kind, strings.Join(expRepairs, ", "))
		}
		if r.r.Mean <= 0 || r.r.Mean > maxHorizon {
			p.add(r.f, "want a mean repair time > 0 and at most 366 days, got %s", fmtDur(r.r.Mean))
		}
		switch {
		case r.r.Kind == "lognormal" && (!(r.r.Sigma > 0) || r.r.Sigma > 10):
			p.add(r.f+".sigma", "want a log-space standard deviation in (0, 10], got %g", r.r.Sigma)
		case r.r.Kind != "lognormal" && r.r.Sigma != 0:
			p.add(r.f+".sigma", "is for kind lognormal")
		}
	}
	if x.HeartbeatInterval <= 0 {
		p.add("faults.heartbeat_interval", "want a duration > 0")
	}
	if x.HeartbeatTimeout < x.HeartbeatInterval {
		p.add("faults.heartbeat_timeout", "want a timeout of at least the interval (%s), got %s", fmtDur(x.HeartbeatInterval), fmtDur(x.HeartbeatTimeout))
	}
	if !slices.Contains(expRetries, x.Retry) {
		p.add("faults.retry", "unknown retry policy %q (known: %s)", x.Retry, strings.Join(expRetries, ", "))
	}
	if x.MaxRetries < 0 || x.MaxRetries > 1_000_000 {
		p.add("faults.max_retries", "want 0 to 1000000, got %d", x.MaxRetries)
	}
	if x.RestartTime < 0 {
		p.add("faults.restart_time", "want a duration >= 0")
	}
	if err := m.Validate(); err != nil && len(p.errs) == 0 {
		p.add("faults", "%v", err) // a backstop: the checks above should say it first
	}
	if len(x.Fail) > 0 && e.Cluster.Path == "" && (e.Cluster.Inline != nil || e.Cluster.Preset != "") {
		if s, err := e.Cluster.Spec(); err == nil {
			if c, err := s.Build(); err == nil {
				e.checkNamedFaults(c, p)
			}
		}
	}
}

// checkNamedFaults reports the named failures that c cannot resolve.
func (e *Experiment) checkNamedFaults(c *hwmodel.Cluster, p *expProblems) {
	if e.Faults == nil {
		return
	}
	for i, s := range e.Faults.Fail {
		if _, err := hwmodel.ParseFault(s, c); err != nil {
			p.add(fmt.Sprintf("faults.fail[%d]", i), "%v", err)
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
	p := &expProblems{file: e.File, lines: e.lines}
	e.checkNamedFaults(c, p)
	if err := p.err(); err != nil {
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
