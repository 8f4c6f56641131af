package hwmodel

import (
	crand "crypto/rand"
	"math/rand/v2"
	"time"
)

// Stamp reads the wall clock, sleeps and draws from the global source:
// each of these is a violation.
func Stamp() (time.Time, int) {
	time.Sleep(time.Millisecond)
	done := make(chan struct{})
	go func() { close(done) }()
	<-done
	_ = crand.Reader
	return time.Now(), rand.IntN(6)
}

// Seeded draws from a generator built from a seed, which is allowed, even
// through a local variable that shadows the package's name.
func Seeded(seed uint64) (int, time.Duration) {
	rand := rand.New(rand.NewPCG(seed, 1))
	d, _ := time.ParseDuration("1s")
	return rand.IntN(6), d
}
