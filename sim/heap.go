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

// eventHeap is a binary min-heap ordered by (time, sequence). It is typed
// rather than built on container/heap so that pushes do not box values.
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) Len() int { return len(h.items) }

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].before(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) peek() *event { return &h.items[0] }

func (h *eventHeap) pop() event {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.items[r].before(&h.items[l]) {
			m = r
		}
		if !h.items[m].before(&h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}
