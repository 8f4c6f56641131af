package hwmodel

// Journal lists the nodes whose books changed since its reader last
// cleared it, so a metric kept per node (policies.FragTracker) re-reads
// only those instead of comparing every node's Generation after each
// event. A node is listed when its Generation increases, i.e. on every
// Allocate or Release that touches it and every Reconfigure or UnblockMIG
// of one of its GPUs; it is listed once however often it changes.
//
// A Journal costs its cluster one bit test per node change; it is not
// safe for concurrent use, like the Cluster it follows.
type Journal struct {
	listed  []uint64 // bit i: node i is in nodes
	nodes   []int    // in the order they first changed since Clear
	cluster *Cluster
}

// NewJournal starts a journal of c's node changes. It lists nothing yet:
// the reader takes c's current state as its starting point.
func (c *Cluster) NewJournal() *Journal {
	j := &Journal{listed: make([]uint64, (len(c.nodes)+63)/64), cluster: c}
	c.journals = append(c.journals, j)
	return j
}

// Changed lists the nodes whose Generation increased since the journal
// was made or last cleared, each once, in the order of their first
// change. The slice is the journal's own: it is valid until the next
// change to the cluster or Clear.
func (j *Journal) Changed() []int { return j.nodes }

// Clear empties the journal; it costs O(len(Changed())).
func (j *Journal) Clear() {
	for _, i := range j.nodes {
		j.listed[i>>6] &^= 1 << (i & 63)
	}
	j.nodes = j.nodes[:0]
}

// Close stops the journal: its cluster no longer records changes in it,
// and Changed keeps what it listed until then.
func (j *Journal) Close() {
	c := j.cluster
	if c == nil {
		return
	}
	for k, o := range c.journals {
		if o == j {
			c.journals = append(c.journals[:k], c.journals[k+1:]...)
			break
		}
	}
	j.cluster = nil
}

func (j *Journal) note(i int) {
	if w, b := i>>6, uint64(1)<<(i&63); j.listed[w]&b == 0 {
		j.listed[w] |= b
		j.nodes = append(j.nodes, i)
	}
}

// touch records a change to node i's books: its Generation increases and
// every journal lists it. Every mutator calls it, once per node it
// changes, so Generation and the journals cannot miss a change.
func (c *Cluster) touch(i int) {
	c.gen[i]++
	for _, j := range c.journals {
		j.note(i)
	}
}
