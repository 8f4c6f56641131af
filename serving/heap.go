package serving

import "github.com/brigadesim/brigade/hwmodel"

// evKind says what a serving event is; a, b and gen mean what each kind
// says below.
type evKind uint8

const (
	evArrival   evKind = iota // a service, b class
	evComplete                // a request slot, gen
	evTimeout                 // a request slot, gen
	evReady                   // a service, b replica, gen: replica epoch
	evProbe                   // a service, b replica, gen: ejection count
	evIncident                // a service, b incident
	evRestart                 // a service, b replica, gen: replica epoch
	evPrefill                 // a request slot, gen: its first token (continuous batching)
	evDecode                  // a service, b replica, gen: decode version (continuous batching)
	evIterQueue               // a request slot, gen: it joins its engine's wait queue (iteration-level)
	evIterStep                // a service, b replica, gen: step version (iteration-level)
	evCircuit                 // a service, gen: its circuit's recovery (failover.go)
	evStageDone               // a request slot, gen: it leaves its stage (pipeline.go)
)

type event struct {
	at   hwmodel.Time
	seq  uint64
	a, b int32
	gen  uint32
	kind evKind
}

// eventHeap is a 4-ary min-heap on (at, seq), typed to avoid interface
// calls on the hot path; four children per node halve the depth of a
// binary heap, and pops (most of the cost) touch fewer cache lines.
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	items := h.items
	i := len(items) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &items[p]) {
			break
		}
		items[i] = items[p]
		i = p
	}
	items[i] = e
}

func before(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

func (h *eventHeap) pop() event {
	items := h.items
	top := items[0]
	n := len(items) - 1
	last := items[n]
	h.items = items[:n]
	items = items[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if before(&items[k], &items[c]) {
				c = k
			}
		}
		if !before(&items[c], &last) {
			break
		}
		items[i] = items[c]
		i = c
	}
	if n > 0 {
		items[i] = last
	}
	return top
}
