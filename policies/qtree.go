package policies

import (
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// qtree is the queue orders' index: a B+ tree of unique qitem keys, in
// ascending order of (f, a, b, id), each order filling only the fields its
// key uses. The leaves are linked and keep their items in a window of a
// fixed array, so that taking the first job and queueing one behind the
// last, the FCFS pattern, cost O(1) and never descend the tree. Each leaf
// also summarises its jobs' requests and durations (qsum), so that the
// backfill walk can step over a whole leaf of jobs none of which could
// start.
//
// Inner nodes hold for each child a lower bound of its keys (keys[0] is
// never read); a bound stays valid when keys leave, so only splits and
// removals of children touch them. A leaf left with under a quarter of its
// room merges with a sibling when the two fit in three quarters; an empty
// one is removed, except the last, which an empty tree keeps.
type qtree struct {
	root        *qinner // nil when empty
	height      int     // inner levels; leaves hang from the deepest
	first, last *qleaf
	n           int
	ver         uint64 // counts changes, for cursors
	path        []qstep
	// spare is a removed leaf kept for the next split. Only inserts reuse
	// it, and no walk is under way during an insert, so no cursor still
	// stands on it.
	spare *qleaf
	// pool holds the leaves of a tree emptied by reset, for the inserts
	// that refill it.
	pool []*qleaf
}

// qcap is the most items a leaf and children an inner node hold; qroom,
// at most qcap, is what they are filled to (tests lower it to build deep
// trees from few keys).
const qcap = 64

var qroom = qcap

type qleaf struct {
	lo, n      int // the items are keys[lo:lo+n] and meta[lo:lo+n]
	keys       [qcap]qitem
	meta       [qcap]qmeta
	next, prev *qleaf
	sum        qsum
	sumOK      bool
	dead       bool // removed from the tree (a cursor on it must seek)
}

type qinner struct {
	n      int
	keys   [qcap]qitem // keys[i] <= every key under child i
	inner  [qcap]*qinner
	leaves [qcap]*qleaf // the children, at the deepest inner level
}

// qstep is one inner node on the way down and the child taken.
type qstep struct {
	node *qinner
	i    int
}

// cmp is -1, 0 or +1 as x sorts before, with or after y.
func (x qitem) cmp(y qitem) int {
	switch {
	case x.less(y):
		return -1
	case y.less(x):
		return 1
	}
	return 0
}

func (x qitem) less(y qitem) bool {
	if x.f != y.f {
		return x.f < y.f
	}
	if x.a != y.a {
		return x.a < y.a
	}
	if x.b != y.b {
		return x.b < y.b
	}
	return x.id < y.id
}

func (t *qtree) len() int { return t.n }

// child is the index of the child of p whose keys may hold k.
func (p *qinner) child(k qitem) int {
	lo, hi := 1, p.n // first i in [1, n) with k < keys[i]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k.less(p.keys[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// lowerBound is the position of the first item >= k (n if none).
func (l *qleaf) lowerBound(k qitem) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.keys[l.lo+m].less(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// upperBound is the position of the first item > k (n if none).
func (l *qleaf) upperBound(k qitem) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k.less(l.keys[l.lo+m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func (l *qleaf) at(i int) qitem { return l.keys[l.lo+i] }

// descend finds the leaf whose keys may hold k, recording the way in
// t.path.
func (t *qtree) descend(k qitem) *qleaf {
	t.path = t.path[:0]
	p := t.root
	for d := 1; ; d++ {
		i := p.child(k)
		t.path = append(t.path, qstep{p, i})
		if d == t.height {
			return p.leaves[i]
		}
		p = p.inner[i]
	}
}

// insert adds k, with its job's summary m; it returns false, changing
// nothing, if k is already there.
func (t *qtree) insert(k qitem, m qmeta) bool {
	if t.root == nil {
		l := t.newLeaf()
		t.root = &qinner{n: 1}
		t.root.leaves[0], t.root.keys[0] = l, k
		t.height, t.first, t.last = 1, l, l
	}
	var l *qleaf
	var pos int
	if last := t.last; last.n > 0 && last.at(last.n-1).less(k) {
		l, pos = last, last.n // behind every key: the common FCFS case
		if l.n < qroom {
			t.put(l, pos, k, m)
			return true
		}
		t.descend(k)
	} else {
		l = t.descend(k)
		pos = l.lowerBound(k)
		if pos < l.n && l.at(pos) == k {
			return false
		}
		if l.n < qroom {
			t.put(l, pos, k, m)
			return true
		}
	}
	t.split(l, pos, k, m)
	return true
}

// put stores k at position pos of l, which has room.
func (t *qtree) put(l *qleaf, pos int, k qitem, m qmeta) {
	switch {
	case pos == l.n && l.lo+l.n < qcap: // behind the window: nothing moves
	case l.lo+l.n < qcap && (pos >= l.n/2 || l.lo == 0):
		copy(l.keys[l.lo+pos+1:l.lo+l.n+1], l.keys[l.lo+pos:l.lo+l.n])
		copy(l.meta[l.lo+pos+1:l.lo+l.n+1], l.meta[l.lo+pos:l.lo+l.n])
	default: // room before the window
		copy(l.keys[l.lo-1:l.lo+pos-1], l.keys[l.lo:l.lo+pos])
		copy(l.meta[l.lo-1:l.lo+pos-1], l.meta[l.lo:l.lo+pos])
		l.lo--
	}
	l.keys[l.lo+pos], l.meta[l.lo+pos] = k, m
	l.n++
	if l.sumOK {
		l.sum.add(m)
	}
	t.n++
	t.ver++
}

// compact moves l's items to the start of its arrays.
func (l *qleaf) compact() {
	if l.lo == 0 {
		return
	}
	copy(l.keys[:l.n], l.keys[l.lo:l.lo+l.n])
	copy(l.meta[:l.n], l.meta[l.lo:l.lo+l.n])
	l.lo = 0
}

// split splits the full leaf l, on the way in t.path, to insert k at pos.
// Behind the last key it starts a new leaf, so that a queue filled in
// order packs its leaves full.
func (t *qtree) split(l *qleaf, pos int, k qitem, m qmeta) {
	l.compact()
	r := t.spare
	if r != nil {
		t.spare = nil
		r.lo, r.n, r.sumOK, r.dead = 0, 0, false, false // its items are never read
	} else {
		r = t.newLeaf()
	}
	r.next, r.prev = l.next, l
	if l.next != nil {
		l.next.prev = r
	} else {
		t.last = r
	}
	l.next = r
	if pos == l.n && r.next == nil {
		r.keys[0], r.meta[0], r.n = k, m, 1
		t.n++
		t.ver++
	} else {
		half := l.n / 2
		r.n = copy(r.keys[:], l.keys[half:l.n])
		copy(r.meta[:], l.meta[half:l.n])
		l.n = half
		l.sumOK = false
		if pos <= half {
			t.put(l, pos, k, m)
		} else {
			t.put(r, pos-half, k, m)
		}
	}
	t.addChild(len(t.path)-1, r.at(0), nil, r)
}

// newLeaf is an empty leaf, from the pool when it has one.
func (t *qtree) newLeaf() *qleaf {
	n := len(t.pool)
	if n == 0 {
		return &qleaf{}
	}
	l := t.pool[n-1]
	t.pool[n-1] = nil
	t.pool = t.pool[:n-1]
	l.lo, l.n, l.sumOK, l.dead, l.next, l.prev = 0, 0, false, false, nil, nil // its items are never read
	return l
}

// reset empties t and keeps its leaves in the pool, so that refilling it
// (the multifactor order's recomputation) reuses them. No cursor may be
// walking t.
func (t *qtree) reset() {
	pool := t.pool
	for l := t.first; l != nil; l = l.next {
		pool = append(pool, l)
	}
	*t = qtree{ver: t.ver + 1, path: t.path[:0], pool: pool}
}

// addChild inserts a child (an inner node or a leaf) with lower bound k
// right after the child taken at path level d, splitting full nodes up to
// the root.
func (t *qtree) addChild(d int, k qitem, in *qinner, lf *qleaf) {
	p, i := t.path[d].node, t.path[d].i+1
	if p.n < qroom {
		p.insertAt(i, k, in, lf)
		return
	}
	q := &qinner{}
	half := p.n / 2
	q.n = copy(q.keys[:], p.keys[half:p.n])
	copy(q.inner[:], p.inner[half:p.n])
	copy(q.leaves[:], p.leaves[half:p.n])
	clear(p.inner[half:p.n])
	clear(p.leaves[half:p.n])
	p.n = half
	if i <= half {
		p.insertAt(i, k, in, lf)
	} else {
		q.insertAt(i-half, k, in, lf)
	}
	if d == 0 {
		root := &qinner{n: 2}
		root.keys[0], root.keys[1] = p.keys[0], q.keys[0]
		root.inner[0], root.inner[1] = p, q
		t.root = root
		t.height++
		return
	}
	t.addChild(d-1, q.keys[0], q, nil)
}

func (p *qinner) insertAt(i int, k qitem, in *qinner, lf *qleaf) {
	copy(p.keys[i+1:p.n+1], p.keys[i:p.n])
	copy(p.inner[i+1:p.n+1], p.inner[i:p.n])
	copy(p.leaves[i+1:p.n+1], p.leaves[i:p.n])
	p.keys[i], p.inner[i], p.leaves[i] = k, in, lf
	p.n++
}

func (p *qinner) removeAt(i int) {
	copy(p.keys[i:p.n-1], p.keys[i+1:p.n])
	copy(p.inner[i:p.n-1], p.inner[i+1:p.n])
	copy(p.leaves[i:p.n-1], p.leaves[i+1:p.n])
	p.n--
	p.inner[p.n], p.leaves[p.n] = nil, nil
}

// delete removes k; false if it is not there.
func (t *qtree) delete(k qitem) bool {
	if t.root == nil {
		return false
	}
	if f := t.first; f.n > 1 && f.at(0) == k {
		f.lo++ // the head of the queue: the common FCFS case
		f.n--
		f.sumOK = false
		t.n--
		t.ver++
		if f.n < qroom/4 {
			t.descend(k)
			t.rebalance(f)
		}
		return true
	}
	l := t.descend(k)
	pos := l.lowerBound(k)
	if pos == l.n || l.at(pos) != k {
		return false
	}
	if pos < l.n/2 {
		copy(l.keys[l.lo+1:l.lo+pos+1], l.keys[l.lo:l.lo+pos])
		copy(l.meta[l.lo+1:l.lo+pos+1], l.meta[l.lo:l.lo+pos])
		l.lo++
	} else {
		copy(l.keys[l.lo+pos:l.lo+l.n-1], l.keys[l.lo+pos+1:l.lo+l.n])
		copy(l.meta[l.lo+pos:l.lo+l.n-1], l.meta[l.lo+pos+1:l.lo+l.n])
	}
	l.n--
	l.sumOK = false
	t.n--
	t.ver++
	if l.n < qroom/4 {
		t.rebalance(l)
	}
	return true
}

// rebalance removes the leaf l, on the way in t.path, if it is empty, or
// merges it with a sibling when both fit in three quarters of a leaf.
func (t *qtree) rebalance(l *qleaf) {
	d := len(t.path) - 1
	p, i := t.path[d].node, t.path[d].i
	if l.n == 0 {
		t.removeLeaf(l, d)
		return
	}
	switch {
	case i+1 < p.n && l.n+p.leaves[i+1].n <= qroom*3/4:
		r := p.leaves[i+1]
		l.compact()
		copy(l.keys[l.n:], r.keys[r.lo:r.lo+r.n])
		copy(l.meta[l.n:], r.meta[r.lo:r.lo+r.n])
		l.n += r.n
		l.sumOK = false
		r.n = 0
		t.path[d].i = i + 1
		t.removeLeaf(r, d)
	case i > 0 && l.n+p.leaves[i-1].n <= qroom*3/4:
		s := p.leaves[i-1]
		s.compact()
		copy(s.keys[s.n:], l.keys[l.lo:l.lo+l.n])
		copy(s.meta[s.n:], l.meta[l.lo:l.lo+l.n])
		s.n += l.n
		s.sumOK = false
		l.n = 0
		t.removeLeaf(l, d)
	}
}

// removeLeaf unlinks l, the child taken at path level d, and removes the
// inner nodes this leaves empty.
func (t *qtree) removeLeaf(l *qleaf, d int) {
	if t.n == 0 {
		// The last leaf: keep it, empty, under one inner node, so that a
		// queue that keeps emptying and refilling allocates nothing.
		p := t.path[d].node
		p.n, p.keys[0], p.leaves[0] = 1, qitem{}, l
		l.lo, l.sumOK, l.prev, l.next = 0, false, nil, nil
		t.root, t.height, t.first, t.last = p, 1, l, l
		return
	}
	l.dead = true
	t.spare = l
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		t.first = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	} else {
		t.last = l.prev
	}
	for ; d >= 0; d-- {
		p := t.path[d].node
		p.removeAt(t.path[d].i)
		if p.n > 0 {
			break
		}
	}
	for t.height > 1 && t.root.n == 1 {
		t.root = t.root.inner[0]
		t.height--
	}
}

// ascend calls yield on the items in order until it returns false.
func (t *qtree) ascend(yield func(qitem) bool) {
	for l := t.first; l != nil; l = l.next {
		for i := 0; i < l.n; i++ {
			if !yield(l.at(i)) {
				return
			}
		}
	}
}

// max is the largest item.
func (t *qtree) max() (qitem, bool) {
	if t.n == 0 {
		return qitem{}, false
	}
	return t.last.at(t.last.n - 1), true
}

// seekAfter finds the first item after k: its leaf and position there
// (which may be the leaf's end).
func (t *qtree) seekAfter(k qitem) (*qleaf, int) {
	if t.root == nil {
		return nil, 0
	}
	l := t.descend(k)
	return l, l.upperBound(k)
}

// summary is l's qsum, computed again if an item left since.
func (l *qleaf) summary() *qsum {
	if !l.sumOK {
		l.sum = emptySum
		for _, m := range l.meta[l.lo : l.lo+l.n] {
			l.sum.add(m)
		}
		l.sumOK = true
	}
	return &l.sum
}

// qcursor walks a qtree in order, one call's walk at a time. Deleting the
// keys it has returned is allowed during a walk (the cursor finds its
// place again after any change); inserting is not.
type qcursor struct {
	t       *qtree
	leaf    *qleaf
	pos     int
	last    qitem
	ver     uint64
	started bool
}

func (c *qcursor) reset() { c.started, c.leaf = false, nil }

// sync moves the cursor to the next item not yet returned; false at the
// end.
func (c *qcursor) sync() bool {
	switch {
	case !c.started:
		c.started, c.leaf, c.pos, c.ver = true, c.t.first, 0, c.t.ver
	case c.ver != c.t.ver:
		c.ver = c.t.ver
		if c.leaf != nil && !c.leaf.dead {
			c.pos = c.leaf.upperBound(c.last)
		} else {
			c.leaf, c.pos = c.t.seekAfter(c.last)
		}
	}
	for c.leaf != nil && c.pos >= c.leaf.n {
		c.leaf, c.pos = c.leaf.next, 0
	}
	return c.leaf != nil
}

func (c *qcursor) next() (qitem, bool) {
	if !c.sync() {
		return qitem{}, false
	}
	it := c.leaf.at(c.pos)
	c.pos++
	c.last = it
	return it, true
}

// skip steps over jobs none of which could start, by h: the rest of the
// leaf holding the next item when its summary says so, else the run of
// such jobs from the next item on. It returns how many items it stepped
// over (0 when it did not).
func (c *qcursor) skip(h *hope) int {
	if !c.sync() {
		return 0
	}
	l := c.leaf
	if h.hopeless(l.summary()) {
		n := l.n - c.pos
		c.last = l.at(l.n - 1)
		c.leaf, c.pos = l.next, 0
		return n
	}
	p := c.pos
	for p < l.n && h.hopelessJob(l.meta[l.lo+p]) {
		p++
	}
	n := p - c.pos
	if n > 0 {
		c.last = l.at(p - 1)
		c.pos = p
	}
	return n
}

// qmeta is what one queued job adds to its leaf's summary.
type qmeta struct {
	dur   Time  // its duration as the policy sees it
	size  int32 // GPUs of a whole-GPU request; GPU milli of a fractional one
	class uint8 // sizeClass; classOther for a CPU-only, MIG or invalid one
}

// Size classes of GPU requests: class 0 is fractional (one GPU, < 1000
// milli), classes 1.. are whole GPUs by count, classLo..classHi.
const (
	numClasses = 8
	classOther = numClasses
)

var (
	classLo = [numClasses]int32{0, 1, 2, 3, 5, 9, 17, 33}
	classHi = [numClasses]int32{0, 1, 2, 4, 8, 16, 32, math.MaxInt32}
)

// metaOf summarises job j, whose duration is d.
func metaOf(j *Job, d Time) qmeta {
	r := &j.Req
	switch {
	case r.GPUs <= 0 || r.WantsMIG() || !validRequest(*r):
		return qmeta{dur: d, class: classOther}
	case r.GPUMilli < hwmodel.MilliPerGPU:
		return qmeta{dur: d, size: r.GPUMilli, class: 0}
	}
	g := int32(min(r.GPUs, math.MaxInt32))
	c := uint8(1)
	for c < numClasses-1 && g > classHi[c] {
		c++
	}
	return qmeta{dur: d, size: g, class: c}
}

// qsum summarises a leaf's jobs: how many are CPU-only, MIG or invalid
// (never stepped over), and for each size class the smallest size and the
// shortest duration (MaxInt32 and MaxInt64 when the class is empty).
type qsum struct {
	other   int32
	minSize [numClasses]int32
	minDur  [numClasses]Time
}

var emptySum = func() qsum {
	var s qsum
	for c := range s.minSize {
		s.minSize[c], s.minDur[c] = math.MaxInt32, math.MaxInt64
	}
	return s
}()

func (s *qsum) add(m qmeta) {
	if m.class == classOther {
		s.other++
		return
	}
	s.minSize[m.class] = min(s.minSize[m.class], m.size)
	s.minDur[m.class] = min(s.minDur[m.class], m.dur)
}
