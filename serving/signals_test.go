package serving

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// P90 is the nearest-rank 90th percentile: of 1, 2, …, 100 ms it is the
// 90th value, 90 ms, reported as the midpoint of its histogram bucket. With
// 7 sub-bucket bits, 90 000 µs lies in [175·2^9, 176·2^9) = [89 600,
// 90 112), midpoint 89 855.5 µs. P95 (95 ms) and P50 lie in other buckets,
// so a P90 taken from either would be caught.
func TestLatencyP90(t *testing.T) {
	b := newLatencyBook()
	for v := int64(1000); v <= 100_000; v += 1000 {
		b.add(v)
	}
	l := b.latency()
	if !near(l.P90, 0.0898555) {
		t.Errorf("P90 %.7f s, want 0.0898555 (the bucket of 90 ms)", l.P90)
	}
	if !near(l.Mean, 0.0505) || !near(l.Max, 0.1) {
		t.Errorf("mean %g, max %g, want 0.0505 and 0.1", l.Mean, l.Max)
	}
}

// Hand-computed inter-token latency and time per output token under the
// token-rate model. Both classes send 1000 prompt tokens (100 ms of
// prefill at 10 000 tokens/s) and decode at 50 tokens/s with no batch
// slow-down, so every request takes exactly its token model's time:
//
//	short: 2 output tokens, decode 2/50 = 40 ms over 1 gap: ITL = TPOT = 40 ms
//	long: 101 output tokens, decode 101/50 = 2.02 s over 100 gaps: 20.2 ms
//
// Per class ITL and TPOT are those constants. Over the service, TPOT
// averages requests and ITL averages gaps (a long request weighs 100):
//
//	TPOT mean = (nS·40 + nL·20.2) / (nS + nL)
//	ITL mean  = (nS·40 + 100·nL·20.2) / (nS + 100·nL)
//
// A program that added each request's ITL once (unweighted) would get
// TPOT's mean for both.
func TestGoldenSignalsTokenModel(t *testing.T) {
	svc := Service{Name: "llm", GPUsPerReplica: 1, Routing: RoundRobin,
		Replica:  ReplicaModel{PrefillTokensPerS: 10000, DecodeTokensPerS: 50, MaxConcurrent: 64},
		Replicas: ReplicaBounds{Initial: 1, Min: 1, Max: 1},
		Arrivals: Arrivals{Rate: 2},
		Classes: []Class{
			{Name: "short", Weight: 1, InputTokens: Dist{Kind: "constant", Mean: 1000}, OutputTokens: Dist{Kind: "constant", Mean: 2}},
			{Name: "long", Weight: 1, InputTokens: Dist{Kind: "constant", Mean: 1000}, OutputTokens: Dist{Kind: "constant", Mean: 101}},
		},
	}
	res := run(t, &Spec{Horizon: 10 * mnt, Services: []Service{svc}}, testCluster(t, 1, 8), nil)
	s := res.Services[0]
	short, long, all := s.Classes[0], s.Classes[1], s.All
	for _, c := range []struct {
		c   ClassResult
		gap float64
		out int64
	}{{short, 0.040, 2}, {long, 0.0202, 101}} {
		if c.c.Completed < 100 {
			t.Fatalf("%s: %d completed", c.c.Name, c.c.Completed)
		}
		if !near(c.c.ITL.Mean, c.gap) || !near(c.c.TPOT.Mean, c.gap) || !near(c.c.ITL.Max, c.gap) {
			t.Errorf("%s: ITL mean %g max %g, TPOT mean %g; want %g", c.c.Name, c.c.ITL.Mean, c.c.ITL.Max, c.c.TPOT.Mean, c.gap)
		}
		if math.Abs(c.c.ITL.P50-c.gap)/c.gap > 0.008 || c.c.ITL.P99 != c.c.ITL.P50 {
			t.Errorf("%s: ITL p50 %g p99 %g, want one bucket around %g", c.c.Name, c.c.ITL.P50, c.c.ITL.P99, c.gap)
		}
		if c.c.PromptTokens != 1000*c.c.Completed || c.c.GenerationTokens != c.out*c.c.Completed {
			t.Errorf("%s: tokens %d and %d for %d requests", c.c.Name, c.c.PromptTokens, c.c.GenerationTokens, c.c.Completed)
		}
		if !near(c.c.GenerationTokensPerS, float64(c.c.GenerationTokens)/600) || !near(c.c.RequestRate, float64(c.c.Requests)/600) {
			t.Errorf("%s: %g generation tokens/s, %g requests/s", c.c.Name, c.c.GenerationTokensPerS, c.c.RequestRate)
		}
	}
	nS, nL := float64(short.Completed), float64(long.Completed)
	if want := (nS*0.040 + nL*0.0202) / (nS + nL); !near(all.TPOT.Mean, want) {
		t.Errorf("service TPOT mean %g, want %g", all.TPOT.Mean, want)
	}
	if want := (nS*0.040 + 100*nL*0.0202) / (nS + 100*nL); !near(all.ITL.Mean, want) {
		t.Errorf("service ITL mean %g, want %g (gaps weighted)", all.ITL.Mean, want)
	}
	// The classes' saturations add up to the service's, which Little's
	// law computes from independent counters.
	if got := short.Saturation + long.Saturation; !near(got, s.Saturation) || !near(all.Saturation, s.Saturation) || s.Saturation <= 0 {
		t.Errorf("class saturations %g + %g, all %g; service %g", short.Saturation, long.Saturation, all.Saturation, s.Saturation)
	}
	// A short request is in flight 140 ms, a long one 2.12 s, on 64 slots.
	if want := (nS*0.14 + nL*2.12) / 600 / 64; math.Abs(s.Saturation-want) > 0.01*want {
		t.Errorf("saturation %g, want about %g", s.Saturation, want)
	}
}

// rateStepTrace writes the hand-built rate step of TestAlertStates: one
// request a second from 1 s to 60 s, a burst of 100 at ten a second from
// 61 s, and one a second again from 100 s to 200 s.
func rateStepTrace(t *testing.T) string {
	var b strings.Builder
	b.WriteString("time_s,class,input_tokens,output_tokens\n")
	for s := 1; s <= 60; s++ {
		fmt.Fprintf(&b, "%d,c,1000,10\n", s)
	}
	for j := 0; j < 100; j++ {
		fmt.Fprintf(&b, "%d.%d,c,1000,10\n", 61+j/10, j%10)
	}
	for s := 100; s <= 200; s++ {
		fmt.Fprintf(&b, "%d,c,1000,10\n", s)
	}
	path := filepath.Join(t.TempDir(), "step.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// alertSpec is one replica serving one request at a time: 1000 prompt
// tokens at 10 000 tokens/s (100 ms to the first token) and 10 output
// tokens at 100 tokens/s (done 200 ms after dispatch), fed rateStepTrace.
func alertSpec(t *testing.T, alerts ...AlertRule) *Spec {
	svc := Service{Name: "llm", GPUsPerReplica: 1, Routing: RoundRobin,
		Replica:  ReplicaModel{PrefillTokensPerS: 10000, DecodeTokensPerS: 100, MaxConcurrent: 1},
		Replicas: ReplicaBounds{Initial: 1, Min: 1, Max: 4},
		Arrivals: Arrivals{Trace: rateStepTrace(t)},
		Classes:  []Class{{Name: "c", Weight: 1, InputTokens: Dist{Kind: "constant", Mean: 1000}, OutputTokens: Dist{Kind: "constant", Mean: 10}}},
	}
	return &Spec{Horizon: 4 * mnt, Services: []Service{svc}, Alerts: alerts}
}

func f64(v float64) *float64 { return &v }

// An alert's states on the hand-built rate step, evaluated every 15 s over
// a 15 s window; an evaluation at T covers the requests completed in
// [T - 15 s, T). Before 61 s every TTFT is 100 ms. Burst request j
// (arriving at 61 + 0.1j s) waits for the 0.2 s service of the j before
// it: dispatched at 61 + 0.2j, first token 100 ms later, TTFT 0.1 + 0.1j
// s, done at 61.2 + 0.2j.
//
//	t = 60: [45, 60) holds TTFTs of 0.1 s: inactive.
//	t = 75: [60, 75) holds the request of 60 s and j = 0…68 (j = 69 is
//	        done at 75 s itself): p99 is the largest of 70, 6.9 s > 0.5:
//	        pending.
//	t = 90: j = 69…99, TTFT 7.0…10 s: held for 15 s = for: firing.
//	t = 105: five requests of 100…104 s, TTFT 0.1 s: resolved.
//
// The values are the buckets' midpoints (5 sub-bucket bits): 6.9 s lies
// in [52·2^17, 53·2^17) µs, midpoint 6.8812795 s; 0.1 s in [48·2^11,
// 49·2^11) µs, midpoint 0.0993275 s. The queue-length alert (no for)
// fires at the first evaluation with a queue, 75 s (29 waiting then,
// emptied at 80.8 s), and resolves at 105 s, after a window with none.
func TestAlertStates(t *testing.T) {
	ttft := AlertRule{Name: "ttft-high", Service: "llm", Class: "c", Metric: AlertTTFT, Quantile: 0.99, Above: f64(0.5), Window: 15 * sec, For: 15 * sec}
	queue := AlertRule{Name: "queue", Service: "llm", Metric: AlertQueueLength, Above: f64(1), Window: 15 * sec}
	res := run(t, alertSpec(t, ttft, queue), testCluster(t, 1, 8), nil)
	want := []AlertEvent{
		{Alert: "ttft-high", State: AlertPending, At: 75 * sec, Value: 6.8812795},
		{Alert: "queue", State: AlertFiring, At: 75 * sec},
		{Alert: "ttft-high", State: AlertFiring, At: 90 * sec},
		{Alert: "ttft-high", State: AlertResolved, At: 105 * sec, Value: 0.0993275},
		{Alert: "queue", State: AlertResolved, At: 105 * sec, Value: 0},
	}
	if len(res.Alerts) != len(want) {
		t.Fatalf("alert events %+v, want %d", res.Alerts, len(want))
	}
	for i, w := range want {
		g := res.Alerts[i]
		if g.Alert != w.Alert || g.State != w.State || g.At != w.At || g.Service != "llm" {
			t.Errorf("event %d: %+v, want %s %s at %s", i, g, w.Alert, w.State, fmtDur(w.At))
		}
		if w.Value != 0 || w.State == AlertResolved {
			if !near(g.Value, w.Value) {
				t.Errorf("event %d (%s %s): value %.7f, want %.7f", i, w.Alert, w.State, g.Value, w.Value)
			}
		}
	}
	if res.Alerts[0].Class != "c" || res.Alerts[1].Class != "all" {
		t.Errorf("classes %q and %q, want c and all", res.Alerts[0].Class, res.Alerts[1].Class)
	}
	st := res.AlertStats
	if len(st) != 2 || st[0].Fired != 1 || st[0].Firing != 15*sec || st[1].Fired != 1 || st[1].Firing != 30*sec {
		t.Errorf("alert stats %+v, want ttft-high fired once for 15 s, queue once for 30 s", st)
	}
}

// A 30 s window (two evaluation intervals) keeps the burst's TTFTs a
// step longer: [60, 90) and [75, 105) both hold them, so the alert
// (no for) fires at 75 s and resolves only at 120 s, when [90, 120)
// holds the calm requests alone.
func TestAlertWindowRing(t *testing.T) {
	ttft := AlertRule{Name: "ttft-high", Service: "llm", Metric: AlertTTFT, Quantile: 0.99, Above: f64(0.5), Window: 30 * sec}
	res := run(t, alertSpec(t, ttft), testCluster(t, 1, 8), nil)
	if len(res.Alerts) != 2 || res.Alerts[0].State != AlertFiring || res.Alerts[0].At != 75*sec ||
		res.Alerts[1].State != AlertResolved || res.Alerts[1].At != 120*sec {
		t.Fatalf("events %+v, want firing at 75 s, resolved at 120 s", res.Alerts)
	}
}

// Alerts drive the autoscaler: with on_alert the firing alert (at 90 s)
// asks for a second replica at the tick of 90 s; the same autoscaler
// without on_alert, whose concurrency target the burst never reaches,
// adds none.
func TestAutoscaleOnAlert(t *testing.T) {
	ttft := AlertRule{Name: "ttft-high", Service: "llm", Metric: AlertTTFT, Quantile: 0.99, Above: f64(0.5), Window: 15 * sec, For: 15 * sec}
	for _, onAlert := range []string{"", "ttft-high"} {
		spec := alertSpec(t, ttft)
		spec.Services[0].Autoscale = &Autoscale{Metric: MetricConcurrency, Target: 100, ScaleDownCooldown: 10 * mnt, OnAlert: onAlert}
		res := run(t, spec, testCluster(t, 1, 8), nil)
		s := res.Services[0]
		switch {
		case onAlert == "" && s.ScaleOuts != 0:
			t.Errorf("without on_alert: %d scale-outs, want 0", s.ScaleOuts)
		case onAlert != "" && (s.ScaleOuts != 1 || len(s.Replicas) != 2 || s.Replicas[1].Requested != 90*sec):
			t.Errorf("with on_alert: %d scale-outs, replicas %+v; want one more, asked for at 90 s", s.ScaleOuts, s.Replicas)
		}
	}
	// The alert alone (no target) with a step of 2.
	spec := alertSpec(t, ttft)
	spec.Services[0].Autoscale = &Autoscale{OnAlert: "ttft-high", Step: 2}
	res := run(t, spec, testCluster(t, 1, 8), nil)
	if s := res.Services[0]; s.ScaleOuts != 2 || s.Replicas[2].Requested != 90*sec || s.ScaleIns != 0 {
		t.Errorf("on_alert alone, step 2: %d scale-outs, %d ins, replicas %+v", s.ScaleOuts, s.ScaleIns, s.Replicas)
	}
}

// metric itl: every request's gaps are (101/50 s)/100 = 20.2 ms, so with a
// 10 ms target the first tick asks for ceil(1 × p95/0.01) replicas, where
// p95 is 20.2 ms's bucket (5 sub-bucket bits: [39·2^9, 40·2^9) µs,
// midpoint 20 223.5 µs): ceil(2.02235) = 3, two more. With a 25 ms target
// (ratio 0.81) it scales in toward min instead, never out.
func TestAutoscaleITL(t *testing.T) {
	for _, tc := range []struct {
		target float64
		outs   int64
	}{{0.010, 2}, {0.025, 0}} {
		svc := Service{Name: "llm", GPUsPerReplica: 1, Routing: RoundRobin,
			Replica:   ReplicaModel{PrefillTokensPerS: 10000, DecodeTokensPerS: 50, MaxConcurrent: 64},
			Replicas:  ReplicaBounds{Initial: 1, Min: 1, Max: 3},
			Autoscale: &Autoscale{Metric: MetricITL, Target: tc.target},
			Arrivals:  Arrivals{Rate: 2},
			Classes:   []Class{{Name: "c", Weight: 1, InputTokens: Dist{Kind: "constant", Mean: 1000}, OutputTokens: Dist{Kind: "constant", Mean: 101}}},
		}
		res := run(t, &Spec{Horizon: 2 * mnt, Services: []Service{svc}}, testCluster(t, 1, 8), nil)
		s := res.Services[0]
		if s.ScaleOuts != tc.outs || (tc.outs > 0 && s.Replicas[1].Requested != 15*sec) {
			t.Errorf("target %g: %d scale-outs (replicas %+v), want %d at the first tick", tc.target, s.ScaleOuts, s.Replicas, tc.outs)
		}
	}
}

// Each bad alert rule is an error naming the file, the line and the field,
// and what is accepted.
func TestAlertErrors(t *testing.T) {
	rule := func(r string) string { return minimal + "alerts:\n  - " + r + "\n" }
	cases := []struct{ name, in, want string }{
		{"metric", rule("{name: a, service: svc, metric: ttfb, quantile: 0.99, above: 1}"),
			`x.yaml:13: alerts[0].metric: unknown metric "ttfb" (known: ttft, itl, e2e, queue_time, error_rate, queue_length, saturation, kv_cache_usage)`},
		{"service", rule("{name: a, service: llm, metric: ttft, quantile: 0.99, above: 1}"),
			`x.yaml:13: alerts[0].service: unknown service "llm" (services: svc)`},
		{"class", rule("{name: a, service: svc, class: chat, metric: ttft, quantile: 0.99, above: 1}"),
			`x.yaml:13: alerts[0].class: service svc has no class "chat" (classes: c)`},
		{"quantile high", rule("{name: a, service: svc, metric: e2e, quantile: 99, above: 1}"),
			`x.yaml:13: alerts[0].quantile: want a quantile in (0, 1) for metric e2e, such as 0.99, got 99`},
		{"quantile missing", rule("{name: a, service: svc, metric: itl, above: 1}"),
			`alerts[0].quantile: want a quantile in (0, 1) for metric itl, such as 0.99, got 0`},
		{"quantile on gauge", rule("{name: a, service: svc, metric: saturation, quantile: 0.5, above: 0.9}"),
			`x.yaml:13: alerts[0].quantile: metric saturation takes no quantile (latency metrics do: ttft, itl, e2e, queue_time)`},
		{"class on gauge", rule("{name: a, service: svc, class: c, metric: queue_length, above: 5}"),
			`x.yaml:13: alerts[0].class: metric queue_length is the service's; leave class out`},
		{"kv on token model", rule("{name: a, service: svc, metric: kv_cache_usage, above: 0.9}"),
			`x.yaml:13: alerts[0].metric: kv_cache_usage needs iteration-level replicas (replica.iteration); service svc has none`},
		{"no threshold", rule("{name: a, service: svc, metric: error_rate}"),
			`alerts[0].above: want exactly one of above or below`},
		{"window", rule("{name: a, service: svc, metric: error_rate, above: 0.1, window: 5s}"),
			`x.yaml:13: alerts[0].window: want a window of 1 to 1000 evaluation intervals (15s), got 5s`},
		{"duplicate", minimal + "alerts:\n  - {name: a, service: svc, metric: error_rate, above: 0.1}\n  - {name: a, service: svc, metric: error_rate, above: 0.2}\n",
			`x.yaml:14: alerts[1].name: "a" is already the name of alerts[0]`},
		{"unknown field", rule("{name: a, service: svc, metric: error_rate, abve: 0.1}"),
			`alerts[0].abve: unknown field`},
		{"on_alert", strings.Replace(minimal, "    replicas: {initial: 1}", "    replicas: {initial: 1, max: 2}\n    autoscale: {on_alert: slow}", 1) +
			"alerts:\n  - {name: ttft-high, service: svc, metric: ttft, quantile: 0.99, above: 1}\n",
			`x.yaml:7: services[0].autoscale.on_alert: no alert named "slow" (alerts: ttft-high)`},
		{"step", strings.Replace(minimal, "    replicas: {initial: 1}", "    replicas: {initial: 1, max: 2}\n    autoscale: {on_alert: a, step: -1}", 1) +
			"alerts:\n  - {name: a, service: svc, metric: ttft, quantile: 0.99, above: 1}\n",
			`x.yaml:7: services[0].autoscale.step: want 1 to 100000 replicas per tick, got -1`},
		{"interval", minimal + "evaluation_interval: 0s\n", `x.yaml:12: evaluation_interval: want a duration > 0, got "0s"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(tc.in), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
	// A valid rule on every class and one on a class parse.
	ok := rule("{name: a, service: svc, metric: ttft, quantile: 0.99, above: 0.2, window: 1m, for: 2m}") +
		"  - {name: b, service: svc, class: c, metric: error_rate, below: 0.5}\nevaluation_interval: 10s\n"
	e, err := ParseExperiment([]byte(ok), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := e.Spec.Alerts; len(a) != 2 || a[0].Window != mnt || a[0].For != 2*mnt || *a[0].Above != 0.2 || a[1].Below == nil || e.Spec.EvaluationInterval != 10*sec {
		t.Errorf("alerts %+v, interval %v", a, e.Spec.EvaluationInterval)
	}
}
