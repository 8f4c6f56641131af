package iteration

// kvCache is a paged KV cache of fixed-size blocks, as vLLM keeps it: a
// request holds the blocks its tokens fill, in order; a block no request
// holds joins an LRU free list (a request's last block first, so its
// prefix survives longest) and keeps the identity of the prompt block it
// holds until it is handed out again (automatic prefix caching).
//
// A full prompt block has one of two identities. Inside the prefix a
// request shares with its prefix group (a system prompt, a few-shot
// preamble) it is (group, index): any request of the group finds it,
// held by others (then the block is shared and counted once) or free.
// Beyond the prefix it is (request, index), private: only the request
// itself, back after a preemption, finds it. Requests without a group
// have private blocks only, as in BLIS's runs.
type kvCache struct {
	bs         int32
	free       int32
	head, tail int32
	next, prev []int32 // free list links (-1: none)
	refs       []int32 // requests holding each block (0: on the free list)
	// keyReq, keyIdx: the prompt block a block holds, found by prefix
	// lookups: keyReq ≥ 0 is a request's private block keyIdx, -1 none,
	// ≤ -2 block keyIdx of prefix group -2-keyReq.
	keyReq, keyIdx []int32
	keyGen         []uint32 // the request slot's generation (Recycle)
	// groups[g][j] is the block holding group g's prefix block j (-1:
	// none); grown as groups fill blocks.
	groups [][]int32
}

func newKVCache(blocks int64, blockSize int) kvCache {
	n := int32(blocks)
	c := kvCache{bs: int32(blockSize), head: -1, tail: -1,
		next: make([]int32, n), prev: make([]int32, n), refs: make([]int32, n),
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
	c.refs[b] = 1
	if c.keyReq[b] != -1 {
		c.forget(reqs, b)
	}
	return b
}

// forget clears the lookup entry of the prompt block b holds.
func (c *kvCache) forget(reqs []Req, b int32) {
	if r := c.keyReq[b]; r >= 0 {
		if q := &reqs[r]; q.cached != nil && q.gen == c.keyGen[b] {
			q.cached[c.keyIdx[b]] = -1
		}
	} else {
		c.groups[-2-r][c.keyIdx[b]] = -1
	}
	c.keyReq[b] = -1
}

// prefixBlocks is how many of q's full prompt blocks belong to its
// prefix group.
func (c *kvCache) prefixBlocks(q *Req) int {
	if q.Group < 0 {
		return 0
	}
	return int(min(q.Prefix, q.In) / c.bs)
}

// remember records that block b holds private prompt block j of request
// r (a block inside a group's prefix goes to rememberGroup instead).
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

// rememberGroup records that block b holds block j of q's group's
// prefix, unless another block already does; false when block j lies
// beyond the prefix (a private block). A group block another request
// filled first keeps its entry: b then stays unnamed.
func (c *kvCache) rememberGroup(q *Req, j int, b int32) bool {
	if j >= c.prefixBlocks(q) {
		return false
	}
	g := int(q.Group)
	for len(c.groups) <= g {
		c.groups = append(c.groups, nil)
	}
	for len(c.groups[g]) <= j {
		c.groups[g] = append(c.groups[g], -1)
	}
	if c.groups[g][j] < 0 {
		c.groups[g][j] = b
		c.keyReq[b], c.keyIdx[b] = int32(-2-g), int32(j)
	}
	return true
}

// blockAt is the block holding q's prompt block j, -1 when none does;
// pb is prefixBlocks(q).
func (c *kvCache) blockAt(q *Req, j, pb int) int32 {
	if j < pb {
		g := int(q.Group)
		if g >= len(c.groups) || j >= len(c.groups[g]) {
			return -1
		}
		return c.groups[g][j]
	}
	if j >= len(q.cached) {
		return -1
	}
	return q.cached[j]
}

// cachedPrefix is how many of q's leading prompt blocks are in the
// cache, and how many of those are on the free list (taking them uses
// up free blocks; sharing a held one does not).
func (c *kvCache) cachedPrefix(q *Req) (k int, free int32) {
	pb := c.prefixBlocks(q)
	if pb == 0 {
		// The common case, requests without a group: private blocks,
		// always free (only the request itself holds them).
		for k < len(q.cached) && q.cached[k] >= 0 {
			k++
		}
		return k, int32(k)
	}
	for n := int(q.In / c.bs); k < n; k++ {
		b := c.blockAt(q, k, pb)
		if b < 0 {
			break
		}
		if c.refs[b] == 0 {
			free++
		}
	}
	return k, free
}

// allocPrompt gives request r room for prompt tokens [start, end), after
// taking its first cached prompt blocks (of which free are on the free
// list) when it holds none; false (and nothing changed) when the free
// blocks do not suffice. start may fall one token short of the cached
// blocks' end: a request whose prompt is all cached recomputes its last
// token in its last cached block.
func (c *kvCache) allocPrompt(reqs []Req, r int32, start, end int64, cached int, free int32) bool {
	q := &reqs[r]
	n := int32(end - start)
	eff := n
	spare := int32(0) // room left in the last cached block
	if len(q.blocks) > 0 {
		if s := c.bs - q.lastFill; s > 0 && s < c.bs {
			eff -= min(s, eff)
		}
	} else if cached > 0 {
		spare = int32(int64(cached)*int64(c.bs) - start)
		eff -= min(spare, eff)
	}
	need := (eff + c.bs - 1) / c.bs
	if need+free > c.free {
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
		// Nothing new to compute (a request without a group, back after
		// a preemption): BLIS takes no blocks, not even the cached ones,
		// until the first decode token.
		return true
	}
	if len(q.blocks) == 0 && cached > 0 {
		pb := c.prefixBlocks(q)
		for k := range cached {
			b := c.blockAt(q, k, pb)
			if c.refs[b] == 0 {
				c.removeFree(b)
			}
			c.refs[b]++
			q.blocks = append(q.blocks, b)
		}
		q.lastFill = c.bs - spare
	}
	if len(q.blocks) > 0 {
		if f := q.lastFill; f > 0 && f < c.bs {
			add := min(c.bs-f, n)
			q.lastFill += add
			n -= add
			if q.lastFill == c.bs {
				if b := q.blocks[len(q.blocks)-1]; c.keyReq[b] == -1 && (q.Group < 0 || !c.rememberGroup(q, len(q.blocks)-1, b)) {
					c.remember(reqs, r, len(q.blocks)-1, b)
				}
			}
		}
	}
	for n > 0 {
		b := c.popFree(reqs)
		f := min(c.bs, n)
		q.lastFill = f
		n -= f
		q.blocks = append(q.blocks, b)
		if f == c.bs && (q.Group < 0 || !c.rememberGroup(q, len(q.blocks)-1, b)) {
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
	q.lastFill = 1
	q.blocks = append(q.blocks, b)
	return true
}

// release lets go of all of r's blocks, its last block first; a block
// joins the free list when its last holder lets go.
func (c *kvCache) release(q *Req) {
	for i := len(q.blocks) - 1; i >= 0; i-- {
		b := q.blocks[i]
		if n := &c.refs[b]; *n == 1 {
			*n = 0
			c.appendFree(b)
		} else {
			*n--
		}
	}
	q.blocks = q.blocks[:0]
	q.lastFill = 0
}

// clone is a deep copy (DrainEnd runs one to the end).
func (c *kvCache) clone() kvCache {
	d := *c
	d.next = append([]int32(nil), c.next...)
	d.prev = append([]int32(nil), c.prev...)
	d.refs = append([]int32(nil), c.refs...)
	d.keyReq = append([]int32(nil), c.keyReq...)
	d.keyIdx = append([]int32(nil), c.keyIdx...)
	d.keyGen = append([]uint32(nil), c.keyGen...)
	d.groups = make([][]int32, len(c.groups))
	for g, s := range c.groups {
		d.groups[g] = append([]int32(nil), s...)
	}
	return d
}
