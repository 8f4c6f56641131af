package serving

import (
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// Spec is the serving part of a workload: the services that run beside the
// batch jobs, their request traffic and how it is handled. Durations are
// hwmodel.Time (µs); ParseSpec reads them from strings like "90s", "20m".
type Spec struct {
	// Horizon is how long traffic is simulated; every replica is released
	// at the horizon.
	Horizon hwmodel.Time
	// Bucket is the width of the time series buckets (default 60 s).
	Bucket   hwmodel.Time
	Services []Service
	// Alerts are evaluated every EvaluationInterval (0: 15 s) during the
	// run (alerts.go); an autoscaler may scale on one (Autoscale.OnAlert).
	Alerts             []AlertRule
	EvaluationInterval hwmodel.Time
}

// Service is one model served by a pool of replicas behind one gateway.
type Service struct {
	Name string
	// GPUModel is the catalogue model a replica needs ("H100-80GB"); ""
	// accepts any model. GPUsPerReplica GPUs of it on one node.
	GPUModel       string
	GPUsPerReplica int
	// Priority ranks the service against batch jobs: with autoscaling's
	// OnNoGPUs = preempt, batch jobs of lower priority may be preempted to
	// make room for a replica.
	Priority int

	Replica  ReplicaModel
	Replicas ReplicaBounds
	Routing  Routing
	Health   Health
	// Autoscale: nil keeps Replicas.Initial replicas for the whole run.
	Autoscale *Autoscale
	Arrivals  Arrivals
	Classes   []Class
	Incidents []Incident
	// Failover: nil keeps every request within the service
	// (failover.go).
	Failover *Failover
	// NoPrefixCache: the iteration-level engines cache no prefix group's
	// blocks across requests (the requests keep their groups and draws;
	// a variant's prefix_cache: off).
	NoPrefixCache bool
	// StagePools are the CPU stages a request may pass through before
	// the gateway queue (pipeline.go); a class lists the ones it takes.
	StagePools []StagePool
	// Pools split the replicas into pools with their own model settings,
	// bounds and autoscaler (pools.go); a class names the pool that
	// serves it. Without pools the service is one pool of Replica,
	// Replicas and Autoscale.
	Pools []Pool
}

// ReplicaModel is how one replica serves requests. A replica runs up to
// MaxConcurrent requests at once (continuous batching); a request of I input
// and O output tokens dispatched when n requests are running (itself
// included) takes I/PrefillTokensPerS to its first token, then
// O/DecodeTokensPerS × (1 + BatchSlowdown × (n-1)) to its last. The
// slow-down is fixed at dispatch: later arrivals do not re-time it.
type ReplicaModel struct {
	PrefillTokensPerS float64
	DecodeTokensPerS  float64
	BatchSlowdown     float64
	MaxConcurrent     int
	// LoadTime is paid by every new replica between getting its GPUs and
	// taking traffic (weights loaded, engine warmed up).
	LoadTime hwmodel.Time
	// Jitter is the spread of each request's prefill and decode times on a
	// healthy replica: they are multiplied by a lognormal factor of mean 1
	// and log-space standard deviation Jitter (0: none, every request takes
	// exactly its token model's time). The gateway's expected time, which
	// outlier ejection compares with, stays the token model's, so a healthy
	// replica's latency ratio is noisy too.
	Jitter float64
	// ContinuousBatching re-times decoding whenever the batch changes, as
	// continuous batching (vLLM, TGI) does: every sequence in its decode
	// phase advances at DecodeTokensPerS / (1 + BatchSlowdown × (n-1))
	// tokens per second, n the requests on the replica now, so a request
	// slows down when others join and speeds up when they leave. Without
	// it the slow-down is fixed at dispatch (faster to simulate: two
	// events per request instead of about four).
	ContinuousBatching bool
	// ServiceTime, when set, replaces the token model: each request's
	// service time is drawn from it (seconds) and its first token comes at
	// the end. For queueing checks (exponential service).
	ServiceTime *Dist
	// Iteration, when set, replaces the token model by the
	// iteration-level engine (iterlevel.go, package iteration); the
	// token rates, BatchSlowdown, Jitter and ContinuousBatching then do
	// not apply, and MaxConcurrent bounds the requests a replica holds
	// (its engine's queue and batch).
	Iteration *IterationModel
}

// ReplicaBounds: Initial replicas at the start; the autoscaler keeps the
// count within [Min, Max].
type ReplicaBounds struct{ Initial, Min, Max int }

// Routing names how the gateway picks a replica for a request.
type Routing string

// The routing policies. Every router sends requests only to healthy,
// ready replicas with a free slot; a request that finds none waits in the
// gateway's queue (highest class priority first, then arrival order) until
// a slot frees.
const (
	// RoundRobin takes replicas in turn, skipping full ones.
	RoundRobin Routing = "round-robin"
	// LeastOutstanding takes the replica with the fewest requests in
	// flight (ties: lowest replica id).
	LeastOutstanding Routing = "least-outstanding"
	// LatencyAware takes the replica with the lowest recent latency ratio
	// (observed / expected, exponentially weighted) times (1 + in flight).
	LatencyAware Routing = "latency-aware"
	// PriorityLanes sends requests of the highest class priority to the
	// least-loaded replica and others to the most-loaded replica that
	// still keeps Health.LaneHeadroom slots free for high priority.
	PriorityLanes Routing = "priority-lanes"
)

// Health is the gateway's outlier detection (a circuit breaker per
// replica). A replica is ejected when the exponentially weighted mean of
// its requests' latency ratio (end-to-end time on the replica over the time
// the same request takes on a healthy replica) exceeds LatencyRatio, or
// after ConsecutiveErrors errors in a row. It stays out EjectFor × the
// number of times it has been ejected, then is probed: it takes traffic
// again and is ejected again at once if its next ProbeRequests requests
// fail the test. At most MaxEjectedPct % of the ready replicas are ejected
// at once. Disabled: no replica is ever ejected.
type Health struct {
	Enabled           bool
	LatencyRatio      float64 // default 2
	EWMAWeight        float64 // weight of the newest request, default 0.1
	MinRequests       int     // requests seen before the latency test applies, default 10
	ConsecutiveErrors int     // default 5
	EjectFor          hwmodel.Time
	ProbeRequests     int // default 5
	MaxEjectedPct     int // default 50
	// LaneHeadroom is the slots per replica that PriorityLanes keeps for
	// the highest class priority (default 1).
	LaneHeadroom int
}

// Autoscale scales a service's replica count every Interval. The desired
// count is ceil(ready × observed / Target), as Kubernetes' HPA computes it
// (no change within 10 % of the target), within ReplicaBounds and, like the
// HPA's default scale-up policy, at most max(active, 4) more than the
// active replicas (waiting, loading or ready) per tick; scaling out waits
// ScaleUpCooldown since the last scale-out, scaling in ScaleDownCooldown
// since the last change. Zero durations take the defaults (15 s interval,
// 5 min scale-down cool-down). With no ready replica the metric says
// nothing: a service at zero replicas (Min 0) that received requests (they
// failed: no healthy replica) scales to one at the next tick, and a
// service whose replicas are still on their way waits for them.
type Autoscale struct {
	Metric            Metric
	Target            float64
	Interval          hwmodel.Time
	ScaleUpCooldown   hwmodel.Time
	ScaleDownCooldown hwmodel.Time
	// OnNoGPUs: wait for free GPUs, or preempt batch jobs of lower
	// priority than the service. A waiting replica takes a node's GPUs as
	// soon as enough of them are idle at once, before the batch policy's
	// next decisions, but nothing drains a node for it: on a busy cluster
	// where GPUs free up one or two per node at a time it may wait long.
	OnNoGPUs NoGPUs
	// OnAlert names an alert rule (Spec.Alerts): while it fires, every
	// tick asks for at least Step (0: 1) more replicas than are active,
	// within Max and ScaleUpCooldown. With a Target too the larger
	// request wins; without one (Target 0) the alert alone scales, and
	// only out.
	OnAlert string
	Step    int
}

// Metric is what the autoscaler compares with its target.
type Metric string

// The autoscaling metrics, each measured over the last interval.
const (
	// MetricConcurrency: mean requests in the system (queued at the gateway or
	// in flight) per ready replica.
	MetricConcurrency Metric = "concurrency"
	// MetricQueue: mean requests waiting at the gateway (not yet on a
	// replica) per ready replica, as a queue-length signal such as
	// vLLM's waiting requests.
	MetricQueue Metric = "queue"
	// MetricLatency: p95 end-to-end latency in seconds of the requests that
	// completed in the interval.
	MetricLatency Metric = "latency"
	// MetricTTFT: p95 time to first token in seconds (arrival at the gateway
	// to the first output token) of the requests that completed in the
	// interval, so "TTFT over 200 ms" is metric ttft, target 0.2.
	MetricTTFT Metric = "ttft"
	// MetricITL: p95 inter-token latency in seconds (every gap between
	// consecutive output tokens) of the requests that completed in the
	// interval.
	MetricITL Metric = "itl"
	// MetricUtilisation: mean fraction of ready replicas' slots in use (0..1).
	MetricUtilisation Metric = "utilisation"
)

// NoGPUs says what scaling out does when the cluster has no free GPUs.
type NoGPUs string

// The choices for Autoscale.OnNoGPUs.
const (
	Wait    NoGPUs = "wait"
	Preempt NoGPUs = "preempt"
)

// Arrivals is a service's request traffic: a Poisson process whose rate
// follows a step schedule, or a request trace.
type Arrivals struct {
	// Rate is the base rate in requests per second; each Step replaces it
	// by Step.Rate from Step.At for Step.For (0: until the next step or
	// the horizon).
	Rate  float64
	Steps []RateStep
	// Trace, when set, is a request trace CSV (time_s,class,input_tokens,
	// output_tokens); it replaces Rate and Steps.
	Trace string
}

// RateStep is one change of the arrival rate.
type RateStep struct {
	At, For hwmodel.Time
	Rate    float64
}

// Class is one request class: its share of the traffic, its priority at
// the gateway, its token lengths and its latency targets.
type Class struct {
	Name string
	// Weight is the class's share of the service's arrivals (classes are
	// drawn independently per request).
	Weight   float64
	Priority int
	// InputTokens and OutputTokens are drawn per request.
	InputTokens, OutputTokens Dist
	// TTFTTarget and E2ETarget are the class's SLO: a request attains it
	// when it completes within both (0: no target).
	TTFTTarget, E2ETarget hwmodel.Time
	// Timeout: a request still waiting at the gateway Timeout after it
	// arrived (stages included) ends as an error (504); 0: it waits for
	// ever.
	Timeout hwmodel.Time
	// Prefix, when Groups > 0, gives each drawn request a prompt prefix
	// shared with its prefix group (prefix.go).
	Prefix PrefixShare
	// Stages names the service's stage pools its requests pass through,
	// in order, before the gateway queue.
	Stages []string
	// Pool names the service's pool that serves the class ("": the
	// first).
	Pool string
}

// Dist is a distribution of positive values.
type Dist struct {
	// Kind: "constant" (Mean), "exponential" (Mean), "lognormal" (Mean and
	// Sigma of the underlying normal's standard deviation), "uniform"
	// (Min..Max).
	Kind        string
	Mean, Sigma float64
	Min, Max    float64 // uniform's bounds; for others a clamp (0: none)
}

// Incident is something that happens to one replica of a service.
type Incident struct {
	At hwmodel.Time
	// Replica is the replica's id: replicas are numbered 0, 1, ... in the
	// order they are created.
	Replica int
	// Kind "slow": every request dispatched to it from At on takes Factor
	// times as long; "fail": it stops answering (requests sent to it fail
	// at once, as a 502) until it is replaced after RestartAfter.
	Kind         string
	Factor       float64
	RestartAfter hwmodel.Time
}

// cloneSpec is a deep copy of in: variants and plans change their copy.
func cloneSpec(in *Spec) *Spec {
	s := *in
	s.Services = slices.Clone(in.Services)
	for k := range s.Services {
		svc := &s.Services[k]
		if svc.Replica.ServiceTime != nil {
			d := *svc.Replica.ServiceTime
			svc.Replica.ServiceTime = &d
		}
		if svc.Autoscale != nil {
			a := *svc.Autoscale
			svc.Autoscale = &a
		}
		svc.Arrivals.Steps = slices.Clone(svc.Arrivals.Steps)
		svc.Classes = slices.Clone(svc.Classes)
		svc.Incidents = slices.Clone(svc.Incidents)
		if svc.Failover != nil {
			f := *svc.Failover
			svc.Failover = &f
		}
		svc.StagePools = slices.Clone(svc.StagePools)
		svc.Pools = slices.Clone(svc.Pools)
		for p := range svc.Pools {
			if a := svc.Pools[p].Autoscale; a != nil {
				c := *a
				svc.Pools[p].Autoscale = &c
			}
		}
	}
	s.Alerts = slices.Clone(in.Alerts)
	return &s
}
