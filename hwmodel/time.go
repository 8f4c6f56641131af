package hwmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Time is microseconds since the start of a run: integer, so that event
// order and arithmetic are exact and identical on every machine.
type Time int64

// Common durations in Time units.
const (
	Microsecond Time = 1
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
	Day              = 24 * Hour
)

// Seconds converts t to float seconds, for reports.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// FromSeconds converts float seconds to Time, rounding to the microsecond.
func FromSeconds(s float64) Time {
	if s >= 0 {
		return Time(s*1e6 + 0.5)
	}
	return Time(s*1e6 - 0.5)
}

// ParseDuration reads a duration such as "90s", "2h", "1h30m" or "7d".
// A bare number is seconds.
func ParseDuration(s string) (Time, error) {
	s = strings.TrimSpace(s)
	seconds := func(f float64) (Time, error) {
		// About 292,000 years fit in int64 microseconds; refuse more, and
		// NaN, rather than wrap around.
		if math.IsNaN(f) || math.Abs(f) > 9e12 {
			return 0, fmt.Errorf("duration %q: out of range", s)
		}
		return FromSeconds(f), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "_xXpP") {
		return seconds(f)
	}
	if strings.HasSuffix(s, "d") {
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || strings.ContainsAny(s, "_xXpP") {
			return 0, fmt.Errorf("duration %q: want a number of days such as 7d", s)
		}
		return seconds(f * 86400)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want e.g. 90s, 30m, 2h, 7d or plain seconds", s)
	}
	return Time(d / time.Microsecond), nil
}

// ScaleDuration is the wall time that d of progress takes at rate (the
// pace relative to the one d was measured at, > 0): d/rate rounded up to a
// whole microsecond, so that work never ends early, and exactly d at rate
// 1. Every computation of a job's progress under a speed (the engine's
// attempts and checkpoints, a policy's expected ends) goes through it, so
// they agree to the microsecond.
func ScaleDuration(d Time, rate float64) Time {
	if rate == 1 || d <= 0 {
		return d
	}
	return max(1, Time(math.Ceil(float64(d)/rate-1e-6)))
}
