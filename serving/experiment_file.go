package serving

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// The experiment file's schema (docs/serving.md), as package config reads
// it: the keys are the json tags. A pointer is a field whose absence
// means something other than its zero (a default to fill); the lengths of
// lists are bounded so that a mistyped file cannot exhaust memory.
// experimentFile.experiment turns it into an Experiment with the defaults
// filled; Experiment.Check then says what a valid one is.

type experimentFile struct {
	Cluster  ClusterRef     `json:"cluster" config:"required"`
	Batch    *batchFile     `json:"batch"`
	Seed     *uint64        `json:"seed"`
	Horizon  duration       `json:"horizon" config:"required"`
	Bucket   duration       `json:"bucket"`
	Services []serviceFile  `json:"services" config:"required,max=64"`
	Variants []variantFile  `json:"variants" config:"max=32"`
	Faults   *faultsSection `json:"faults"`
	Alerts   []alertFile    `json:"alerts" config:"max=256"`
	// EvaluationInterval is how often the alerts are evaluated.
	EvaluationInterval positive `json:"evaluation_interval"`
}

// alertFile is an AlertRule.
type alertFile struct {
	Name     string      `json:"name" config:"required"`
	Service  string      `json:"service" config:"required"`
	Class    string      `json:"class"`
	Metric   AlertMetric `json:"metric" config:"required"`
	Quantile float64     `json:"quantile"`
	Above    *float64    `json:"above"`
	Below    *float64    `json:"below"`
	Window   positive    `json:"window"`
	For      duration    `json:"for"`
}

type batchFile struct {
	Synthetic *syntheticFile `json:"synthetic"`
	Trace     string         `json:"trace"`
	Format    string         `json:"format"`
	Policy    string         `json:"policy"`
	Backfill  bool           `json:"backfill"`
}

type syntheticFile struct {
	Jobs        int      `json:"jobs" config:"required"`
	Load        float64  `json:"load"`
	Seed        uint64   `json:"seed"`
	MaxDuration duration `json:"max_duration"`
}

type serviceFile struct {
	Name           string          `json:"name"`
	GPUModel       string          `json:"gpu_model"`
	GPUsPerReplica *int            `json:"gpus_per_replica"`
	Priority       int             `json:"priority"`
	Replica        replicaFile     `json:"replica" config:"required"`
	Replicas       boundsFile      `json:"replicas" config:"required"`
	Routing        Routing         `json:"routing"`
	Health         *healthFile     `json:"health"`
	Autoscale      *autoscaleFile  `json:"autoscale"`
	Arrivals       arrivalsFile    `json:"arrivals" config:"required"`
	Classes        []classFile     `json:"classes" config:"required,max=64"`
	Incidents      []incidentFile  `json:"incidents" config:"max=10000"`
	StagePools     []stagePoolFile `json:"stage_pools" config:"max=64"`
	Pools          []poolFile      `json:"pools" config:"max=64"`
	Failover       *failoverFile   `json:"failover"`
}

type replicaFile struct {
	PrefillTokensPerS  float64   `json:"prefill_tokens_per_s"`
	DecodeTokensPerS   float64   `json:"decode_tokens_per_s"`
	BatchSlowdown      float64   `json:"batch_slowdown"`
	Jitter             float64   `json:"jitter"`
	ContinuousBatching bool      `json:"continuous_batching"`
	MaxConcurrent      int       `json:"max_concurrent"`
	LoadTime           duration  `json:"load_time"`
	ServiceTime        *distFile `json:"service_time"`
	Iteration          *iterFile `json:"iteration"`
}

// iterFile selects the iteration-level replica (IterationModel); paths
// are relative to the experiment file.
type iterFile struct {
	Model        string  `json:"model" config:"required"`
	Hardware     string  `json:"hardware" config:"required"`
	GPU          string  `json:"gpu" config:"required"`
	Coefficients string  `json:"coefficients" config:"required"`
	TP           int     `json:"tp"`
	MaxNumSeqs   int     `json:"max_num_seqs"`
	MaxBatched   int     `json:"max_num_batched_tokens"`
	LongPrefill  int     `json:"long_prefill_token_threshold"`
	BlockSize    int     `json:"block_size"`
	MemoryUtil   float64 `json:"gpu_memory_utilization"`
	KVBlocks     int64   `json:"kv_blocks"`
	MaxTokens    int     `json:"max_request_tokens"`
}

type distFile struct {
	Kind  string  `json:"dist" config:"required"`
	Mean  float64 `json:"mean"`
	Sigma float64 `json:"sigma"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

type boundsFile struct {
	Initial int  `json:"initial" config:"required"`
	Min     *int `json:"min"` // default: initial
	Max     *int `json:"max"` // default: initial
}

type healthFile struct {
	Enabled           *bool    `json:"enabled"` // default true: a health section turns it on
	LatencyRatio      float64  `json:"latency_ratio"`
	EWMAWeight        float64  `json:"ewma_weight"`
	MinRequests       int      `json:"min_requests"`
	ConsecutiveErrors int      `json:"consecutive_errors"`
	EjectFor          duration `json:"eject_for"`
	ProbeRequests     int      `json:"probe_requests"`
	MaxEjectedPct     int      `json:"max_ejected_pct"`
	LaneHeadroom      int      `json:"lane_headroom"`
}

type autoscaleFile struct {
	Metric            Metric   `json:"metric"`
	Target            float64  `json:"target"`
	Interval          duration `json:"interval"`
	ScaleUpCooldown   duration `json:"scale_up_cooldown"`
	ScaleDownCooldown duration `json:"scale_down_cooldown"`
	OnNoGPUs          NoGPUs   `json:"on_no_gpus"`
	OnAlert           string   `json:"on_alert"`
	Step              int      `json:"step"`
}

type arrivalsFile struct {
	Rate  float64    `json:"rate"`
	Steps []stepFile `json:"steps" config:"max=100000"`
	Trace string     `json:"trace"`
}

type stepFile struct {
	At   duration `json:"at" config:"required"`
	For  duration `json:"for"`
	Rate float64  `json:"rate" config:"required"`
}

type classFile struct {
	Name         string    `json:"name"`
	Weight       *float64  `json:"weight"` // default 1
	Priority     int       `json:"priority"`
	InputTokens  *distFile `json:"input_tokens"`
	OutputTokens *distFile `json:"output_tokens"`
	TTFTTarget   duration  `json:"ttft_target"`
	E2ETarget    duration  `json:"e2e_target"`
	Timeout      duration  `json:"timeout"`
	// Prefix: the class's shared prompt prefix (PrefixShare).
	Prefix *prefixFile `json:"prefix"`
	Stages []string    `json:"stages" config:"max=64"`
	Pool   string      `json:"pool"`
}

type incidentFile struct {
	At           duration `json:"at" config:"required"`
	Replica      int      `json:"replica"`
	Kind         string   `json:"kind" config:"required"`
	Factor       float64  `json:"factor"`
	RestartAfter duration `json:"restart_after"`
}

type variantFile struct {
	Name      string  `json:"name" config:"required"`
	Routing   Routing `json:"routing"`
	Health    Switch  `json:"health"`
	Autoscale Switch  `json:"autoscale"`
	Incidents Switch  `json:"incidents"`
	OnNoGPUs  NoGPUs  `json:"on_no_gpus"`
	Faults    Switch  `json:"faults"`
	Failover  Switch  `json:"failover"`
	// PrefixCache: on (kept) or off.
	PrefixCache Switch `json:"prefix_cache"`
}

// duration is a duration written as a string with a unit, "500ms",
// "90s", "20m", "1h30m" or "2d" (hwmodel.ParseDuration); never negative.
type duration hwmodel.Time

func (d *duration) UnmarshalConfig(v config.Value) {
	text, ok := v.String()
	if !ok {
		v.Fail("want a duration like \"90s\", \"20m\" or \"1h30m\", got %s", v.Describe())
		return
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err == nil {
		v.Fail("want a duration with a unit like \"%ss\", got %q", strings.TrimSpace(text), text)
		return
	}
	t, err := hwmodel.ParseDuration(text)
	switch {
	case err != nil:
		v.Fail("want a duration like \"500ms\", \"90s\" or \"1h30m\", got %q", text)
	case t < 0:
		v.Fail("want a duration >= 0, got %q", text)
	default:
		*d = duration(t)
	}
}

// positive is a duration that must be > 0 when given: left out, it takes
// its default.
type positive hwmodel.Time

func (p *positive) UnmarshalConfig(v config.Value) {
	var d duration
	d.UnmarshalConfig(v)
	if text, _ := v.String(); d == 0 {
		if t, err := hwmodel.ParseDuration(text); err == nil && t == 0 {
			v.Fail("want a duration > 0, got %q (leave it out for the default)", text)
		}
	}
	*p = positive(d)
}

// UnmarshalConfig reads on or off (true and false too).
func (s *Switch) UnmarshalConfig(v config.Value) {
	on, ok := v.Bool()
	switch {
	case !ok:
		v.Fail("want on or off, got %s", v.Describe())
	case on:
		*s = SwitchOn
	default:
		*s = SwitchOff
	}
}

// UnmarshalConfig reads a preset name, the path of a cluster spec file
// (resolved against the experiment file's folder once it is read), or a
// cluster spec written in place, read and checked by the same decoder.
func (c *ClusterRef) UnmarshalConfig(v config.Value) {
	if v.IsMapping() {
		s := &hwmodel.ClusterSpec{}
		v.Decode(s)
		if len(s.NodeGroups) == 0 {
			s.NodeGroups = nil
		}
		if len(s.Nodes) == 0 {
			s.Nodes = nil
		}
		c.Inline = s
		return
	}
	name, ok := v.String()
	switch {
	case !ok || name == "":
		v.Fail("want a preset name (%s), a cluster spec file or an inline spec, got %s", strings.Join(hwmodel.Presets(), ", "), v.Describe())
	case presetName(name):
		c.Preset = name
	case !strings.ContainsAny(name, "/\\") && !strings.Contains(name, "."):
		v.Fail("unknown preset %q (known: %s); a cluster spec file's name has an extension", name, strings.Join(hwmodel.Presets(), ", "))
	default:
		c.Path = name
	}
}

func presetName(name string) bool {
	_, ok := hwmodel.Preset(name)
	return ok
}

// experiment turns the file into an Experiment: relative paths resolved
// against dir, and what the file leaves out filled with the defaults
// (docs/serving.md; health and autoscaling take the engine's own).
func (f *experimentFile) experiment(file, dir string) *Experiment {
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	e := &Experiment{File: file, Cluster: f.Cluster, Seed: 1}
	e.Cluster.Path = path(e.Cluster.Path)
	if f.Seed != nil {
		e.Seed = *f.Seed
	}
	e.Spec.Horizon = hwmodel.Time(f.Horizon)
	e.Spec.Bucket = hwmodel.Time(f.Bucket)
	if e.Spec.Bucket == 0 {
		e.Spec.Bucket = DefaultBucket
	}
	if b := f.Batch; b != nil {
		e.Batch = &Batch{Trace: path(b.Trace), Format: b.Format, Policy: b.Policy, Backfill: b.Backfill}
		if e.Batch.Policy == "" {
			e.Batch.Policy = DefaultBatchPolicy
		}
		if e.Batch.Trace != "" && e.Batch.Format == "" {
			e.Batch.Format = "brigade"
		}
		if s := b.Synthetic; s != nil {
			e.Batch.Synthetic = &Synthetic{Jobs: s.Jobs, Load: s.Load, Seed: s.Seed, MaxDuration: hwmodel.Time(s.MaxDuration)}
			if s.Load == 0 {
				e.Batch.Synthetic.Load = DefaultBatchLoad
			}
			if s.MaxDuration == 0 {
				e.Batch.Synthetic.MaxDuration = DefaultMaxBatchDuration
			}
		}
	}
	for _, s := range f.Services {
		e.Spec.Services = append(e.Spec.Services, s.service(path))
	}
	for _, v := range f.Variants {
		e.Variants = append(e.Variants, Variant{Name: v.Name, Routing: v.Routing, Health: v.Health,
			Autoscale: v.Autoscale, Incidents: v.Incidents, OnNoGPUs: v.OnNoGPUs, Faults: v.Faults, Failover: v.Failover, PrefixCache: v.PrefixCache})
	}
	if f.Faults != nil {
		e.Faults = f.Faults.faults()
	}
	e.Spec.EvaluationInterval = hwmodel.Time(f.EvaluationInterval)
	for _, a := range f.Alerts {
		e.Spec.Alerts = append(e.Spec.Alerts, AlertRule{Name: a.Name, Service: a.Service, Class: a.Class, Metric: a.Metric,
			Quantile: a.Quantile, Above: a.Above, Below: a.Below, Window: hwmodel.Time(a.Window), For: hwmodel.Time(a.For)})
	}
	return e
}

func (f *serviceFile) service(path func(string) string) Service {
	s := Service{Name: f.Name, GPUModel: f.GPUModel, GPUsPerReplica: 1, Priority: f.Priority, Routing: f.Routing}
	if f.GPUsPerReplica != nil {
		s.GPUsPerReplica = *f.GPUsPerReplica
	}
	if s.Routing == "" {
		s.Routing = DefaultRouting
	}
	r := f.Replica
	s.Replica = ReplicaModel{PrefillTokensPerS: r.PrefillTokensPerS, DecodeTokensPerS: r.DecodeTokensPerS, BatchSlowdown: r.BatchSlowdown,
		Jitter: r.Jitter, ContinuousBatching: r.ContinuousBatching, MaxConcurrent: r.MaxConcurrent, LoadTime: hwmodel.Time(r.LoadTime)}
	if r.ServiceTime != nil {
		d := r.ServiceTime.dist()
		s.Replica.ServiceTime = &d
	}
	if it := r.Iteration; it != nil {
		s.Replica.Iteration = &IterationModel{Model: path(it.Model), Hardware: path(it.Hardware), GPU: it.GPU,
			Coefficients: path(it.Coefficients), TP: it.TP, MaxSeqs: it.MaxNumSeqs, TokenBudget: it.MaxBatched,
			LongPrefill: it.LongPrefill, BlockSize: it.BlockSize, MemoryUtil: it.MemoryUtil, KVBlocks: it.KVBlocks,
			MaxRequestTokens: it.MaxTokens}
	}
	s.Replicas = ReplicaBounds{Initial: f.Replicas.Initial, Min: f.Replicas.Initial, Max: f.Replicas.Initial}
	if f.Replicas.Min != nil {
		s.Replicas.Min = *f.Replicas.Min
	}
	if f.Replicas.Max != nil {
		s.Replicas.Max = *f.Replicas.Max
	}
	if h := f.Health; h != nil {
		s.Health = Health{Enabled: h.Enabled == nil || *h.Enabled, LatencyRatio: h.LatencyRatio, EWMAWeight: h.EWMAWeight,
			MinRequests: h.MinRequests, ConsecutiveErrors: h.ConsecutiveErrors, EjectFor: hwmodel.Time(h.EjectFor),
			ProbeRequests: h.ProbeRequests, MaxEjectedPct: h.MaxEjectedPct, LaneHeadroom: h.LaneHeadroom}
	}
	s.Health = s.Health.withDefaults()
	if a := f.Autoscale; a != nil {
		as := Autoscale{Metric: a.Metric, Target: a.Target, Interval: hwmodel.Time(a.Interval), ScaleUpCooldown: hwmodel.Time(a.ScaleUpCooldown),
			ScaleDownCooldown: hwmodel.Time(a.ScaleDownCooldown), OnNoGPUs: a.OnNoGPUs, OnAlert: a.OnAlert, Step: a.Step}.withDefaults()
		s.Autoscale = &as
	}
	s.Arrivals = Arrivals{Rate: f.Arrivals.Rate, Trace: path(f.Arrivals.Trace)}
	for _, st := range f.Arrivals.Steps {
		s.Arrivals.Steps = append(s.Arrivals.Steps, RateStep{At: hwmodel.Time(st.At), For: hwmodel.Time(st.For), Rate: st.Rate})
	}
	for _, c := range f.Classes {
		cl := Class{Name: c.Name, Weight: 1, Priority: c.Priority, TTFTTarget: hwmodel.Time(c.TTFTTarget),
			E2ETarget: hwmodel.Time(c.E2ETarget), Timeout: hwmodel.Time(c.Timeout), Stages: c.Stages, Pool: c.Pool}
		if c.Weight != nil {
			cl.Weight = *c.Weight
		}
		if c.InputTokens != nil {
			cl.InputTokens = c.InputTokens.dist()
		}
		if c.OutputTokens != nil {
			cl.OutputTokens = c.OutputTokens.dist()
		}
		if c.Prefix != nil {
			cl.Prefix = PrefixShare{Groups: c.Prefix.Groups, Tokens: c.Prefix.Tokens}
		}
		if cl.Name == "" && len(f.Classes) == 1 {
			cl.Name = "default"
		}
		s.Classes = append(s.Classes, cl)
	}
	if fo := f.Failover; fo != nil {
		s.Failover = fo.failover()
	}
	for _, in := range f.Incidents {
		s.Incidents = append(s.Incidents, Incident{At: hwmodel.Time(in.At), Replica: in.Replica, Kind: in.Kind,
			Factor: in.Factor, RestartAfter: hwmodel.Time(in.RestartAfter)})
	}
	for _, sp := range f.StagePools {
		s.StagePools = append(s.StagePools, sp.stagePool())
	}
	for _, p := range f.Pools {
		s.Pools = append(s.Pools, p.pool(&s))
	}
	return s
}

func (d *distFile) dist() Dist {
	return Dist{Kind: d.Kind, Mean: d.Mean, Sigma: d.Sigma, Min: d.Min, Max: d.Max}
}
