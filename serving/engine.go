package serving

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
)

// Request states.
const (
	reqFree uint8 = iota
	reqQueued
	reqRunning
	reqStage // in a stage pool, queued or served (pipeline.go)
)

type request struct {
	arrive, ttft, dispatch, done hwmodel.Time
	// gate is when it reached the gateway queue (arrive without stages);
	// stageIn when it entered its current stage's queue.
	gate, stageIn hwmodel.Time
	// work is the drawn service time (µs) in ServiceTime mode.
	work       hwmodel.Time
	in, out    int32
	replica    int32
	eng        int32 // its index in the replica's iteration engine
	gen        uint32
	svc        int32 // the service whose gateway holds it
	class      int16 // its class there
	hclass     int16 // the class and service it arrived in, whose books it ends in
	home       int32
	state      uint8
	stage      uint8   // its position in its class's stage list
	expectedUS float64 // time on a healthy replica, for the latency ratio
	// group is its prefix group (-1: none), prefix the prompt tokens it
	// shares with the group, hit those its engine found cached (prefix.go).
	group, prefix, hit int32
	// noise multiplies its prefill and decode times (ReplicaModel.Jitter;
	// 1 without).
	noise float64
	// The iteration engine's count of its decode gaps (their sum, µs) and
	// of its preemptions, copied when it finishes (signals.go).
	itlSum          int64
	itls, preempted int32
}

// Replica states.
const (
	repPending  uint8 = iota // waiting for GPUs
	repLoading               // has GPUs, loading the model
	repReady                 // serving
	repDraining              // taking no new requests, finishing its own
	repGone                  // released, or cancelled before it got GPUs
)

type replica struct {
	id        int
	state     uint8
	placement hwmodel.Placement
	epoch     uint32
	book      ReplicaResult
	inflight  int
	lastDone  hwmodel.Time
	slow      float64
	failed    bool
	// lost: its hardware broke (an injected fault); it is released and
	// replaced when the fault is detected.
	lost bool
	// counted: in its service's circuit's healthy count (failover.go).
	counted bool
	// Health.
	ejected    bool
	ejections  int
	probing    int
	ewma       float64
	seen       int
	consecErrs int
	// busy integral bookkeeping.
	lastT hwmodel.Time
	busy  float64 // request-µs
	// cb is the decode state under continuous batching (nil otherwise).
	cb *decodeBatch
	// it is the engine under the iteration-level model (nil otherwise).
	it *iterReplica
}

func (r *replica) integrate(now hwmodel.Time) {
	r.busy += float64(r.inflight) * float64(now-r.lastT)
	r.lastT = now
}

type classBook struct {
	res              ClassResult
	ttft, e2e, queue latencyBook
	sig              classSignals
	attained         int64
	prefixHit, input int64 // completed requests' cached and prompt tokens
	lane             int
	priority         int
	weight           float64
	// stages are the class's stage pools (indices into its service's
	// pipeline), in order, and sbooks their latencies.
	stages []int
	sbooks []stageBook
}

type lane struct {
	ring       []int64 // slot<<32 | gen
	head, size int
}

func (l *lane) push(v int64) {
	if l.size == len(l.ring) {
		n := make([]int64, max(16, 2*len(l.ring)))
		for i := 0; i < l.size; i++ {
			n[i] = l.ring[(l.head+i)%len(l.ring)]
		}
		l.ring, l.head = n, 0
	}
	l.ring[(l.head+l.size)%len(l.ring)] = v
	l.size++
}

func (l *lane) peek() int64 { return l.ring[l.head] }

func (l *lane) drop() {
	l.head = (l.head + 1) % len(l.ring)
	l.size--
}

type service struct {
	engine   EngineBooks // iteration-level engines replaced after failures
	idx      int
	spec     Service
	models   hwmodel.ModelSet
	classes  []classBook
	streams  []stream
	lanes    []lane // by descending priority
	topPrio  int
	replicas []*replica
	rr       int
	res      ServiceResult

	queued, inflight, ready int
	// integrals since the start, and at the last autoscaler tick.
	lastT                            hwmodel.Time
	intSys, intInflight, intReady    float64
	tickSys, tickInflight, tickReady float64
	tickLat                          hist
	tickTTFT                         hist          // TTFTs completed since the last autoscaler tick
	tickITL                          hist          // inter-token gaps, likewise
	alerts                           []*alertState // the alerts on this service
	tickArrivals                     int64
	nextTick                         hwmodel.Time
	lastUp, lastChange               hwmodel.Time
	// bucket being filled.
	bucket    Bucket
	bucketLat [2]hist // TTFT, E2E
	// A request trace replaces the Poisson streams: the reader and the
	// request it read ahead (pushed as the next arrival).
	trace     *TraceReader
	traceNext TraceRequest
	classIdx  map[string]int
	fo        *circuit // nil without a failover section
	// pipe is the stage pools of the service as declared, shared by its
	// pools (nil without stages).
	pipe *pipeline
}

func (s *service) integrate(now hwmodel.Time) {
	dt := float64(now - s.lastT)
	s.intSys += float64(s.queued+s.inflight) * dt
	s.intInflight += float64(s.inflight) * dt
	s.intReady += float64(s.ready) * dt
	s.lastT = now
}

// model is the serving simulation; it implements sim.Coupled.
type model struct {
	spec     *Spec
	seed     uint64
	horizon  hwmodel.Time
	now      hwmodel.Time
	heap     eventHeap
	reqs     []request
	free     []int32
	svcs     []*service
	next     hwmodel.Time // cached Next()
	done     bool
	started  bool
	waiting  int
	nextRoll hwmodel.Time
	events   int64
	requests int64
	err      error
	alerts   []*alertState // alerts.go
	alertLog []AlertEvent
	nextEval hwmodel.Time // the next alert evaluation
	// drawn, when set, sees every request as it arrives, its draws made
	// (tests compare the streams of runs).
	drawn func(*request)
}

func newModel(spec *Spec, seed uint64) (*model, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	units := expand(spec)
	for _, u := range units {
		sp := u.spec
		if im := sp.Replica.Iteration; im != nil {
			if err := im.build(sp.GPUsPerReplica); err != nil {
				return nil, fmt.Errorf("service %s: replica.iteration: %w", sp.Name, err)
			}
		}
	}
	m := &model{spec: spec, seed: seed, horizon: spec.Horizon, nextRoll: spec.bucket()}
	pipes := make([]*pipeline, len(spec.Services))
	for si, u := range units {
		sp := u.spec
		sp.Health = sp.Health.withDefaults()
		if sp.Autoscale != nil {
			a := sp.Autoscale.withDefaults()
			sp.Autoscale = &a
		}
		s := &service{idx: si, spec: sp, res: ServiceResult{Name: sp.Name}, tickLat: newHist(5), tickTTFT: newHist(5), tickITL: newHist(5),
			bucketLat: [2]hist{newHist(5), newHist(5)}}
		s.models = hwmodel.AnyModel
		if sp.GPUModel != "" {
			mod, _ := hwmodel.LookupModel(sp.GPUModel)
			s.models = hwmodel.Of(mod.ID)
		}
		if len(sp.StagePools) > 0 {
			if pipes[u.parent] == nil {
				pipes[u.parent] = newPipeline(sp.StagePools, seed, u.parent)
			}
			s.pipe = pipes[u.parent]
		}
		prios := map[int]bool{}
		for _, c := range sp.Classes {
			prios[c.Priority] = true
		}
		levels := make([]int, 0, len(prios))
		for p := range prios {
			levels = append(levels, p)
		}
		sortDesc(levels)
		s.topPrio = levels[0]
		s.lanes = make([]lane, len(levels))
		for ci, c := range sp.Classes {
			cb := classBook{res: ClassResult{Name: c.Name}, ttft: newLatencyBook(), e2e: newLatencyBook(),
				queue: newLatencyBook(), sig: newClassSignals(), priority: c.Priority, weight: c.Weight}
			for li, p := range levels {
				if p == c.Priority {
					cb.lane = li
				}
			}
			cb.stages, cb.sbooks = s.pipe.classStages(c.Stages)
			s.classes = append(s.classes, cb)
			// Keyed by the declared service and class, so a class draws
			// the same requests whichever pool serves it.
			s.streams = append(s.streams, stream{
				rng:   rand.New(rand.NewPCG(seed, servingStream+uint64(u.parent)<<16+uint64(u.keys[ci]))),
				share: c.Weight / u.total,
			})
		}
		m.svcs = append(m.svcs, s)
	}
	m.initCircuits()
	m.newAlerts()
	return m, nil
}

func sortDesc(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] > a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// Next implements sim.Coupled.
func (m *model) Next() (hwmodel.Time, bool) {
	if m.done {
		return 0, false
	}
	return m.next, true
}

// Waiting implements sim.Coupled.
func (m *model) Waiting() bool { return m.waiting > 0 }

// Step implements sim.Coupled.
func (m *model) Step(a *sim.Access) error {
	now := a.Now()
	if !m.started {
		m.start()
		// The initial replicas take their GPUs before any request arrives.
		for _, s := range m.svcs {
			if err := m.acquire(a, s); err != nil {
				return err
			}
		}
		m.armCircuits()
	}
	m.advance(now)
	if m.err != nil {
		return m.err
	}
	if now >= m.horizon {
		return m.finish(a)
	}
	for _, s := range m.svcs {
		// Drains that are over.
		for _, r := range s.replicas {
			if r.state == repDraining && r.inflight == 0 {
				if err := m.release(a, s, r); err != nil {
					return err
				}
			}
		}
		if as := s.spec.Autoscale; as != nil && s.nextTick <= now {
			m.autoscale(s, now)
			for s.nextTick <= now {
				s.nextTick += as.Interval
			}
		}
		if err := m.acquire(a, s); err != nil {
			return err
		}
	}
	m.computeNext()
	return nil
}

func (m *model) start() {
	m.started = true
	m.startAlerts()
	for _, s := range m.svcs {
		for k := 0; k < s.spec.Replicas.Initial; k++ {
			m.newReplica(s, 0)
		}
		if s.spec.Arrivals.Trace != "" {
			m.readTrace(s)
		} else {
			for ci := range s.classes {
				m.scheduleArrival(s, ci, 0)
			}
		}
		for k, inc := range s.spec.Incidents {
			if inc.At < m.horizon {
				m.heap.push(event{at: inc.At, kind: evIncident, a: int32(s.idx), b: int32(k)})
			}
		}
		if s.spec.Autoscale != nil {
			s.nextTick = s.spec.Autoscale.Interval
		}
	}
}

func (m *model) newReplica(s *service, now hwmodel.Time) *replica {
	r := &replica{id: len(s.replicas), state: repPending, slow: 1, ewma: 1,
		book: ReplicaResult{ID: len(s.replicas), Requested: now, Placed: -1, Ready: -1, Released: -1, Node: -1}}
	if s.spec.Replica.Iteration != nil {
		r.it = m.newIterReplica(s)
	} else if s.spec.Replica.ContinuousBatching {
		r.cb = &decodeBatch{}
	}
	s.replicas = append(s.replicas, r)
	m.waiting++
	return r
}

// acquire gives GPUs to s's pending replicas, in creation order.
func (m *model) acquire(a *sim.Access, s *service) error {
	now := a.Now()
	for _, r := range s.replicas {
		if r.state != repPending {
			continue
		}
		var p hwmodel.Placement
		var ok bool
		var err error
		if as := s.spec.Autoscale; as != nil && as.OnNoGPUs == Preempt {
			var victims int
			p, victims, ok, err = a.AcquirePreempting(s.models, s.spec.GPUsPerReplica, s.spec.Priority)
			s.res.Preempted += int64(victims)
		} else {
			p, ok, err = a.Acquire(s.models, s.spec.GPUsPerReplica)
		}
		if err != nil {
			return err
		}
		if !ok {
			break // later replicas would not fit either
		}
		m.waiting--
		r.placement = p
		r.book.Placed, r.book.Node = now, p[0].Node
		s.res.GPUWait += now - r.book.Requested
		if a.Broken(p) {
			// Placed on hardware that already broke (nobody knows yet): it
			// never gets ready, and is replaced at the detection.
			r.lost = true
			s.res.ReplicasLost++
		}
		if now == 0 && !r.lost {
			// Replicas of the initial pool are warm at the start.
			m.setReady(s, r, now)
			continue
		}
		r.state = repLoading
		r.epoch++
		m.heap.push(event{at: now + s.spec.Replica.LoadTime, kind: evReady, a: int32(s.idx), b: int32(r.id), gen: r.epoch})
	}
	return nil
}

func (m *model) setReady(s *service, r *replica, now hwmodel.Time) {
	s.integrate(now)
	r.state = repReady
	r.lastT = now
	if r.book.Ready < 0 {
		r.book.Ready = now
	}
	s.ready++
	m.recount(s, r)
	m.pull(s, now)
}

// release gives r's GPUs back (or cancels it if it has none yet).
func (m *model) release(a *sim.Access, s *service, r *replica) error {
	now := a.Now()
	switch r.state {
	case repPending:
		m.waiting--
	case repReady, repDraining:
		s.integrate(now)
		r.integrate(now)
		if r.state == repReady {
			s.ready--
		}
	}
	if r.placement != nil {
		if err := a.Release(r.placement); err != nil {
			return err
		}
		r.book.Released = now
	}
	r.state = repGone
	r.epoch++
	m.recount(s, r)
	return nil
}

func (m *model) computeNext() {
	next := m.horizon
	for _, s := range m.svcs {
		if s.spec.Autoscale != nil {
			next = min(next, s.nextTick)
		}
		for _, r := range s.replicas {
			if r.state == repDraining {
				next = min(next, max(r.lastDone, m.now+1))
			}
		}
	}
	m.next = next
}

// scheduleArrival pushes the next arrival of s's class ci after t.
func (m *model) scheduleArrival(s *service, ci int, t hwmodel.Time) {
	if at, ok := s.streams[ci].next(&s.spec.Arrivals, t, m.horizon); ok {
		m.heap.push(event{at: at, kind: evArrival, a: int32(s.idx), b: int32(ci)})
	}
}

// advance processes the request events up to and including until.
func (m *model) advance(until hwmodel.Time) {
	for len(m.heap.items) > 0 && m.heap.items[0].at <= until {
		ev := m.heap.pop()
		if ev.at >= m.nextRoll {
			m.roll(ev.at)
		}
		if ev.at >= m.nextEval {
			m.evaluateAlerts(ev.at)
		}
		m.now = ev.at
		m.events++
		s := m.svcs[0]
		switch ev.kind {
		case evArrival:
			s = m.svcs[ev.a]
			if s.trace != nil {
				m.arrive(s, int(ev.b), s.traceNext.Input, s.traceNext.Output)
				m.readTrace(s)
				continue
			}
			m.arrive(s, int(ev.b), 0, 0)
			m.scheduleArrival(s, int(ev.b), ev.at)
		case evComplete:
			q := &m.reqs[ev.a]
			if q.gen != ev.gen || q.state != reqRunning {
				continue
			}
			m.complete(int32(ev.a))
		case evStageDone:
			q := &m.reqs[ev.a]
			if q.gen != ev.gen || q.state != reqStage {
				continue
			}
			m.stageDone(ev.a)
		case evTimeout:
			q := &m.reqs[ev.a]
			if q.gen != ev.gen || q.state != reqQueued {
				continue
			}
			m.timeout(ev.a)
		case evReady:
			s = m.svcs[ev.a]
			r := s.replicas[ev.b]
			if r.state == repLoading && r.epoch == ev.gen && !r.lost {
				r.failed = false
				m.setReady(s, r, ev.at)
			}
		case evProbe:
			s = m.svcs[ev.a]
			r := s.replicas[ev.b]
			if r.ejected && uint32(r.ejections) == ev.gen {
				r.ejected = false
				r.probing = s.spec.Health.ProbeRequests
				m.recount(s, r)
				m.pull(s, ev.at)
			}
		case evIncident:
			s = m.svcs[ev.a]
			m.incident(s, s.spec.Incidents[ev.b])
		case evPrefill:
			q := &m.reqs[ev.a]
			if q.gen != ev.gen || q.state != reqRunning {
				continue
			}
			m.decodeJoin(ev.a)
		case evDecode:
			s = m.svcs[ev.a]
			m.decodeStep(s, s.replicas[ev.b], ev.gen)
		case evIterQueue:
			q := &m.reqs[ev.a]
			if q.gen != ev.gen || q.state != reqRunning {
				continue
			}
			m.iterQueue(ev.a)
		case evIterStep:
			s = m.svcs[ev.a]
			m.iterStep(s, s.replicas[ev.b], ev.gen)
		case evRestart:
			s = m.svcs[ev.a]
			r := s.replicas[ev.b]
			if r.state == repReady && r.epoch == ev.gen && r.failed {
				s.integrate(ev.at)
				r.integrate(ev.at)
				s.ready--
				r.state = repLoading
				r.epoch++
				m.heap.push(event{at: ev.at + s.spec.Replica.LoadTime, kind: evReady, a: ev.a, b: ev.b, gen: r.epoch})
			}
		case evCircuit:
			m.circuitEvent(m.svcs[ev.a], ev.gen)
		}
	}
	if until >= m.nextRoll {
		m.roll(until)
	}
	if until >= m.nextEval {
		m.evaluateAlerts(until)
	}
	m.now = until
}

func (m *model) slot() int32 {
	if n := len(m.free); n > 0 {
		i := m.free[n-1]
		m.free = m.free[:n-1]
		return i
	}
	m.reqs = append(m.reqs, request{})
	return int32(len(m.reqs) - 1)
}

func (m *model) endRequest(i int32) {
	q := &m.reqs[i]
	q.state = reqFree
	q.gen++
	m.free = append(m.free, i)
}

// readTrace reads s's next trace request and pushes its arrival; at the
// end of the trace (or the horizon) it closes the reader.
func (m *model) readTrace(s *service) {
	if s.trace == nil {
		tr, err := OpenTrace(s.spec.Arrivals.Trace)
		if err != nil {
			m.err = fmt.Errorf("service %s: %w", s.spec.Name, err)
			return
		}
		s.trace = tr
		s.classIdx = map[string]int{}
		for ci, c := range s.spec.Classes {
			s.classIdx[c.Name] = ci
		}
	}
	q, err := s.trace.Next()
	if err == nil && q.At < m.horizon {
		ci, ok := s.classIdx[q.Class]
		if !ok {
			m.err = fmt.Errorf("%s:%d: class: %q is not a class of service %s", s.spec.Arrivals.Trace, s.trace.Line(), q.Class, s.spec.Name)
			s.trace.Close()
			return
		}
		s.traceNext = q
		m.heap.push(event{at: q.At, kind: evArrival, a: int32(s.idx), b: int32(ci)})
		return
	}
	if err != nil && err != io.EOF {
		m.err = fmt.Errorf("service %s: %w", s.spec.Name, err)
	}
	s.trace.Close()
}

// arrive admits one request of class ci; in and out are its token counts
// from a trace (0: draw them).
func (m *model) arrive(s *service, ci int, in, out int32) {
	now := m.now
	m.requests++
	cb := &s.classes[ci]
	cb.res.Requests++
	s.bucket.Arrivals++
	s.tickArrivals++
	c := &s.spec.Classes[ci]
	rng := s.streams[ci].rng
	i := m.slot()
	q := &m.reqs[i]
	q.arrive, q.svc, q.class, q.replica = now, int32(s.idx), int16(ci), -1
	q.home, q.hclass = q.svc, q.class
	if st := s.spec.Replica.ServiceTime; st != nil {
		q.work = seconds(st.draw(rng))
	} else if in > 0 {
		q.in, q.out = in, out
	} else {
		q.in, q.out = tokens(&c.InputTokens, rng), tokens(&c.OutputTokens, rng)
	}
	q.noise = 1
	if j := s.spec.Replica.Jitter; j > 0 && q.work == 0 {
		// Lognormal with mean 1: drawn only with jitter, so streams
		// without it are unchanged.
		q.noise = math.Exp(j*rng.NormFloat64() - j*j/2)
	}
	m.arrivePrefix(s, ci, q, rng)
	q.stage = 0
	if m.drawn != nil {
		m.drawn(q)
	}
	if len(cb.stages) > 0 {
		m.enterStage(s, i)
		return
	}
	m.admit(s, i)
}

// anyHealthy reports whether the gateway believes some replica can serve:
// ready and not ejected (a failed replica not yet ejected counts).
func (m *model) anyHealthy(s *service) bool {
	for _, r := range s.replicas {
		if r.state == repReady && !r.ejected {
			return true
		}
	}
	return false
}

// fail ends request i as an error (502) or, when timeout, a 504, in its
// home service's books.
func (m *model) fail(_ *service, i int32, timeout bool) {
	q := &m.reqs[i]
	s := m.svcs[q.home]
	cb := &s.classes[q.hclass]
	if timeout {
		cb.res.Timeouts++
	} else {
		cb.res.Errors++
	}
	s.bucket.Errors++
	m.signalFail(s, cb, q)
	m.endRequest(i)
}

func (m *model) timeout(i int32) {
	q := &m.reqs[i]
	s := m.svcs[q.svc]
	s.integrate(m.now)
	s.queued--
	m.fail(s, i, true) // the lane entry goes stale with the generation
}

// dispatch sends request i to replica r.
func (m *model) dispatch(s *service, r *replica, i int32) {
	now := m.now
	q := &m.reqs[i]
	q.replica = int32(r.id)
	q.dispatch = now
	if r.failed {
		// It answers at once with an error.
		r.book.Failed++
		m.observeError(s, r)
		m.fail(s, i, false)
		return
	}
	if r.it != nil {
		r.integrate(now)
		r.inflight++
		s.inflight++
		q.state = reqRunning
		m.iterDispatch(s, r, i)
		return
	}
	rm := &s.spec.Replica
	continuous := r.cb != nil && q.work == 0
	if continuous {
		m.decodeAdvance(s, r, now) // at the rate before this request joins
	}
	r.integrate(now)
	r.inflight++
	s.inflight++
	var ttft, total float64 // µs on a healthy replica
	if q.work > 0 {
		ttft, total = float64(q.work), float64(q.work)
	} else {
		ttft = float64(q.in) / rm.PrefillTokensPerS * 1e6
		total = ttft + float64(q.out)/rm.DecodeTokensPerS*(1+rm.BatchSlowdown*float64(r.inflight-1))*1e6
	}
	q.expectedUS = total
	ttft *= q.noise
	total *= q.noise
	q.ttft = now + max(hwmodel.Time(math.Ceil(ttft*r.slow)), 1)
	q.state = reqRunning
	if continuous {
		// Its decode joins the batch at its first token; until then it
		// only slows the others down.
		m.heap.push(event{at: q.ttft, kind: evPrefill, a: i, gen: q.gen})
		m.decodeReschedule(s, r, now)
		return
	}
	q.done = max(now+hwmodel.Time(math.Ceil(total*r.slow)), q.ttft)
	r.lastDone = max(r.lastDone, q.done)
	m.heap.push(event{at: q.done, kind: evComplete, a: i, gen: q.gen})
}

func (m *model) complete(i int32) {
	now := m.now
	q := &m.reqs[i]
	s := m.svcs[q.svc]
	r := s.replicas[q.replica]
	s.integrate(now)
	r.integrate(now)
	r.inflight--
	s.inflight--
	r.book.Completed++
	r.book.SojournSum += float64(now-q.dispatch) / 1e6
	h := m.svcs[q.home] // booked where it arrived
	cb := &h.classes[q.hclass]
	c := &h.spec.Classes[q.hclass]
	cb.res.Completed++
	ttft, e2e := q.ttft-q.arrive, now-q.arrive
	cb.ttft.add(int64(ttft))
	cb.e2e.add(int64(e2e))
	cb.queue.add(int64(q.dispatch - q.gate))
	cb.prefixHit += int64(q.hit)
	cb.input += int64(q.in)
	if (c.TTFTTarget == 0 || ttft <= c.TTFTTarget) && (c.E2ETarget == 0 || e2e <= c.E2ETarget) {
		cb.attained++
	}
	h.bucket.Completed++
	h.bucketLat[0].add(int64(ttft))
	h.bucketLat[1].add(int64(e2e))
	if s.spec.Autoscale != nil {
		s.tickLat.add(int64(e2e))
		s.tickTTFT.add(int64(ttft))
	}
	m.signalComplete(s, cb, q, now)
	ratio := float64(now-q.dispatch) / q.expectedUS
	m.endRequest(i)
	m.observeLatency(s, r, ratio)
	if r.state == repReady {
		m.pull(s, now)
	}
}

func (m *model) incident(s *service, inc Incident) {
	if inc.Replica >= len(s.replicas) {
		return
	}
	r := s.replicas[inc.Replica]
	if r.state == repGone || r.state == repPending {
		return
	}
	switch inc.Kind {
	case "slow":
		if r.it != nil {
			r.slow = inc.Factor
			r.it.eng.Slow = inc.Factor
			return
		}
		if r.cb != nil {
			m.decodeAdvance(s, r, m.now)
			r.slow = inc.Factor
			m.decodeReschedule(s, r, m.now)
			return
		}
		r.slow = inc.Factor
	case "fail":
		if r.failed {
			return
		}
		m.breakReplica(s, r)
		if r.state == repReady {
			m.heap.push(event{at: m.now + inc.RestartAfter, kind: evRestart, a: int32(s.idx), b: int32(r.id), gen: r.epoch})
		}
	}
}

// breakReplica makes r stop answering now: its requests in flight end as
// errors, and requests the gateway still sends it fail at once.
func (m *model) breakReplica(s *service, r *replica) {
	r.failed = true
	m.recount(s, r)
	if r.cb != nil {
		r.cb.entries = r.cb.entries[:0]
		r.cb.ver++
	}
	if r.it != nil {
		// Its engine's state is lost; a restart begins with an empty one.
		ver := r.it.ver + 1
		s.engine.add(r.it)
		r.it = m.newIterReplica(s)
		r.it.ver = ver
		r.it.eng.Slow = r.slow
	}
	now := m.now
	s.integrate(now)
	r.integrate(now)
	for j := range m.reqs {
		q := &m.reqs[j]
		if q.state == reqRunning && q.svc == int32(s.idx) && q.replica == int32(r.id) {
			r.inflight--
			s.inflight--
			r.book.Failed++
			m.fail(s, int32(j), false)
		}
	}
}

// finish ends the run at the horizon: every replica gives its GPUs back.
func (m *model) finish(a *sim.Access) error {
	for _, s := range m.svcs {
		for _, r := range s.replicas {
			if r.state != repGone {
				if err := m.release(a, s, r); err != nil {
					return err
				}
			}
		}
		s.integrate(m.horizon)
	}
	m.done = true
	return nil
}

var _ sim.Coupled = (*model)(nil)

func (s *Spec) bucket() hwmodel.Time {
	if s.Bucket > 0 {
		return s.Bucket
	}
	return 60 * hwmodel.Second
}

func errorf(format string, args ...any) error { return fmt.Errorf("serving: "+format, args...) }
