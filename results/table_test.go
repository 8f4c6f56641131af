package results

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		sec  float64
		want string
	}{
		{0, "0s"},
		{0.25, "0.25s"},
		{4.5, "4.5s"},
		{12, "12s"},
		{59, "59s"},
		{90, "1.5m"},
		{2100, "35m"},
		{3599, "60m"},
		{4320, "1.2h"},
		{36000, "10h"},
		{172800, "2.0d"},
		{30 * 86400, "30d"},
		{-90, "-1.5m"},
		{math.NaN(), "-"},
		{math.Inf(1), "-"},
	}
	for _, c := range cases {
		if got := HumanDuration(c.sec); got != c.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", c.sec, got, c.want)
		}
	}
}

func TestFormatTableFits100Columns(t *testing.T) {
	worst := Summary{
		Policy: strings.Repeat("p", 12), JobsSucceeded: 99999, JobsSubmitted: 99999,
		WaitS:           Dist{Mean: 0.25, P50: 0.25, P99: 0.25},
		JCTS:            Dist{Mean: 0.25, P99: 0.25},
		BoundedSlowdown: Dist{Mean: 12345.67},
		GPUUtilisation:  1, JainIndex: 0.123,
		Starvation: Starvation{StarvedJobs: 99999},
		LittlesLaw: LittlesLaw{RelError: 1},
	}
	var b bytes.Buffer
	if err := FormatTable(&b, []Summary{worst, Summarize(RunInput{Policy: "empty"})}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(lines[3], "  -  ") {
		t.Errorf("undefined Jain index not shown as '-': %q", lines[2])
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestFormatTableReportsWriteErrors(t *testing.T) {
	if err := FormatTable(failWriter{}, []Summary{{Policy: "x"}}); err == nil {
		t.Error("no error from a failing writer")
	}
}

func TestCompact(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{{0, "0.00"}, {1.333, "1.33"}, {9.994, "9.99"}, {12.34, "12.3"}, {12345.67, "12346"}}
	for _, c := range cases {
		if got := compact(c.v, 2); got != c.want {
			t.Errorf("compact(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
