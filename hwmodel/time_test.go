package hwmodel_test

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want hwmodel.Time
		ok   bool
	}{
		{"90s", 90 * hwmodel.Second, true},
		{"30m", 30 * hwmodel.Minute, true},
		{"2h", 2 * hwmodel.Hour, true},
		{"1h30m", 90 * hwmodel.Minute, true},
		{"7d", 7 * hwmodel.Day, true},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e300", 0, false},
		{"1e300d", 0, false},
		{"1_0", 0, false},
		{"1.5d", 36 * hwmodel.Hour, true},
		{"0d", 0, true},
		{"42", 42 * hwmodel.Second, true},
		{" 42 ", 42 * hwmodel.Second, true},
		{"0.5", 500 * hwmodel.Millisecond, true},
		{"1e3", 1000 * hwmodel.Second, true},
		{"250ms", 250 * hwmodel.Millisecond, true},
		{"1.5us", 1 * hwmodel.Microsecond, true}, // time.ParseDuration truncates to the microsecond
		{"0", 0, true},
		{"", 0, false},
		{"d", 0, false},
		{"xd", 0, false},
		{"7x", 0, false},
		{"h", 0, false},
		{"1h30", 0, false},
	}
	for _, tc := range tests {
		got, err := hwmodel.ParseDuration(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSecondsConversions(t *testing.T) {
	tests := []struct {
		s    float64
		want hwmodel.Time
	}{
		{0, 0},
		{1, hwmodel.Second},
		{1.5, 1500 * hwmodel.Millisecond},
		{0.0000004, 0},
		{0.0000006, 1},
		{-0.0000006, -1},
		{-2.5, -2500 * hwmodel.Millisecond},
		{86400, hwmodel.Day},
	}
	for _, tc := range tests {
		if got := hwmodel.FromSeconds(tc.s); got != tc.want {
			t.Errorf("FromSeconds(%v) = %d, want %d", tc.s, got, tc.want)
		}
	}
	if got := (90 * hwmodel.Minute).Seconds(); got != 5400 {
		t.Errorf("Seconds = %v", got)
	}
}
