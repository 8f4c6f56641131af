package workloads

import (
	"slices"
	"testing"
)

// TestChunks: values come back in order, with no spare capacity, across
// chunk boundaries and at none.
func TestChunks(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, maxChunk, 3*maxChunk + 7} {
		var c chunks[int]
		want := make([]int, n)
		for i := range n {
			c.add(i * 3)
			want[i] = i * 3
		}
		got := c.slice()
		if c.len() != n || len(got) != n || cap(got) != n || !slices.Equal(got, want) {
			t.Errorf("n=%d: len %d, slice len %d cap %d, equal %v", n, c.len(), len(got), cap(got), slices.Equal(got, want))
		}
	}
}
