package serving

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// Limits that keep a mistyped number from exhausting memory or time.
const (
	maxReplicas = 100_000
	maxClasses  = 64
	maxRate     = 1e7
	maxHorizon  = 366 * hwmodel.Day
	maxRows     = 1_000_000
)

// The distribution kinds of Dist.Kind.
const (
	DistConstant    = "constant"
	DistExponential = "exponential"
	DistLognormal   = "lognormal"
	DistUniform     = "uniform"
)

var (
	distKinds     = []string{DistConstant, DistExponential, DistLognormal, DistUniform}
	routings      = []Routing{RoundRobin, LeastOutstanding, LatencyAware, PriorityLanes}
	metrics       = []Metric{MetricConcurrency, MetricQueue, MetricLatency, MetricTTFT, MetricITL, MetricUtilisation}
	noGPUChoices  = []NoGPUs{Wait, Preempt}
	incidentKinds = []string{"slow", "fail"}
)

// Validate checks a Spec built in Go with Check, the same rules an
// experiment file's services meet, and gives a service without a routing
// the default one. Its errors name the service and field.
func (s *Spec) Validate() error {
	if err := config.Validate("", s); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	for i := range s.Services {
		if s.Services[i].Routing == "" {
			s.Services[i].Routing = DefaultRouting
		}
	}
	return nil
}

// Check reports every problem of the spec: its horizon and bucket, and
// each service's (Service.Check) under services[i], names used twice
// included. Zero health and autoscaling settings take their defaults.
func (s *Spec) Check(e *config.Errors) {
	if s.Horizon <= 0 || s.Horizon > maxHorizon {
		e.Add("horizon", "want a duration > 0 and at most 366 days, got %s", fmtDur(s.Horizon))
	}
	switch {
	case s.Bucket < 0:
		e.Add("bucket", "want a duration >= 0, got %s", fmtDur(s.Bucket))
	case s.Bucket > 0 && s.Horizon > 0 && s.Horizon/s.Bucket > maxRows:
		e.Add("bucket", "%s buckets over a %s horizon make over a million rows; want a wider bucket", fmtDur(s.Bucket), fmtDur(s.Horizon))
	}
	if len(s.Services) == 0 {
		e.Add("services", "want at least one service")
	}
	names := map[string]int{}
	for i := range s.Services {
		v := &s.Services[i]
		v.check(e.Index("services", i), s.Horizon)
		if k, dup := names[v.Name]; dup && v.Name != "" {
			e.Add(fmt.Sprintf("services[%d].name", i), "%q is already the name of services[%d]", v.Name, k)
		}
		names[v.Name] = i
	}
	s.checkFailover(e)
	s.checkAlerts(e)
}

// validName reports a name fit for table rows and file names.
func validName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+", r)) {
			return false
		}
	}
	return true
}

func fmtDur(t hwmodel.Time) string {
	return (time.Duration(t) * time.Microsecond).String()
}

func joinNames[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// check reports what is wrong with one service; horizon bounds its
// incidents and rate steps.
func (v *Service) check(e *config.Errors, horizon hwmodel.Time) {
	switch {
	case v.Name == "":
		e.Add("name", "want a name")
	case !validName(v.Name):
		e.Add("name", "want letters, digits and . _ - + only (it names rows), got %q", v.Name)
	}
	if v.GPUModel != "" {
		if _, ok := hwmodel.LookupModel(v.GPUModel); !ok {
			e.Add("gpu_model", "unknown GPU model %q (known: %s)", v.GPUModel, hwmodel.ModelNames())
		}
	}
	if v.GPUsPerReplica < 1 || v.GPUsPerReplica > hwmodel.MaxGPUsPerNode {
		e.Add("gpus_per_replica", "want 1 to %d GPUs (one node's), got %d", hwmodel.MaxGPUsPerNode, v.GPUsPerReplica)
	}
	checkReplica(e, &v.Replica, v.Replicas)
	r := &v.Replica
	if v.Routing != "" && !slices.Contains(routings, v.Routing) {
		e.Add("routing", "unknown routing %q (known: %s)", v.Routing, joinNames(routings))
	}
	v.Health.withDefaults().check(e.In("health"))
	if h := v.Health.withDefaults(); v.Routing == PriorityLanes && v.priorityLevels() > 1 && h.LaneHeadroom >= r.MaxConcurrent && r.MaxConcurrent >= 1 {
		e.Add("health.lane_headroom", "want fewer than replica.max_concurrent (%d) slots, got %d", r.MaxConcurrent, h.LaneHeadroom)
	}
	if v.Autoscale != nil {
		v.Autoscale.withDefaults().check(e.In("autoscale"))
	}
	v.Arrivals.check(e.In("arrivals"))
	v.checkClasses(e)
	for k, in := range v.Incidents {
		in.check(e.Index("incidents", k), horizon)
	}
	v.checkStages(e)
	v.checkPools(e, horizon)
}

// checkReplica reports what is wrong with a replica model and its
// bounds (a service's, or a pool's).
func checkReplica(e *config.Errors, r *ReplicaModel, b ReplicaBounds) {
	if r.ServiceTime != nil {
		r.ServiceTime.check(e.In("replica.service_time"))
		if r.Iteration != nil {
			e.Add("replica.iteration", "want either service_time or iteration, not both")
		}
	} else if r.Iteration != nil {
		r.Iteration.check(e.In("replica.iteration"))
	} else {
		if !(r.PrefillTokensPerS > 0) || math.IsInf(r.PrefillTokensPerS, 0) {
			e.Add("replica.prefill_tokens_per_s", "want a rate > 0 (or a service_time), got %g", r.PrefillTokensPerS)
		}
		if !(r.DecodeTokensPerS > 0) || math.IsInf(r.DecodeTokensPerS, 0) {
			e.Add("replica.decode_tokens_per_s", "want a rate > 0 (or a service_time), got %g", r.DecodeTokensPerS)
		}
		if !(r.Jitter >= 0 && r.Jitter <= 2) {
			e.Add("replica.jitter", "want 0 to 2 (a log-space standard deviation), got %g", r.Jitter)
		}
	}
	if !(r.BatchSlowdown >= 0 && r.BatchSlowdown <= 100) {
		e.Add("replica.batch_slowdown", "want 0 to 100, got %g", r.BatchSlowdown)
	}
	if r.MaxConcurrent < 1 || r.MaxConcurrent > 1_000_000 {
		e.Add("replica.max_concurrent", "want 1 to 1000000 requests, got %d", r.MaxConcurrent)
	}
	if r.LoadTime < 0 {
		e.Add("replica.load_time", "want a duration >= 0")
	}
	if b.Initial < 0 || b.Initial > maxReplicas {
		e.Add("replicas.initial", "want 0 to %d replicas, got %d", maxReplicas, b.Initial)
	}
	if b.Max < 1 || b.Max > maxReplicas {
		e.Add("replicas.max", "want 1 to %d replicas, got %d", maxReplicas, b.Max)
	}
	if b.Min < 0 || b.Min > b.Max {
		e.Add("replicas.min", "want 0 <= min <= max (%d), got %d", b.Max, b.Min)
	}
	if b.Initial < b.Min || b.Initial > b.Max {
		e.Add("replicas.initial", "want min (%d) <= initial <= max (%d), got %d", b.Min, b.Max, b.Initial)
	}
}

func (h Health) check(e *config.Errors) {
	if !(h.LatencyRatio > 1) || h.LatencyRatio > 1e6 {
		e.Add("latency_ratio", "want a ratio > 1 (observed over expected latency), got %g", h.LatencyRatio)
	}
	if !(h.EWMAWeight > 0 && h.EWMAWeight <= 1) {
		e.Add("ewma_weight", "want a weight in (0, 1], got %g", h.EWMAWeight)
	}
	if h.MinRequests < 1 {
		e.Add("min_requests", "want >= 1, got %d", h.MinRequests)
	}
	if h.ConsecutiveErrors < 1 {
		e.Add("consecutive_errors", "want >= 1, got %d", h.ConsecutiveErrors)
	}
	if h.EjectFor <= 0 {
		e.Add("eject_for", "want a duration > 0")
	}
	if h.ProbeRequests < 1 {
		e.Add("probe_requests", "want >= 1, got %d", h.ProbeRequests)
	}
	if h.MaxEjectedPct < 1 || h.MaxEjectedPct > 100 {
		e.Add("max_ejected_pct", "want 1 to 100, got %d", h.MaxEjectedPct)
	}
	if h.LaneHeadroom < 0 {
		e.Add("lane_headroom", "want >= 0, got %d", h.LaneHeadroom)
	}
}

func (a Autoscale) check(e *config.Errors) {
	if !slices.Contains(metrics, a.Metric) {
		e.Add("metric", "unknown metric %q (known: %s)", a.Metric, joinNames(metrics))
	}
	alone := a.OnAlert != "" && a.Target == 0 // the alert alone scales
	if !alone && (!(a.Target > 0) || math.IsInf(a.Target, 0) || (a.Metric == MetricUtilisation && a.Target > 1)) {
		want := "> 0"
		if a.Metric == MetricUtilisation {
			want = "in (0, 1]"
		}
		e.Add("target", "want a target %s (or on_alert without a target), got %g", want, a.Target)
	}
	if a.Step < 1 || a.Step > maxReplicas {
		e.Add("step", "want 1 to %d replicas per tick, got %d", maxReplicas, a.Step)
	}
	if a.Interval <= 0 {
		e.Add("interval", "want a duration > 0")
	}
	if a.ScaleUpCooldown < 0 {
		e.Add("scale_up_cooldown", "want a duration >= 0")
	}
	if a.ScaleDownCooldown < 0 {
		e.Add("scale_down_cooldown", "want a duration >= 0")
	}
	if !slices.Contains(noGPUChoices, a.OnNoGPUs) {
		e.Add("on_no_gpus", "want %s, got %q", joinNames(noGPUChoices), a.OnNoGPUs)
	}
}

func (ar *Arrivals) check(e *config.Errors) {
	if ar.Trace != "" {
		if ar.Rate != 0 || len(ar.Steps) > 0 {
			e.Add("", "a trace replaces rate and steps; give one or the other")
		}
		return
	}
	if !(ar.Rate >= 0) || ar.Rate > maxRate {
		e.Add("rate", "want 0 to %g requests per second, got %g", maxRate, ar.Rate)
	}
	for k, st := range ar.Steps {
		se := e.Index("steps", k)
		if st.At < 0 {
			se.Add("at", "want a duration >= 0, got %s", fmtDur(st.At))
		}
		if st.For < 0 {
			se.Add("for", "want a duration >= 0")
		}
		if !(st.Rate >= 0) || st.Rate > maxRate {
			se.Add("rate", "want 0 to %g requests per second, got %g", maxRate, st.Rate)
		}
	}
}

func (v *Service) checkClasses(e *config.Errors) {
	switch {
	case len(v.Classes) == 0:
		e.Add("classes", "want at least one request class")
	case len(v.Classes) > maxClasses:
		e.Add("classes", "lists %d classes; at most %d are allowed", len(v.Classes), maxClasses)
	}
	tokens := v.Replica.ServiceTime == nil && v.Arrivals.Trace == ""
	names := map[string]int{}
	for k := range v.Classes {
		c := &v.Classes[k]
		ce := e.Index("classes", k)
		switch {
		case c.Name == "":
			ce.Add("name", "want a name")
		case !validName(c.Name):
			ce.Add("name", "want letters, digits and . _ - + only, got %q", c.Name)
		}
		if j, dup := names[c.Name]; dup && c.Name != "" {
			ce.Add("name", "%q is already the name of classes[%d]", c.Name, j)
		}
		names[c.Name] = k
		if !(c.Weight >= 0) || c.Weight > 1e9 {
			ce.Add("weight", "want a weight >= 0, got %g", c.Weight)
		}
		for _, t := range []struct {
			f string
			d *Dist
		}{{"input_tokens", &c.InputTokens}, {"output_tokens", &c.OutputTokens}} {
			switch {
			case t.d.Kind != "":
				t.d.check(ce.In(t.f))
			case tokens:
				ce.Add(t.f, "required with the token model; want {dist, mean, ...}")
			}
		}
		for _, t := range []struct {
			f string
			v hwmodel.Time
		}{{"ttft_target", c.TTFTTarget}, {"e2e_target", c.E2ETarget}, {"timeout", c.Timeout}} {
			if t.v < 0 {
				ce.Add(t.f, "want a duration >= 0")
			}
		}
		c.Prefix.check(ce.In("prefix"), v.Arrivals.Trace != "")
		if c.TTFTTarget > 0 && c.E2ETarget > 0 && c.TTFTTarget > c.E2ETarget {
			ce.Add("ttft_target", "%s is longer than e2e_target %s; the first token cannot come after the last", fmtDur(c.TTFTTarget), fmtDur(c.E2ETarget))
		}
	}
	if len(v.Classes) > 0 && !slices.ContainsFunc(v.Classes, func(c Class) bool { return c.Weight > 0 }) {
		e.Add("classes", "no class has a weight > 0; want at least one")
	}
}

func (in Incident) check(e *config.Errors, horizon hwmodel.Time) {
	if in.At < 0 || (horizon > 0 && in.At > horizon) {
		e.Add("at", "want a time within the horizon (%s), got %s", fmtDur(horizon), fmtDur(in.At))
	}
	if in.Replica < 0 || in.Replica >= maxReplicas {
		e.Add("replica", "want a replica id 0 to %d, got %d", maxReplicas-1, in.Replica)
	}
	switch in.Kind {
	case "slow":
		if !(in.Factor >= 1) || in.Factor > 1e6 {
			e.Add("factor", "a slow replica takes factor times as long; want a factor of 1 to 1000000, got %g", in.Factor)
		}
		if in.RestartAfter != 0 {
			e.Add("restart_after", "is for kind fail")
		}
	case "fail":
		if in.Factor != 0 {
			e.Add("factor", "is for kind slow")
		}
		if in.RestartAfter <= 0 {
			e.Add("restart_after", "want how long the failed replica takes to be replaced, a duration > 0")
		}
	default:
		e.Add("kind", "unknown incident kind %q (known: %s)", in.Kind, strings.Join(incidentKinds, ", "))
	}
}

func (x *Dist) check(e *config.Errors) {
	big := func(v float64) bool { return !(v >= 0) || v > 1e12 }
	switch x.Kind {
	case DistConstant, DistExponential:
		if !(x.Mean > 0) || big(x.Mean) {
			e.Add("mean", "want a mean > 0, got %g", x.Mean)
		}
		if x.Sigma != 0 {
			e.Add("sigma", "is for lognormal")
		}
	case DistLognormal:
		if !(x.Mean > 0) || big(x.Mean) {
			e.Add("mean", "want a mean > 0, got %g", x.Mean)
		}
		if !(x.Sigma > 0) || x.Sigma > 10 {
			e.Add("sigma", "want the underlying normal's standard deviation in (0, 10], got %g", x.Sigma)
		}
	case DistUniform:
		if big(x.Min) || big(x.Max) || !(x.Max > x.Min) {
			e.Add("max", "uniform wants 0 <= min < max, got min %g, max %g", x.Min, x.Max)
		}
		if x.Mean != 0 || x.Sigma != 0 {
			e.Add("", "uniform takes min and max only")
		}
		return
	default:
		e.Add("dist", "unknown distribution %q (known: %s)", x.Kind, strings.Join(distKinds, ", "))
		return
	}
	if big(x.Min) {
		e.Add("min", "want a clamp >= 0, got %g", x.Min)
	}
	if big(x.Max) {
		e.Add("max", "want a clamp >= 0 (0: none), got %g", x.Max)
	}
	if x.Max > 0 && x.Max < x.Min {
		e.Add("max", "clamp max %g is below min %g", x.Max, x.Min)
	}
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
	if a.Step == 0 {
		a.Step = 1
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
