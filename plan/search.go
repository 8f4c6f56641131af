package plan

import "fmt"

// Search finds the smallest n in [lo, hi] for which pass(n) is true,
// assuming that once true it stays true for larger n. It tries lo, then
// doubles the step (lo+1, lo+3, lo+7, ...) until a size passes or hi is
// reached, then bisects the last bracket: O(log n) calls. pass is called
// at most once per size. found is false when hi fails.
//
// width > 1 lets several sizes be simulated at once: before each size it
// needs, Search hands prefetch (when not nil) that size and the ones it
// may need next, up to width in all: the next sizes of the doubling, the
// next levels of the bisection. The sizes passed to pass, their order and
// the answer are the same whatever width is, so a caller that keeps only
// what pass saw gets the same result on any number of cores; prefetch is
// expected to skip sizes it already has.
func Search(lo, hi, width int, prefetch func([]int), pass func(n int) (bool, error)) (best int, found bool, err error) {
	if lo < 1 || hi < lo {
		return 0, false, fmt.Errorf("empty size range [%d, %d]", lo, hi)
	}
	width = max(1, width)
	if prefetch == nil {
		prefetch = func([]int) {}
	}
	seq := []int{lo}
	for n, step := lo, 1; n < hi; step *= 2 {
		n = min(hi, n+step)
		seq = append(seq, n)
	}
	// lastFail fails (or is below the range); n, once found, passes.
	lastFail, n := lo-1, 0
	for i, size := range seq {
		prefetch(seq[i:min(len(seq), i+width)])
		ok, err := pass(size)
		if err != nil {
			return 0, false, err
		}
		if ok {
			n, found = size, true
			break
		}
		lastFail = size
	}
	if !found {
		return 0, false, nil
	}
	for n-lastFail > 1 {
		prefetch(bisections(lastFail, n, width))
		mid := lastFail + (n-lastFail)/2
		ok, err := pass(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			n = mid
		} else {
			lastFail = mid
		}
	}
	return n, true, nil
}

// bisections lists the midpoints a bisection of (fail, pass) may try
// next, level by level, at most width of them; the first is the one it
// tries now.
func bisections(fail, pass, width int) []int {
	var out []int
	queue := [][2]int{{fail, pass}}
	for len(queue) > 0 && len(out) < width {
		iv := queue[0]
		queue = queue[1:]
		if iv[1]-iv[0] <= 1 {
			continue
		}
		mid := iv[0] + (iv[1]-iv[0])/2
		out = append(out, mid)
		queue = append(queue, [2]int{iv[0], mid}, [2]int{mid, iv[1]})
	}
	return out
}
