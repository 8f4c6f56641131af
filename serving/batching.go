package serving

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// Continuous batching (ReplicaModel.ContinuousBatching). Every sequence of
// a replica that is in its decode phase advances at the same rate, so one
// virtual clock per replica, v (tokens decoded per sequence since the
// replica started), describes them all: a request that joins the decode
// batch at v0 with o output tokens finishes when v reaches v0 + o. The
// replica keeps those finishing points in a min-heap and one pending
// evDecode event, for the first of them at the current rate; whenever the
// rate changes (a request dispatched or completed, a slow-down) v is
// advanced at the old rate and the event is replaced (a version number
// makes the old one stale). A request costs about four events instead of
// two.

type decodeEntry struct {
	v    float64
	slot int32
	gen  uint32
}

type decodeBatch struct {
	v       float64
	at      hwmodel.Time
	entries []decodeEntry // min-heap on v, then slot
	ver     uint32
}

func (b *decodeBatch) less(i, j int) bool {
	x, y := &b.entries[i], &b.entries[j]
	return x.v < y.v || (x.v == y.v && x.slot < y.slot)
}

func (b *decodeBatch) push(e decodeEntry) {
	b.entries = append(b.entries, e)
	for i := len(b.entries) - 1; i > 0; {
		p := (i - 1) / 2
		if !b.less(i, p) {
			break
		}
		b.entries[i], b.entries[p] = b.entries[p], b.entries[i]
		i = p
	}
}

func (b *decodeBatch) pop() decodeEntry {
	top := b.entries[0]
	n := len(b.entries) - 1
	b.entries[0] = b.entries[n]
	b.entries = b.entries[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && b.less(c+1, c) {
			c++
		}
		if !b.less(c, i) {
			break
		}
		b.entries[i], b.entries[c] = b.entries[c], b.entries[i]
		i = c
	}
	return top
}

// decodeRate is r's per-sequence decode rate in tokens per µs now.
func decodeRate(s *service, r *replica) float64 {
	rm := &s.spec.Replica
	n := max(r.inflight, 1)
	return rm.DecodeTokensPerS / (1 + rm.BatchSlowdown*float64(n-1)) / r.slow / 1e6
}

// decodeAdvance brings r's decode clock to now at the current rate.
func (m *model) decodeAdvance(s *service, r *replica, now hwmodel.Time) {
	b := r.cb
	if len(b.entries) > 0 {
		b.v += float64(now-b.at) * decodeRate(s, r)
	}
	b.at = now
}

// decodeReschedule replaces r's pending decode event by one for its first
// finishing sequence at the current rate.
func (m *model) decodeReschedule(s *service, r *replica, now hwmodel.Time) {
	b := r.cb
	b.ver++
	if len(b.entries) == 0 {
		return
	}
	dt := max((b.entries[0].v-b.v)/decodeRate(s, r), 0)
	m.heap.push(event{at: now + hwmodel.Time(math.Ceil(dt-1e-6)), kind: evDecode, a: int32(s.idx), b: int32(r.id), gen: b.ver})
}

// decodeJoin puts request i, at its first token, into its replica's decode
// batch.
func (m *model) decodeJoin(i int32) {
	q := &m.reqs[i]
	s := m.svcs[q.svc]
	r := s.replicas[q.replica]
	m.decodeAdvance(s, r, m.now)
	r.cb.push(decodeEntry{v: r.cb.v + float64(q.out)*q.noise, slot: i, gen: q.gen})
	m.decodeReschedule(s, r, m.now)
}

// decodeStep handles r's decode event: the sequences that reached their
// last token complete.
func (m *model) decodeStep(s *service, r *replica, ver uint32) {
	b := r.cb
	if b == nil || ver != b.ver {
		return
	}
	now := m.now
	m.decodeAdvance(s, r, now)
	for len(b.entries) > 0 && b.entries[0].v <= b.v+1e-6 {
		e := b.pop()
		if q := &m.reqs[e.slot]; q.gen == e.gen && q.state == reqRunning {
			m.complete(e.slot) // may dispatch a queued request here
		}
	}
	m.decodeReschedule(s, r, now)
}

// decodeDrainBound is a time by which every request on r (which takes no
// new ones) has ended: rates only rise as requests leave, so the current
// rate bounds each one's remaining decode from above in time.
func (m *model) decodeDrainBound(s *service, r *replica, now hwmodel.Time) hwmodel.Time {
	m.decodeAdvance(s, r, now)
	rate := decodeRate(s, r)
	end := now
	for _, e := range r.cb.entries {
		end = max(end, now+hwmodel.Time(math.Ceil((e.v-r.cb.v)/rate)))
	}
	for j := range m.reqs {
		q := &m.reqs[j]
		if q.state == reqRunning && q.svc == int32(s.idx) && q.replica == int32(r.id) && q.ttft > now {
			end = max(end, q.ttft+hwmodel.Time(math.Ceil(float64(q.out)*q.noise/rate)))
		}
	}
	return end
}
