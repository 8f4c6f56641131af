package iteration

// kvCache is a paged KV cache of fixed-size blocks, as vLLM keeps it: a
// request holds the blocks its tokens fill, in order; freed blocks join an
// LRU free list (a request's last block first, so its prefix survives
// longest) and keep the identity of the prompt block they hold until they
// are handed out again. A preempted request that comes back finds the
// prompt blocks still free and unclaimed and skips recomputing them
// (prefix caching). Requests share no prompts here (each request's
// tokens are its own), so a block's identity is (request, index) and a
// block is held by at most one request.
type kvCache struct {
	bs         int32
	free       int32
	head, tail int32
	next, prev []int32 // free list links (-1: none)
	inUse      []bool
	// keyReq, keyIdx: the prompt block the block holds, found by prefix
	// lookups (-1: none).
	keyReq, keyIdx []int32
	keyGen         []uint32 // the request slot's generation (Recycle)
}

func newKVCache(blocks int64, blockSize int) kvCache {
	n := int32(blocks)
	c := kvCache{bs: int32(blockSize), head: -1, tail: -1,
		next: make([]int32, n), prev: make([]int32, n), inUse: make([]bool, n),
		keyReq: make([]int32, n), keyIdx: make([]int32, n), keyGen: make([]uint32, n)}
	for b := range n {
		c.keyReq[b] = -1
		c.appendFree(b)
	}
	return c
}

func (c *kvCache) appendFree(b int32) {
	c.prev[b], c.next[b] = c.tail, -1
	if c.tail >= 0 {
		c.next[c.tail] = b
	} else {
		c.head = b
	}
	c.tail = b
	c.free++
}

func (c *kvCache) removeFree(b int32) {
	p, n := c.prev[b], c.next[b]
	if p >= 0 {
		c.next[p] = n
	} else {
		c.head = n
	}
	if n >= 0 {
		c.prev[n] = p
	} else {
		c.tail = p
	}
	c.prev[b], c.next[b] = -1, -1
	c.free--
}

// popFree hands out the least recently freed block; the prompt block it
// held is forgotten (its lookup entry cleared, as vLLM evicts the hash).
func (c *kvCache) popFree(reqs []Req) int32 {
	b := c.head
	c.removeFree(b)
	if r := c.keyReq[b]; r >= 0 {
		if q := &reqs[r]; q.cached != nil && q.gen == c.keyGen[b] {
			q.cached[c.keyIdx[b]] = -1
		}
		c.keyReq[b] = -1
	}
	return b
}

// remember records that block b holds prompt block j of request r.
func (c *kvCache) remember(reqs []Req, r int32, j int, b int32) {
	q := &reqs[r]
	if j >= int(q.In/c.bs) {
		return // holds output tokens: no later lookup can match it
	}
	if q.cached == nil {
		q.cached = make([]int32, q.In/c.bs)
		for k := range q.cached {
			q.cached[k] = -1
		}
	}
	q.cached[j] = b
	c.keyReq[b], c.keyIdx[b], c.keyGen[b] = r, int32(j), q.gen
}

// cachedPrefix is how many of request r's leading prompt blocks are still
// in the cache.
func (c *kvCache) cachedPrefix(q *Req) int {
	k := 0
	for k < len(q.cached) && q.cached[k] >= 0 {
		k++
	}
	return k
}

// allocPrompt gives request r room for prompt tokens [start, end), after
// taking its first cached prompt blocks when it holds none; false (and
// nothing changed) when the free blocks do not suffice.
func (c *kvCache) allocPrompt(reqs []Req, r int32, start, end int64, cached int) bool {
	q := &reqs[r]
	n := int32(end - start)
	eff := n
	if len(q.blocks) > 0 {
		if spare := c.bs - q.lastFill; spare > 0 && spare < c.bs {
			eff -= min(spare, eff)
		}
	}
	need := (eff + c.bs - 1) / c.bs
	if need+int32(cached) > c.free {
		return false
	}
	if q.blocks == nil {
		// One allocation for the request's whole life in the cache: its
		// blocks, and where each of its prompt blocks is.
		nb, np := (q.In+q.Out+c.bs)/c.bs, q.In/c.bs
		buf := make([]int32, nb+np)
		q.blocks, q.cached = buf[:0:nb], buf[nb:]
		for k := range q.cached {
			q.cached[k] = -1
		}
	}
	if n == 0 {
		// Nothing new to compute: vLLM (and BLIS) take no blocks, not
		// even the cached ones, until the first decode token.
		return true
	}
	if len(q.blocks) == 0 {
		for k := range cached {
			b := q.cached[k]
			c.removeFree(b)
			c.inUse[b] = true
			q.blocks = append(q.blocks, b)
			q.lastFill = c.bs
		}
	}
	if len(q.blocks) > 0 {
		if f := q.lastFill; f > 0 && f < c.bs {
			add := min(c.bs-f, n)
			q.lastFill += add
			n -= add
			if q.lastFill == c.bs {
				c.remember(reqs, r, len(q.blocks)-1, q.blocks[len(q.blocks)-1])
			}
		}
	}
	for n > 0 {
		b := c.popFree(reqs)
		c.inUse[b] = true
		f := min(c.bs, n)
		q.lastFill = f
		n -= f
		q.blocks = append(q.blocks, b)
		if f == c.bs {
			c.remember(reqs, r, len(q.blocks)-1, b)
		}
	}
	return true
}

// allocDecode gives request r room for one more token; false when it
// needs a new block and none is free.
func (c *kvCache) allocDecode(reqs []Req, r int32) bool {
	q := &reqs[r]
	if len(q.blocks) > 0 && q.lastFill < c.bs {
		// A decode token never completes a prompt block (the block holds
		// this output token), so there is nothing to remember.
		q.lastFill++
		return true
	}
	if c.free == 0 {
		return false
	}
	b := c.popFree(reqs)
	c.inUse[b] = true
	q.lastFill = 1
	q.blocks = append(q.blocks, b)
	return true
}

// release frees all of r's blocks, its last block first.
func (c *kvCache) release(q *Req) {
	for i := len(q.blocks) - 1; i >= 0; i-- {
		b := q.blocks[i]
		c.inUse[b] = false
		c.appendFree(b)
	}
	q.blocks = q.blocks[:0]
	q.lastFill = 0
}
