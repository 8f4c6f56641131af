package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSummaryTargets(t *testing.T) {
	got, err := ParseTargets("wait_s.p99<=1800, gpu_utilisation_arrivals>=0.7,starvation.starved_jobs<5,jobs_succeeded>1e3", SummaryMetrics())
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Metric: "wait_s.p99", Op: "<=", Value: 1800, Text: "wait_s.p99<=1800"},
		{Metric: "gpu_utilisation_arrivals", Op: ">=", Value: 0.7, Text: "gpu_utilisation_arrivals>=0.7"},
		{Metric: "starvation.starved_jobs", Op: "<", Value: 5, Text: "starvation.starved_jobs<5"},
		{Metric: "jobs_succeeded", Op: ">", Value: 1000, Text: "jobs_succeeded>1e3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	bad := []struct{ in, want string }{
		{"", "no target given: want METRIC<=VALUE"},
		{"wait_s.p99", "no comparison"},
		{"wait_s.p99=<3", `comparison "=<" is not one of`},
		{"<=3", "no metric"},
		{"wait_s.p99<=abc", "not a finite number"},
		{"wait_s.p99<=NaN", "not a finite number"},
		{"wait_s.p99<=1h", "not a finite number"},
		{"wait_s.p99<=", "no bound after the comparison"},
		{"wait.p99<=3", `unknown metric "wait.p99" (known: `},
		{"wait_s.p99<=3,,", "empty item"},
		{"policy<=3", "unknown metric"},
		// A cluster plan's metrics have no classes: a dotted key is a
		// summary path.
		{"interactive.ttft_p99<=1", `unknown metric "interactive.ttft_p99"`},
	}
	for _, b := range bad {
		_, err := ParseTargets(b.in, SummaryMetrics())
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseTargets(%q) = %v, want an error mentioning %q", b.in, err, b.want)
		}
	}
	_, err = ParseTargets("nope<=1", SummaryMetrics())
	if err == nil || !strings.Contains(err.Error(), "wait_s.p99") || !strings.Contains(err.Error(), "starvation.starved_jobs") {
		t.Errorf("unknown-key error does not list the known keys: %v", err)
	}
	for _, m := range SummaryMetrics().Metrics {
		if m.Name == "seed" || m.Trend != TrendUnknown || m.Unit != Number {
			t.Errorf("summary metric %+v", m)
		}
	}
}

func TestParseServiceTargets(t *testing.T) {
	lat := func(class, metric, op string, v float64, text string) Target {
		return Target{Class: class, Metric: metric, Op: op, Value: v, Text: text, Unit: Seconds, Trend: Falls}
	}
	good := []struct {
		in   string
		want []Target
	}{
		{"ttft_p99<=1s", []Target{lat("", "ttft_p99", "<=", 1, "ttft_p99<=1s")}},
		{"interactive.ttft_p99<=500ms, e2e_p95 <= 20", []Target{
			lat("interactive", "ttft_p99", "<=", 0.5, "interactive.ttft_p99<=500ms"),
			lat("", "e2e_p95", "<=", 20, "e2e_p95<=20")}},
		{"slo>=0.99,errors<0.1%", []Target{
			{Metric: "slo", Op: ">=", Value: 0.99, Text: "slo>=0.99", Unit: Fraction, Trend: Rises},
			{Metric: "errors", Op: "<", Value: 0.001, Text: "errors<0.1%", Unit: Fraction, Trend: Falls}}},
		{"saturation<=0.8,wait_mean<2m", []Target{
			{Metric: "saturation", Op: "<=", Value: 0.8, Text: "saturation<=0.8", Unit: Fraction, Trend: Falls},
			lat("", "wait_mean", "<", 120, "wait_mean<2m")}},
		{"batch-api.throughput>10,unfinished<=0", []Target{
			{Class: "batch-api", Metric: "throughput", Op: ">", Value: 10, Text: "batch-api.throughput>10", Unit: Rate, Trend: Rises},
			{Metric: "unfinished", Op: "<=", Value: 0, Text: "unfinished<=0", Unit: Fraction, Trend: Falls}}},
	}
	for _, tc := range good {
		got, err := ParseTargets(tc.in, ServiceMetrics())
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
	bad := []struct{ in, want string }{
		{"", "no target given: want [CLASS.]METRIC<=VALUE (or >=, <, >), comma-separated, e.g. interactive.ttft_p99<=1s,errors<=0.001"},
		{"ttft_p99<=1s,", `empty item`},
		{"ttft_p99", `target "ttft_p99" has no comparison`},
		{"ttft_p99=1s", `comparison "=" is not one of`},
		{"ttft_p99=<1s", `comparison "=<" is not one of`},
		{"ttft_p99==1s", `comparison "==" is not one of`},
		{"ttft_p99!=1s", `comparison "!=" is not one of`},
		{"<=1s", "has no metric before <="},
		{"ttft_p98<=1s", `unknown metric "ttft_p98" (known: ttft_mean`},
		{"latency<=1s", `unknown metric "latency"`},
		{"a.b.ttft_p99<=1s", `is not CLASS.METRIC`},
		{".ttft_p99<=1s", `is not CLASS.METRIC`},
		{"interactive.saturation<=0.8", "saturation is the service's, not a class's: write saturation<=0.8"},
		{"ttft_p99<=fast", `bound "fast" is not a duration`},
		{"ttft_p99<=-1s", `bound "-1s" is not a duration >= 0`},
		{"ttft_p99<=", "no bound after the comparison"},
		{"slo>=99", `bound "99" is not a fraction in [0, 1]`},
		{"errors<=1s", `bound "1s" is not a fraction`},
		{"throughput>=-3", `bound "-3" is not a rate`},
		{"throughput>=Inf", `bound "Inf" is not a rate`},
	}
	for _, tc := range bad {
		_, err := ParseTargets(tc.in, ServiceMetrics())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

func TestTargetImproving(t *testing.T) {
	ts, err := ParseTargets("ttft_p99<=1s,slo>=0.9,saturation>=0.5,throughput<100,errors<=0.01", ServiceMetrics())
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, false, true}
	for i, tg := range ts {
		if tg.Improving() != want[i] {
			t.Errorf("%s: Improving %v, want %v", tg, tg.Improving(), want[i])
		}
	}
	// A summary metric's trend is unknown: never Improving.
	ts, err = ParseTargets("wait_s.p99<=60,gpu_utilisation>=0.5", SummaryMetrics())
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if tg.Improving() {
			t.Errorf("%s: Improving with an unknown trend", tg)
		}
	}
}

func TestTargetHoldsWorseMiss(t *testing.T) {
	cases := []struct {
		t          Target
		v          float64
		holds      bool
		worseOf2_5 float64
		miss       string
	}{
		{Target{Metric: "wait_s.p99", Op: "<=", Value: 1800}, 3906, false, 5, "wait_s.p99 = 3906, 2106 off the bound 1800 (117.0%)"},
		{Target{Metric: "wait_s.p99", Op: "<", Value: 1800}, 1800, false, 5, "wait_s.p99 = 1800, 0 off the bound 1800 (0.0%)"},
		{Target{Metric: "u", Op: ">=", Value: 0.5}, 0.5, true, 2, "met"},
		{Target{Metric: "u", Op: ">", Value: 0}, 0, false, 2, "u = 0, 0 off the bound 0"},
		{Target{Class: "c", Metric: "ttft_p99", Op: "<=", Value: 0.001, Unit: Seconds}, 0.25, false, 5, "c.ttft_p99 = 0.25 s, 0.249 s off the bound 0.001 s (24900.0%)"},
	}
	for _, tc := range cases {
		if got := tc.t.Holds(tc.v); got != tc.holds {
			t.Errorf("%s holds at %g: %v", tc.t, tc.v, got)
		}
		if got := tc.t.Worse(2, 5); got != tc.worseOf2_5 {
			t.Errorf("%s: worse of 2 and 5 is %g", tc.t, got)
		}
		if got := tc.t.Miss(tc.v); got != tc.miss {
			t.Errorf("%s at %g: miss %q, want %q", tc.t, tc.v, got, tc.miss)
		}
	}
	if s := (Target{Metric: "jobs", Op: ">", Value: 1000}).String(); s != "jobs>1000" {
		t.Errorf("String of a target built in code: %q", s)
	}
}
