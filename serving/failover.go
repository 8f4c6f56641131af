package serving

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// Service-level circuit breaking. Outlier ejection (health.go) takes bad
// replicas out of one service's pool; when too few good replicas are
// left, the pool itself is the failure, and the gateway sends the
// service's traffic to another service instead: an identical standby
// (failover) or a cheaper, smaller model (degrade). The user's view does
// not change: a request is booked in the class it arrived in, whoever
// served it, so a service's error rate and latency show what its users
// saw, and the backup's replica books show the load it took.
//
// The healthy count is kept where replicas change state (ready, failed,
// lost, ejected, probed back, draining, released) through recount, never
// recounted per request. The circuit opens the instant the count falls
// below MinHealthy and closes only after it has stayed at or above
// MinHealthy for RecoverAfter (hysteresis: a replica that recovers and
// fails again within RecoverAfter does not close it).

// Failover is a service's circuit breaker (Service.Failover).
type Failover struct {
	// Backup names the service whose gateway takes the traffic while the
	// circuit is open. It serves each request with its own replica model,
	// in its class of the same name (the backup must have every class of
	// the service). A backup may have a backup of its own (a request
	// follows the chain while circuits are open), but no chain may come
	// back to a service.
	Backup string
	// MinHealthy is the floor: the circuit opens when fewer replicas are
	// ready, not ejected and not failed or lost. At most
	// Replicas.Initial, or Replicas.Min when the service autoscales.
	MinHealthy int
	// RecoverAfter is how long the service must keep MinHealthy healthy
	// replicas before the circuit closes (0: at once).
	RecoverAfter hwmodel.Time
	// Mode says what the backup is, for the books: ModeFailover (or "")
	// counts the requests sent to it as FailedOver, ModeDegrade as
	// Degraded.
	Mode FailoverMode
}

// FailoverMode is what a backup is (Failover.Mode).
type FailoverMode string

// The failover modes.
const (
	// ModeFailover: the backup is a standby of the same model.
	ModeFailover FailoverMode = "failover"
	// ModeDegrade: the backup is a degraded service (a smaller model).
	ModeDegrade FailoverMode = "degrade"
)

var failoverModes = []FailoverMode{ModeFailover, ModeDegrade}

// FailoverResult is a service's circuit books (ServiceResult.Failover).
type FailoverResult struct {
	Backup string
	Mode   FailoverMode
	// Openings counts the times the circuit opened; TimeOpen is the total
	// time it was open within the horizon; Events lists each opening.
	Openings int64
	TimeOpen hwmodel.Time
	Events   []CircuitEvent
}

// CircuitEvent is one opening of a circuit: Close is -1 when it was still
// open at the horizon.
type CircuitEvent struct{ Open, Close hwmodel.Time }

// checkFailover reports what is wrong with the services' failover
// sections: a backup that is missing, the service itself or lacks one of
// its classes, a floor below 1 or above replicas.max, an unknown mode, a
// request model the backup cannot read, and chains that come back.
func (s *Spec) checkFailover(e *config.Errors) {
	idx := map[string]int{}
	for i, v := range s.Services {
		if _, dup := idx[v.Name]; !dup {
			idx[v.Name] = i
		}
	}
	next := make([]int, len(s.Services))
	for i := range s.Services {
		v := &s.Services[i]
		next[i] = -1
		f := v.Failover
		if f == nil {
			continue
		}
		fe := e.Index("services", i).In("failover")
		b, ok := idx[f.Backup]
		switch {
		case f.Backup == "":
			fe.Add("backup", "want the name of the service that takes the traffic")
		case !ok:
			names := make([]string, len(s.Services))
			for k, x := range s.Services {
				names[k] = x.Name
			}
			fe.Add("backup", "no service is named %q (services: %s)", f.Backup, strings.Join(names, ", "))
		case b == i:
			fe.Add("backup", "a service cannot be its own backup")
		default:
			next[i] = b
			bk := &s.Services[b]
			for _, c := range v.Classes {
				if !slices.ContainsFunc(bk.Classes, func(x Class) bool { return x.Name == c.Name }) {
					fe.Add("backup", "service %s has no class %q; the backup serves each class under its own name", bk.Name, c.Name)
					break
				}
			}
			if (v.Replica.ServiceTime == nil) != (bk.Replica.ServiceTime == nil) {
				fe.Add("backup", "service %s and %s describe requests differently (service_time against tokens); want both the same", v.Name, bk.Name)
			}
		}
		if limit, what := v.floorLimit(); f.MinHealthy < 1 || f.MinHealthy > limit {
			fe.Add("min_healthy", "want 1 to %s (%d) healthy replicas, got %d", what, limit, f.MinHealthy)
		}
		if f.RecoverAfter < 0 || f.RecoverAfter > maxHorizon {
			fe.Add("recover_after", "want a duration >= 0, got %s", fmtDur(f.RecoverAfter))
		}
		if f.Mode != "" && !slices.Contains(failoverModes, f.Mode) {
			fe.Add("mode", "unknown mode %q (known: %s)", f.Mode, joinNames(failoverModes))
		}
	}
	// Each service has at most one backup, so a cycle is found by
	// following backups from each service; it is reported once, at its
	// first service.
	for i := range s.Services {
		path := []int{i}
		for j := next[i]; j >= 0 && len(path) <= len(s.Services); j = next[j] {
			if j == i {
				if slices.Min(path) == i {
					names := make([]string, 0, len(path)+1)
					for _, k := range append(path, i) {
						names = append(names, s.Services[k].Name)
					}
					e.Index("services", i).In("failover").Add("backup", "the failover chain %s comes back; a backup cannot fail over to the services it backs", strings.Join(names, " -> "))
				}
				break
			}
			path = append(path, j)
		}
	}
}

// floorLimit is the highest valid MinHealthy: the replicas a static
// service keeps, or the fewest an autoscaled one may scale in to (a floor
// above it would let a scale-in open the circuit and send the traffic,
// and so the autoscaler's signal, away).
func (v *Service) floorLimit() (int, string) {
	if v.Autoscale != nil {
		return v.Replicas.Min, "replicas.min"
	}
	return v.Replicas.Initial, "replicas.initial"
}

// circuit is a service's circuit breaker at run time.
type circuit struct {
	spec   Failover
	backup *service
	// classMap maps the service's class index to the backup's.
	classMap []int16
	// healthy is the number of replicas counted healthy (replica.counted).
	healthy int
	// armed: the initial replicas are placed (before, the count is still
	// rising from zero and means nothing).
	armed bool
	open  bool
	// closing: a close is pending at the evCircuit event of generation gen.
	closing bool
	gen     uint32
	res     FailoverResult
}

// initCircuits builds the circuits of services with a failover section;
// the spec is valid, so every backup exists and has the classes.
func (m *model) initCircuits() {
	byName := map[string]*service{}
	for _, s := range m.svcs {
		byName[s.spec.Name] = s
	}
	for _, s := range m.svcs {
		f := s.spec.Failover
		if f == nil {
			continue
		}
		c := &circuit{spec: *f, backup: byName[f.Backup], res: FailoverResult{Backup: f.Backup, Mode: f.Mode}}
		if c.res.Mode == "" {
			c.res.Mode = ModeFailover
		}
		for _, cl := range s.spec.Classes {
			k := slices.IndexFunc(c.backup.spec.Classes, func(x Class) bool { return x.Name == cl.Name })
			c.classMap = append(c.classMap, int16(k))
		}
		s.fo = c
	}
}

// armCircuits starts the circuits once the initial replicas are placed: a
// service that starts below its floor (its replicas found no GPUs) opens
// at once.
func (m *model) armCircuits() {
	for _, s := range m.svcs {
		if s.fo != nil {
			s.fo.armed = true
			m.checkCircuit(s)
		}
	}
}

// recount brings s's healthy count up to date after r changed state.
func (m *model) recount(s *service, r *replica) {
	c := s.fo
	if c == nil {
		return
	}
	h := r.state == repReady && !r.ejected && !r.failed && !r.lost
	if h == r.counted {
		return
	}
	r.counted = h
	if h {
		c.healthy++
	} else {
		c.healthy--
	}
	m.checkCircuit(s)
}

// checkCircuit opens s's circuit when its healthy count is below the
// floor, and starts or cancels the recovery clock.
func (m *model) checkCircuit(s *service) {
	c := s.fo
	if !c.armed || m.now >= m.horizon {
		return
	}
	switch {
	case c.healthy < c.spec.MinHealthy:
		if c.closing {
			c.closing = false // recovery interrupted: the clock starts over
			c.gen++
		}
		if !c.open {
			m.openCircuit(s)
		}
	case c.open && !c.closing:
		if c.spec.RecoverAfter == 0 {
			m.closeCircuit(s)
			return
		}
		c.closing = true
		c.gen++
		m.heap.push(event{at: m.now + c.spec.RecoverAfter, kind: evCircuit, a: int32(s.idx), gen: c.gen})
	}
}

// circuitEvent is the end of a recovery period (evCircuit).
func (m *model) circuitEvent(s *service, gen uint32) {
	if c := s.fo; c != nil && c.closing && c.gen == gen {
		m.closeCircuit(s)
	}
}

func (m *model) closeCircuit(s *service) {
	c := s.fo
	c.open, c.closing = false, false
	c.res.TimeOpen += m.now - c.res.Events[len(c.res.Events)-1].Open
	c.res.Events[len(c.res.Events)-1].Close = m.now
}

// openCircuit opens s's circuit and hands the requests waiting at its
// gateway to the backup, highest priority first, then in arrival order;
// they keep their arrival time (and so their timeout).
func (m *model) openCircuit(s *service) {
	c := s.fo
	c.open = true
	c.res.Openings++
	c.res.Events = append(c.res.Events, CircuitEvent{Open: m.now, Close: -1})
	if s.queued == 0 {
		return
	}
	s.integrate(m.now)
	for k := range s.lanes {
		l := &s.lanes[k]
		for ; l.size > 0; l.drop() {
			v := l.peek()
			i := int32(v >> 32)
			if q := &m.reqs[i]; q.state == reqQueued && q.gen == uint32(v) {
				s.queued--
				m.divert(s, i, false)
			}
		}
	}
}

// divert sends request i, of s (whose circuit is open), to the backup's
// gateway, following the chain while backups' circuits are open too. A
// fresh arrival gets its timeout there; a request handed over from the
// queue keeps the one it has.
func (m *model) divert(s *service, i int32, fresh bool) {
	q := &m.reqs[i]
	if q.svc == q.home {
		cr := &s.classes[q.class].res
		if s.fo.spec.Mode == ModeDegrade {
			cr.Degraded++
		} else {
			cr.FailedOver++
		}
	}
	for s.fo != nil && s.fo.open {
		q.class = s.fo.classMap[q.class]
		s = s.fo.backup
	}
	q.svc = int32(s.idx)
	now := m.now
	if st := s.spec.Replica.ServiceTime; st != nil {
		// The backup's own service time: drawn from the request's home
		// stream, so the backup's own arrivals are left alone.
		q.work = seconds(st.draw(m.svcs[q.home].streams[q.hclass].rng))
	}
	s.res.Received++
	s.tickArrivals++
	s.integrate(now)
	cb := &s.classes[q.class]
	if r := m.route(s, cb.priority); r != nil {
		m.dispatch(s, r, i)
		return
	}
	if !m.anyHealthy(s) {
		m.fail(s, i, false)
		return
	}
	q.state = reqQueued
	s.queued++
	s.lanes[cb.lane].push(int64(i)<<32 | int64(q.gen))
	if to := m.svcs[q.home].spec.Classes[q.hclass].Timeout; fresh && to > 0 {
		m.heap.push(event{at: max(q.arrive+to, now), kind: evTimeout, a: i, gen: q.gen})
	}
}

// failoverResult is s's circuit books at the horizon (nil without a
// failover section); a circuit still open counts until the horizon.
func (m *model) failoverResult(s *service) *FailoverResult {
	c := s.fo
	if c == nil {
		return nil
	}
	r := c.res
	r.Events = slices.Clone(c.res.Events)
	if c.open {
		r.TimeOpen += m.horizon - r.Events[len(r.Events)-1].Open
	}
	return &r
}

// --- output ---

type jsonCircuitEvent struct {
	OpenS  num  `json:"open_s"`
	CloseS *num `json:"close_s"` // null: open at the horizon
}

// jsonFailover is a service's failover section in serving_summary.json.
type jsonFailover struct {
	Backup     string             `json:"backup"`
	Mode       FailoverMode       `json:"mode"`
	Openings   int64              `json:"openings"`
	TimeOpenS  num                `json:"time_open_s"`
	Events     []jsonCircuitEvent `json:"events"`
	FailedOver *int64             `json:"failed_over,omitempty"`
	Degraded   *int64             `json:"degraded,omitempty"`
}

// addFailoverJSON fills js's failover section from sv, and each class's
// count of requests sent to the backup (failed_over or degraded, by
// mode).
func addFailoverJSON(js *jsonService, sv *ServiceResult) {
	js.Received = sv.Received
	f := sv.Failover
	if f == nil {
		return
	}
	j := &jsonFailover{Backup: f.Backup, Mode: f.Mode, Openings: f.Openings, TimeOpenS: num(f.TimeOpen.Seconds()), Events: []jsonCircuitEvent{}}
	for _, ev := range f.Events {
		je := jsonCircuitEvent{OpenS: num(ev.Open.Seconds())}
		if ev.Close >= 0 {
			c := num(ev.Close.Seconds())
			je.CloseS = &c
		}
		j.Events = append(j.Events, je)
	}
	set := func(jc *jsonClass, c ClassResult) {
		n := c.FailedOver + c.Degraded
		if f.Mode == ModeDegrade {
			jc.Degraded = &n
		} else {
			jc.FailedOver = &n
		}
	}
	set(&js.All, sv.All)
	for k := range js.Classes {
		set(&js.Classes[k], sv.Classes[k])
	}
	j.FailedOver, j.Degraded = js.All.FailedOver, js.All.Degraded
	js.Failover = j
}

// hasFailover reports whether some service of some variant has a circuit.
func (rs *RunSet) hasFailover() bool {
	for _, v := range rs.Variants {
		for _, s := range v.Result.Services {
			if s.Failover != nil {
				return true
			}
		}
	}
	return false
}

// toBackup is the table's "to backup" cell: the requests of c that s's
// circuit sent to the backup ("-" without a circuit).
func toBackup(s *ServiceResult, c ClassResult) string {
	if s.Failover == nil {
		return "-"
	}
	return fmt.Sprint(c.FailedOver + c.Degraded)
}

// circuitLines are the lines under the table, one per service with a
// circuit: where it sends traffic, how often and how long it was open,
// and its first openings.
func circuitLines(rs *RunSet) string {
	const shown = 4
	var b strings.Builder
	for _, v := range rs.Variants {
		for _, s := range v.Result.Services {
			f := s.Failover
			if f == nil {
				continue
			}
			plural := "s"
			if f.Openings == 1 {
				plural = ""
			}
			fmt.Fprintf(&b, "circuit %s/%s -> %s (%s): %d opening%s, open %s in all", v.Name, s.Name, f.Backup, f.Mode, f.Openings, plural, fmtDur(f.TimeOpen))
			for k, ev := range f.Events[:min(len(f.Events), shown)] {
				sep := ", "
				if k == 0 {
					sep = ": "
				}
				end := "the horizon"
				if ev.Close >= 0 {
					end = fmtDur(ev.Close)
				}
				fmt.Fprintf(&b, "%s%s to %s", sep, fmtDur(ev.Open), end)
			}
			if len(f.Events) > shown {
				fmt.Fprintf(&b, ", and %d more", len(f.Events)-shown)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// failoverFile is a service's failover section in an experiment file.
type failoverFile struct {
	Backup       string       `json:"backup" config:"required"`
	MinHealthy   *int         `json:"min_healthy"`   // default 1
	RecoverAfter *duration    `json:"recover_after"` // default DefaultRecoverAfter
	Mode         FailoverMode `json:"mode"`          // default failover
}

// DefaultRecoverAfter is how long a service must stay healthy before its
// circuit closes when its failover section does not say.
const DefaultRecoverAfter = hwmodel.Minute

func (f *failoverFile) failover() *Failover {
	x := &Failover{Backup: f.Backup, MinHealthy: 1, RecoverAfter: DefaultRecoverAfter, Mode: f.Mode}
	if f.MinHealthy != nil {
		x.MinHealthy = *f.MinHealthy
	}
	if f.RecoverAfter != nil {
		x.RecoverAfter = hwmodel.Time(*f.RecoverAfter)
	}
	if x.Mode == "" {
		x.Mode = ModeFailover
	}
	return x
}
