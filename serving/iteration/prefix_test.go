package iteration

import (
	"encoding/binary"
	"strings"
	"testing"
)

// prefixReplica is a replica with 16-token blocks and a cache of blocks
// blocks; requests are queued at their arrival (no queueing delay).
func prefixReplica(t *testing.T, blocks int64) *Replica {
	t.Helper()
	_, lat := qwenH100(t)
	r, err := NewReplica(Params{MaxSeqs: 8, TokenBudget: 2048, BlockSize: 16, KVBlocks: blocks, MaxReqTokens: 160}, lat)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// addGroup adds and queues a request of group g sharing prefix tokens.
func addGroup(r *Replica, at int64, in, out, g, prefix int32) int32 {
	i := r.Add(at, in, out)
	r.SetPrefix(i, g, prefix)
	r.Queue(i, at)
	return i
}

func runAll(t *testing.T, r *Replica) {
	t.Helper()
	for t0 := r.Next(); t0 >= 0; t0 = r.Next() {
		r.Step(t0)
		checkBooks(t, r)
	}
}

// TestPrefixSequential: A (100 prompt tokens, the first 64 its group's)
// runs alone and ends; B of the same group comes later. B finds A's four
// prefix blocks free but still named, so its first step computes only
// its 36 other tokens, and its TTFT is that one step: the latency
// model's time for a batch of one 36-token chunk of a 100-token prompt,
// plus the per-token overhead. A's two private full blocks (tokens
// 64..95) are A's own: B does not find them.
func TestPrefixSequential(t *testing.T) {
	r := prefixReplica(t, 100)
	a := addGroup(r, 0, 100, 2, 0, 64)
	runAll(t, r)
	const at = 10_000_000
	b := addGroup(r, at, 100, 2, 0, 64)
	r.Step(r.Next())
	checkBooks(t, r)
	qb := &r.Reqs[b]
	step := r.lat.StepUS(&Batch{Seqs: 1, PrefillTokens: 36, PrefillAttn: 36 * (100 + 18.0)})
	if want := step + int64(r.lat.Coeffs().Alpha[2]); qb.First-qb.Arrive != want {
		t.Errorf("B's TTFT %d µs, want one step of 36 tokens %d µs", qb.First-qb.Arrive, want)
	}
	if r.Reqs[a].PrefixHit != 0 || qb.PrefixHit != 64 {
		t.Errorf("hit tokens A %d, B %d; want 0 and 64", r.Reqs[a].PrefixHit, qb.PrefixHit)
	}
	if r.PrefixQueries != 200 || r.PrefixHits != 64 {
		t.Errorf("queries %d hits %d, want 200 and 64", r.PrefixQueries, r.PrefixHits)
	}
	// B holds 7 blocks: the group's 4 and 3 of its own (36 tokens).
	if used := r.UsedBlocks(); used != 7 {
		t.Errorf("%d blocks held after B's prefill, want 7", used)
	}
	runAll(t, r)
}

// TestPrefixSharedCountedOnce: two requests of one group admitted in the
// same step share the prefix blocks the first one fills (vLLM names a
// block when it is allocated): 7 blocks for A, 3 more for B (36 tokens),
// 10 held, the group's 4 with two holders each.
func TestPrefixSharedCountedOnce(t *testing.T) {
	r := prefixReplica(t, 100)
	a := addGroup(r, 0, 100, 2, 0, 64)
	b := addGroup(r, 0, 100, 2, 0, 64)
	r.Step(0)
	checkBooks(t, r)
	if used := r.UsedBlocks(); used != 10 {
		t.Errorf("%d blocks held, want 10 (the shared 4 once)", used)
	}
	for j := range 4 {
		if ba, bb := r.Reqs[a].blocks[j], r.Reqs[b].blocks[j]; ba != bb || r.kv.refs[ba] != 2 {
			t.Errorf("prefix block %d: A holds %d, B %d (refs %d); want one block, two holders", j, ba, bb, r.kv.refs[ba])
		}
	}
	if r.Reqs[b].PrefixHit != 64 {
		t.Errorf("B's hit %d tokens, want 64", r.Reqs[b].PrefixHit)
	}
	runAll(t, r)
	if r.UsedBlocks() != 0 {
		t.Errorf("%d blocks held after both ended", r.UsedBlocks())
	}
}

// TestPrefixFullyCached: a prompt that is all prefix, cached, still
// computes its last token (in its last shared block: no new block).
func TestPrefixFullyCached(t *testing.T) {
	r := prefixReplica(t, 100)
	addGroup(r, 0, 64, 2, 0, 64)
	runAll(t, r)
	b := addGroup(r, 1_000_000, 64, 2, 0, 64)
	r.Step(r.Next())
	checkBooks(t, r)
	qb := &r.Reqs[b]
	step := r.lat.StepUS(&Batch{Seqs: 1, PrefillTokens: 1, PrefillAttn: 1 * (64 + 0.5)})
	if qb.PrefixHit != 63 || qb.First-qb.Arrive != step+int64(r.lat.Coeffs().Alpha[2]) {
		t.Errorf("hit %d tokens, TTFT %d µs; want 63 and one 1-token step %d µs", qb.PrefixHit, qb.First-qb.Arrive, step+int64(r.lat.Coeffs().Alpha[2]))
	}
	if r.UsedBlocks() != 4 {
		t.Errorf("%d blocks held, want the group's 4", r.UsedBlocks())
	}
	runAll(t, r)
}

// TestPrefixEviction: a 10-block cache. A (group 0, 64 prompt tokens, 1
// output) takes blocks 0-3 for its prompt, 4 for its token; freed last
// first, the free list is 5 6 7 8 9 4 3 2 1 0. C (no group, 100 + 1
// tokens) takes the first 7 of them: 5-9, 4 and 3, the group's block 3,
// whose name is then cleared. D of group 0 finds blocks 0-2: 48 tokens.
func TestPrefixEviction(t *testing.T) {
	r := prefixReplica(t, 10)
	addGroup(r, 0, 64, 1, 0, 64)
	runAll(t, r)
	if g := r.kv.groups[0]; len(g) != 4 || g[0] != 0 || g[3] != 3 {
		t.Fatalf("group 0's blocks %v, want [0 1 2 3]", g)
	}
	r.Queue(r.Add(1_000_000, 100, 1), 1_000_000)
	runAll(t, r)
	if g := r.kv.groups[0]; g[3] != -1 || g[2] != 2 || r.kv.keyReq[3] != -1 {
		t.Fatalf("group 0's blocks %v, block 3's key %d; want block 3 evicted and unnamed", g, r.kv.keyReq[3])
	}
	d := addGroup(r, 2_000_000, 64, 1, 0, 64)
	runAll(t, r)
	if r.Reqs[d].PrefixHit != 48 {
		t.Errorf("D's hit %d tokens, want 48", r.Reqs[d].PrefixHit)
	}
}

// TestPrefixPreemptedOwnBlocks: a group request let go of (as a
// preemption does) finds its group's blocks and its own private ones
// beyond the prefix: 32 prefix tokens (2 blocks) and 2 private blocks
// of its 70-token prompt, all free (4 of them).
func TestPrefixPreemptedOwnBlocks(t *testing.T) {
	r := prefixReplica(t, 100)
	i := r.Add(0, 70, 5)
	r.SetPrefix(i, 3, 40)
	if !r.kv.allocPrompt(r.Reqs, i, 0, 70, 0, 0) {
		t.Fatal("no room")
	}
	q := &r.Reqs[i]
	if len(q.blocks) != 5 || q.cached[2] != q.blocks[2] || q.cached[0] != -1 {
		t.Fatalf("blocks %v cached %v: want 5 blocks, prompt block 2 private, 0 the group's", q.blocks, q.cached)
	}
	r.kv.release(q)
	if k, free := r.kv.cachedPrefix(q); k != 4 || free != 4 {
		t.Errorf("found %d blocks (%d free), want 4 (4)", k, free)
	}
	// Without a group, as in BLIS's runs, the same holds for all four.
	j := r.Add(0, 70, 5)
	r.kv.allocPrompt(r.Reqs, j, 0, 70, 0, 0)
	r.kv.release(&r.Reqs[j])
	if k, _ := r.kv.cachedPrefix(&r.Reqs[j]); k != 4 {
		t.Errorf("without a group: found %d blocks, want 4", k)
	}
	checkBooks(t, r)
}

// checkBooks: the free list holds exactly the blocks no request holds,
// each block's reference count is its holders, free + held distinct
// blocks = capacity, and every name points both ways.
func checkBooks(t testing.TB, r *Replica) {
	t.Helper()
	c := &r.kv
	holders := make([]int32, len(c.refs))
	for k := range r.Reqs {
		for _, b := range r.Reqs[k].blocks {
			holders[b]++
		}
	}
	onList := make([]bool, len(c.refs))
	n := int32(0)
	for b := c.head; b >= 0; b = c.next[b] {
		if onList[b] || n > int32(len(c.refs)) {
			t.Fatalf("free list loops at block %d", b)
		}
		onList[b] = true
		n++
	}
	if n != c.free {
		t.Fatalf("free list has %d blocks, free says %d", n, c.free)
	}
	held := int32(0)
	for b, k := range c.refs {
		if k < 0 || k != holders[b] {
			t.Fatalf("block %d: refs %d, held by %d requests", b, k, holders[b])
		}
		if (k == 0) != onList[b] {
			t.Fatalf("block %d: refs %d, on the free list %v", b, k, onList[b])
		}
		if k > 0 {
			held++
		}
	}
	if held+c.free != int32(len(c.refs)) {
		t.Fatalf("held %d + free %d != capacity %d", held, c.free, len(c.refs))
	}
	for g, s := range c.groups {
		for j, b := range s {
			if b >= 0 && (c.keyReq[b] != int32(-2-g) || c.keyIdx[b] != int32(j)) {
				t.Fatalf("group %d block %d is %d, named (%d, %d)", g, j, b, c.keyReq[b], c.keyIdx[b])
			}
		}
	}
	for b, k := range c.keyReq {
		if k <= -2 {
			if g := int(-2 - k); g >= len(c.groups) || c.groups[g][c.keyIdx[b]] != int32(b) {
				t.Fatalf("block %d named group %d block %d, which is not it", b, g, c.keyIdx[b])
			}
		}
	}
}

// FuzzPrefixCache runs requests drawn from the bytes (groups, prefixes,
// lengths, arrivals) through a small replica, so that preemption,
// sharing and eviction all happen, and checks the books after every
// step; every request must end.
func FuzzPrefixCache(f *testing.F) {
	f.Add([]byte("prefix caching across requests of a group, with a cache small enough to preempt"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200, 100, 50, 25, 12, 6, 3, 1, 0, 255, 255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 9})
	f.Add([]byte(strings.Repeat("\x00\x40\x40\x05", 30)))
	_, lat := qwenH100(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Params{MaxSeqs: 4, TokenBudget: 96, LongPrefill: 40, BlockSize: 16, KVBlocks: 20, MaxReqTokens: 300}
		r, err := NewReplica(p, lat)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(0)
		var ids []int32
		for len(data) >= 4 && len(ids) < 60 {
			v := binary.LittleEndian.Uint32(data)
			data = data[4:]
			in := int32(v%250) + 1
			out := int32(v>>8%40) + 1
			in = min(in, int32(p.MaxReqTokens)-out)
			g := int32(v>>16%4) - 1
			i := r.Add(at, in, out)
			r.SetPrefix(i, g, int32(v>>20%300))
			ids = append(ids, i)
			at += int64(v >> 26 * 1000)
		}
		next := 0
		for {
			step := r.Next()
			if next < len(ids) && (step < 0 || r.Reqs[ids[next]].Arrive <= step) {
				r.Queue(ids[next], r.Reqs[ids[next]].Arrive)
				next++
				continue
			}
			if step < 0 {
				break
			}
			r.Step(step)
			checkBooks(t, r)
		}
		for _, i := range ids {
			if q := r.Reqs[i]; q.Done < 0 || q.PrefixHit < 0 || q.PrefixHit >= q.In {
				t.Fatalf("request %d: done %d, hit %d of %d tokens", i, q.Done, q.PrefixHit, q.In)
			}
		}
		if r.UsedBlocks() != 0 || r.PrefixHits > r.PrefixQueries {
			t.Fatalf("%d blocks held at the end; hits %d of %d", r.UsedBlocks(), r.PrefixHits, r.PrefixQueries)
		}
	})
}

// TestBLISTracePrefixColumns: prefix_group names become ids in the order
// they first appear (an empty one: none), and a prefix longer than the
// prompt is an error naming the line and column; a replay honours them
// (the second request of group "sys" finds its 48-token prefix).
func TestBLISTracePrefixColumns(t *testing.T) {
	in := "arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n" +
		"0,64,2,sys,48\n5000000,64,2,sys,48\n6000000,64,2,,\n7000000,80,2,other,16\n"
	reqs, err := ParseBLISTrace(strings.NewReader(in), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range [][2]int32{{0, 48}, {0, 48}, {-1, 0}, {1, 16}} {
		if reqs[k].Group != w[0] || reqs[k].Prefix != w[1] {
			t.Errorf("row %d: group %d prefix %d, want %d %d", k, reqs[k].Group, reqs[k].Prefix, w[0], w[1])
		}
	}
	p, lat := qwenH100(t)
	r, err := Replay(p, lat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if h := []int32{r.Reqs[0].PrefixHit, r.Reqs[1].PrefixHit, r.Reqs[2].PrefixHit, r.Reqs[3].PrefixHit}; h[0] != 0 || h[1] != 48 || h[2] != 0 || h[3] != 0 {
		t.Errorf("hit tokens %v, want [0 48 0 0]", h)
	}
	_, err = ParseBLISTrace(strings.NewReader("arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_length\n0,64,2,sys,65\n"), "t.csv")
	if want := `t.csv:2: prefix_length: want a whole number of tokens from 0 to input_tokens (64), got "65"`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
