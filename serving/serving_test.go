package serving

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

const (
	sec = hwmodel.Second
	mnt = hwmodel.Minute
)

// llm is a 4-GPU LLM service with two classes and a burst from 5 to 15
// requests per second. A replica serves about 2.4 requests per second
// (16 slots, about 6.7 s per request), so 3 replicas carry the base load.
func llm() Service {
	return Service{
		Name: "llm", GPUModel: "H100-80GB", GPUsPerReplica: 4, Priority: 10, Routing: LeastOutstanding,
		Replica: ReplicaModel{PrefillTokensPerS: 10000, DecodeTokensPerS: 30, BatchSlowdown: 0.01, MaxConcurrent: 16,
			LoadTime: 2 * mnt},
		Replicas: ReplicaBounds{Initial: 3, Min: 3, Max: 10},
		Arrivals: Arrivals{Rate: 5, Steps: []RateStep{{At: 20 * mnt, For: 20 * mnt, Rate: 15}}},
		Classes: []Class{
			{Name: "interactive", Weight: 1, Priority: 1, InputTokens: Dist{Kind: "lognormal", Mean: 500, Sigma: 1, Max: 8000},
				OutputTokens: Dist{Kind: "lognormal", Mean: 150, Sigma: 0.7, Max: 1500},
				TTFTTarget:   sec, E2ETarget: 20 * sec, Timeout: 60 * sec},
			{Name: "bulk", Weight: 1, InputTokens: Dist{Kind: "uniform", Min: 200, Max: 3000},
				OutputTokens: Dist{Kind: "exponential", Mean: 200, Max: 2000}, Timeout: 5 * mnt},
		},
	}
}

// busyBatch fills every GPU of the cluster with long, low-priority jobs
// arriving at time 0.
func busyBatch(gpus int, dur hwmodel.Time) *workloads.Workload {
	h100, _ := hwmodel.LookupModel("H100-80GB")
	w := &workloads.Workload{Tenants: []workloads.Tenant{{Name: "train", Weight: 1}}}
	for i := 0; i < gpus/2; i++ {
		w.Jobs = append(w.Jobs, workloads.Job{Name: fmt.Sprintf("train-%d", i), Tenant: "train", Duration: dur + hwmodel.Time(i)*sec,
			Req: hwmodel.Request{GPUs: 2, GPUMilli: 1000, Models: hwmodel.Of(h100.ID)}})
	}
	return w
}

func run(t *testing.T, spec *Spec, c *hwmodel.Cluster, w *workloads.Workload) *Result {
	t.Helper()
	res, err := Run(Config{Spec: spec, Cluster: c, Batch: w, Seed: 3, Sim: func(sc *sim.Config) { sc.CheckInvariants = w != nil && len(w.Jobs) < 200 }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func preempted(res *sim.Result) int {
	n := 0
	for _, o := range res.Jobs {
		for _, a := range o.Log() {
			if a.Ended == sim.AttemptPreempted {
				n++
			}
		}
	}
	return n
}

// Scaling out on a full cluster: with preempt, replicas take GPUs from
// lower-priority batch jobs at once (and the batch jobs rerun later); with
// wait, they wait until batch jobs end and no job is preempted. Either way
// every batch job ends and the engine's books (invariants) hold.
func TestAutoscaleOnSharedCluster(t *testing.T) {
	for _, mode := range []NoGPUs{Preempt, Wait} {
		t.Run(string(mode), func(t *testing.T) {
			svc := llm()
			svc.Autoscale = &Autoscale{Metric: MetricConcurrency, Target: 12, Interval: 15 * sec,
				ScaleUpCooldown: 30 * sec, ScaleDownCooldown: 5 * mnt, OnNoGPUs: mode}
			spec := &Spec{Horizon: 80 * mnt, Services: []Service{svc}}
			c := testCluster(t, 6, 8)
			// 48 GPUs: the 3 initial replicas take 12 at t=0, batch the rest.
			res := run(t, spec, c, busyBatch(36, 30*mnt))
			s := res.Services[0]
			if s.ScaleOuts == 0 || s.ScaleIns == 0 {
				t.Fatalf("scale-outs %d, scale-ins %d: want both during and after the burst", s.ScaleOuts, s.ScaleIns)
			}
			p := preempted(res.Batch)
			if int64(p) != s.Preempted || int64(p) != res.Batch.CoupledPreemptions {
				t.Errorf("batch preempted attempts %d, service books %d, engine %d", p, s.Preempted, res.Batch.CoupledPreemptions)
			}
			for i, o := range res.Batch.Jobs {
				if o.State != sim.Succeeded {
					t.Errorf("batch job %d ended %s", i, o.State)
				}
			}
			// The first replica asked for in the burst.
			var burst *ReplicaResult
			for k := range s.Replicas {
				r := &s.Replicas[k]
				if r.Requested >= 20*mnt {
					burst = r
					break
				}
			}
			if burst == nil || burst.Placed < 0 {
				t.Fatalf("no replica asked for and placed during the burst: %+v", s.Replicas)
			}
			if burst.Ready != burst.Placed+2*mnt {
				t.Errorf("replica %d placed at %v, ready at %v: want the 2 min load time", burst.ID, burst.Placed, burst.Ready)
			}
			peak := 0
			for _, b := range s.Series {
				if b.Start >= 20*mnt && b.Start < 40*mnt {
					peak = max(peak, b.ReplicasReady)
				}
			}
			if peak < 6 {
				t.Errorf("at most %d replicas ready during the burst, want >= 6", peak)
			}
			switch mode {
			case Preempt:
				if p == 0 || s.GPUWait != 0 || burst.Placed != burst.Requested {
					t.Errorf("preempt: %d jobs preempted, GPU wait %v, burst replica asked at %v placed at %v: want preemptions and no wait",
						p, s.GPUWait, burst.Requested, burst.Placed)
				}
			case Wait:
				if p != 0 || s.GPUWait == 0 || burst.Placed < 30*mnt {
					t.Errorf("wait: %d jobs preempted, GPU wait %v, burst replica placed at %v: want none, some wait, and no GPUs before the batch jobs end at 1800 s",
						p, s.GPUWait, burst.Placed)
				}
			}
			t.Logf("%s: scale-outs %d, preempted %d, GPU wait %.0f s, GPU-hours %.1f, interactive p99 %.1f s, errors %d timeouts %d",
				mode, s.ScaleOuts, p, s.GPUWait.Seconds(), s.GPUHours, s.Classes[0].E2E.P99, s.All.Errors, s.All.Timeouts)
		})
	}
}

// A replica turned slow (4×) midway: with outlier ejection the gateway
// takes it out of rotation, so the tail latency is far lower than without.
func TestEjectionOfSlowReplica(t *testing.T) {
	p99 := map[bool]float64{}
	for _, on := range []bool{false, true} {
		svc := llm()
		svc.Replicas = ReplicaBounds{Initial: 4, Min: 4, Max: 4}
		svc.Arrivals = Arrivals{Rate: 6}
		svc.Health = Health{Enabled: on, EjectFor: mnt}
		svc.Incidents = []Incident{{At: 10 * mnt, Replica: 2, Kind: "slow", Factor: 4}}
		res := run(t, &Spec{Horizon: 40 * mnt, Services: []Service{svc}}, testCluster(t, 2, 8), nil)
		s := res.Services[0]
		p99[on] = s.All.E2E.P99
		slow := s.Replicas[2]
		if on && (s.Ejections == 0 || slow.Ejections == 0) {
			t.Fatalf("health on: %d ejections (slow replica %d)", s.Ejections, slow.Ejections)
		}
		if !on && s.Ejections != 0 {
			t.Fatalf("health off: %d ejections", s.Ejections)
		}
		for _, r := range s.Replicas {
			if r.ID != 2 && r.Ejections != 0 {
				t.Errorf("healthy replica %d ejected %d times", r.ID, r.Ejections)
			}
		}
		t.Logf("health %v: ejections %d, slow replica served %d of %d, E2E p99 %.1f s", on, s.Ejections, slow.Completed, s.All.Completed, s.All.E2E.P99)
	}
	if p99[true] > 0.7*p99[false] {
		t.Errorf("E2E p99 with ejection %.1f s, without %.1f s: want ejection to cut the tail", p99[true], p99[false])
	}
}

// A failed replica answers every request at once with an error; least
// outstanding keeps choosing it (it is always empty): without ejection it
// swallows traffic until it restarts, with ejection after 5 errors.
func TestFailedReplicaBlackHole(t *testing.T) {
	errs := map[bool]int64{}
	for _, on := range []bool{false, true} {
		svc := llm()
		svc.Replicas = ReplicaBounds{Initial: 3, Min: 3, Max: 3}
		svc.Arrivals = Arrivals{Rate: 5}
		svc.Health = Health{Enabled: on, EjectFor: 10 * mnt}
		svc.Incidents = []Incident{{At: 5 * mnt, Replica: 0, Kind: "fail", RestartAfter: 5 * mnt}}
		res := run(t, &Spec{Horizon: 30 * mnt, Services: []Service{svc}}, testCluster(t, 2, 8), nil)
		s := res.Services[0]
		errs[on] = s.All.Errors
		r := s.Replicas[0]
		if on && r.Ejections != 1 {
			t.Errorf("health on: failed replica ejected %d times, want 1", r.Ejections)
		}
		if r.Failed != s.All.Errors {
			t.Errorf("errors %d, failed on replica 0: %d", s.All.Errors, r.Failed)
		}
	}
	// With ejection: its requests in flight at the failure, then 5 errors.
	if errs[true] > 16+5 || errs[false] < 10*errs[true] {
		t.Errorf("errors with ejection %d, without %d", errs[true], errs[false])
	}
	t.Logf("errors: without ejection %d, with %d", errs[false], errs[true])
}

// Priority lanes keep high-priority requests moving under overload: their
// queue wait is far below the low-priority class's.
func TestPriorityLanes(t *testing.T) {
	svc := llm()
	svc.Routing = PriorityLanes
	svc.Replicas = ReplicaBounds{Initial: 2, Min: 2, Max: 2}
	svc.Arrivals = Arrivals{Rate: 6} // 3 per class; the 2 replicas serve about 4.8
	res := run(t, &Spec{Horizon: 20 * mnt, Services: []Service{svc}}, testCluster(t, 1, 8), nil)
	hi, lo := res.Services[0].Classes[0], res.Services[0].Classes[1]
	if hi.QueueWait.Mean*5 > lo.QueueWait.Mean || hi.Timeouts > lo.Timeouts {
		t.Errorf("queue wait high %.2f s (timeouts %d), low %.2f s (timeouts %d)", hi.QueueWait.Mean, hi.Timeouts, lo.QueueWait.Mean, lo.Timeouts)
	}
	for _, c := range res.Services[0].Classes {
		if c.Requests != c.Completed+c.Errors+c.Timeouts+c.Unfinished {
			t.Errorf("class %s books do not balance: %+v", c.Name, c)
		}
	}
}

func TestDeterministic(t *testing.T) {
	mk := func() *Result {
		svc := llm()
		svc.Health = Health{Enabled: true}
		svc.Autoscale = &Autoscale{Metric: MetricLatency, Target: 15, OnNoGPUs: Preempt}
		svc.Incidents = []Incident{{At: 25 * mnt, Replica: 1, Kind: "slow", Factor: 3}}
		return run(t, &Spec{Horizon: 60 * mnt, Services: []Service{svc}}, testCluster(t, 4, 8), busyBatch(24, 40*mnt))
	}
	a, b := mk(), mk()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same inputs differ")
	}
}

func TestRateSchedule(t *testing.T) {
	a := Arrivals{Rate: 50, Steps: []RateStep{{At: 30 * mnt, For: 20 * mnt, Rate: 500}, {At: 90 * mnt, Rate: 0}}}
	h := 2 * hwmodel.Hour
	cases := []struct {
		t    hwmodel.Time
		rate float64
		end  hwmodel.Time
	}{
		{0, 50, 30 * mnt}, {30*mnt - 1, 50, 30 * mnt}, {30 * mnt, 500, 50 * mnt},
		{50 * mnt, 50, 90 * mnt}, {95 * mnt, 0, h},
	}
	for _, c := range cases {
		if r, e := a.rateAt(c.t, h); r != c.rate || e != c.end {
			t.Errorf("rateAt(%v) = %v until %v, want %v until %v", c.t, r, e, c.rate, c.end)
		}
	}
	// The generated counts follow the schedule.
	s := stream{rng: rand.New(rand.NewPCG(1, 2)), share: 1}
	var n [3]int
	for at, ok := s.next(&a, 0, h); ok; at, ok = s.next(&a, at, h) {
		switch {
		case at < 30*mnt:
			n[0]++
		case at < 50*mnt:
			n[1]++
		case at >= 90*mnt:
			n[2]++
		}
	}
	for k, want := range []float64{50 * 1800, 500 * 1200, 0} {
		if math.Abs(float64(n[k])-want) > 4*math.Sqrt(want)+0.5 {
			t.Errorf("segment %d: %d arrivals, want %.0f ± 4σ", k, n[k], want)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	h := newHist(7)
	for v := int64(1); v <= 1_000_000; v++ {
		h.add(v * 37)
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		want := q * 37e6
		if got := h.quantile(q); math.Abs(got-want)/want > 0.008 {
			t.Errorf("q%.2f = %.0f, want %.0f within 0.8%%", q, got, want)
		}
	}
	for _, v := range []int64{1, 255, 256, 257, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		i := h.index(v)
		if mid := h.value(i); math.Abs(mid-float64(v))/float64(v) > 1.0/128 {
			t.Errorf("value %d in bucket %d of midpoint %.0f", v, i, mid)
		}
	}
}

func TestRequestTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "req.csv")
	data := "time_s,class,input_tokens,output_tokens\n0.5,interactive,100,10\n1.0,bulk,200,20\n1.5,interactive,300,30\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := llm()
	svc.Arrivals = Arrivals{Trace: path}
	res := run(t, &Spec{Horizon: 10 * mnt, Services: []Service{svc}}, testCluster(t, 1, 8), nil)
	s := res.Services[0]
	if s.Classes[0].Completed != 2 || s.Classes[1].Completed != 1 {
		t.Fatalf("completed %d and %d, want 2 and 1", s.Classes[0].Completed, s.Classes[1].Completed)
	}
	// 100 tokens prefill at 10k tok/s: 10 ms to the first token.
	if got := s.Classes[0].TTFT.Max; math.Abs(got-0.03) > 0.001 {
		t.Errorf("TTFT max %.4f s, want 0.03 (300 tokens at 10k tok/s)", got)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("time_s,class,input_tokens,output_tokens\n0.5,nosuch,1,1\n"), 0o644)
	svc.Arrivals = Arrivals{Trace: bad}
	_, err := Run(Config{Spec: &Spec{Horizon: mnt, Services: []Service{svc}}, Cluster: testCluster(t, 1, 8)})
	if err == nil || !strings.Contains(err.Error(), "bad.csv:2") || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown class: error %v, want one naming bad.csv:2 and the class", err)
	}
}

// BenchmarkDay500rps simulates a day of traffic at 500 requests per second
// (43.2 million requests) to 24 replicas of a chat model (one GPU each, up
// to 128 requests at once, about 60 % busy), with outlier detection on,
// with the decode slow-down fixed at dispatch and with continuous
// batching; it reports requests simulated per second. BRIGADE_BENCH_HOURS
// shortens the day.
func BenchmarkDay500rps(b *testing.B) {
	hours := 24
	if v := os.Getenv("BRIGADE_BENCH_HOURS"); v != "" {
		fmt.Sscan(v, &hours)
	}
	for _, continuous := range []bool{false, true} {
		name := "dispatch"
		if continuous {
			name = "continuous"
		}
		b.Run(name, func(b *testing.B) {
			svc := llm()
			svc.Name, svc.GPUsPerReplica = "chat-8b", 1
			svc.Replica = ReplicaModel{PrefillTokensPerS: 20000, DecodeTokensPerS: 60, BatchSlowdown: 0.002, MaxConcurrent: 128, ContinuousBatching: continuous}
			svc.Replicas = ReplicaBounds{Initial: 24, Min: 24, Max: 24}
			svc.Arrivals = Arrivals{Rate: 500}
			svc.Health = Health{Enabled: true}
			spec := &Spec{Horizon: hwmodel.Time(hours) * hwmodel.Hour, Services: []Service{svc}}
			for b.Loop() {
				res, err := Run(Config{Spec: spec, Cluster: testCluster(b, 3, 8), Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				s := res.Services[0]
				if s.All.Timeouts+s.All.Errors > s.All.Requests/1000 {
					b.Fatalf("the service is overloaded: %d timeouts, %d errors of %d requests", s.All.Timeouts, s.All.Errors, s.All.Requests)
				}
				b.ReportMetric(float64(res.Requests), "requests")
				b.ReportMetric(float64(res.Requests)/b.Elapsed().Seconds(), "requests/s")
				b.ReportMetric(s.Saturation, "saturation")
			}
		})
	}
}

// The node under a replica (node 1; nodes are best-fit, so replicas 0
// and 1 share node 0) fails at 10 min; the orchestrator detects it by
// the heartbeat rule (5 s beats, 30 s timeout). Until then the replica
// answers nothing (its requests fail); at detection its GPUs go out of
// service, a replacement is placed on another node and serves after the
// load time. Batch jobs on the node fail and are retried; the engine's
// books hold throughout.
func TestReplicaLostToNodeFault(t *testing.T) {
	errs := map[bool]int64{}
	for _, health := range []bool{false, true} {
		t.Run(fmt.Sprintf("health=%v", health), func(t *testing.T) {
			svc := llm()
			svc.Health = Health{Enabled: health}
			svc.Arrivals = Arrivals{Rate: 5}
			spec := &Spec{Horizon: 30 * mnt, Services: []Service{svc}}
			c := testCluster(t, 4, 8)
			w := busyBatch(8, 20*mnt) // 4 jobs of 2 GPUs
			res, err := Run(Config{Spec: spec, Cluster: c, Batch: w, Seed: 5, Sim: func(sc *sim.Config) {
				sc.CheckInvariants = true
				sc.Faults = []hwmodel.Fault{{At: 10 * mnt, Node: 1, GPU: -1, Repair: hwmodel.Hour}}
				sc.Retry = sim.RetryPolicy{Kind: sim.RetryFixed, Max: 3}
			}})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Services[0]
			detect := res.Batch.Faults[0].Detected
			if detect <= 10*mnt || detect > 10*mnt+35*sec {
				t.Fatalf("fault detected at %v", detect)
			}
			var onNode1, replacements int
			var failed int64
			for _, r := range s.Replicas {
				switch {
				case r.Requested == 0 && r.Node == 1:
					onNode1++
					failed += r.Failed
					if r.Released != detect {
						t.Errorf("replica %d on node 1 released at %v, want at the detection %v", r.ID, r.Released, detect)
					}
				case r.Requested == detect:
					replacements++
					if r.Placed != detect || r.Node == 1 || r.Ready != detect+2*mnt {
						t.Errorf("replacement %+v: want placed off node 1 at %v, ready 2 min later", r, detect)
					}
				}
			}
			if onNode1 == 0 || s.ReplicasLost != int64(onNode1) || replacements != onNode1 {
				t.Fatalf("%d replicas on node 1, %d lost, %d replacements", onNode1, s.ReplicasLost, replacements)
			}
			if failed == 0 || s.All.Errors != failed {
				t.Errorf("errors %d, failed on the lost replicas %d: want the black hole's errors, all of them theirs", s.All.Errors, failed)
			}
			hit := 0
			for _, o := range res.Batch.Jobs {
				hit += o.HardwareFailures
				if o.State != sim.Succeeded {
					t.Errorf("batch job ended %s", o.State)
				}
			}
			if hit == 0 {
				t.Errorf("no batch job was on node 1")
			}
			errs[health] = s.All.Errors
			t.Logf("health %v: fault at 600 s, detected at %.0f s; %d replicas lost, %d requests failed", health, detect.Seconds(), onNode1, s.All.Errors)
		})
	}
	if errs[true] >= errs[false] {
		t.Errorf("errors with ejection %d, without %d: ejection should stop the black hole before the detection", errs[true], errs[false])
	}
}

// Random node and GPU failures under a service that autoscales through a
// burst, preempting batch jobs: across seeds, the engine's invariants hold
// after every event (the services' holdings included), every request is
// accounted for, and every lost replica was replaced.
func TestServingUnderRandomFaults(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		svc := llm()
		svc.Health = Health{Enabled: true}
		svc.Autoscale = &Autoscale{Metric: MetricConcurrency, Target: 12, OnNoGPUs: Preempt}
		spec := &Spec{Horizon: 70 * mnt, Services: []Service{svc}}
		c := testCluster(t, 6, 8)
		fm := hwmodel.FailureModel{NodeMTBF: 4 * hwmodel.Hour, GPUMTBF: 8 * hwmodel.Hour,
			NodeRepair: hwmodel.RepairModel{Mean: 20 * mnt}, GPURepair: hwmodel.RepairModel{Mean: 10 * mnt}}
		faults := fm.Schedule(c, 70*mnt, seed)
		res, err := Run(Config{Spec: spec, Cluster: c, Batch: busyBatch(36, 30*mnt), Seed: seed, Sim: func(sc *sim.Config) {
			sc.CheckInvariants = true
			sc.Faults = faults
			sc.Retry = sim.RetryPolicy{Kind: sim.RetryFixed, Max: 10}
		}})
		if err != nil {
			t.Fatalf("seed %d (%d faults): %v", seed, len(faults), err)
		}
		s := res.Services[0]
		for _, cl := range append(s.Classes, s.All) {
			if cl.Requests != cl.Completed+cl.Errors+cl.Timeouts+cl.Unfinished {
				t.Errorf("seed %d: class %s books do not balance", seed, cl.Name)
			}
		}
		var released int64
		for _, r := range s.Replicas {
			if r.Placed >= 0 && r.Released < 0 {
				t.Errorf("seed %d: replica %d placed at %v never released", seed, r.ID, r.Placed)
			}
			if r.Released >= 0 && r.Released < spec.Horizon {
				released++
			}
		}
		if released < s.ReplicasLost {
			t.Errorf("seed %d: %d replicas lost but only %d released before the horizon", seed, s.ReplicasLost, released)
		}
		t.Logf("seed %d: %d faults, %d replicas lost, %d preempted, errors %d of %d", seed, len(faults), s.ReplicasLost, s.Preempted, s.All.Errors, s.All.Requests)
	}
}

// Every autoscaling metric sees the burst: replicas are added during it
// and removed after it, on an idle cluster.
func TestAutoscaleMetrics(t *testing.T) {
	cases := []struct {
		metric Metric
		target float64
	}{
		{MetricConcurrency, 12}, {MetricQueue, 1}, {MetricLatency, 30}, {MetricTTFT, 1}, {MetricUtilisation, 0.7},
	}
	for _, tc := range cases {
		t.Run(string(tc.metric), func(t *testing.T) {
			svc := llm()
			svc.Autoscale = &Autoscale{Metric: tc.metric, Target: tc.target, ScaleDownCooldown: 3 * mnt}
			res := run(t, &Spec{Horizon: 70 * mnt, Services: []Service{svc}}, testCluster(t, 6, 8), nil)
			s := res.Services[0]
			before, during, after := 0, 0, 0
			for _, b := range s.Series {
				switch {
				case b.Start < 20*mnt:
					before = max(before, b.ReplicasReady)
				case b.Start < 40*mnt:
					during = max(during, b.ReplicasReady)
				case b.Start >= 60*mnt:
					after = max(after, b.ReplicasReady)
				}
			}
			if during <= before || after >= during {
				t.Errorf("ready replicas: at most %d before the burst, %d during, %d at the end", before, during, after)
			}
			t.Logf("%s: replicas %d → %d → %d, scale-outs %d, ins %d, E2E p99 %.1f s", tc.metric, before, during, after, s.ScaleOuts, s.ScaleIns, s.All.E2E.P99)
		})
	}
}

// Hand-worked continuous batching: one replica decoding 10 tokens/s alone
// and half that each with two requests in flight (batch slow-down 1).
// A (100 output tokens) arrives at 0 s, B (10 tokens) at 5 s. A decodes 50
// tokens alone, then both run at 5 tokens/s: B ends 2 s later (7 s), A has
// 40 tokens left at 10 tokens/s: it ends at 11 s. With the slow-down fixed
// at dispatch A would end at 10 s, unaware of B.
func TestContinuousBatchingHandWorked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "req.csv")
	os.WriteFile(path, []byte("time_s,class,input_tokens,output_tokens\n0,c,1,100\n5,c,1,10\n"), 0o644)
	for _, continuous := range []bool{true, false} {
		svc := Service{Name: "s", GPUsPerReplica: 1, Routing: LeastOutstanding,
			Replica:  ReplicaModel{PrefillTokensPerS: 1e6, DecodeTokensPerS: 10, BatchSlowdown: 1, MaxConcurrent: 2, ContinuousBatching: continuous},
			Replicas: ReplicaBounds{Initial: 1, Min: 1, Max: 1},
			Arrivals: Arrivals{Trace: path},
			Classes:  []Class{{Name: "c", Weight: 1}},
		}
		res := run(t, &Spec{Horizon: mnt, Services: []Service{svc}}, testCluster(t, 1, 1), nil)
		all := res.Services[0].All
		// E2E max is A's, the other B's (the smaller one): mean = (A+B)/2.
		wantA := 11.0
		if !continuous {
			wantA = 10
		}
		gotA, gotB := all.E2E.Max, 2*all.E2E.Mean-all.E2E.Max
		if all.Completed != 2 || math.Abs(gotA-wantA) > 1e-3 || math.Abs(gotB-2) > 1e-3 {
			t.Errorf("continuous %v: A %.6f s (want %v), B %.6f s (want 2), completed %d", continuous, gotA, wantA, gotB, all.Completed)
		}
	}
}

// A replica placed on hardware that already broke (the fault is not
// detected yet) never gets ready: node 1 fails at 0 s, before the initial
// replicas are placed, so the second one lands there. It serves nothing, is
// released at the detection and replaced when node 1 is repaired (node 0
// is full), after the load time; the gateway never routes to it.
func TestReplicaPlacedOnBrokenNode(t *testing.T) {
	svc := llm()
	svc.Replicas = ReplicaBounds{Initial: 2, Min: 2, Max: 2}
	svc.Arrivals = Arrivals{Rate: 2}
	res, err := Run(Config{Spec: &Spec{Horizon: 30 * mnt, Services: []Service{svc}}, Cluster: testCluster(t, 2, 4), Seed: 2,
		Sim: func(sc *sim.Config) {
			sc.CheckInvariants = true
			sc.Faults = []hwmodel.Fault{{At: 0, Node: 1, GPU: -1, Repair: 10 * mnt}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Services[0]
	det := res.Batch.Faults[0].Detected
	lost, repl := s.Replicas[1], s.Replicas[2]
	if s.ReplicasLost != 1 || lost.Node != 1 || lost.Ready != -1 || lost.Released != det || lost.Completed+lost.Failed != 0 {
		t.Errorf("replica on the broken node: %+v (lost %d), want never ready, released at the detection %v", lost, s.ReplicasLost, det)
	}
	if len(s.Replicas) != 3 || repl.Requested != det || repl.Placed != 10*mnt || repl.Ready != 12*mnt {
		t.Errorf("replacement: %+v, want asked for at %v, placed at the repair (600 s), ready 2 min later", repl, det)
	}
	if s.All.Errors != 0 {
		t.Errorf("%d errors: the gateway routed to a replica that was never ready", s.All.Errors)
	}
}

// Jitter spreads each request's time around the token model's (mean 1), so
// at light load the mean latency stays and the tail grows; with outlier
// detection on, the noisy but healthy replicas are never ejected while the
// 4×-slow one still is.
func TestJitter(t *testing.T) {
	results := map[float64]*Result{}
	for _, j := range []float64{0, 0.4} {
		svc := llm()
		svc.Replica.Jitter = j
		svc.Replicas = ReplicaBounds{Initial: 4, Min: 4, Max: 4}
		svc.Arrivals = Arrivals{Rate: 3}
		svc.Health = Health{Enabled: true, EjectFor: mnt}
		svc.Incidents = []Incident{{At: 20 * mnt, Replica: 2, Kind: "slow", Factor: 4}}
		results[j] = run(t, &Spec{Horizon: 60 * mnt, Services: []Service{svc}}, testCluster(t, 2, 8), nil)
	}
	plain, noisy := results[0].Services[0], results[0.4].Services[0]
	// Before the slow-down: compare the replicas' own times (sojourn).
	if rel := math.Abs(noisy.All.E2E.Mean-plain.All.E2E.Mean) / plain.All.E2E.Mean; rel > 0.1 {
		t.Errorf("mean E2E %.2f s with jitter, %.2f s without: want about equal", noisy.All.E2E.Mean, plain.All.E2E.Mean)
	}
	if noisy.All.E2E.P99/noisy.All.E2E.P50 <= plain.All.E2E.P99/plain.All.E2E.P50 {
		t.Errorf("tail: p99/p50 %.2f with jitter, %.2f without: want a wider spread", noisy.All.E2E.P99/noisy.All.E2E.P50, plain.All.E2E.P99/plain.All.E2E.P50)
	}
	for _, r := range noisy.Replicas {
		if r.ID != 2 && r.Ejections != 0 {
			t.Errorf("healthy replica %d ejected %d times under jitter", r.ID, r.Ejections)
		}
	}
	if noisy.Replicas[2].Ejections == 0 {
		t.Error("the slow replica was never ejected under jitter")
	}
}

// A replica takes whole GPUs: on a cluster whose GPUs are all in MIG mode
// (or whose nodes are too small) the run is refused up front, naming the
// service, instead of ending with every request an error.
func TestReplicaNeedsWholeGPUs(t *testing.T) {
	spec, _ := hwmodel.Preset("h200x8-mig")
	mig, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	svc := llm()
	svc.GPUModel = ""
	svc.GPUsPerReplica = 1
	_, err = Run(Config{Spec: &Spec{Horizon: mnt, Services: []Service{svc}}, Cluster: mig})
	if err == nil || !strings.Contains(err.Error(), "service llm") || !strings.Contains(err.Error(), "not in MIG mode") {
		t.Errorf("MIG-only cluster: error %v", err)
	}
	svc = llm()
	svc.GPUsPerReplica = 16
	_, err = Run(Config{Spec: &Spec{Horizon: mnt, Services: []Service{svc}}, Cluster: testCluster(t, 4, 8)})
	if err == nil || !strings.Contains(err.Error(), "needs 16 whole GPUs") {
		t.Errorf("16-GPU replica on 8-GPU nodes: error %v", err)
	}
}

// Scale from zero: a service with no replica (min 0) answers its first
// requests with errors (no healthy replica, like a gateway's 502), and the
// autoscaler, seeing requests and no replica, asks for one at its next
// tick; it serves after its load time, and the errors stop.
func TestScaleFromZero(t *testing.T) {
	svc := llm()
	svc.Replicas = ReplicaBounds{Initial: 0, Min: 0, Max: 4}
	svc.Arrivals = Arrivals{Rate: 2}
	svc.Autoscale = &Autoscale{Metric: MetricConcurrency, Target: 12, Interval: 15 * sec}
	res := run(t, &Spec{Horizon: 20 * mnt, Services: []Service{svc}}, testCluster(t, 2, 8), nil)
	s := res.Services[0]
	if len(s.Replicas) == 0 {
		t.Fatal("no replica was ever asked for")
	}
	first := s.Replicas[0]
	if first.Requested != 15*sec || first.Ready != 15*sec+2*mnt {
		t.Errorf("first replica asked for at %v, ready at %v: want at the first tick (15 s), ready 2 min later", first.Requested, first.Ready)
	}
	if s.All.Errors == 0 || s.All.Completed == 0 {
		t.Fatalf("errors %d, completed %d: want errors before the first replica, then service", s.All.Errors, s.All.Completed)
	}
	for _, b := range s.Series {
		if b.Start >= first.Ready && b.Errors > 0 {
			t.Errorf("bucket at %v: %d errors after a replica was ready", b.Start, b.Errors)
		}
	}
}
