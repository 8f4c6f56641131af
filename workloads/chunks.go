package workloads

// chunks collects a reader's values, whose number it learns only at the
// end, in chunks of growing size, and hands them over as one slice of
// exactly their length. Appending to one slice would copy and clear every
// value several times over as it grows (by a quarter at a time once
// large), for a Job 240 bytes a time; chunks copy each value once, and the
// result has no spare capacity to hold on to.
type chunks[T any] struct {
	full [][]T
	cur  []T
	n    int
}

// maxChunk bounds a chunk's length.
const maxChunk = 1 << 14

func (c *chunks[T]) add(v T) { *c.next() = v }

// next adds a zero value and returns where it is, for the caller to fill
// in place; the pointer is good until slice is called.
func (c *chunks[T]) next() *T {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, min(max(2*cap(c.cur), 64), maxChunk))
	}
	c.cur = c.cur[:len(c.cur)+1]
	c.n++
	return &c.cur[len(c.cur)-1]
}

// len is the number of values added.
func (c *chunks[T]) len() int { return c.n }

// slice returns every value added, in order, in one slice of length and
// capacity len(); nil when none was added.
func (c *chunks[T]) slice() []T {
	if c.n == 0 {
		return nil
	}
	if len(c.full) == 0 && len(c.cur) == cap(c.cur) {
		return c.cur
	}
	out := make([]T, 0, c.n)
	for _, f := range c.full {
		out = append(out, f...)
	}
	return append(out, c.cur...)
}
