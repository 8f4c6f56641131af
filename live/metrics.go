package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// GPUSample is one GPU's utilisation and memory as read at scrape time.
type GPUSample struct {
	Index int
	UUID  string
	Model string
	// Utilisation is the fraction of the last sample period in which a
	// kernel ran (0..1), or negative when the GPU does not report it (a GPU
	// in MIG mode); then no utilisation series is exported for it.
	Utilisation      float64
	MemoryUsedBytes  uint64
	MemoryTotalBytes uint64
}

// GPUSampler reads every GPU's utilisation and memory. It is called from
// the HTTP handler's goroutine at each scrape, so it must be safe for
// concurrent use. The NVML one (OpenLocalSampler) makes read-only calls
// only.
type GPUSampler interface {
	Sample() ([]GPUSample, error)
}

// FakeSampler returns fixed samples (tests, demos).
type FakeSampler []GPUSample

// Sample implements GPUSampler.
func (f FakeSampler) Sample() ([]GPUSample, error) { return f, nil }

// Metrics is live mode's Prometheus instrumentation: a private registry
// (not the global default) holding the brigade_live_* metrics. The driver
// updates it at its transitions (submission, start, end, retry) through
// goroutine-safe Prometheus objects; the HTTP handler only gathers. A nil
// *Metrics is valid and records nothing.
type Metrics struct {
	reg *prometheus.Registry

	queued, running  prometheus.Gauge
	gpusUp, gpusDown prometheus.Gauge
	completed        *prometheus.CounterVec
	started, failed  *prometheus.CounterVec
	wait, jct        *prometheus.HistogramVec
}

// NewMetrics builds the registry. sampler may be nil: then no per-GPU
// series are exported (brigade live --gpus-fake does this).
func NewMetrics(sampler GPUSampler) *Metrics {
	buckets := prometheus.ExponentialBuckets(1, 2, 20) // 1 s .. 524,288 s (6 days)
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brigade_live_queue_length",
			Help: "Jobs queued (waiting for a first start or a retry)."}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brigade_live_running_jobs",
			Help: "Jobs running (launched or re-adopted, not yet ended)."}),
		gpusUp: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brigade_live_gpus_up",
			Help: "GPUs the driver schedules on."}),
		gpusDown: prometheus.NewGauge(prometheus.GaugeOpts{Name: "brigade_live_gpus_down",
			Help: "GPUs taken out of scheduling (unhealthy)."}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brigade_live_jobs_completed_total",
			Help: "Jobs that reached a final state since this process started, by result (succeeded, failed)."},
			[]string{"tenant", "result"}),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brigade_live_attempts_started_total",
			Help: "Attempts started (processes about to be launched), retries included."}, []string{"tenant"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "brigade_live_attempts_failed_total",
			Help: "Attempts that ended in failure (non-zero exit, launch error, or lost in a restart), retried or not."},
			[]string{"tenant"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brigade_live_wait_seconds",
			Help: "Seconds from a job's submission to its first start.", Buckets: buckets}, []string{"tenant"}),
		jct: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "brigade_live_jct_seconds",
			Help: "Job completion time: seconds from submission to the final end, succeeded or failed.", Buckets: buckets},
			[]string{"tenant"}),
	}
	m.reg.MustRegister(m.queued, m.running, m.gpusUp, m.gpusDown, m.completed, m.started, m.failed, m.wait, m.jct)
	if sampler != nil {
		m.reg.MustRegister(newGPUCollector(sampler))
	}
	return m
}

// Registry is the private registry (for tests and for embedding).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SetGPUs sets the GPUs up and down gauges.
func (m *Metrics) SetGPUs(up, down int) {
	if m == nil {
		return
	}
	m.gpusUp.Set(float64(up))
	m.gpusDown.Set(float64(down))
}

func tenantLabel(r *Record) string {
	if r.Spec.Tenant == "" {
		return "default"
	}
	return r.Spec.Tenant
}

func seconds(us int64) float64 { return float64(us) / 1e6 }

// recovered counts a record read back from the state file at Open: its
// state enters the gauges; it adds nothing to the counters, which start
// from zero in each process.
func (m *Metrics) recovered(r *Record) {
	if m == nil {
		return
	}
	switch r.State {
	case Queued:
		m.queued.Inc()
	case Running:
		m.running.Inc()
	}
}

// moved records one transition of r, which has just left state from
// ("" for a new submission) for r.State.
func (m *Metrics) moved(r *Record, from State) {
	if m == nil {
		return
	}
	switch from {
	case Queued:
		m.queued.Dec()
	case Running:
		m.running.Dec()
	}
	t := tenantLabel(r)
	switch r.State {
	case Queued:
		m.queued.Inc()
		if from == Running {
			m.failed.WithLabelValues(t).Inc()
		}
	case Running:
		m.running.Inc()
		m.started.WithLabelValues(t).Inc()
		if r.Attempt == 1 {
			m.wait.WithLabelValues(t).Observe(seconds(r.Start - r.Submit))
		}
	case Succeeded:
		m.completed.WithLabelValues(t, "succeeded").Inc()
		m.jct.WithLabelValues(t).Observe(seconds(r.End - r.Submit))
	case Failed:
		if from == Running {
			m.failed.WithLabelValues(t).Inc()
		}
		m.completed.WithLabelValues(t, "failed").Inc()
		m.jct.WithLabelValues(t).Observe(seconds(r.End - r.Submit))
	}
}

// unstarted records a start taken back (Driver.unstart): the job is
// queued again and no attempt ended.
func (m *Metrics) unstarted(r *Record) {
	if m == nil {
		return
	}
	m.running.Dec()
	m.queued.Inc()
}

// gpuCollector reads the sampler at each scrape.
type gpuCollector struct {
	s                      GPUSampler
	errs                   atomic.Uint64
	util, used, total, err *prometheus.Desc
}

func newGPUCollector(s GPUSampler) *gpuCollector {
	l := []string{"gpu", "uuid", "model"}
	return &gpuCollector{s: s,
		util: prometheus.NewDesc("brigade_live_gpu_utilisation_ratio",
			"Fraction of the last sample period in which the GPU ran a kernel (NVML utilization.gpu / 100).", l, nil),
		used:  prometheus.NewDesc("brigade_live_gpu_memory_used_bytes", "GPU memory in use (NVML).", l, nil),
		total: prometheus.NewDesc("brigade_live_gpu_memory_total_bytes", "GPU memory in total (NVML).", l, nil),
		err: prometheus.NewDesc("brigade_live_gpu_sample_errors_total",
			"Scrapes at which reading the GPUs failed (their series are then absent).", nil, nil),
	}
}

func (c *gpuCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.util
	ch <- c.used
	ch <- c.total
	ch <- c.err
}

func (c *gpuCollector) Collect(ch chan<- prometheus.Metric) {
	samples, err := c.s.Sample()
	if err != nil {
		c.errs.Add(1)
		samples = nil
	}
	ch <- prometheus.MustNewConstMetric(c.err, prometheus.CounterValue, float64(c.errs.Load()))
	for _, g := range samples {
		l := []string{strconv.Itoa(g.Index), g.UUID, g.Model}
		if g.Utilisation >= 0 {
			ch <- prometheus.MustNewConstMetric(c.util, prometheus.GaugeValue, g.Utilisation, l...)
		}
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(g.MemoryUsedBytes), l...)
		ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(g.MemoryTotalBytes), l...)
	}
}

// MetricsServer serves /metrics on one bound address.
type MetricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr for the metrics endpoint. Unless public is true, addr
// must name a loopback address (127.0.0.1:9400, [::1]:9400, or a name such
// as localhost that resolves only to loopback addresses); an empty host
// (":9400") or an unspecified one (0.0.0.0, ::) means every interface and is
// refused like any other non-loopback address. Binding here, before the
// driver starts, makes a busy port an error at start-up.
func (m *Metrics) Listen(addr string, public bool) (*MetricsServer, error) {
	return ListenRegistry(m.reg, addr, public)
}

// ListenRegistry is Listen for any registry: the Kubernetes scheduler
// (module kube) serves its own metrics behind the same guards.
func ListenRegistry(reg *prometheus.Registry, addr string, public bool) (*MetricsServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %q: %w", addr, err)
	}
	if !public {
		if err := checkLoopback(host); err != nil {
			return nil, fmt.Errorf("metrics address %q: %w; pass --metrics-public to serve metrics beyond this machine", addr, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 5 * time.Second, MaxHeaderBytes: 8 << 10}
	// One connection per scrape: an idle keep-alive connection would be a
	// file descriptor any local user can hold for as long as they like.
	srv.SetKeepAlivesEnabled(false)
	return &MetricsServer{ln: newLimitListener(ln, MaxMetricsConns), srv: srv}, nil
}

// MaxMetricsConns bounds the connections the metrics endpoint holds at
// once. Others wait in the kernel's accept queue, which costs the driver
// no file descriptor; with the timeouts of Listen (5 s for the request's
// headers, 10 s to read it, 30 s to answer), a client cannot hold one
// for long, and the driver's descriptors stay for its jobs.
const MaxMetricsConns = 16

// limitListener accepts at most n connections at a time (as
// golang.org/x/net/netutil.LimitListener, without the dependency).
type limitListener struct {
	net.Listener
	sem  chan struct{}
	done chan struct{}
	once sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func checkLoopback(host string) error {
	if host == "" {
		return errors.New("no host means every interface, not only loopback")
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s is not a loopback address", host)
		}
		return nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s resolves to %s, not a loopback address", host, ip)
		}
	}
	if len(ips) == 0 {
		return fmt.Errorf("%s resolves to no address", host)
	}
	return nil
}

// Addr is the bound address (useful after Listen on port 0).
func (s *MetricsServer) Addr() net.Addr { return s.ln.Addr() }

// Serve answers /metrics (everything else is 404) until ctx ends, then
// shuts the server down, letting scrapes in flight finish (up to 5 s).
func (s *MetricsServer) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// Close closes the listener without serving (when the driver fails to
// open after Listen).
func (s *MetricsServer) Close() error { return s.ln.Close() }
