package serving

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Three requests at 0, 0.2 s and 0.4 s through a two-worker stage of 1 s,
// then one replica that serves one request at a time for 1 s:
//
//	request  arrives  stage (wait)       gateway (wait)  replica  E2E
//	1        0        0 - 1     (0)      1 (0)           1 - 2    2
//	2        0.2      0.2 - 1.2 (0)      1.2 (0.8)       2 - 3    2.8
//	3        0.4      1 - 2     (0.6)    2 (1.0)         3 - 4    3.6
//
// Request 3 waits for the first worker to free at 1; at 2 it reaches the
// gateway just before request 1 leaves the replica (its stage ended
// first, pushed first), and queues behind request 2.
func TestStageQueueByHand(t *testing.T) {
	res := handRun(t, "0\n0.2\n0.4", 2)
	c := res.Services[0].Classes[0]
	if c.Completed != 3 || len(c.Stages) != 1 || c.Stages[0].Name != "tok" {
		t.Fatalf("class %+v", c)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %g, want %g", what, got, want)
		}
	}
	st := c.Stages[0]
	near("stage wait mean", st.Wait.Mean, 0.2)
	near("stage wait max", st.Wait.Max, 0.6)
	near("stage total mean", st.Total.Mean, 1.2)
	near("stage total max", st.Total.Max, 1.6)
	near("gateway wait mean", c.QueueWait.Mean, 0.6)
	near("gateway wait max", c.QueueWait.Max, 1.0)
	near("E2E mean", c.E2E.Mean, 2.8)
	near("E2E max", c.E2E.Max, 3.6)
	near("TTFT mean", c.TTFT.Mean, 2.8) // the first token comes at the end in service-time mode
	if all := res.Services[0].All.Stages; !reflect.DeepEqual(all, c.Stages) {
		t.Errorf("all row's stages %+v, want the one class's %+v", all, c.Stages)
	}
}

// handRun runs requests arriving at the given times (seconds, one a
// line) through a stage of workers workers taking 1 s each, then one
// replica serving one request at a time for 1 s.
func handRun(t *testing.T, times string, workers int) *Result {
	t.Helper()
	var b strings.Builder
	b.WriteString("time_s,class,input_tokens,output_tokens\n")
	for _, at := range strings.Fields(times) {
		b.WriteString(at + ",c,1,1\n")
	}
	trace := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	one := Dist{Kind: DistConstant, Mean: 1}
	svc := Service{Name: "s", GPUsPerReplica: 1, Routing: LeastOutstanding,
		Replica:    ReplicaModel{MaxConcurrent: 1, ServiceTime: &one},
		Replicas:   ReplicaBounds{Initial: 1, Min: 1, Max: 1},
		Arrivals:   Arrivals{Trace: trace},
		StagePools: []StagePool{{Name: "tok", Workers: workers, ServiceTime: one}},
		Classes:    []Class{{Name: "c", Weight: 1, Stages: []string{"tok"}}},
	}
	return run(t, &Spec{Horizon: mnt, Services: []Service{svc}}, testCluster(t, 1, 8), nil)
}

// One worker, requests at 0, 0.1 and 0.2 s: first come, first served,
// they wait 0, 0.9 and 1.8 s (last come, first served would make the
// second wait 1.9 s, with the same mean).
func TestStageIsFIFO(t *testing.T) {
	st := handRun(t, "0\n0.1\n0.2", 1).Services[0].Classes[0].Stages[0]
	if math.Abs(st.Wait.Mean-0.9) > 1e-9 || math.Abs(st.Wait.Max-1.8) > 1e-9 {
		t.Errorf("waits: mean %g s, max %g s; want 0.9 and 1.8", st.Wait.Mean, st.Wait.Max)
	}
}

// drawn is one request as its class's stream drew it.
type drawn struct {
	at      hwmodel.Time
	in, out int32
}

// draws runs spec and returns every request drawn, by declared service
// and class name ("svc.class"; a pool's service is named SERVICE/POOL).
func draws(t *testing.T, spec *Spec, seed uint64) (map[string][]drawn, *Result) {
	t.Helper()
	m, err := newModel(spec, seed)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]drawn{}
	m.drawn = func(q *request) {
		s := m.svcs[q.svc]
		name, _, _ := strings.Cut(s.spec.Name, "/")
		k := name + "." + s.spec.Classes[q.class].Name
		out[k] = append(out[k], drawn{q.arrive, q.in, q.out})
	}
	pol, err := policies.New("fcfs", policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sim.New(sim.Config{Cluster: testCluster(t, 8, 8), Workload: &workloads.Workload{}, Policy: pol, Coupled: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	return out, &Result{Services: m.result()}
}

// pipelined is llm() with a tokenizer and a lookup that interactive
// requests pass, and the two classes in two pools.
func pipelined(stages, pools bool) *Spec {
	svc := llm()
	other := llm()
	other.Name = "other"
	if stages {
		svc.StagePools = []StagePool{
			{Name: "tokenizer", Workers: 1, ServiceTime: Dist{Kind: DistLognormal, Mean: 0.05, Sigma: 0.3}},
			{Name: "kv-lookup", Workers: 4, ServiceTime: Dist{Kind: DistExponential, Mean: 0.01}},
		}
		svc.Classes[0].Stages = []string{"tokenizer", "kv-lookup"}
	}
	if pools {
		small := svc.Replica
		small.MaxConcurrent = 4
		svc.Pools = []Pool{
			{Name: "batch", Replica: svc.Replica, Replicas: ReplicaBounds{Initial: 2, Min: 2, Max: 2}},
			{Name: "fast", Replica: small, Replicas: ReplicaBounds{Initial: 3, Min: 3, Max: 3}},
		}
		svc.Classes[0].Pool = "fast"
	}
	return &Spec{Horizon: 30 * mnt, Services: []Service{svc, other}}
}

// Stages and pools draw from streams of their own: with the same seed,
// every class of every service gets the same requests (arrival times and
// tokens) with or without them, while the stages do delay the requests
// that pass them.
func TestStagesAndPoolsKeepTheRequests(t *testing.T) {
	base, _ := draws(t, pipelined(false, false), 5)
	if len(base["llm.interactive"]) < 1000 || len(base["llm.bulk"]) < 1000 || len(base["other.bulk"]) < 1000 {
		t.Fatalf("requests per class: %d, %d, %d", len(base["llm.interactive"]), len(base["llm.bulk"]), len(base["other.bulk"]))
	}
	for _, c := range []struct {
		name          string
		stages, pools bool
	}{{"stages", true, false}, {"pools", false, true}, {"both", true, true}} {
		got, res := draws(t, pipelined(c.stages, c.pools), 5)
		if !reflect.DeepEqual(got, base) {
			for k := range base {
				if !reflect.DeepEqual(got[k], base[k]) {
					t.Errorf("%s: %s draws %d requests, first %v; without: %d, first %v", c.name, k, len(got[k]), got[k][:1], len(base[k]), base[k][:1])
				}
			}
		}
		names := []string{}
		for _, s := range res.Services {
			names = append(names, s.Name)
		}
		want := "llm other"
		if c.pools {
			want = "llm/batch llm/fast other"
		}
		if strings.Join(names, " ") != want {
			t.Errorf("%s: services %v, want %s", c.name, names, want)
		}
		if !c.stages {
			continue
		}
		inter := res.Services[0].Classes // llm, or llm/fast
		if c.pools {
			inter = res.Services[1].Classes
		}
		st := inter[0].Stages
		if len(st) != 2 || st[0].Name != "tokenizer" || st[1].Name != "kv-lookup" {
			t.Fatalf("%s: interactive stages %+v", c.name, st)
		}
		// A 50 ms tokenizer at about 5 requests/s (25% busy) and a 10 ms
		// lookup: the class's E2E grows by about the stages' time.
		if !(st[0].Total.Mean > 0.05 && st[0].Total.Mean < 0.1) || !(st[1].Total.Mean > 0.005 && st[1].Total.Mean < 0.02) {
			t.Errorf("%s: stage means %g, %g s; want about 0.05 plus waits and 0.01", c.name, st[0].Total.Mean, st[1].Total.Mean)
		}
		if !(st[0].Wait.Max > 0) || st[0].Wait.Mean >= st[0].Total.Mean {
			t.Errorf("%s: tokenizer wait %+v, total %+v: want some waits, less than the total", c.name, st[0].Wait, st[0].Total)
		}
		if bulk := res.Services[0].Classes[len(res.Services[0].Classes)-1]; bulk.Name != "bulk" || len(bulk.Stages) != 0 {
			t.Errorf("%s: bulk passes no stage, got %s %+v", c.name, bulk.Name, bulk.Stages)
		}
	}
}

// A pool serves only the classes that name it, with its own replicas;
// the service's requests are split, none lost.
func TestPoolsSplitTheClasses(t *testing.T) {
	_, whole := draws(t, pipelined(false, false), 7)
	_, split := draws(t, pipelined(false, true), 7)
	if len(split.Services) != 3 {
		t.Fatalf("%d services", len(split.Services))
	}
	batch, fast := split.Services[0], split.Services[1]
	if len(batch.Classes) != 1 || batch.Classes[0].Name != "bulk" || len(fast.Classes) != 1 || fast.Classes[0].Name != "interactive" {
		t.Fatalf("batch pool classes %+v, fast pool classes %+v", batch.Classes, fast.Classes)
	}
	if len(batch.Replicas) != 2 || len(fast.Replicas) != 3 {
		t.Errorf("replicas: batch %d, fast %d; want 2 and 3", len(batch.Replicas), len(fast.Replicas))
	}
	for k, c := range whole.Services[0].Classes {
		p := []ServiceResult{fast, batch}[k].Classes[0]
		if p.Requests != c.Requests {
			t.Errorf("%s: %d requests in its pool, %d without pools", c.Name, p.Requests, c.Requests)
		}
	}
	// The fast pool's 3 replicas of 4 slots (12) carry interactive at
	// 2.5-7.5 rps of about 6.7 s each only by queueing: its gateway wait
	// must exceed the unsplit service's.
	if !(fast.Classes[0].QueueWait.Mean > whole.Services[0].Classes[0].QueueWait.Mean) {
		t.Errorf("interactive gateway wait %g s in a 12-slot pool, %g s in the shared one", fast.Classes[0].QueueWait.Mean, whole.Services[0].Classes[0].QueueWait.Mean)
	}
}

// Each mistake in stage pools and pools is reported at its line and
// field, saying what was expected.
func TestPipelineErrors(t *testing.T) {
	const svc = `cluster: dgx-h100x64
horizon: 10m
services:
  - name: svc
    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 20, max_concurrent: 8}
    replicas: {initial: 1}
    arrivals: {rate: 1}
    stage_pools:
      - {name: tok, workers: 8, service_time: {dist: constant, mean: 0.004}}
    pools:
      - {name: fast, replica: {max_concurrent: 4}}
      - {name: bulk, replicas: {initial: 2, max: 4}}
    classes:
      - name: a
        stages: [tok]
        pool: fast
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 10}
      - name: b
        pool: bulk
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 10}
`
	if _, err := ParseExperiment([]byte(svc), "x.yaml"); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	patch := func(old, new string) string {
		if !strings.Contains(svc, old) {
			panic(old)
		}
		return strings.Replace(svc, old, new, 1)
	}
	cases := []struct{ name, in, want string }{
		{"no workers", patch("workers: 8", "workers: 0"), "x.yaml:9: services[0].stage_pools[0].workers: want ≥ 1, got 0"},
		{"workers missing", patch("workers: 8, ", ""), "x.yaml:9: services[0].stage_pools[0].workers: required field is missing"},
		{"stage dist", patch("dist: constant, mean: 0.004", "dist: gamma, mean: 0.004"), `x.yaml:9: services[0].stage_pools[0].service_time.dist: unknown distribution "gamma"`},
		{"stage mean", patch("dist: constant, mean: 0.004", "dist: constant, mean: 0"), "x.yaml:9: services[0].stage_pools[0].service_time.mean: want a mean > 0, got 0"},
		{"dup stage pool", patch("      - {name: tok, workers: 8, service_time: {dist: constant, mean: 0.004}}\n",
			"      - {name: tok, workers: 8, service_time: {dist: constant, mean: 0.004}}\n      - {name: tok, workers: 2, service_time: {dist: constant, mean: 0.004}}\n"),
			`x.yaml:10: services[0].stage_pools[1].name: "tok" is already the name of stage_pools[0]`},
		{"unknown stage", patch("stages: [tok]", "stages: [tok, detok]"), `x.yaml:15: services[0].classes[0].stages[1]: unknown stage "detok" (the service's stage_pools: tok)`},
		{"stage twice", patch("stages: [tok]", "stages: [tok, tok]"), `x.yaml:15: services[0].classes[0].stages[1]: "tok" is listed twice; a request passes each stage once`},
		{"unknown pool", patch("pool: bulk", "pool: batch"), `x.yaml:20: services[0].classes[1].pool: unknown pool "batch" (the service's pools: fast, bulk)`},
		{"dup pool", patch("{name: bulk,", "{name: fast,"), `x.yaml:12: services[0].pools[1].name: "fast" is already the name of pools[0]`},
		{"idle pool", patch("        pool: bulk\n", ""), `x.yaml:12: services[0].pools[1].name: no class is served by pool "bulk"`},
		{"pool bounds", patch("initial: 2, max: 4", "initial: 5, max: 4"), `x.yaml:12: services[0].pools[1].replicas.initial: want min (5) <= initial <= max (4), got 5`},
		{"pool concurrency", patch("max_concurrent: 4", "max_concurrent: 0"), `x.yaml:11: services[0].pools[0].replica.max_concurrent: want 1 to 1000000 requests, got 0`},
		{"pool name", patch("{name: fast,", "{name: fast/x,"), `x.yaml:11: services[0].pools[0].name: want letters, digits`},
		{"pool field", patch("replica: {max_concurrent: 4}", "replica: {max_concurent: 4}"), `x.yaml:11: services[0].pools[0].replica.max_concurent: unknown field`},
		{"pool iteration", patch("replica: {max_concurrent: 4}", "replica: {iteration: {max_num_seqs: 4}}"),
			`x.yaml:11: services[0].pools[0].replica.iteration: want model, hardware, gpu and coefficients (the service's replica has no iteration model to override)`},
		{"pool without pools", strings.Replace(patch("    pools:\n      - {name: fast, replica: {max_concurrent: 4}}\n      - {name: bulk, replicas: {initial: 2, max: 4}}\n", ""), "        pool: bulk\n", "", 1),
			`x.yaml:13: services[0].classes[0].pool: unknown pool "fast": the service has no pools`},
		{"pools and trace", patch("arrivals: {rate: 1}", "arrivals: {trace: r.csv}"), `x.yaml:7: services[0].arrivals.trace: a service with pools takes rate arrivals`},
		{"pools and incidents", svc + "    incidents: [{at: 5m, kind: slow, factor: 2}]\n", `services[0].incidents: an incident names a replica of one service; a service with pools takes none`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(c.in), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
		})
	}
}

// A class's stages reach serving_summary.json (a stages list in the class
// entry) and the table (a line per class under it); runs without stages
// keep both as they were.
func TestWriteStages(t *testing.T) {
	rs := handMade()
	var before bytes.Buffer
	if err := FormatTable(&before, rs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(before.String(), "stages") {
		t.Fatalf("a table without stages speaks of them:\n%s", before.String())
	}
	svc := &rs.Variants[0].Result.Services[0]
	svc.Name = "llm/fast"
	svc.Classes[0].Stages = []StageLatency{
		{Name: "tokenizer", Wait: Latency{Mean: 0.001, P99: 0.012, Max: 0.02}, Total: Latency{Mean: 0.005, P99: 0.017, Max: 0.03}},
		{Name: "kv-lookup", Wait: Latency{}, Total: Latency{Mean: 0.0005, P99: 0.0005, Max: 0.0005}},
	}
	svc.Classes[0].QueueWait = Latency{Mean: 0.1, P99: 2.5, Max: 3}
	var table, js bytes.Buffer
	if err := FormatTable(&table, rs); err != nil {
		t.Fatal(err)
	}
	want := "\nstages (p99 wait/p99 time in each, then the gateway queue's p99 wait):\n" +
		"static llm/fast chat: tokenizer 12ms/17ms, kv-lookup 0ms/0.5ms, gateway 2.50s\n"
	if !strings.HasSuffix(table.String(), want) {
		t.Errorf("table ends\n%s\nwant\n%s", table.String(), want)
	}
	if err := WriteSummaryJSON(&js, rs); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Variants []struct {
			Services []struct {
				Name    string `json:"name"`
				Classes []struct {
					Stages []struct {
						Name  string             `json:"name"`
						Wait  map[string]float64 `json:"wait_s"`
						Total map[string]float64 `json:"total_s"`
					} `json:"stages"`
				} `json:"classes"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(js.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	s := sum.Variants[0].Services[0]
	if s.Name != "llm/fast" || len(s.Classes[0].Stages) != 2 || len(s.Classes[1].Stages) != 0 || len(sum.Variants[1].Services[0].Classes[0].Stages) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	tok := s.Classes[0].Stages[0]
	if tok.Name != "tokenizer" || tok.Wait["p99"] != 0.012 || tok.Total["mean"] != 0.005 || tok.Total["max"] != 0.03 {
		t.Errorf("tokenizer %+v", tok)
	}
	if strings.Count(js.String(), `"stages"`) != 1 {
		t.Errorf("want one stages list (the classes without stages leave it out):\n%s", js.String())
	}
}

// A pool's replica fields override the service's one by one, its bounds
// and autoscaler replace the service's, and a pool without an autoscale
// section takes the service's; the iteration engine's settings are
// overridden field by field too, the service's own left alone.
func TestParsePools(t *testing.T) {
	const file = `cluster: dgx-h100x64
horizon: 10m
services:
  - name: svc
    replica:
      max_concurrent: 64
      load_time: 1m
      iteration: {model: m.json, hardware: h.json, gpu: H100, coefficients: c.yaml, max_num_batched_tokens: 4096}
    replicas: {initial: 2, max: 8}
    autoscale: {metric: queue, target: 4}
    stage_pools:
      - {name: tok, workers: 3, service_time: {dist: exponential, mean: 0.002}}
    pools:
      - name: fast
        replica: {max_concurrent: 8, iteration: {max_num_seqs: 16}}
        replicas: {initial: 4, min: 4, max: 32}
        autoscale: {metric: ttft, target: 0.2}
      - name: bulk
    arrivals: {rate: 1}
    classes:
      - {name: a, pool: fast, stages: [tok], input_tokens: {dist: constant, mean: 100}, output_tokens: {dist: constant, mean: 10}}
      - {name: b, pool: bulk, input_tokens: {dist: constant, mean: 100}, output_tokens: {dist: constant, mean: 10}}
      - {name: c, input_tokens: {dist: constant, mean: 100}, output_tokens: {dist: constant, mean: 10}}
`
	e, err := ParseExperiment([]byte(file), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := e.Spec.Services[0]
	if len(s.StagePools) != 1 || s.StagePools[0] != (StagePool{Name: "tok", Workers: 3, ServiceTime: Dist{Kind: DistExponential, Mean: 0.002}}) {
		t.Errorf("stage pools %+v", s.StagePools)
	}
	if !reflect.DeepEqual(s.Classes[0].Stages, []string{"tok"}) || s.Classes[0].Pool != "fast" || s.Classes[2].Pool != "" {
		t.Errorf("classes %+v", s.Classes)
	}
	fast, bulk := s.Pools[0], s.Pools[1]
	if fast.Replica.MaxConcurrent != 8 || fast.Replica.LoadTime != hwmodel.Minute || fast.Replicas != (ReplicaBounds{4, 4, 32}) ||
		fast.Autoscale.Metric != MetricTTFT || fast.Autoscale.Target != 0.2 || fast.Autoscale.Interval != 15*hwmodel.Second {
		t.Errorf("fast %+v, autoscale %+v", fast, fast.Autoscale)
	}
	if it := fast.Replica.Iteration; it == s.Replica.Iteration || it.MaxSeqs != 16 || it.TokenBudget != 4096 || it.Model != "m.json" || it.GPU != "H100" {
		t.Errorf("fast iteration %+v", it)
	}
	if s.Replica.Iteration.MaxSeqs != 0 {
		t.Errorf("the service's own max_num_seqs became %d", s.Replica.Iteration.MaxSeqs)
	}
	if bulk.Replica.MaxConcurrent != 64 || bulk.Replicas != (ReplicaBounds{2, 2, 8}) || bulk.Autoscale == nil || bulk.Autoscale.Metric != MetricQueue || bulk.Autoscale == s.Autoscale {
		t.Errorf("bulk %+v, autoscale %+v: want the service's settings, its own autoscaler copy", bulk, bulk.Autoscale)
	}
	// The engine runs a service per pool; a class without a pool goes to
	// the first, and every class keeps its key in the declared service.
	units := expand(&e.Spec)
	if len(units) != 2 || units[0].spec.Name != "svc/fast" || units[1].spec.Name != "svc/bulk" ||
		!reflect.DeepEqual(units[0].keys, []int{0, 2}) || !reflect.DeepEqual(units[1].keys, []int{1}) ||
		units[0].spec.Classes[1].Name != "c" || units[1].spec.Replica.MaxConcurrent != 64 || units[0].total != 3 {
		t.Errorf("units %+v", units)
	}
	// A variant without autoscaling takes the pools' autoscalers too.
	e.Variants = []Variant{{Name: "static", Autoscale: SwitchOff}}
	for _, p := range e.VariantSpec(0).Services[0].Pools {
		if p.Autoscale != nil {
			t.Errorf("pool %s keeps its autoscaler under autoscale: off", p.Name)
		}
	}
	if e.Spec.Services[0].Pools[0].Autoscale == nil {
		t.Error("the variant changed the experiment's own pools")
	}
}

// BenchmarkStages is BenchmarkDay500rps's dispatch case with and without
// two stages on every request (a tokenizer of 8 workers, a lookup of 64):
// each stage adds a heap push and pop per request.
func BenchmarkStages(b *testing.B) {
	hours := 24
	if v := os.Getenv("BRIGADE_BENCH_HOURS"); v != "" {
		fmt.Sscan(v, &hours)
	}
	for _, stages := range []bool{false, true} {
		name := "none"
		if stages {
			name = "tokenizer+lookup"
		}
		b.Run(name, func(b *testing.B) {
			svc := llm()
			svc.Name, svc.GPUsPerReplica = "chat-8b", 1
			svc.Replica = ReplicaModel{PrefillTokensPerS: 20000, DecodeTokensPerS: 60, BatchSlowdown: 0.002, MaxConcurrent: 128}
			svc.Replicas = ReplicaBounds{Initial: 24, Min: 24, Max: 24}
			svc.Arrivals = Arrivals{Rate: 500}
			if stages {
				svc.StagePools = []StagePool{
					{Name: "tokenizer", Workers: 8, ServiceTime: Dist{Kind: DistLognormal, Mean: 0.004, Sigma: 0.3}},
					{Name: "kv-lookup", Workers: 64, ServiceTime: Dist{Kind: DistConstant, Mean: 0.0005}},
				}
				for k := range svc.Classes {
					svc.Classes[k].Stages = []string{"tokenizer", "kv-lookup"}
				}
			}
			spec := &Spec{Horizon: hwmodel.Time(hours) * hwmodel.Hour, Services: []Service{svc}}
			for b.Loop() {
				res, err := Run(Config{Spec: spec, Cluster: testCluster(b, 3, 8), Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Requests)/b.Elapsed().Seconds(), "requests/s")
				b.ReportMetric(float64(res.Events)/float64(res.Requests), "events/request")
			}
		})
	}
}

// Pools under the iteration-level model: each pool builds its own engine
// settings. Class c's 20 requests a second of about 10 steps each keep 2
// or 3 sequences in flight, so a pool that allows 2 per batch queues them
// (TTFT seconds) where one that allows 256 does not (tens of ms), on the
// same requests; the other pool's class is untouched.
func TestIterationPools(t *testing.T) {
	run := func(seqs int) (a, b ClassResult) {
		t.Helper()
		text := iterExperiment(t, "x.csv", "")
		text = strings.Replace(text, "horizon: 2h", "horizon: 2m", 1)
		text = strings.Replace(text, "arrivals: {trace: x.csv}", fmt.Sprintf(`arrivals: {rate: 40}
    pools:
      - {name: fast, replica: {iteration: {max_num_seqs: %d}}}
      - {name: bulk}`, seqs), 1)
		text = strings.Replace(text, "      - name: c\n", "      - name: b\n        pool: bulk\n        input_tokens: {dist: constant, mean: 100}\n        output_tokens: {dist: constant, mean: 10}\n      - name: c\n", 1)
		text = strings.Replace(text, "mean: 10}\n`", "mean: 10}\n", 1)
		exp, err := ParseExperiment([]byte(text), filepath.Join(t.TempDir(), "x.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := RunExperiment(exp, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sv := rs.Variants[0].Result.Services
		if len(sv) != 2 || sv[0].Name != "qwen/fast" || sv[1].Name != "qwen/bulk" || sv[0].Engine == nil || sv[0].Engine.Steps == 0 {
			t.Fatalf("services %+v", sv)
		}
		return sv[0].Classes[0], sv[1].Classes[0]
	}
	narrow, bulk1 := run(2)
	wide, bulk2 := run(256)
	if narrow.Name != "c" || narrow.Requests != wide.Requests || narrow.Requests < 400 {
		t.Fatalf("class %s: %d requests with 2 sequences, %d with 256", narrow.Name, narrow.Requests, wide.Requests)
	}
	if !(narrow.TTFT.Mean > 10*wide.TTFT.Mean) {
		t.Errorf("TTFT mean %g s with 2 sequences per batch, %g s with 256: want the narrow batch to queue", narrow.TTFT.Mean, wide.TTFT.Mean)
	}
	if bulk1.TTFT != bulk2.TTFT || bulk1.Requests != bulk2.Requests {
		t.Errorf("the bulk pool changed with the other pool's batch: %+v against %+v", bulk1.TTFT, bulk2.TTFT)
	}
}

// addPipeline gives some of spec's services stage pools (and their
// classes stages) and splits some into pools, drawing from r; FuzzServing
// runs its specs through it with a stream of its own, so the specs it drew
// before stay as they were.
func addPipeline(spec *Spec, r *rand.Rand) {
	for k := range spec.Services {
		svc := &spec.Services[k]
		if r.IntN(2) == 0 {
			for p := 1 + r.IntN(3); p > 0; p-- {
				svc.StagePools = append(svc.StagePools, StagePool{Name: fmt.Sprintf("st%d", len(svc.StagePools)), Workers: 1 + r.IntN(4),
					ServiceTime: Dist{Kind: DistExponential, Mean: 0.001 + r.Float64()*0.5}})
			}
			for c := range svc.Classes {
				for _, p := range r.Perm(len(svc.StagePools))[:r.IntN(len(svc.StagePools)+1)] {
					svc.Classes[c].Stages = append(svc.Classes[c].Stages, svc.StagePools[p].Name)
				}
			}
		}
		if r.IntN(2) == 0 && len(svc.Classes) > 1 {
			svc.Incidents = nil
			for p := 0; p < len(svc.Classes); p++ {
				pl := Pool{Name: fmt.Sprintf("pool%d", p), Replica: svc.Replica, Replicas: svc.Replicas, Autoscale: svc.Autoscale}
				pl.Replica.MaxConcurrent = 1 + r.IntN(40)
				svc.Pools = append(svc.Pools, pl)
				svc.Classes[p].Pool = pl.Name
			}
		}
	}
}

// A plan sizes one pool of replicas: a service with pools is refused, by
// name.
func TestPlanRefusesPools(t *testing.T) {
	spec := pipelined(false, true)
	_, err := NewFixed(spec, "llm", 10)
	if err == nil || !strings.Contains(err.Error(), "plan: service llm has pools (batch, fast)") {
		t.Fatalf("error %v", err)
	}
	if _, err := NewFixed(spec, "other", 10); err != nil {
		t.Fatalf("the service without pools: %v", err)
	}
}

// Two stages in tandem behind Poisson arrivals, each with exponential
// service: the first is an M/M/4 queue, and by Burke's theorem its
// departures are Poisson too, so the second is an M/M/2 queue of its own
// (a Jackson network). Each stage's mean wait must match Erlang C.
func TestStagesErlangC(t *testing.T) {
	const lambda = 3.2
	// Over seeds 1 to 4 and 9 the waits came within 2.5 % of Erlang C.
	requests, tol := 1_000_000, 0.03
	if testing.Short() {
		requests, tol = 200_000, 0.06
	}
	horizon := hwmodel.Time(float64(requests) / lambda * 1e6)
	fast := Dist{Kind: DistConstant, Mean: 0.001}
	spec := &Spec{Horizon: horizon, Bucket: horizon / 10, Services: []Service{{
		Name: "s", GPUsPerReplica: 1, Routing: LeastOutstanding,
		Replica:  ReplicaModel{MaxConcurrent: 1000, ServiceTime: &fast},
		Replicas: ReplicaBounds{Initial: 1, Min: 1, Max: 1},
		Arrivals: Arrivals{Rate: lambda},
		StagePools: []StagePool{
			{Name: "a", Workers: 4, ServiceTime: Dist{Kind: DistExponential, Mean: 1}},
			{Name: "b", Workers: 2, ServiceTime: Dist{Kind: DistExponential, Mean: 0.5}},
		},
		Classes: []Class{{Name: "c", Weight: 1, Stages: []string{"a", "b"}}},
	}}}
	res, err := Run(Config{Spec: spec, Cluster: testCluster(t, 1, 1), Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Services[0].Classes[0]
	var sum float64
	for k, q := range []struct{ c, mu float64 }{{4, 1}, {2, 2}} {
		st := c.Stages[k]
		_, want := erlangC(int(q.c), lambda, q.mu)
		if rel := math.Abs(st.Wait.Mean-want) / want; rel > tol {
			t.Errorf("stage %s: mean wait %.4f s, Erlang C %.4f s: off by %.1f%%", st.Name, st.Wait.Mean, want, 100*rel)
		}
		if rel := math.Abs(st.Total.Mean-(want+1/q.mu)) / (want + 1/q.mu); rel > tol {
			t.Errorf("stage %s: mean time %.4f s, want %.4f", st.Name, st.Total.Mean, want+1/q.mu)
		}
		sum += want + 1/q.mu
		t.Logf("stage %s: mean wait %.4f s (Erlang C %.4f s)", st.Name, st.Wait.Mean, want)
	}
	// Nothing waits at the gateway; E2E is the stages and the 1 ms.
	if c.QueueWait.Max != 0 || math.Abs(c.E2E.Mean-(sum+0.001))/(sum+0.001) > tol {
		t.Errorf("gateway wait %+v, E2E mean %.4f s, want %.4f", c.QueueWait, c.E2E.Mean, sum+0.001)
	}
}
