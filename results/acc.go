package results

import "math/bits"

// acc is an exact, non-negative 128-bit accumulator for integrals of the form
// Σ count × duration, with duration in microseconds. A 64-bit sum is not
// enough: ten thousand GPUs (10^7 milli-GPU) held for a simulated year
// (3.2×10^13 µs) is 3.2×10^20, past int64's 9.2×10^18. 128 bits hold any
// product of two int64 values and any realistic sum of them, so integrals are
// exact and independent of the order segments arrive in.
type acc struct{ hi, lo uint64 }

// addMul adds a × b; both must be non-negative (callers check).
func (x *acc) addMul(a, b int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	var carry uint64
	x.lo, carry = bits.Add64(x.lo, lo, 0)
	x.hi, _ = bits.Add64(x.hi, hi, carry)
}

// add adds y to x.
func (x *acc) add(y acc) {
	var carry uint64
	x.lo, carry = bits.Add64(x.lo, y.lo, 0)
	x.hi, _ = bits.Add64(x.hi, y.hi, carry)
}

// float returns x as a float64 (exact below 2^53, correctly scaled above).
func (x acc) float() float64 {
	return float64(x.hi)*(1<<64) + float64(x.lo)
}
