package serving

import (
	"fmt"
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// Validate checks a Spec built in Go (ParseExperiment's files get the same
// checks with file positions). Its errors name the service and field.
func (s *Spec) Validate() error {
	if s.Horizon <= 0 {
		return errorf("horizon: want > 0")
	}
	if s.Bucket < 0 {
		return errorf("bucket: want >= 0")
	}
	if len(s.Services) == 0 {
		return errorf("services: want at least one service")
	}
	names := map[string]bool{}
	for i := range s.Services {
		v := &s.Services[i]
		if err := v.validate(); err != nil {
			return errorf("services[%d] (%s): %v", i, v.Name, err)
		}
		if names[v.Name] {
			return errorf("services[%d]: name %q used twice", i, v.Name)
		}
		names[v.Name] = true
	}
	return nil
}

func (v *Service) validate() error {
	pos := func(name string, x float64) error {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: want a positive number, got %v", name, x)
		}
		return nil
	}
	if v.Name == "" {
		return fmt.Errorf("name: required")
	}
	if v.GPUModel != "" {
		if _, ok := hwmodel.LookupModel(v.GPUModel); !ok {
			return fmt.Errorf("gpu_model: unknown GPU model %q", v.GPUModel)
		}
	}
	if v.GPUsPerReplica < 1 || v.GPUsPerReplica > 64 {
		return fmt.Errorf("gpus_per_replica: want 1..64, got %d", v.GPUsPerReplica)
	}
	rm := &v.Replica
	if rm.MaxConcurrent < 1 {
		return fmt.Errorf("replica.max_concurrent: want >= 1, got %d", rm.MaxConcurrent)
	}
	if rm.LoadTime < 0 {
		return fmt.Errorf("replica.load_time: want >= 0")
	}
	if rm.ServiceTime != nil {
		if err := rm.ServiceTime.validate(); err != nil {
			return fmt.Errorf("replica.service_time: %v", err)
		}
	} else {
		if err := pos("replica.prefill_tokens_per_s", rm.PrefillTokensPerS); err != nil {
			return err
		}
		if err := pos("replica.decode_tokens_per_s", rm.DecodeTokensPerS); err != nil {
			return err
		}
		if rm.BatchSlowdown < 0 || math.IsNaN(rm.BatchSlowdown) {
			return fmt.Errorf("replica.batch_slowdown: want >= 0")
		}
		if rm.Jitter < 0 || rm.Jitter > 2 || math.IsNaN(rm.Jitter) {
			return fmt.Errorf("replica.jitter: want 0 to 2, got %v", rm.Jitter)
		}
	}
	b := v.Replicas
	if b.Min < 0 || b.Initial < b.Min || b.Max < b.Initial || b.Max < 1 {
		return fmt.Errorf("replicas: want 0 <= min <= initial <= max, max >= 1; got min %d initial %d max %d", b.Min, b.Initial, b.Max)
	}
	switch v.Routing {
	case RoundRobin, LeastOutstanding, LatencyAware, PriorityLanes:
	case "":
		v.Routing = LeastOutstanding
	default:
		return fmt.Errorf("routing: want round-robin, least-outstanding, latency-aware or priority-lanes, got %q", v.Routing)
	}
	h := v.Health.withDefaults()
	if h.LatencyRatio <= 1 || h.EWMAWeight <= 0 || h.EWMAWeight > 1 || h.MaxEjectedPct < 0 || h.MaxEjectedPct > 100 || h.EjectFor <= 0 {
		return fmt.Errorf("health: want latency_ratio > 1, 0 < ewma_weight <= 1, eject_for > 0, max_ejected_pct 0..100")
	}
	if h.LaneHeadroom >= rm.MaxConcurrent && v.Routing == PriorityLanes && v.priorityLevels() > 1 {
		return fmt.Errorf("health.lane_headroom: want < replica.max_concurrent (%d)", rm.MaxConcurrent)
	}
	if a := v.Autoscale; a != nil {
		d := a.withDefaults()
		switch d.Metric {
		case MetricConcurrency, MetricQueue, MetricLatency, MetricUtilisation:
		default:
			return fmt.Errorf("autoscale.metric: want concurrency, queue, latency or utilisation, got %q", d.Metric)
		}
		if err := pos("autoscale.target", d.Target); err != nil {
			return err
		}
		if d.Interval <= 0 || d.ScaleUpCooldown < 0 || d.ScaleDownCooldown < 0 {
			return fmt.Errorf("autoscale: want interval > 0 and cool-downs >= 0")
		}
		switch d.OnNoGPUs {
		case Wait, Preempt:
		default:
			return fmt.Errorf("autoscale.on_no_gpus: want wait or preempt, got %q", d.OnNoGPUs)
		}
	}
	ar := &v.Arrivals
	if ar.Trace == "" {
		if ar.Rate < 0 || math.IsNaN(ar.Rate) || math.IsInf(ar.Rate, 0) {
			return fmt.Errorf("arrivals.rate: want >= 0")
		}
		for k, st := range ar.Steps {
			if st.At < 0 || st.For < 0 || st.Rate < 0 || math.IsNaN(st.Rate) || math.IsInf(st.Rate, 0) {
				return fmt.Errorf("arrivals.steps[%d]: want at >= 0, for >= 0, rate >= 0", k)
			}
		}
	}
	if len(v.Classes) == 0 {
		return fmt.Errorf("classes: want at least one class")
	}
	cn := map[string]bool{}
	for k := range v.Classes {
		c := &v.Classes[k]
		if c.Name == "" || cn[c.Name] {
			return fmt.Errorf("classes[%d]: want a unique, non-empty name", k)
		}
		cn[c.Name] = true
		if err := pos(fmt.Sprintf("classes[%d].weight", k), c.Weight); err != nil {
			return err
		}
		if rm.ServiceTime == nil && ar.Trace == "" {
			if err := c.InputTokens.validate(); err != nil {
				return fmt.Errorf("classes[%d].input_tokens: %v", k, err)
			}
			if err := c.OutputTokens.validate(); err != nil {
				return fmt.Errorf("classes[%d].output_tokens: %v", k, err)
			}
		}
		if c.TTFTTarget < 0 || c.E2ETarget < 0 || c.Timeout < 0 {
			return fmt.Errorf("classes[%d]: targets and timeout want >= 0", k)
		}
	}
	for k, inc := range v.Incidents {
		switch {
		case inc.At < 0 || inc.Replica < 0:
			return fmt.Errorf("incidents[%d]: want at >= 0 and replica >= 0", k)
		case inc.Kind == "slow" && !(inc.Factor >= 1):
			return fmt.Errorf("incidents[%d].factor: want >= 1 for a slow replica", k)
		case inc.Kind == "fail" && inc.RestartAfter <= 0:
			return fmt.Errorf("incidents[%d].restart_after: want > 0", k)
		case inc.Kind != "slow" && inc.Kind != "fail":
			return fmt.Errorf("incidents[%d].kind: want slow or fail, got %q", k, inc.Kind)
		}
	}
	return nil
}

func (d *Dist) validate() error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	if bad(d.Mean) || bad(d.Sigma) || bad(d.Min) || bad(d.Max) {
		return fmt.Errorf("want finite numbers")
	}
	switch d.Kind {
	case "constant", "exponential", "":
		if d.Mean <= 0 {
			return fmt.Errorf("mean: want > 0")
		}
	case "lognormal":
		if d.Mean <= 0 || d.Sigma < 0 {
			return fmt.Errorf("want mean > 0 and sigma >= 0")
		}
	case "uniform":
		if d.Min < 0 || d.Max <= d.Min {
			return fmt.Errorf("want 0 <= min < max")
		}
	default:
		return fmt.Errorf("dist: want constant, exponential, lognormal or uniform, got %q", d.Kind)
	}
	if d.Min < 0 || (d.Max > 0 && d.Max < d.Min) {
		return fmt.Errorf("want 0 <= min <= max")
	}
	return nil
}

// withDefaults fills the documented defaults of Health's zero fields.
func (h Health) withDefaults() Health {
	if h.LatencyRatio == 0 {
		h.LatencyRatio = 2
	}
	if h.EWMAWeight == 0 {
		h.EWMAWeight = 0.1
	}
	if h.MinRequests == 0 {
		h.MinRequests = 10
	}
	if h.ConsecutiveErrors == 0 {
		h.ConsecutiveErrors = 5
	}
	if h.EjectFor == 0 {
		h.EjectFor = 30 * hwmodel.Second
	}
	if h.ProbeRequests == 0 {
		h.ProbeRequests = 5
	}
	if h.MaxEjectedPct == 0 {
		h.MaxEjectedPct = 50
	}
	if h.LaneHeadroom == 0 {
		h.LaneHeadroom = 1
	}
	return h
}

// withDefaults fills the documented defaults of Autoscale's zero fields.
func (a Autoscale) withDefaults() Autoscale {
	if a.Metric == "" {
		a.Metric = MetricConcurrency
	}
	if a.Interval == 0 {
		a.Interval = 15 * hwmodel.Second
	}
	if a.ScaleDownCooldown == 0 {
		a.ScaleDownCooldown = 5 * hwmodel.Minute
	}
	if a.OnNoGPUs == "" {
		a.OnNoGPUs = Wait
	}
	return a
}

func (v *Service) priorityLevels() int {
	seen := map[int]bool{}
	for _, c := range v.Classes {
		seen[c.Priority] = true
	}
	return len(seen)
}
