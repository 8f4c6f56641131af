package serving

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
)

// PlanTarget is one requirement on a planned service's results, such as
// "interactive.ttft_p99<=1s": a metric (PlanMetrics), optionally of one
// class, a comparison and a bound (seconds for latencies, a fraction for
// slo, errors, unfinished and saturation, requests per second for
// throughput).
type PlanTarget struct {
	// Class is the request class ("" for the whole service).
	Class  string
	Metric string
	Op     string // <=, >=, < or >
	Value  float64
	// Text is the target as written (spaces removed).
	Text string
}

func (t PlanTarget) String() string { return t.Text }

// Key is the metric with its class, e.g. interactive.ttft_p99.
func (t PlanTarget) Key() string {
	if t.Class == "" {
		return t.Metric
	}
	return t.Class + "." + t.Metric
}

// Holds reports whether v meets the target.
func (t PlanTarget) Holds(v float64) bool {
	switch t.Op {
	case "<=":
		return v <= t.Value
	case ">=":
		return v >= t.Value
	case "<":
		return v < t.Value
	case ">":
		return v > t.Value
	}
	return false
}

func (t PlanTarget) upper() bool { return t.Op == "<=" || t.Op == "<" }

// Improving reports whether more replicas move the target's metric
// towards its bound: a ceiling on a latency, errors, unfinished requests
// or saturation, a floor on slo or throughput. The search finds the
// smallest count meeting these; the others (a saturation floor against
// over-provisioning) are best met by the fewest replicas, so they are
// checked at that count.
func (t PlanTarget) Improving() bool {
	return t.upper() != planMetricHigherIsBetter[t.Metric]
}

// worse returns the worse of a and b for this target.
func (t PlanTarget) worse(a, b float64) float64 {
	if t.upper() {
		return math.Max(a, b)
	}
	return math.Min(a, b)
}

// planLatencyStats are the latency summaries a target may name, as
// METRIC_STAT (ttft_p99, e2e_mean, wait_max).
var planLatencyStats = []string{"mean", "p50", "p95", "p99", "max"}

// planMetricHigherIsBetter marks the non-latency metrics that grow with
// replicas; every other metric falls as replicas are added.
var planMetricHigherIsBetter = map[string]bool{"slo": true, "throughput": true}

// PlanMetrics lists the metrics a planning target may name: latencies in
// seconds from arrival at the gateway over completed requests (ttft_*,
// e2e_*; wait_* is the time queued at the gateway), each as mean, p50,
// p95, p99 or max; slo (fraction of arrivals within both class targets);
// errors (errors and timeouts over finished requests); unfinished
// (fraction of arrivals still queued or in flight at the horizon);
// throughput (completed requests per second); saturation (time-averaged
// fraction of the replicas' slots in use; the whole service only).
func PlanMetrics() []string {
	var out []string
	for _, m := range []string{"ttft", "e2e", "wait"} {
		for _, s := range planLatencyStats {
			out = append(out, m+"_"+s)
		}
	}
	return append(out, "slo", "errors", "unfinished", "throughput", "saturation")
}

func isLatencyMetric(m string) bool {
	return strings.HasPrefix(m, "ttft_") || strings.HasPrefix(m, "e2e_") || strings.HasPrefix(m, "wait_")
}

// ParsePlanTargets reads a comma-separated list of targets such as
// "interactive.ttft_p99<=1s,e2e_p95<=20s,slo>=0.99". A latency's bound is
// a duration (500ms, 1s, 2m) or plain seconds; a fraction's (slo, errors,
// unfinished, saturation) a number in [0, 1] or a percentage (99%). Class
// names are checked against the service by PlanReplicas.
func ParsePlanTargets(s string) ([]PlanTarget, error) {
	const want = "want [CLASS.]METRIC<=VALUE (or >=, <, >), comma-separated, e.g. interactive.ttft_p99<=1s,errors<=0.001"
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no target given: %s", want)
	}
	known := PlanMetrics()
	var out []PlanTarget
	for _, part := range strings.Split(s, ",") {
		part = strings.Join(strings.Fields(part), "")
		if part == "" {
			return nil, fmt.Errorf("target list %q has an empty item: %s", s, want)
		}
		i := strings.IndexAny(part, "<>=!")
		if i < 0 {
			return nil, fmt.Errorf("target %q has no comparison: %s", part, want)
		}
		key, rest := part[:i], part[i:]
		var op string
		for _, o := range []string{"<=", ">=", "<", ">"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("target %q: comparison %q is not one of <=, >=, <, >", part, strings.TrimRight(rest, "0123456789.%smh"))
		}
		if key == "" {
			return nil, fmt.Errorf("target %q has no metric before %s: %s", part, op, want)
		}
		t := PlanTarget{Metric: key, Op: op, Text: part}
		if c, m, ok := strings.Cut(key, "."); ok {
			if c == "" || m == "" || strings.Contains(m, ".") {
				return nil, fmt.Errorf("target %q: metric %q is not CLASS.METRIC or METRIC", part, key)
			}
			t.Class, t.Metric = c, m
		}
		if !slices.Contains(known, t.Metric) {
			return nil, fmt.Errorf("target %q: unknown metric %q (known: %s)", part, t.Metric, strings.Join(known, ", "))
		}
		if t.Metric == "saturation" && t.Class != "" {
			return nil, fmt.Errorf("target %q: saturation is the service's, not a class's: write saturation%s%s", part, op, rest[len(op):])
		}
		num := rest[len(op):]
		var err error
		if t.Value, err = planValue(t.Metric, num); err != nil {
			return nil, fmt.Errorf("target %q: %v", part, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func planValue(metric, s string) (float64, error) {
	switch {
	case s == "":
		return 0, fmt.Errorf("no bound after the comparison")
	case isLatencyMetric(metric):
		d, err := hwmodel.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("bound %q is not a duration >= 0 (e.g. 500ms, 1s, 2m or plain seconds)", s)
		}
		return d.Seconds(), nil
	case metric == "throughput":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("bound %q is not a rate >= 0 in requests per second", s)
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if strings.HasSuffix(s, "%") {
		v /= 100
	}
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("bound %q is not a fraction in [0, 1] (e.g. 0.99 or 99%%)", s)
	}
	return v, nil
}

// PlanConfig is one replica-count plan for one service of a spec.
type PlanConfig struct {
	Spec *Spec
	// Service names the service to plan; "" when the spec has one.
	Service string
	Targets []PlanTarget
	// MaxReplicas bounds the search (default 256).
	MaxReplicas int
	// Seeds: every target must hold on each (default: seed 1).
	Seeds []uint64
	// Rate, when > 0, replaces the service's arrivals (rate schedule or
	// trace) with a constant Poisson rate in requests per second: plan for
	// a sustained peak rather than a schedule.
	Rate float64
	// Workers bounds the runs at once (default GOMAXPROCS); the result
	// does not depend on it.
	Workers int
	// Progress, when set, is called after each replica count is simulated,
	// in the order they are tried.
	Progress func(PlanPoint)
}

// PlanPoint is one replica count tried: each target's metric (the worst
// value across seeds) and whether it held.
type PlanPoint struct {
	Replicas, GPUs int
	Values         []float64
	Pass           []bool
	// GPUHoursPerHour is the service's GPU-hours over the horizon's hours
	// (N × GPUs per replica: the replicas hold their GPUs throughout).
	GPUHoursPerHour float64
	// Requests is the mean number of requests arrived per seed.
	Requests int64
}

// OK reports whether every target held.
func (p PlanPoint) OK() bool { return !slices.Contains(p.Pass, false) }

// PlanResult is a plan: every replica count tried and the answer.
type PlanResult struct {
	Service        string
	GPUModel       string
	GPUsPerReplica int
	Targets        []PlanTarget
	Seeds          []uint64
	MaxReplicas    int
	// Rate is the constant arrival rate planned for (0: the spec's
	// arrivals).
	Rate float64
	// Points are sorted by replica count.
	Points []PlanPoint
	// Best is the index in Points of the answer; -1 when no count in
	// [1, MaxReplicas] meets every target.
	Best int
	// Replicas, GPUs and GPUHoursPerHour are the answer's (0 without one).
	Replicas, GPUs  int
	GPUHoursPerHour float64
	// NeighbourFails is true when the answer is 1 or Replicas-1 was
	// simulated and failed: the answer is the smallest count, not just the
	// smallest the search happened to try.
	NeighbourFails bool
}

// PlanReplicas finds the smallest replica count N in [1, MaxReplicas] at
// which one service meets every target on every seed. Each count is a
// fresh run of the service alone: autoscaling off, Initial = Min = Max =
// N, no load time (the replicas are warm at time 0), no incidents (they
// name replicas by id, and a plan is for the steady state), no batch jobs,
// on a dedicated cluster just big enough: ceil(N / per-node) nodes of
// max(8, GPUsPerReplica) GPUs of the service's model (H100-80GB when it
// accepts any), per-node = floor(node GPUs / GPUsPerReplica) replicas.
//
// The search assumes that the improving targets (Improving: latency,
// error and saturation ceilings, SLO and throughput floors) hold from
// some count on: with more identical replicas behind the same queue
// each request waits no longer, and for an M/M/c queue the wait falls
// strictly with c. It tries 1, 2, 4, 8, ... until a count passes, then
// bisects the last bracket, as package plan does; with the same seed the
// request stream is the same at every N, which keeps the noise between
// neighbouring counts small. The answer's neighbour N-1 is always among
// the counts simulated (bisection ends on a failing count next to a
// passing one) and NeighbourFails records that it failed. The other
// targets (a saturation floor) are best met by the fewest replicas, so
// they are checked at that N: if they fail there, no count meets every
// target.
//
// Up to Workers runs (one count, one seed) go at once: the seeds of a
// count, and the counts the search may need next (the next steps of the
// doubling, the next levels of the bisection), simulated speculatively.
// Points and Progress hold only the counts the sequential search uses,
// so the result is the same whatever Workers.
func PlanReplicas(cfg PlanConfig) (*PlanResult, error) {
	if cfg.Spec == nil {
		return nil, errorf("PlanConfig needs a Spec")
	}
	if len(cfg.Targets) == 0 {
		return nil, errorf("plan: no target given")
	}
	si := -1
	switch {
	case cfg.Service != "":
		for i, s := range cfg.Spec.Services {
			if s.Name == cfg.Service {
				si = i
			}
		}
		if si < 0 {
			return nil, errorf("plan: no service %q (services: %s)", cfg.Service, serviceNames(cfg.Spec))
		}
	case len(cfg.Spec.Services) == 1:
		si = 0
	default:
		return nil, errorf("plan: the spec has %d services (%s): name the one to plan", len(cfg.Spec.Services), serviceNames(cfg.Spec))
	}
	base := cloneSpec(cfg.Spec)
	svc := base.Services[si]
	base.Services = []Service{svc}
	for _, t := range cfg.Targets {
		if t.Class == "" {
			continue
		}
		if !slices.ContainsFunc(svc.Classes, func(c Class) bool { return c.Name == t.Class }) {
			names := make([]string, len(svc.Classes))
			for i, c := range svc.Classes {
				names[i] = c.Name
			}
			return nil, errorf("plan: target %s: service %s has no class %q (classes: %s)", t, svc.Name, t.Class, strings.Join(names, ", "))
		}
	}
	maxN := cfg.MaxReplicas
	if maxN == 0 {
		maxN = 256
	}
	if maxN < 1 {
		return nil, errorf("plan: the largest replica count must be >= 1, got %d", maxN)
	}
	if cfg.Rate < 0 || math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) {
		return nil, errorf("plan: the arrival rate must be a finite number >= 0, got %g", cfg.Rate)
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{1}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	model := svc.GPUModel
	if model == "" {
		model = "H100-80GB"
	}
	m, ok := hwmodel.LookupModel(model)
	if !ok {
		return nil, errorf("plan: service %s: unknown GPU model %q", svc.Name, model)
	}
	g := svc.GPUsPerReplica
	nodeGPUs := max(8, g)
	if g < 1 || nodeGPUs > hwmodel.MaxGPUsPerNode {
		return nil, errorf("plan: service %s: %d GPUs per replica do not fit one node (at most %d GPUs)", svc.Name, g, hwmodel.MaxGPUsPerNode)
	}
	perNode := nodeGPUs / g

	// The service as planned: fixed N, warm, no incidents.
	svc.Autoscale = nil
	svc.Incidents = nil
	svc.Replica.LoadTime = 0
	if cfg.Rate > 0 {
		svc.Arrivals = Arrivals{Rate: cfg.Rate}
	}
	base.Services[0] = svc
	probe := cloneSpec(base)
	probe.Services[0].Replicas = ReplicaBounds{Initial: 1, Min: 1, Max: 1}
	if err := probe.Validate(); err != nil {
		return nil, err
	}

	r := &PlanResult{Service: svc.Name, GPUModel: m.Name, GPUsPerReplica: g, Targets: cfg.Targets, Seeds: seeds,
		MaxReplicas: maxN, Rate: cfg.Rate, Best: -1}
	// Every run (one count, one seed) takes a slot of sem, whichever
	// count it belongs to.
	sem := make(chan struct{}, workers)
	eval := func(n int) (PlanPoint, error) {
		spec := cloneSpec(base)
		spec.Services[0].Replicas = ReplicaBounds{Initial: n, Min: n, Max: n}
		cs := &hwmodel.ClusterSpec{
			Name:       fmt.Sprintf("plan-%s-%d", strings.ToLower(m.Name), n),
			NodeGroups: []hwmodel.NodeGroupSpec{{NamePrefix: "node", Count: (n + perNode - 1) / perNode, GPUModel: m.Name, GPUsPerNode: nodeGPUs}},
		}
		res := make([]*Result, len(seeds))
		errs := make([]error, len(seeds))
		var wg sync.WaitGroup
		for k, seed := range seeds {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				c, err := cs.Build()
				if err != nil {
					errs[k] = err
					return
				}
				// Each run gets its own copy of the spec.
				res[k], errs[k] = Run(Config{Spec: cloneSpec(spec), Cluster: c, Seed: seed})
			}()
		}
		wg.Wait()
		p := PlanPoint{Replicas: n, GPUs: n * g}
		for k, err := range errs {
			if err != nil {
				return p, fmt.Errorf("%d replicas, seed %d: %w", n, seeds[k], err)
			}
		}
		var reqs int64
		for k, rr := range res {
			s := rr.Services[0]
			reqs += s.All.Requests
			if h := rr.Horizon.Seconds() / 3600; h > 0 {
				p.GPUHoursPerHour = math.Max(p.GPUHoursPerHour, s.GPUHours/h)
			}
			for ti, t := range cfg.Targets {
				v := planMetric(s, t)
				if k == 0 {
					p.Values = append(p.Values, v)
				} else {
					p.Values[ti] = t.worse(p.Values[ti], v)
				}
			}
		}
		p.Requests = reqs / int64(len(seeds))
		for ti, t := range cfg.Targets {
			p.Pass = append(p.Pass, t.Holds(p.Values[ti]))
		}
		return p, nil
	}
	// Simulated counts, some only speculatively; points holds those the
	// search used, so that the evidence does not depend on workers.
	type evaluated struct {
		p   PlanPoint
		err error
	}
	var (
		mu    sync.Mutex
		cache = map[int]evaluated{}
	)
	points := map[int]PlanPoint{}
	prefetch := func(ns []int) {
		var wg sync.WaitGroup
		for _, n := range ns {
			mu.Lock()
			_, done := cache[n]
			mu.Unlock()
			if done {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := eval(n)
				mu.Lock()
				cache[n] = evaluated{p, err}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	best, found, err := speculativeSearch(1, maxN, workers, prefetch, func(n int) (bool, error) {
		prefetch([]int{n})
		mu.Lock()
		e := cache[n]
		mu.Unlock()
		if e.err != nil {
			return false, e.err
		}
		p := e.p
		if _, seen := points[n]; !seen {
			points[n] = p
			if cfg.Progress != nil {
				cfg.Progress(p)
			}
		}
		for ti, t := range cfg.Targets {
			if t.Improving() && !p.Pass[ti] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	ns := make([]int, 0, len(points))
	for n := range points {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		r.Points = append(r.Points, points[n])
	}
	if found && points[best].OK() {
		r.Best = slices.Index(ns, best)
		r.Replicas, r.GPUs, r.GPUHoursPerHour = best, best*g, points[best].GPUHoursPerHour
		nb, ok := points[best-1]
		r.NeighbourFails = best == 1 || (ok && !nb.OK())
	}
	return r, nil
}

// speculativeSearch is plan.Search (the same sizes passed to pass, in the
// same order, and the same answer) that lets several sizes be simulated at
// once: before each size it needs, it hands prefetch that size and the
// ones the search may need next, up to width in all (the next sizes of
// the exponential phase; the next levels of the bisection). prefetch
// skips sizes already simulated; results the search never uses are
// dropped by the caller.
func speculativeSearch(lo, hi, width int, prefetch func([]int), pass func(int) (bool, error)) (int, bool, error) {
	if lo < 1 || hi < lo {
		return 0, false, fmt.Errorf("empty size range [%d, %d]", lo, hi)
	}
	width = max(1, width)
	seq := []int{lo}
	for n, step := lo, 1; n < hi; step *= 2 {
		n = min(hi, n+step)
		seq = append(seq, n)
	}
	lastFail, n, found := lo-1, 0, false
	for i, size := range seq {
		prefetch(seq[i:min(len(seq), i+width)])
		ok, err := pass(size)
		if err != nil {
			return 0, false, err
		}
		if ok {
			n, found = size, true
			break
		}
		lastFail = size
	}
	if !found {
		return 0, false, nil
	}
	for n-lastFail > 1 {
		prefetch(bisections(lastFail, n, width))
		mid := lastFail + (n-lastFail)/2
		ok, err := pass(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			n = mid
		} else {
			lastFail = mid
		}
	}
	return n, true, nil
}

// bisections lists the midpoints a bisection of (fail, pass) may try
// next, level by level, at most width of them.
func bisections(fail, pass, width int) []int {
	var out []int
	queue := [][2]int{{fail, pass}}
	for len(queue) > 0 && len(out) < width {
		iv := queue[0]
		queue = queue[1:]
		if iv[1]-iv[0] <= 1 {
			continue
		}
		mid := iv[0] + (iv[1]-iv[0])/2
		out = append(out, mid)
		queue = append(queue, [2]int{iv[0], mid}, [2]int{mid, iv[1]})
	}
	return out
}

func serviceNames(s *Spec) string {
	names := make([]string, len(s.Services))
	for i, v := range s.Services {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// planMetric reads a target's metric from a service's results.
func planMetric(s ServiceResult, t PlanTarget) float64 {
	c := s.All
	if t.Class != "" {
		for _, x := range s.Classes {
			if x.Name == t.Class {
				c = x
			}
		}
	}
	if name, stat, ok := strings.Cut(t.Metric, "_"); ok && isLatencyMetric(t.Metric) {
		l := map[string]Latency{"ttft": c.TTFT, "e2e": c.E2E, "wait": c.QueueWait}[name]
		return map[string]float64{"mean": l.Mean, "p50": l.P50, "p95": l.P95, "p99": l.P99, "max": l.Max}[stat]
	}
	switch t.Metric {
	case "slo":
		return c.SLOAttained
	case "errors":
		return c.ErrorRate
	case "unfinished":
		if c.Requests == 0 {
			return 0
		}
		return float64(c.Unfinished) / float64(c.Requests)
	case "throughput":
		return c.Throughput
	case "saturation":
		return s.Saturation
	}
	return math.NaN()
}

// Answer is one line saying what was found.
func (r *PlanResult) Answer() string {
	if r.Best < 0 {
		return r.unreachable()
	}
	s := fmt.Sprintf("smallest replica count meeting every target: %d replicas of %s = %d GPUs of %s (%g GPU-hours per hour)",
		r.Replicas, r.Service, r.GPUs, r.GPUModel, r.GPUHoursPerHour)
	if r.Replicas > 1 && r.NeighbourFails {
		s += fmt.Sprintf("; %d replicas fail", r.Replicas-1)
	}
	return s
}

func (r *PlanResult) unreachable() string {
	s := fmt.Sprintf("no replica count in 1..%d meets every target", r.MaxReplicas)
	if len(r.Points) == 0 {
		return s
	}
	// The largest count tried, and the smallest passing the improving
	// targets when a non-improving one failed there.
	last := r.Points[len(r.Points)-1]
	s += fmt.Sprintf("; at %d replicas (%d GPUs):", last.Replicas, last.GPUs)
	for k, t := range r.Targets {
		if !last.Pass[k] {
			s += fmt.Sprintf(" %s fails with %s = %s;", t, t.Key(), t.format(last.Values[k]))
		}
	}
	for _, p := range r.Points {
		improving := true
		for k, t := range r.Targets {
			if t.Improving() && !p.Pass[k] {
				improving = false
			}
		}
		if improving && !p.OK() && p.Replicas != last.Replicas {
			s += fmt.Sprintf(" at %d replicas, the fewest meeting the targets that more replicas help, ", p.Replicas)
			for k, t := range r.Targets {
				if !p.Pass[k] {
					s += fmt.Sprintf("%s fails with %s = %s (more replicas only move it further); ", t, t.Key(), t.format(p.Values[k]))
				}
			}
			break
		}
	}
	return strings.TrimRight(s, "; ")
}

// format prints a value of the target's metric with its unit.
func (t PlanTarget) format(v float64) string {
	if isLatencyMetric(t.Metric) {
		return fmtPlanNum(v) + " s"
	}
	return fmtPlanNum(v)
}

func fmtPlanNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
