package sim

import "github.com/brigadesim/brigade/hwmodel"

type eventKind uint8

const (
	evFinish  eventKind = iota + 1 // a running attempt ends (success or failure)
	evUnblock                      // a MIG reconfiguration ends: job is the node, attempt the GPU
	evFault                        // an injected fault happens: job is its index in Config.Faults
	evDetect                       // a fault is detected: job is its FaultRecord, attempt its index in Config.Faults
	evRepair                       // failed hardware is repaired: job is the node, attempt the GPU (-1: the node)
	evRequeue                      // a back-off ends: job re-enters the queue if still at this attempt
	evWake                         // the policy asked to be called (policies.WakeView); stale unless still asked for
	evGrid                         // a point of the decision grid (Config.Interval) at which the policy has news
)

// event is a value type so the heap never allocates per event.
type event struct {
	at      hwmodel.Time
	seq     uint64
	kind    eventKind
	job     int32 // evUnblock: the node
	attempt int32 // which attempt a finish belongs to; stale ones are dropped (evUnblock: the GPU)
	ver     int32 // processor sharing: a finish's version; older ones are stale (sharing.go)
}

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// eventHeap is a 4-ary min-heap ordered by (time, sequence): half the
// depth of a binary heap, so a pop moves an event half as many times. It
// is typed rather than built on container/heap so that pushes do not box
// values, and it moves a hole instead of swapping.
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) Len() int { return len(h.items) }

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	items := h.items
	i := len(items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&items[p]) {
			break
		}
		items[i] = items[p]
		i = p
	}
	items[i] = e
}

func (h *eventHeap) peek() *event { return &h.items[0] }

func (h *eventHeap) pop() event {
	items := h.items
	top := items[0]
	last := len(items) - 1
	e := items[last]
	items = items[:last]
	h.items = items
	i := 0
	for {
		c := 4*i + 1
		if c >= last {
			break
		}
		m := c
		if c+3 < last {
			// All four children: compared without bounds checks.
			ch := items[c : c+4 : c+4]
			k := 0
			if ch[1].before(&ch[k]) {
				k = 1
			}
			if ch[2].before(&ch[k]) {
				k = 2
			}
			if ch[3].before(&ch[k]) {
				k = 3
			}
			m += k
		} else {
			for k := c + 1; k < last; k++ {
				if items[k].before(&items[m]) {
					m = k
				}
			}
		}
		if !items[m].before(&e) {
			break
		}
		items[i] = items[m]
		i = m
	}
	if last > 0 {
		items[i] = e
	}
	return top
}
