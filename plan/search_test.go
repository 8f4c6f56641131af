package plan

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestSearchMinimum: on a monotone function the search finds the known
// minimum with far fewer evaluations than sizes in range.
func TestSearchMinimum(t *testing.T) {
	for _, tc := range []struct{ lo, hi, min int }{{1, 512, 70}, {1, 512, 1}, {1, 512, 512}, {3, 1000, 999}, {5, 5, 5}, {1, 4096, 2049}} {
		evals := 0
		seen := map[int]bool{}
		got, ok, err := Search(tc.lo, tc.hi, 1, nil, func(n int) (bool, error) {
			if seen[n] {
				t.Errorf("size %d evaluated twice", n)
			}
			seen[n] = true
			evals++
			return n >= tc.min, nil
		})
		if err != nil || !ok || got != tc.min {
			t.Errorf("%+v: got %d, %v, %v", tc, got, ok, err)
		}
		if size := tc.hi - tc.lo + 1; size > 1 && evals >= size {
			t.Errorf("%+v: %d evaluations for %d sizes", tc, evals, size)
		}
		if limit := 2*bitsLen(tc.hi-tc.lo+1) + 2; evals > limit {
			t.Errorf("%+v: %d evaluations, want at most %d", tc, evals, limit)
		}
	}
	_, ok, err := Search(1, 100, 1, nil, func(n int) (bool, error) { return false, nil })
	if ok || err != nil {
		t.Errorf("unreachable: got ok %v, err %v", ok, err)
	}
	for _, r := range [][2]int{{0, 5}, {5, 4}} {
		if _, _, err := Search(r[0], r[1], 1, nil, func(int) (bool, error) { return true, nil }); err == nil {
			t.Errorf("range %v: no error", r)
		}
	}
	boom := errors.New("boom")
	if _, _, err := Search(1, 9, 4, nil, func(n int) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("pass's error: %v", err)
	}
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// referenceSearch is the doubling-then-bisection written as plainly as
// possible, the order every width must reproduce.
func referenceSearch(lo, hi int, pass func(int) bool) (tried []int, best int, found bool) {
	lastFail, n, step := lo-1, lo, 1
	for {
		tried = append(tried, n)
		if pass(n) {
			break
		}
		lastFail = n
		if n == hi {
			return tried, 0, false
		}
		n = min(hi, n+step)
		step *= 2
	}
	for n-lastFail > 1 {
		mid := lastFail + (n-lastFail)/2
		tried = append(tried, mid)
		if pass(mid) {
			n = mid
		} else {
			lastFail = mid
		}
	}
	return tried, n, true
}

// Whatever the width, Search passes the sizes the plain search tries, in
// its order, and finds its answer; prefetch is asked for at most width
// sizes, all in range, and always for a size before pass sees it.
func TestSearchWidths(t *testing.T) {
	for _, lo := range []int{1, 4} {
		for hi := lo; hi <= lo+70; hi++ {
			for answer := lo; answer <= hi+1; answer++ {
				pass := func(n int) bool { return n >= answer }
				want, wb, wf := referenceSearch(lo, hi, pass)
				for _, width := range []int{0, 1, 2, 3, 8, 16} {
					var got []int
					fetched := map[int]bool{}
					gb, gf, err := Search(lo, hi, width, func(ns []int) {
						if len(ns) > max(1, width) {
							t.Fatalf("prefetch of %d sizes at width %d", len(ns), width)
						}
						for _, n := range ns {
							if n < lo || n > hi {
								t.Fatalf("prefetch %d outside [%d, %d]", n, lo, hi)
							}
							fetched[n] = true
						}
					}, func(n int) (bool, error) {
						if !fetched[n] {
							t.Fatalf("size %d passed before it was fetched", n)
						}
						got = append(got, n)
						return pass(n), nil
					})
					if err != nil || gb != wb || gf != wf || !reflect.DeepEqual(got, want) {
						t.Fatalf("[%d, %d] answer %d width %d: got %d %v %v, want %d %v %v", lo, hi, answer, width, gb, gf, got, wb, wf, want)
					}
				}
			}
		}
	}
}

// Wider searches fetch ahead: over a bisection of a wide range, width 8
// has fetched every size it then passes in fewer prefetch rounds that
// simulate something new.
func TestSearchWidthFetchesAhead(t *testing.T) {
	rounds := func(width int) int {
		have := map[int]bool{}
		n := 0
		_, _, _ = Search(1, 1000, width, func(ns []int) {
			fresh := false
			for _, s := range ns {
				if !have[s] {
					have[s], fresh = true, true
				}
			}
			if fresh {
				n++
			}
		}, func(s int) (bool, error) { return s >= 700, nil })
		return n
	}
	if r1, r8 := rounds(1), rounds(8); r8 >= r1 {
		t.Errorf("width 8 took %d rounds of new work, width 1 %d", r8, r1)
	}
}

func ExampleSearch() {
	var tried []int
	n, found, _ := Search(1, 100, 1, nil, func(n int) (bool, error) {
		tried = append(tried, n)
		return n >= 37, nil
	})
	fmt.Println(n, found, tried)
	// Output: 37 true [1 2 4 8 16 32 64 48 40 36 38 37]
}
