package scheduler

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is the scheduler's /metrics: a private registry of
// brigade_kube_* series, served by live's guarded server
// (live.ListenRegistry). A nil *Metrics records nothing.
type Metrics struct {
	reg       *prometheus.Registry
	pending   prometheus.Gauge
	bound     prometheus.Counter
	bindFails prometheus.Counter
	evictions prometheus.Counter
	schedule  prometheus.Histogram
	bind      prometheus.Histogram

	// keep, set by KeepSamples, holds every observation for exact
	// percentiles (a histogram's buckets only bound them); a running
	// scheduler keeps none, so its memory stays flat.
	mu            sync.Mutex
	keep          bool
	scheduleTimes []time.Duration
	bindTimes     []time.Duration
}

// NewMetrics makes the scheduler's metrics.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brigade_kube_pending_jobs",
			Help: "Pods and gangs waiting to be placed (queued, unschedulable, or a gang still missing members)."}),
		bound:     prometheus.NewCounter(prometheus.CounterOpts{Name: "brigade_kube_bound_total", Help: "Pods bound to a node."}),
		bindFails: prometheus.NewCounter(prometheus.CounterOpts{Name: "brigade_kube_bind_failures_total", Help: "Bindings the API server refused."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "brigade_kube_evictions_total", Help: "Pods evicted for a policy's preemption."}),
		schedule: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "brigade_kube_schedule_seconds",
			Help:    "One scheduling call: the policy's Schedule and the decisions applied to the books, without API round trips.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10)}),
		bind: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "brigade_kube_bind_seconds",
			Help: "One Binding's round trip to the API server.", Buckets: prometheus.ExponentialBuckets(1e-4, 4, 10)}),
	}
	m.reg.MustRegister(m.pending, m.bound, m.bindFails, m.evictions, m.schedule, m.bind)
	return m
}

// Registry is the registry the metrics live in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// KeepSamples makes m keep every scheduling call's and Binding's
// latency from now on, for Samples (Bench uses it).
func (m *Metrics) KeepSamples() {
	m.mu.Lock()
	m.keep = true
	m.mu.Unlock()
}

// Samples returns copies of the latencies kept since KeepSamples: each
// scheduling call that returned decisions (Schedule and apply, no API
// call), and each Binding's round trip.
func (m *Metrics) Samples() (schedule, bind []time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.scheduleTimes), slices.Clone(m.bindTimes)
}

func (m *Metrics) setPending(n int) {
	if m != nil {
		m.pending.Set(float64(n))
	}
}

func (m *Metrics) scheduled(d time.Duration) {
	if m != nil {
		m.schedule.Observe(d.Seconds())
		m.mu.Lock()
		if m.keep {
			m.scheduleTimes = append(m.scheduleTimes, d)
		}
		m.mu.Unlock()
	}
}

func (m *Metrics) bindDone(d time.Duration, ok bool) {
	if m == nil {
		return
	}
	m.bind.Observe(d.Seconds())
	m.mu.Lock()
	if m.keep {
		m.bindTimes = append(m.bindTimes, d)
	}
	m.mu.Unlock()
	if ok {
		m.bound.Inc()
	} else {
		m.bindFails.Inc()
	}
}

func (m *Metrics) evicted() {
	if m != nil {
		m.evictions.Inc()
	}
}
