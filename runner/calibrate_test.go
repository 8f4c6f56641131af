package runner

import (
	"crypto/sha256"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// BenchmarkCalibrate is a fixed amount of the work the simulator's
// commands do (sorting, hashing strings into a map, formatting numbers,
// hashing bytes), for the speed regression guard (scripts/perf-guard.sh):
// it divides every case's time by this one's, measured in the same run,
// so that the speed of the machine cancels out of the ratios it keeps.
func BenchmarkCalibrate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	ints := make([]int64, 1<<16)
	for i := range ints {
		ints[i] = rng.Int64()
	}
	keys := make([]string, 1<<14)
	for i := range keys {
		keys[i] = "job-" + strconv.Itoa(rng.IntN(1<<20))
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	work := make([]int64, len(ints))
	var out []byte
	sink := 0
	for b.Loop() {
		copy(work, ints)
		slices.Sort(work)
		m := make(map[string]int, len(keys))
		for i, k := range keys {
			m[k] += i
		}
		out = out[:0]
		for _, v := range work[:1<<14] {
			out = strconv.AppendFloat(out, float64(v)/1e9, 'f', 6, 64)
		}
		sum := sha256.Sum256(data)
		sink += len(m) + len(out) + int(sum[0])
	}
	if sink == 0 {
		b.Fatal("no work")
	}
}
