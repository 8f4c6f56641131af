package serving

import (
	"math"
	"slices"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// AlertRule is a Prometheus-style alerting rule on one service's golden
// signals, evaluated every Spec.EvaluationInterval during the run over the
// trailing Window: when the value is beyond the threshold the alert is
// pending, and firing once it has stayed so for For; it is resolved at the
// first evaluation where the condition no longer holds (a pending alert
// that clears goes back to inactive). Prometheus gives no value to a
// quantile of an empty window, and neither does Brigade: an evaluation
// with no data holds no condition.
type AlertRule struct {
	Name    string
	Service string
	// Class restricts a per-request metric to one class ("": every class).
	Class  string
	Metric AlertMetric
	// Quantile is the latency metrics' quantile, in (0, 1).
	Quantile float64
	// Above or Below is the threshold; exactly one is set.
	Above, Below *float64
	// Window is the trailing range the value is taken over (0: 1 min, or
	// the evaluation interval if longer),
	// rounded up to whole evaluation intervals; For is how long the
	// condition must hold before the alert fires (0: at once).
	Window, For hwmodel.Time
}

// AlertMetric is what an alert rule watches.
type AlertMetric string

// The alert metrics. The latency ones are a quantile of the requests
// completed in the window (seconds); ErrorRate is (errors + timeouts) over
// the requests that ended in it; the others are time averages over the
// window of a service-level gauge.
const (
	AlertTTFT      AlertMetric = "ttft"
	AlertITL       AlertMetric = "itl"
	AlertE2E       AlertMetric = "e2e"
	AlertQueueTime AlertMetric = "queue_time"
	AlertErrorRate AlertMetric = "error_rate"
	// AlertQueueLength: requests waiting at the gateway.
	AlertQueueLength AlertMetric = "queue_length"
	// AlertSaturation: requests in flight over the ready replicas' slots.
	AlertSaturation AlertMetric = "saturation"
	// AlertKVCache: the iteration engines' KV blocks held over capacity
	// while stepping (replica.iteration only).
	AlertKVCache AlertMetric = "kv_cache_usage"
)

var (
	alertMetrics   = []AlertMetric{AlertTTFT, AlertITL, AlertE2E, AlertQueueTime, AlertErrorRate, AlertQueueLength, AlertSaturation, AlertKVCache}
	latencyMetrics = []AlertMetric{AlertTTFT, AlertITL, AlertE2E, AlertQueueTime}
	serviceMetrics = []AlertMetric{AlertQueueLength, AlertSaturation, AlertKVCache}
)

// Alert defaults and limits.
const (
	DefaultEvaluationInterval = 15 * hwmodel.Second
	DefaultAlertWindow        = hwmodel.Minute
	maxAlertSlots             = 1000 // window over evaluation interval
	maxAlerts                 = 256
)

// The states an AlertEvent reports.
const (
	AlertPending  = "pending"
	AlertFiring   = "firing"
	AlertResolved = "resolved"
	// AlertInactive: a pending alert whose condition cleared before For.
	AlertInactive = "inactive"
)

// AlertEvent is one change of an alert's state, at an evaluation.
type AlertEvent struct {
	Alert, Service, Class string // Class "all" for a rule on every class
	State                 string
	At                    hwmodel.Time
	// Value is the metric's value at that evaluation (NaN: no data).
	Value float64
}

// AlertStat is what an alert did over a run: the times it fired and the
// time it spent firing (to the horizon for one still firing then).
type AlertStat struct {
	Alert  string
	Fired  int
	Firing hwmodel.Time
}

func (s *Spec) evaluationInterval() hwmodel.Time {
	if s.EvaluationInterval > 0 {
		return s.EvaluationInterval
	}
	return DefaultEvaluationInterval
}

// window is the rule's window; iv the evaluation interval, the default
// when it is longer than a minute.
func (a *AlertRule) window(iv hwmodel.Time) hwmodel.Time {
	if a.Window > 0 {
		return a.Window
	}
	return max(DefaultAlertWindow, iv)
}

// checkAlerts reports the alert rules' problems, and autoscalers' on_alert
// naming no rule.
func (s *Spec) checkAlerts(e *config.Errors) {
	iv := s.evaluationInterval()
	if s.EvaluationInterval < 0 {
		e.Add("evaluation_interval", "want a duration > 0, got %s", fmtDur(s.EvaluationInterval))
	}
	if len(s.Alerts) > maxAlerts {
		e.Add("alerts", "want at most %d alerts, got %d", maxAlerts, len(s.Alerts))
	}
	var svcNames []string
	for _, v := range s.Services {
		svcNames = append(svcNames, v.Name)
	}
	names := map[string]int{}
	for i := range s.Alerts {
		a := &s.Alerts[i]
		ae := e.Index("alerts", i)
		if a.Name == "" {
			ae.Add("name", "want a name")
		} else if k, dup := names[a.Name]; dup {
			ae.Add("name", "%q is already the name of alerts[%d]", a.Name, k)
		} else {
			names[a.Name] = i
		}
		k := slices.IndexFunc(s.Services, func(v Service) bool { return v.Name == a.Service })
		if k < 0 {
			ae.Add("service", "unknown service %q (services: %s)", a.Service, joinNames(svcNames))
		}
		metricOK := slices.Contains(alertMetrics, a.Metric)
		if !metricOK {
			ae.Add("metric", "unknown metric %q (known: %s)", a.Metric, joinNames(alertMetrics))
		}
		if a.Class != "" && k >= 0 {
			var classes []string
			for _, c := range s.Services[k].Classes {
				classes = append(classes, c.Name)
			}
			if !slices.Contains(classes, a.Class) {
				ae.Add("class", "service %s has no class %q (classes: %s)", a.Service, a.Class, joinNames(classes))
			}
		}
		if a.Class != "" && slices.Contains(serviceMetrics, a.Metric) {
			ae.Add("class", "metric %s is the service's; leave class out (per-class metrics: %s)", a.Metric,
				joinNames([]AlertMetric{AlertTTFT, AlertITL, AlertE2E, AlertQueueTime, AlertErrorRate}))
		}
		if a.Metric == AlertKVCache && k >= 0 && s.Services[k].Replica.Iteration == nil {
			ae.Add("metric", "kv_cache_usage needs iteration-level replicas (replica.iteration); service %s has none", a.Service)
		}
		switch {
		case slices.Contains(latencyMetrics, a.Metric):
			if !(a.Quantile > 0 && a.Quantile < 1) {
				ae.Add("quantile", "want a quantile in (0, 1) for metric %s, such as 0.99, got %g", a.Metric, a.Quantile)
			}
		case metricOK && a.Quantile != 0:
			ae.Add("quantile", "metric %s takes no quantile (latency metrics do: %s)", a.Metric, joinNames(latencyMetrics))
		}
		switch {
		case (a.Above == nil) == (a.Below == nil):
			ae.Add("above", "want exactly one of above or below (the threshold)")
		case a.Above != nil && (math.IsNaN(*a.Above) || math.IsInf(*a.Above, 0)):
			ae.Add("above", "want a finite threshold, got %g", *a.Above)
		case a.Below != nil && (math.IsNaN(*a.Below) || math.IsInf(*a.Below, 0)):
			ae.Add("below", "want a finite threshold, got %g", *a.Below)
		}
		if w := a.window(iv); w < iv || w > maxAlertSlots*iv {
			ae.Add("window", "want a window of 1 to %d evaluation intervals (%s), got %s", maxAlertSlots, fmtDur(iv), fmtDur(w))
		}
		if a.For < 0 {
			ae.Add("for", "want a duration >= 0, got %s", fmtDur(a.For))
		}
	}
	var alertNames []string
	for _, a := range s.Alerts {
		alertNames = append(alertNames, a.Name)
	}
	for i, v := range s.Services {
		if as := v.Autoscale; as != nil && as.OnAlert != "" && !slices.Contains(alertNames, as.OnAlert) {
			e.Index("services", i).Add("autoscale.on_alert", "no alert named %q (alerts: %s)", as.OnAlert, joinNames(alertNames))
		}
	}
}

// alertState is one rule's evaluation state. Per-request metrics keep a
// ring of one histogram (or counter) per evaluation interval and their
// sum over the window, so an observation costs O(1) and an evaluation
// O(buckets); gauges keep the integrals' snapshots at past evaluations.
type alertState struct {
	rule  *AlertRule
	svc   *service
	class int // -1: every class
	slots int
	head  int
	ring  []hist
	win   hist
	errs  []int64 // error_rate: per slot, errors and ended requests
	ended []int64
	errW  int64
	endW  int64
	snaps []alertSnap

	state            uint8 // 0 inactive, 1 pending, 2 firing
	activeAt, fireAt hwmodel.Time
	fired            int
	firing           hwmodel.Time
}

type alertSnap struct {
	at         hwmodel.Time
	a, b, c, d float64
}

// newAlerts builds the rules' states (after the services).
func (m *model) newAlerts() {
	iv := m.spec.evaluationInterval()
	for i := range m.spec.Alerts {
		r := &m.spec.Alerts[i]
		k := slices.IndexFunc(m.svcs, func(s *service) bool { return s.spec.Name == r.Service })
		s := m.svcs[k] // Validate checked it
		st := &alertState{rule: r, svc: s, class: -1, slots: int((r.window(iv) + iv - 1) / iv)}
		if r.Class != "" {
			st.class = slices.IndexFunc(s.spec.Classes, func(c Class) bool { return c.Name == r.Class })
		}
		switch {
		case slices.Contains(latencyMetrics, r.Metric):
			st.ring = make([]hist, st.slots)
			for j := range st.ring {
				st.ring[j] = newHist(5)
			}
			st.win = newHist(5)
		case r.Metric == AlertErrorRate:
			st.errs, st.ended = make([]int64, st.slots), make([]int64, st.slots)
		default:
			st.snaps = make([]alertSnap, st.slots)
		}
		m.alerts = append(m.alerts, st)
		s.alerts = append(s.alerts, st)
	}
}

// startAlerts sets the first evaluation (never, without alerts).
func (m *model) startAlerts() {
	m.nextEval = math.MaxInt64
	if len(m.alerts) > 0 {
		m.nextEval = m.spec.evaluationInterval()
	}
}

func (a *alertState) matches(q *request) bool { return a.class < 0 || a.class == int(q.class) }

// alertComplete feeds completed request q to s's alerts.
func (m *model) alertComplete(s *service, q *request, now hwmodel.Time) {
	for _, a := range s.alerts {
		if !a.matches(q) {
			continue
		}
		var v, n int64 = 0, 1
		switch a.rule.Metric {
		case AlertTTFT:
			v = int64(q.ttft - q.arrive)
		case AlertE2E:
			v = int64(now - q.arrive)
		case AlertQueueTime:
			v = int64(q.dispatch - q.arrive)
		case AlertITL:
			sum, k := decodeGaps(s, q, now)
			if k == 0 {
				continue
			}
			v, n = int64(math.Round(sum/float64(k))), k
		case AlertErrorRate:
			a.ended[a.head]++
			a.endW++
			continue
		default:
			continue
		}
		a.ring[a.head].addN(v, n)
		a.win.addN(v, n)
	}
}

// alertFail feeds request q, ended as an error or timeout, to s's alerts.
func (m *model) alertFail(s *service, q *request) {
	for _, a := range s.alerts {
		if a.rule.Metric == AlertErrorRate && a.matches(q) {
			a.errs[a.head]++
			a.ended[a.head]++
			a.errW++
			a.endW++
		}
	}
}

// evaluateAlerts runs the evaluations due up to t, before the events at
// t: like the time series' buckets, an evaluation at T covers what
// happened in [T - window, T), so its result never depends on the order
// of events at T.
func (m *model) evaluateAlerts(t hwmodel.Time) {
	iv := m.spec.evaluationInterval()
	for ; m.nextEval <= t && m.nextEval <= m.horizon; m.nextEval += iv {
		m.evaluate(m.nextEval)
	}
}

// evaluate evaluates every rule at now.
func (m *model) evaluate(now hwmodel.Time) {
	for _, a := range m.alerts {
		v := m.alertValue(a, now)
		r := a.rule
		cond := !math.IsNaN(v) && ((r.Above != nil && v > *r.Above) || (r.Below != nil && v < *r.Below))
		switch {
		case cond && a.state == 0 && r.For > 0:
			a.state, a.activeAt = 1, now
			m.alertEvent(a, AlertPending, now, v)
		case cond && a.state == 0, cond && a.state == 1 && now-a.activeAt >= r.For:
			a.state, a.fireAt = 2, now
			a.fired++
			m.alertEvent(a, AlertFiring, now, v)
		case !cond && a.state == 1:
			a.state = 0
			m.alertEvent(a, AlertInactive, now, v)
		case !cond && a.state == 2:
			a.state = 0
			a.firing += now - a.fireAt
			m.alertEvent(a, AlertResolved, now, v)
		}
		a.rotate()
	}
}

// rotate starts the next interval's slot, dropping the oldest from the
// window.
func (a *alertState) rotate() {
	a.head = (a.head + 1) % a.slots
	switch {
	case a.ring != nil:
		old := &a.ring[a.head]
		if old.n > 0 {
			for i, k := range old.counts {
				a.win.counts[i] -= k
			}
			a.win.n -= old.n
			old.reset()
		}
	case a.errs != nil:
		a.errW -= a.errs[a.head]
		a.endW -= a.ended[a.head]
		a.errs[a.head], a.ended[a.head] = 0, 0
	}
}

// alertValue is a's metric over the window ending now (NaN: no data).
func (m *model) alertValue(a *alertState, now hwmodel.Time) float64 {
	switch {
	case a.ring != nil:
		if a.win.n == 0 {
			return math.NaN()
		}
		return a.win.quantile(a.rule.Quantile) / 1e6
	case a.errs != nil:
		if a.endW == 0 {
			return math.NaN()
		}
		return float64(a.errW) / float64(a.endW)
	}
	s := a.svc
	s.integrate(now)
	cur := alertSnap{at: now, a: s.intSys - s.intInflight, b: s.intInflight, c: s.intReady}
	if a.rule.Metric == AlertKVCache {
		cur.c, cur.d = s.engine.blockUS, s.engine.busyUS
		for _, r := range s.replicas {
			if r.it != nil {
				cur.c += r.it.eng.BlockUS
				cur.d += r.it.eng.BusyUS
			}
		}
	}
	old := a.snaps[a.head] // taken a window ago (zero at the start)
	a.snaps[a.head] = cur
	switch a.rule.Metric {
	case AlertQueueLength:
		if now > old.at {
			return (cur.a - old.a) / float64(now-old.at)
		}
	case AlertSaturation:
		if ready := cur.c - old.c; ready > 0 {
			return (cur.b - old.b) / (ready * float64(s.spec.Replica.MaxConcurrent))
		}
	case AlertKVCache:
		if busy := cur.d - old.d; busy > 0 {
			return (cur.c - old.c) / busy / float64(s.spec.Replica.Iteration.params.KVBlocks)
		}
	}
	return math.NaN()
}

func (m *model) alertEvent(a *alertState, state string, at hwmodel.Time, v float64) {
	class := a.rule.Class
	if class == "" {
		class = "all"
	}
	m.alertLog = append(m.alertLog, AlertEvent{Alert: a.rule.Name, Service: a.rule.Service, Class: class, State: state, At: at, Value: v})
}

// alertFiring reports whether the named alert fired at its latest
// evaluation and has not resolved since.
func (m *model) alertFiring(name string) bool {
	for _, a := range m.alerts {
		if a.rule.Name == name {
			return a.state == 2
		}
	}
	return false
}

// alertStats is what each rule did, in the rules' order.
func (m *model) alertStats() []AlertStat {
	var out []AlertStat
	for _, a := range m.alerts {
		st := AlertStat{Alert: a.rule.Name, Fired: a.fired, Firing: a.firing}
		if a.state == 2 {
			st.Firing += m.horizon - a.fireAt
		}
		out = append(out, st)
	}
	return out
}
