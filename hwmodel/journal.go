package hwmodel

// The change journal: which nodes changed, in order. Every change of a
// node's Generation is one entry, so a reader that remembers Changes()
// can later learn, in time proportional to what changed rather than to
// the cluster's size, which nodes it must look at again. Placement keeps
// its node indexes current this way (package policies).
//
// The journal is a ring: it keeps the latest entries only, at least four
// per node (and at least minJournal), so a reader that falls further
// behind than that sees ChangedNode answer -1 and starts over from the
// cluster's state, which costs it one pass over the nodes: amortised over
// at least four changes per node, that stays O(1) per change.

// minJournal is the least number of changes the journal keeps.
const minJournal = 1024

// journal is the ring of the latest changes' nodes; Changes() is the
// number of entries ever written.
type journal struct {
	ring  []int32 // length a power of two
	count int64
}

// newJournal makes the journal of a cluster of n nodes.
func newJournal(n int) journal {
	size := minJournal
	for size < 4*n {
		size *= 2
	}
	return journal{ring: make([]int32, size)}
}

// bump records one change of node i: its generation goes up by one and
// the journal gets an entry. It is the only place a generation changes.
func (c *Cluster) bump(i int) {
	c.gen[i]++
	j := &c.journal
	j.ring[j.count&int64(len(j.ring)-1)] = int32(i)
	j.count++
}

// Changes is the number of generation changes so far, summed over nodes
// (the sum of Generation(i)); the next change will be number Changes().
func (c *Cluster) Changes() int64 { return c.journal.count }

// ChangedNode is the node whose generation change number seq was (the
// first change is number 0), or -1 when seq is not in 0..Changes()-1 or
// is older than the journal keeps (see journal.go). A reader that gets -1
// for a change it has not seen must look at every node again.
func (c *Cluster) ChangedNode(seq int64) int {
	j := &c.journal
	if seq < 0 || seq >= j.count || j.count-seq > int64(len(j.ring)) {
		return -1
	}
	return int(j.ring[seq&int64(len(j.ring)-1)])
}
