package serving

import (
	"math"
	"math/rand/v2"

	"github.com/brigadesim/brigade/hwmodel"
)

// servingStream is the second PCG word of the request streams' sources,
// offset per service and class.
const servingStream = 0x7365727665310000 // "serve1"

// rateAt returns the arrival rate (requests/s) at t and the end of the
// constant-rate segment that holds t (horizon when none ends earlier).
func (a *Arrivals) rateAt(t, horizon hwmodel.Time) (rate float64, end hwmodel.Time) {
	rate, end = a.Rate, horizon
	for _, s := range a.Steps {
		stop := horizon
		if s.For > 0 {
			stop = s.At + s.For
		}
		if t >= s.At && t < stop {
			rate = s.Rate // a later step overrides an earlier one
		}
		for _, b := range [2]hwmodel.Time{s.At, stop} {
			if b > t {
				end = min(end, b)
			}
		}
	}
	return rate, end
}

// stream draws one (service, class) pair's Poisson arrivals and request
// sizes. Superposing the classes' streams gives the service's Poisson
// process at the scheduled rate, each request of class c with probability
// weight_c / Σ weights.
type stream struct {
	rng   *rand.Rand
	share float64 // the class's fraction of the service's rate
}

// next returns the first arrival after t, or ok = false when none comes
// before the horizon. Exact for a piecewise-constant rate: an exponential
// gap that overruns its segment is redrawn from the segment's end at the
// next rate, which the exponential's lack of memory allows.
func (s *stream) next(a *Arrivals, t, horizon hwmodel.Time) (hwmodel.Time, bool) {
	for t < horizon {
		rate, end := a.rateAt(t, horizon)
		rate *= s.share
		if rate <= 0 {
			t = end
			continue
		}
		gap := s.rng.ExpFloat64() / rate * 1e6
		if at := float64(t) + gap; at < float64(end) {
			return max(hwmodel.Time(math.Ceil(at)), t+1), true
		}
		t = end
	}
	return 0, false
}

// draw returns one value of d, rounded up to a whole number >= 1 when
// whole is set (token counts).
func (d *Dist) draw(rng *rand.Rand) float64 {
	var v float64
	switch d.Kind {
	case "constant", "":
		v = d.Mean
	case "exponential":
		v = rng.ExpFloat64() * d.Mean
	case "lognormal":
		mu := math.Log(d.Mean) - d.Sigma*d.Sigma/2
		v = math.Exp(mu + d.Sigma*rng.NormFloat64())
	case "uniform":
		v = d.Min + (d.Max-d.Min)*rng.Float64()
	}
	if d.Kind != "uniform" {
		if d.Min > 0 {
			v = max(v, d.Min)
		}
		if d.Max > 0 {
			v = min(v, d.Max)
		}
	}
	return v
}

func tokens(d *Dist, rng *rand.Rand) int32 {
	v := math.Ceil(d.draw(rng))
	return int32(min(max(v, 1), 1<<30))
}

func seconds(s float64) hwmodel.Time {
	return max(hwmodel.Time(math.Ceil(s*1e6)), 1)
}
