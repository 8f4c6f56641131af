package policies

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// check verifies t's structure against want, the keys it should hold in
// order: the leaf chain, the inner nodes' bounds, the counts and every
// leaf's summary.
func (t *qtree) check(tb testing.TB, want []qitem) {
	tb.Helper()
	if t.n != len(want) {
		tb.Fatalf("n = %d, want %d", t.n, len(want))
	}
	if t.root == nil {
		if len(want) > 0 || t.first != nil || t.last != nil {
			tb.Fatalf("no root with %d keys", len(want))
		}
		return
	}
	if t.n == 0 && (t.first == nil || t.first != t.last) {
		tb.Fatal("an empty tree keeps one leaf")
	}
	var got []qitem
	var prev *qleaf
	for l := t.first; l != nil; l = l.next {
		if l.prev != prev || l.dead || (l.n == 0 && t.n > 0) || l.lo < 0 || l.lo+l.n > qcap {
			tb.Fatalf("bad leaf %p: prev %p want %p, dead %v, lo %d n %d", l, l.prev, prev, l.dead, l.lo, l.n)
		}
		for i := 0; i < l.n; i++ {
			got = append(got, l.at(i))
		}
		if l.sumOK {
			s := *l.summary()
			l.sumOK = false
			if fresh := *l.summary(); s != fresh {
				tb.Fatalf("stale summary %+v, want %+v", s, fresh)
			}
		}
		prev = l
	}
	if t.last != prev {
		tb.Fatalf("last %p, want %p", t.last, prev)
	}
	if !slices.Equal(got, want) {
		tb.Fatalf("keys %v, want %v", got, want)
	}
	// Every key is reached by descending, and bounds hold.
	var walk func(p *qinner, d int, lo qitem, hasLo bool) int
	walk = func(p *qinner, d int, lo qitem, hasLo bool) int {
		if p.n == 0 || (t.n == 0 && (t.height != 1 || p.n != 1)) {
			tb.Fatalf("inner node of %d children in a tree of %d keys, height %d", p.n, t.n, t.height)
		}
		n := 0
		for i := 0; i < p.n; i++ {
			b := p.keys[i]
			bounded := i > 0 || hasLo
			if i == 0 {
				b = lo
			}
			if d == t.height {
				l := p.leaves[i]
				if l.n == 0 {
					continue
				}
				if bounded && l.at(0).less(b) {
					tb.Fatalf("leaf key %v below its bound %v", l.at(0), b)
				}
				if i+1 < p.n && !l.at(l.n-1).less(p.keys[i+1]) {
					tb.Fatalf("leaf key %v not below the next bound %v", l.at(l.n-1), p.keys[i+1])
				}
				n += l.n
			} else {
				n += walk(p.inner[i], d+1, b, bounded)
			}
		}
		return n
	}
	if n := walk(t.root, 1, qitem{}, false); n != t.n {
		tb.Fatalf("tree holds %d keys, n = %d", n, t.n)
	}
	for _, k := range want {
		l := t.descend(k)
		if p := l.lowerBound(k); p == l.n || l.at(p) != k {
			tb.Fatalf("descend(%v) misses it", k)
		}
	}
}

func testMeta(id JobID) qmeta {
	return qmeta{dur: Time(1 + int(id)%97), size: int32(1 + int(id)%5), class: uint8(int(id) % (numClasses + 1))}
}

func TestQTreeAgainstSortedSlice(t *testing.T) {
	patterns := []struct {
		name string
		key  func(r *rand.Rand, id JobID) qitem
	}{
		{"fcfs", func(_ *rand.Rand, id JobID) qitem { return qitem{a: int64(id), id: id} }},
		{"random", func(r *rand.Rand, id JobID) qitem { return qitem{a: r.Int64N(1000), b: r.Int64N(3), id: id} }},
		{"priority", func(r *rand.Rand, id JobID) qitem { return qitem{f: float64(r.IntN(4)) - float64(id)/100, id: id} }},
	}
	defer func(r int) { qroom = r }(qroom)
	for _, room := range []int{8, qcap} {
		qroom = room
		for _, pat := range patterns {
			for seed := uint64(1); seed <= 4; seed++ {
				t.Run(fmt.Sprintf("room=%d/%s/%d", room, pat.name, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, 7))
					var tr qtree
					var want []qitem
					next := JobID(0)
					cur := qcursor{t: &tr}
					for step := 0; step < 4000; step++ {
						switch op := r.IntN(10); {
						case op < 5 || len(want) == 0: // insert a burst
							for k := r.IntN(40); k >= 0; k-- {
								it := pat.key(r, next)
								next++
								if !tr.insert(it, testMeta(it.id)) {
									t.Fatalf("insert %v refused", it)
								}
								i, _ := slices.BinarySearchFunc(want, it, qitem.cmp)
								want = slices.Insert(want, i, it)
							}
						case op < 7: // delete some, the head or at random
							for k := r.IntN(50); k >= 0 && len(want) > 0; k-- {
								i := 0
								if r.IntN(2) == 0 {
									i = r.IntN(len(want))
								}
								if !tr.delete(want[i]) {
									t.Fatalf("delete %v refused", want[i])
								}
								want = slices.Delete(want, i, i+1)
							}
						default: // a walk taking some of what it visits
							cur.reset()
							var seen []qitem
							rest := slices.Clone(want)
							for {
								if r.IntN(8) == 0 {
									h := hope{freeMilli: -1} // nothing fits
									if r.IntN(2) == 0 {
										h = hope{freeMilli: 3, nodeIdle: 2, idle: 3, gangAbove: 1, test: true, extra: 1000, within: 10}
									}
									n := cur.skip(&h)
									for _, it := range rest[:n] {
										if !h.hopelessJob(testMeta(it.id)) {
											t.Fatalf("skipped %v, which might start", it)
										}
									}
									seen = append(seen, rest[:n]...)
									rest = rest[n:]
								}
								it, ok := cur.next()
								if !ok {
									break
								}
								if len(rest) == 0 || it != rest[0] {
									t.Fatalf("walk gave %v, want %v", it, rest[:min(1, len(rest))])
								}
								rest = rest[1:]
								seen = append(seen, it)
								if r.IntN(3) == 0 {
									if !tr.delete(it) {
										t.Fatalf("take %v refused", it)
									}
									i, _ := slices.BinarySearchFunc(want, it, qitem.cmp)
									want = slices.Delete(want, i, i+1)
								}
							}
							if len(rest) != 0 {
								t.Fatalf("walk ended with %d keys left", len(rest))
							}
						}
						if tr.insert(qitem{id: -1}, qmeta{}) {
							tr.delete(qitem{id: -1})
						} else if !slices.Contains(want, qitem{id: -1}) {
							t.Fatal("insert of a new key refused")
						}
						if len(want) > 0 && tr.insert(want[len(want)/2], qmeta{}) {
							t.Fatalf("duplicate %v accepted", want[len(want)/2])
						}
						if step%1000 == 999 {
							t.Logf("n %d height %d", tr.n, tr.height)
						}
						if step%50 == 0 {
							tr.check(t, want)
						}
					}
					for len(want) > 0 {
						tr.delete(want[0])
						want = want[1:]
					}
					tr.check(t, want)
				})
			}
		}
	}
}

func TestQTreeSummaries(t *testing.T) {
	var tr qtree
	for id := JobID(0); id < 1000; id++ {
		tr.insert(qitem{a: int64(id), id: id}, testMeta(id))
	}
	for id := JobID(0); id < 1000; id += 3 {
		tr.delete(qitem{a: int64(id), id: id})
	}
	for l := tr.first; l != nil; l = l.next {
		want := emptySum
		for i := 0; i < l.n; i++ {
			want.add(testMeta(l.at(i).id))
		}
		if got := *l.summary(); got != want {
			t.Fatalf("summary %+v, want %+v", got, want)
		}
	}
}

func TestMetaOfClasses(t *testing.T) {
	cases := []struct {
		job   Job
		class uint8
		size  int32
	}{
		{Job{Req: cpuOnly(1000)}, classOther, 0},
		{Job{Req: frac(300)}, 0, 300},
		{Job{Req: whole(1)}, 1, 1},
		{Job{Req: whole(2)}, 2, 2},
		{Job{Req: whole(3)}, 3, 3},
		{Job{Req: whole(4)}, 3, 4},
		{Job{Req: whole(8)}, 4, 8},
		{Job{Req: whole(16)}, 5, 16},
		{Job{Req: whole(64)}, 7, 64},
	}
	for _, c := range cases {
		m := metaOf(&c.job, 5)
		if m.class != c.class || (c.class != classOther && m.size != c.size) || m.dur != 5 {
			t.Errorf("metaOf(%+v) = %+v, want class %d size %d", c.job.Req, m, c.class, c.size)
		}
		if c.class != classOther && c.class > 0 && (m.size < classLo[c.class] || m.size > classHi[c.class]) {
			t.Errorf("size %d outside class %d", m.size, c.class)
		}
	}
}

// A leaf is hopeless only if each of its jobs is.
func TestHopelessLeafMeansHopelessJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		h := hope{freeMilli: r.Int64N(3000) - 1, idle: r.Int32N(20), gangAbove: 8, test: r.IntN(2) == 0,
			extra: r.Int64N(20000) - 1000, within: Time(r.Int64N(100))}
		h.nodeIdle = min(h.idle, r.Int32N(9))
		metas := make([]qmeta, 1+r.IntN(6))
		sum := emptySum
		for i := range metas {
			var j Job
			switch k := r.IntN(10); {
			case k == 0:
				j.Req = cpuOnly(1000)
			case k < 3:
				j.Req = frac(int32(1 + r.IntN(999)))
			default:
				j.Req = whole(1 + r.IntN(40))
			}
			metas[i] = metaOf(&j, Time(1+r.IntN(100)))
			sum.add(metas[i])
		}
		if !h.hopeless(&sum) {
			continue
		}
		for _, m := range metas {
			if !h.hopelessJob(m) {
				t.Fatalf("hope %+v: leaf %+v hopeless but not its job %+v", h, sum, m)
			}
		}
	}
}

// reset empties a tree and keeps its leaves; refilling it, in order or
// not, reuses them and gives a sound tree, and the refill after a reset
// allocates no leaf while the pool lasts.
func TestQTreeResetReusesLeaves(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tr qtree
	var want []qitem
	for i := range 1000 {
		it := qitem{f: float64(r.IntN(50)), id: JobID(i)}
		tr.insert(it, testMeta(it.id))
		want = append(want, it)
	}
	slices.SortFunc(want, qitem.cmp)
	tr.check(t, want)
	leaves := map[*qleaf]bool{}
	for l := tr.first; l != nil; l = l.next {
		leaves[l] = true
	}
	for round := range 3 {
		tr.reset()
		tr.check(t, nil)
		if len(tr.pool) < len(leaves) {
			t.Fatalf("round %d: pool of %d leaves, the tree had %d", round, len(tr.pool), len(leaves))
		}
		n := 400 + 300*round
		want = want[:0]
		for i := range n {
			it := qitem{f: float64(r.IntN(50)), id: JobID(i)}
			want = append(want, it)
		}
		if round == 1 {
			slices.SortFunc(want, qitem.cmp) // ascending: each behind the last
		}
		for _, it := range want {
			tr.insert(it, testMeta(it.id))
		}
		slices.SortFunc(want, qitem.cmp)
		tr.check(t, want)
		for l := tr.first; l != nil; l = l.next {
			if !leaves[l] && len(tr.pool) > 0 {
				t.Fatalf("round %d: a new leaf while %d pooled ones were left", round, len(tr.pool))
			}
			leaves[l] = true
		}
	}
}
