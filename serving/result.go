package serving

import (
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
)

// Result is what one run of services beside a batch workload produced.
type Result struct {
	Horizon  hwmodel.Time
	Services []ServiceResult
	// Batch is the batch workload's outcome (nil without batch jobs' run:
	// never nil after Run).
	Batch *sim.Result
	// Requests is the number of requests simulated (arrived) over every
	// service; Events the serving events processed.
	Requests int64
	Events   int64
	// Alerts is every alert state change, in time order (rules' order at
	// one evaluation); AlertStats what each rule did, in the rules' order.
	Alerts     []AlertEvent
	AlertStats []AlertStat
}

// ServiceResult is one service's golden signals and books.
type ServiceResult struct {
	Name string
	// All aggregates every class; Classes are in the spec's order.
	All     ClassResult
	Classes []ClassResult
	// Replicas lists every replica the service had, by id.
	Replicas []ReplicaResult
	// Series is the per-bucket time series (Spec.Bucket).
	Series []Bucket
	// GPUHours is the GPU time held by the service's replicas (loading,
	// serving, draining), in hours.
	GPUHours float64
	// ScaleOuts and ScaleIns count the autoscaler's replica additions and
	// removals; Ejections the circuit breaker's ejections; Preempted the
	// batch jobs preempted to make room for its replicas; GPUWait the total
	// time replicas waited for GPUs.
	ScaleOuts, ScaleIns, Ejections, Preempted int64
	GPUWait                                   hwmodel.Time
	// ReplicasLost counts replicas whose hardware broke (injected faults);
	// each was replaced when the fault was detected.
	ReplicasLost int64
	// MeanReplicas is the time-averaged count of ready replicas.
	MeanReplicas float64
	// Saturation is the time-averaged fraction of ready replicas' slots in
	// use.
	Saturation float64
	// Engine is the iteration-level engines' books, summed over the
	// service's replicas (nil under the token-rate model).
	Engine *EngineBooks
	// Failover is the circuit's books (nil without a failover section);
	// Received counts the requests other services' circuits sent to this
	// one (booked in their classes, served by its replicas).
	Failover *FailoverResult
	Received int64
}

// EngineBooks counts what iteration-level replicas did: engine steps,
// recompute preemptions, and their KV cache's use (KVUtilMean: blocks
// held over capacity, averaged over the time engines were stepping;
// KVUtilPeak: the most held at a step's end, over capacity).
//
// PrefixQueries and PrefixHits are the prompt tokens of the requests the
// engines took for the first time and those of them found in the prefix
// cache (vLLM's prefix_cache_queries and prefix_cache_hits);
// PrefixHitRatio is hits over queries.
type EngineBooks struct {
	Steps, Preemptions     int64
	KVBlocks               int64 // one replica's capacity
	KVUtilMean, KVUtilPeak float64
	blockUS, busyUS        float64
	peak                   int64

	PrefixQueries, PrefixHits int64
	PrefixHitRatio            float64
}

func (b *EngineBooks) add(r *iterReplica) {
	e := r.eng
	b.Steps += e.Steps
	b.Preemptions += e.Preemptions
	b.blockUS += e.BlockUS
	b.busyUS += e.BusyUS
	b.peak = max(b.peak, e.PeakBlocks)
	b.PrefixQueries += e.PrefixQueries
	b.PrefixHits += e.PrefixHits
}

// ClassResult holds one class's (or a service's) request books.
type ClassResult struct {
	Name string
	// Requests arrived; Completed were served; Errors found no healthy
	// replica or hit a failed one (502); Timeouts waited longer than the
	// class's Timeout (504). Unfinished were still queued or in flight at
	// the horizon.
	Requests, Completed, Errors, Timeouts, Unfinished int64
	// TTFT and E2E are latencies from arrival at the gateway, in seconds,
	// over completed requests; QueueWait the time spent at the gateway.
	TTFT, E2E, QueueWait Latency
	// SLOAttained is the fraction of arrived requests (errors and timeouts
	// count as misses; unfinished ones are left out) that completed within
	// both targets.
	SLOAttained float64
	// Throughput is completed requests per second over the horizon;
	// ErrorRate (errors + timeouts) / finished requests.
	Throughput, ErrorRate float64
	// FailedOver (Failover.Mode failover) or Degraded (degrade) counts
	// the requests the service's open circuit sent to its backup; they
	// are among Requests and end, like the others, in Completed, Errors,
	// Timeouts or Unfinished.
	FailedOver, Degraded int64
	// The other golden signals (signals.go; docs/serving.md maps them to
	// vLLM's metrics). ITL is every gap between consecutive output tokens
	// of completed requests (a request of O tokens gives O-1 gaps; the
	// token-rate models spread its decode evenly over them); TPOT is each
	// completed request's decode time over its O-1 tokens after the first.
	ITL, TPOT Latency
	// PromptTokens and GenerationTokens are the completed requests'
	// tokens, and per second over the horizon; RequestRate is arrived
	// requests per second.
	PromptTokens, GenerationTokens                      int64
	PromptTokensPerS, GenerationTokensPerS, RequestRate float64
	// Saturation is the class's requests in flight over the ready
	// replicas' slots, time-averaged (the classes' sum is the service's);
	// KVCacheUsage is the iteration engines' mean KV cache use (service
	// level, in All only; 0 under the token-rate model). Preemptions
	// counts the recompute preemptions its completed requests suffered
	// (iteration-level replicas).
	Saturation, KVCacheUsage float64
	Preemptions              int64
	// PrefixHitRatio is the fraction of the completed requests' prompt
	// tokens their engine found in its prefix cache when it first took
	// them (iteration-level model only; 0 otherwise).
	PrefixHitRatio float64
	// Stages are the class's stages in the order its requests pass them
	// (the service's "all" row: every stage pool some class uses, in the
	// pools' order). TTFT and E2E count from arrival, before the first
	// stage; QueueWait is the gateway's queue alone.
	Stages []StageLatency
}

// Latency summarises a latency distribution in seconds. Mean and Max are
// exact; the percentiles come from a log-bucketed histogram with 1 %
// relative resolution.
type Latency struct {
	Mean, P50, P90, P95, P99, Max float64
}

// ReplicaResult is one replica's life and books.
type ReplicaResult struct {
	ID int
	// Requested, Placed, Ready and Released are the times it was asked
	// for, got its GPUs, finished loading, and gave the GPUs back (-1:
	// never; Released is the horizon for replicas alive at the end).
	Requested, Placed, Ready, Released hwmodel.Time
	Node                               int
	// Completed requests and the requests it failed; BusyIntegral is the
	// time integral of its requests in flight (request-seconds), so
	// BusyIntegral / (Released - Ready) is the mean number in flight and,
	// by Little's law, equals throughput × mean time on the replica.
	Completed, Failed int64
	BusyIntegral      float64
	// SojournSum is the total time its completed requests spent on it
	// (dispatch to last token), in seconds.
	SojournSum float64
	Ejections  int
}

// Bucket is one interval of a service's time series.
type Bucket struct {
	Start hwmodel.Time
	// Arrivals, Completed and Errors (timeouts included) in the bucket.
	Arrivals, Completed, Errors int64
	// Latency percentiles (seconds) of the requests completed in the
	// bucket; 0 when none completed.
	TTFTP99, E2EP50, E2EP99 float64
	// Replicas ready, and all replicas holding GPUs (loading and draining
	// included), at the bucket's end; GPUs held at its end.
	ReplicasReady, ReplicasHeld, GPUs int
	// QueueLen is the gateway queue at the bucket's end.
	QueueLen int
}
