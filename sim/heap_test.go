package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// The heap pops events in (time, push order) order, whatever the
// interleaving of pushes and pops.
func TestEventHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var h eventHeap
		var want []event // pushed, not yet popped
		for step := range 2000 {
			if r.IntN(3) > 0 || len(want) == 0 {
				e := event{at: hwmodel.Time(r.IntN(50 + round)), job: int32(step)}
				h.push(e)
				e.seq = h.seq
				want = append(want, e)
				continue
			}
			got := h.pop()
			k := 0
			for i := range want {
				if want[i].before(&want[k]) {
					k = i
				}
			}
			if got != want[k] {
				t.Fatalf("round %d: popped %+v, want %+v", round, got, want[k])
			}
			want = slices.Delete(want, k, k+1)
			if h.Len() != len(want) {
				t.Fatalf("len %d, want %d", h.Len(), len(want))
			}
			if h.Len() > 0 {
				if p := h.peek(); p.at > got.at+50+hwmodel.Time(round) || p.before(&got) {
					t.Fatalf("peek %+v before the popped %+v", *p, got)
				}
			}
		}
	}
}

// BenchmarkEventHeap measures a push and a pop on a heap holding n
// events, as the engine does with n running jobs.
func BenchmarkEventHeap(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(hwmodel.Plural(n, "event", "events"), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var h eventHeap
			for i := range n {
				h.push(event{at: hwmodel.Time(r.IntN(1 << 30)), job: int32(i)})
			}
			for b.Loop() {
				e := h.pop()
				e.at += hwmodel.Time(r.IntN(1 << 20))
				h.push(e)
			}
		})
	}
}
