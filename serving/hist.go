package serving

import (
	"math"
	"math/bits"
)

// hist is a log-bucketed histogram of positive µs values: values below
// 2^(sub+1) are counted exactly, larger ones in buckets of relative width
// 2^-sub (sub = 7 gives under 0.8 %), as HDR histograms do. Recording is a
// few integer operations; no floating point, no allocation.
type hist struct {
	sub    uint
	counts []int64
	n      int64
}

func newHist(sub uint) hist {
	// Values up to 2^63: (63 - sub) ranges of 2^sub buckets above the
	// exact ones.
	return hist{sub: sub, counts: make([]int64, (2<<sub)+(64-int(sub))<<sub)}
}

func (h *hist) index(v int64) int {
	if v < 1 {
		v = 1
	}
	lim := int64(2) << h.sub
	if v < lim {
		return int(v)
	}
	s := uint(bits.Len64(uint64(v))) - h.sub - 1 // >= 1
	return int(lim) + int(s-1)<<h.sub + int(v>>s) - int(1)<<h.sub
}

// value is the midpoint of bucket i.
func (h *hist) value(i int) float64 {
	lim := 2 << h.sub
	if i < lim {
		return float64(i)
	}
	k := i - lim
	s := uint(k>>h.sub) + 1
	m := int64(k&(1<<h.sub-1)) + 1<<h.sub
	lo := m << s
	return float64(lo) + float64(int64(1)<<s-1)/2
}

func (h *hist) add(v int64) {
	h.counts[h.index(v)]++
	h.n++
}

// addN records n observations of v at once (a request's decode gaps).
func (h *hist) addN(v, n int64) {
	h.counts[h.index(v)] += n
	h.n += n
}

// quantile returns the q-quantile (0 < q <= 1) in µs, 0 when empty: the
// smallest bucket whose cumulative count reaches ceil(q × n).
func (h *hist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var c int64
	for i, k := range h.counts {
		c += k
		if c >= rank {
			return h.value(i)
		}
	}
	return h.value(len(h.counts) - 1)
}

func (h *hist) reset() {
	if h.n == 0 {
		return
	}
	clear(h.counts)
	h.n = 0
}

// latencyBook keeps one latency's exact mean and max and its histogram.
type latencyBook struct {
	h   hist
	sum float64 // µs
	max float64 // µs
}

func newLatencyBook() latencyBook { return latencyBook{h: newHist(7)} }

func (b *latencyBook) add(v int64) {
	b.h.add(v)
	b.sum += float64(v)
	b.max = max(b.max, float64(v))
}

// addN records n observations of v µs: the histogram takes v rounded to
// the µs, the mean and max the exact value.
func (b *latencyBook) addN(v float64, n int64) {
	b.h.addN(int64(v+0.5), n) // v >= 0
	b.sum += v * float64(n)
	b.max = max(b.max, v)
}

func (b *latencyBook) latency() Latency {
	if b.h.n == 0 {
		return Latency{}
	}
	return Latency{
		Mean: b.sum / float64(b.h.n) / 1e6,
		P50:  b.h.quantile(0.50) / 1e6,
		P90:  b.h.quantile(0.90) / 1e6,
		P95:  b.h.quantile(0.95) / 1e6,
		P99:  b.h.quantile(0.99) / 1e6,
		Max:  b.max / 1e6,
	}
}
