package iteration

import (
	"fmt"
	"math"
)

// Params are a replica's engine settings (vLLM's names in brackets).
type Params struct {
	MaxSeqs      int   // requests running at once [max-num-seqs]
	TokenBudget  int   // tokens computed per step [max-num-batched-tokens]
	LongPrefill  int   // a prompt chunk's limit (0: the budget) [long-prefill-token-threshold]
	BlockSize    int   // tokens per KV block
	KVBlocks     int64 // the cache's capacity in blocks
	MaxReqTokens int   // longest prompt + output the replica must hold
}

// Req is one request on a replica: its tokens and, once it has them, its
// results. Times are µs.
type Req struct {
	Arrive  int64 // at the server (TTFT and E2E count from here)
	In, Out int32 // prompt and output tokens
	// First is when the first token was out, Done when the last was
	// (-1: not yet); First, ITLSum and ITLs (its inter-token gaps' sum
	// and count) count from its last (re)start, Preempted how often it
	// was.
	First, Done int64
	ITLSum      int64
	ITLs        int32
	Preempted   int32
	// Group is the request's prefix group (-1: none) and Prefix the
	// tokens its prompt shares with the group (SetPrefix); PrefixHit is
	// the prompt tokens found in the cache when it was first admitted.
	Group, Prefix int32
	PrefixHit     int32

	// The struct stays at two cache lines (128 bytes): the step's loops
	// touch every running request's.
	gen      uint32 // bumped when the slot is reused (Recycle)
	progress int64  // tokens in the KV cache (cached ones from admission)
	numNew   int32  // tokens this step computes for it
	lastFill int32  // tokens in its last block (the others are full)
	blocks   []int32
	cached   []int32 // block holding each prompt block, -1: none
}

// Replica is one engine: a wait queue, a running batch, a KV cache and a
// latency model. The caller adds requests (Queue) and runs steps (Step)
// at the times Next says; the replica owns nothing else, so the same code
// serves trace replays and package serving's event loop.
type Replica struct {
	p    Params
	lat  *Latency
	kv   kvCache
	Reqs []Req

	wait    deque
	running []int32
	free    []int32 // recycled request slots
	next    int64   // time of the next step; -1: idle
	done    []int32

	// Slow stretches every step (1 or 0: none), for an injected
	// slow-down.
	Slow float64

	// Counters.
	Steps, Preemptions int64
	// BlockUS is Σ blocks held × step duration; PeakBlocks the most
	// held at a step's end.
	BlockUS, BusyUS float64
	PeakBlocks      int64
	// PrefixQueries and PrefixHits are the prompt tokens of the requests
	// admitted for the first time and those of them found in the cache
	// (vLLM's prefix_cache_queries and prefix_cache_hits; a request
	// back after a preemption counts in neither).
	PrefixQueries, PrefixHits int64
}

// NewReplica builds a replica; lat gives step times and the overheads.
func NewReplica(p Params, lat *Latency) (*Replica, error) {
	if p.MaxSeqs < 1 || p.TokenBudget < 1 || p.BlockSize < 1 || p.LongPrefill < 0 {
		return nil, fmt.Errorf("engine params %+v: want max sequences, token budget and block size ≥ 1", p)
	}
	if need := (int64(p.MaxReqTokens) + int64(p.BlockSize) - 1) / int64(p.BlockSize); p.KVBlocks < max(need, 1) {
		return nil, fmt.Errorf("KV cache of %d blocks cannot hold one request of %d tokens", p.KVBlocks, p.MaxReqTokens)
	}
	return &Replica{p: p, lat: lat, kv: newKVCache(p.KVBlocks, p.BlockSize), next: -1}, nil
}

// Add registers a request arriving at arrive and returns its index; it
// joins the wait queue when Queue is called (after the server's
// queueing overhead, Latency's Alpha[0]).
func (r *Replica) Add(arrive int64, in, out int32) int32 {
	if n := len(r.free); n > 0 {
		i := r.free[n-1]
		r.free = r.free[:n-1]
		q := &r.Reqs[i]
		gen, blocks := q.gen+1, q.blocks[:0]
		*q = Req{Arrive: arrive, In: in, Out: out, First: -1, Done: -1, Group: -1, gen: gen, blocks: blocks}
		return i
	}
	r.Reqs = append(r.Reqs, Req{Arrive: arrive, In: in, Out: out, First: -1, Done: -1, Group: -1})
	return int32(len(r.Reqs) - 1)
}

// SetPrefix puts request i (added, not yet queued) in prefix group
// group (≥ 0) with its first prefix prompt tokens shared with the
// group's other requests: their full blocks are cached across requests.
// A request sharing no token stays without a group.
func (r *Replica) SetPrefix(i, group, prefix int32) {
	q := &r.Reqs[i]
	if group < 0 || prefix <= 0 {
		q.Group, q.Prefix = -1, 0
		return
	}
	q.Group, q.Prefix = group, min(prefix, q.In)
}

// Recycle gives back the slot of a completed request (after its results
// are read), so a long run holds only the requests in flight.
func (r *Replica) Recycle(i int32) { r.free = append(r.free, i) }

// Queue puts request i at the back of the wait queue at now; an idle
// replica steps at once.
func (r *Replica) Queue(i int32, now int64) {
	r.wait.pushBack(i)
	if r.next < 0 {
		r.next = now
	}
}

// Next is the time of the next step, -1 when idle.
func (r *Replica) Next() int64 { return r.next }

// Waiting and Running are the requests in the queue and the batch.
func (r *Replica) Waiting() int { return r.wait.len() }
func (r *Replica) Running() int { return len(r.running) }

// UsedBlocks is the KV blocks held now.
func (r *Replica) UsedBlocks() int64 { return r.p.KVBlocks - int64(r.kv.free) }

// Step runs the engine step due at now (Next) and returns the requests
// that completed in it (valid until the next Step); their Done times
// may lie after the step's end by the per-request overhead.
func (r *Replica) Step(now int64) []int32 {
	r.done = r.done[:0]
	if len(r.running) == 0 && r.wait.len() == 0 {
		r.next = -1
		return r.done
	}
	r.Steps++
	var b Batch
	r.form(&b)
	dur := r.lat.StepUS(&b)
	if r.Slow > 0 && r.Slow != 1 {
		dur = max(1, int64(math.Ceil(float64(dur)*r.Slow)))
	}
	r.execute(now, dur)
	used := r.UsedBlocks()
	r.BlockUS += float64(used) * float64(dur)
	r.BusyUS += float64(dur)
	r.PeakBlocks = max(r.PeakBlocks, used)
	if len(r.running) > 0 || r.wait.len() > 0 {
		r.next = now + dur
	} else {
		r.next = -1
	}
	return r.done
}

// form builds the step's batch as vLLM's scheduler does: running
// requests first, in order, each its next prompt chunk or one decode
// token while the token budget lasts, preempting the newest running
// request when the cache is full; then, if nothing was preempted, new
// requests from the front of the queue while sequences, budget and
// blocks allow.
func (r *Replica) form(b *Batch) {
	budget := int64(r.p.TokenBudget)
	thr := int64(r.p.LongPrefill)
	preempted := false
	// The batch's composition is summed as requests are taken: a
	// preemption only ever removes the running list's tail, which has not
	// been visited yet.
	k := 0
	for ; k < len(r.running); k++ {
		if budget <= 0 {
			break
		}
		i := r.running[k]
		q := &r.Reqs[i]
		q.numNew = 0
		if n := int64(q.In) - q.progress; n > 0 {
			if thr > 0 && thr < n {
				n = thr
			}
			n = min(n, budget)
			if !r.makeRoom(i, n, &budget, &preempted) {
				break
			}
			budget -= n
			q.numNew = int32(n)
			b.Seqs++
			t := float64(n)
			b.PrefillTokens += t
			b.PrefillAttn += t * (float64(q.In) + t/2)
		} else if q.Out > 0 {
			if len(q.blocks) > 0 && q.lastFill < r.kv.bs {
				q.lastFill++ // room in its last block: the common case, inline
			} else if !r.makeRoom(i, 1, &budget, &preempted) {
				break
			}
			budget--
			q.numNew = 1
			b.Seqs++
			b.Decodes++
			b.DecodeCtx += float64(q.progress)
		}
	}
	for ; k < len(r.running); k++ {
		r.Reqs[r.running[k]].numNew = 0 // left out of this step
	}
	for len(r.running) < r.p.MaxSeqs && r.wait.len() > 0 && budget > 0 && !preempted {
		i := r.wait.front()
		q := &r.Reqs[i]
		cached, free := r.kv.cachedPrefix(q)
		start := int64(cached) * int64(r.p.BlockSize)
		if start >= int64(q.In) && q.Group >= 0 {
			// As vLLM: the last prompt token is always computed (it
			// gives the first output token).
			start = int64(q.In) - 1
		}
		n := int64(q.In) - start
		if thr > 0 && thr < n {
			n = thr
		}
		n = min(n, budget)
		if !r.kv.allocPrompt(r.Reqs, i, start, start+n, cached, free) {
			break
		}
		if q.Preempted == 0 {
			q.PrefixHit = int32(start)
			r.PrefixQueries += int64(q.In)
			r.PrefixHits += start
		}
		r.wait.popFront()
		r.running = append(r.running, i)
		budget -= n
		q.numNew = int32(n)
		q.progress = start
		if n > 0 {
			b.Seqs++
			t := float64(n)
			b.PrefillTokens += t
			b.PrefillAttn += t * (float64(q.In) + t/2)
		}
	}
}

// makeRoom allocates n tokens for running request i,
// preempting the newest running requests while the cache is short. It
// reports whether i got its room; false when i itself was preempted or
// is alone and still does not fit.
func (r *Replica) makeRoom(i int32, n int64, budget *int64, preempted *bool) bool {
	q := &r.Reqs[i]
	for {
		var ok bool
		if q.progress < int64(q.In) {
			ok = r.kv.allocPrompt(r.Reqs, i, q.progress, q.progress+n, 0, 0)
		} else {
			ok = r.kv.allocDecode(r.Reqs, i)
		}
		if ok {
			return true
		}
		last := len(r.running) - 1
		if last < 0 {
			return false
		}
		*preempted = true
		v := r.running[last]
		r.running = r.running[:last]
		vq := &r.Reqs[v]
		*budget += int64(vq.numNew)
		vq.numNew = 0
		vq.progress = 0
		vq.First, vq.ITLSum, vq.ITLs = -1, 0, 0
		vq.Preempted++
		r.Preemptions++
		r.kv.release(vq)
		r.wait.pushFront(v)
		if v == i {
			return false
		}
	}
}

// execute advances every request in the batch by the step and takes out
// the finished ones.
func (r *Replica) execute(now, dur int64) {
	c := r.lat.Coeffs()
	perTok := int64(c.Alpha[2])
	keep := r.running[:0]
	for _, i := range r.running {
		q := &r.Reqs[i]
		in := int64(q.In)
		if q.progress < in {
			q.progress += int64(q.numNew)
		} else if q.numNew > 0 {
			q.progress++
			q.ITLSum += dur + perTok
			q.ITLs++
		}
		if q.progress == in && q.First < 0 {
			q.First = now + dur + perTok
		}
		if q.progress >= in+max(int64(q.Out), 1)-1 {
			if q.Out > 0 && q.progress < in+int64(q.Out) {
				// the last token's KV is written before the blocks go
				r.kv.allocDecode(r.Reqs, i)
			}
			r.kv.release(q)
			q.cached = nil
			q.Done = q.First + q.ITLSum
			if q.Out > 0 {
				q.Done += int64(c.Alpha[1])
			}
			r.done = append(r.done, i)
			continue
		}
		keep = append(keep, i)
	}
	r.running = keep
}

// deque is a ring buffer of request indices: the wait queue takes new
// requests at the back and preempted ones at the front, both O(1).
type deque struct {
	buf        []int32
	head, size int
}

func (d *deque) len() int { return d.size }

func (d *deque) grow() {
	n := max(16, 2*len(d.buf))
	nb := make([]int32, n)
	for k := range d.size {
		nb[k] = d.buf[(d.head+k)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

func (d *deque) pushBack(i int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = i
	d.size++
}

func (d *deque) pushFront(i int32) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = i
	d.size++
}

func (d *deque) front() int32 { return d.buf[d.head] }

func (d *deque) popFront() {
	d.head = (d.head + 1) % len(d.buf)
	d.size--
}

// Later is a request added to the replica that joins its queue at At.
type Later struct {
	Req int32
	At  int64
}

// DrainEnd is when the last request on the replica will be done if no
// request joins but those in later (in order of At): the replica's
// future is then fixed, so a copy of it is run to the end (for a replica
// being drained, which must know when to give its GPUs back).
func (r *Replica) DrainEnd(now int64, later []Later) int64 {
	c := *r
	c.Reqs = make([]Req, len(r.Reqs))
	copy(c.Reqs, r.Reqs)
	for k := range c.Reqs {
		q := &c.Reqs[k]
		q.blocks = append([]int32(nil), q.blocks...)
		if q.cached != nil {
			q.cached = append([]int32(nil), q.cached...)
		}
	}
	c.kv = r.kv.clone()
	c.wait.buf = append([]int32(nil), r.wait.buf...)
	c.running = append([]int32(nil), r.running...)
	c.done = nil
	end := now
	for {
		t := c.next
		if len(later) > 0 && (t < 0 || later[0].At <= t) {
			c.Queue(later[0].Req, later[0].At)
			later = later[1:]
			continue
		}
		if t < 0 {
			return end
		}
		for _, k := range c.Step(t) {
			end = max(end, c.Reqs[k].Done)
		}
	}
}
