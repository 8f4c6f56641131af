package serving

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

func TestParseExperimentSmall(t *testing.T) {
	e, err := LoadExperiment("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if e.Cluster.Inline == nil || e.Cluster.Inline.Name != "h100x2" {
		t.Fatalf("cluster = %+v", e.Cluster)
	}
	if e.Batch == nil || e.Batch.Synthetic == nil || e.Batch.Synthetic.Jobs != 40 || e.Batch.Synthetic.MaxDuration != hwmodel.Hour || e.Batch.Policy != "fcfs" {
		t.Fatalf("batch = %+v", e.Batch)
	}
	if e.Seed != 3 || e.Spec.Horizon != 20*hwmodel.Minute || e.Spec.Bucket != hwmodel.Minute {
		t.Fatalf("seed %d horizon %d bucket %d", e.Seed, e.Spec.Horizon, e.Spec.Bucket)
	}
	s := e.Spec.Services[0]
	if s.Name != "chat" || s.GPUsPerReplica != 2 || s.Priority != 10 || s.Replica.MaxConcurrent != 16 || s.Replica.LoadTime != hwmodel.Minute || !s.Replica.ContinuousBatching {
		t.Fatalf("service = %+v", s)
	}
	if s.Replicas != (ReplicaBounds{Initial: 2, Min: 1, Max: 4}) {
		t.Fatalf("replicas = %+v", s.Replicas)
	}
	// Health: the given fields, the rest defaulted; enabled: false kept.
	want := Health{Enabled: false, LatencyRatio: 2.5, EWMAWeight: 0.1, MinRequests: 10,
		ConsecutiveErrors: 5, EjectFor: hwmodel.Minute, ProbeRequests: 5, MaxEjectedPct: 50, LaneHeadroom: 1}
	if s.Health != want {
		t.Fatalf("health = %+v, want %+v", s.Health, want)
	}
	a := s.Autoscale
	if a == nil || a.Metric != MetricConcurrency || a.Target != 8 || a.Interval != 30*hwmodel.Second || a.OnNoGPUs != Preempt || a.ScaleDownCooldown != 5*hwmodel.Minute {
		t.Fatalf("autoscale = %+v", a)
	}
	if len(s.Arrivals.Steps) != 1 || s.Arrivals.Steps[0] != (RateStep{At: 5 * hwmodel.Minute, For: 5 * hwmodel.Minute, Rate: 10}) {
		t.Fatalf("steps = %+v", s.Arrivals.Steps)
	}
	c := s.Classes[0]
	if c.Name != "interactive" || c.Weight != 3 || c.Priority != 1 || c.TTFTTarget != hwmodel.Second || c.E2ETarget != 20*hwmodel.Second ||
		c.Timeout != time60s || c.InputTokens != (Dist{Kind: "lognormal", Mean: 500, Sigma: 0.5, Max: 4000}) {
		t.Fatalf("class = %+v", c)
	}
	if s.Classes[1].Weight != 1 || s.Classes[1].InputTokens != (Dist{Kind: "uniform", Min: 100, Max: 2000}) {
		t.Fatalf("class 1 = %+v", s.Classes[1])
	}
	if len(s.Incidents) != 1 || s.Incidents[0] != (Incident{At: 10 * hwmodel.Minute, Kind: "slow", Factor: 4}) {
		t.Fatalf("incidents = %+v", s.Incidents)
	}
	if got := strings.Join(e.Names(), ","); got != "static,eject,autoscale+eject" {
		t.Fatalf("names = %s", got)
	}
	// Variants are copies with overrides; the experiment is unchanged.
	v0, v1, v2 := e.VariantSpec(0), e.VariantSpec(1), e.VariantSpec(2)
	if v0.Services[0].Health.Enabled || v0.Services[0].Autoscale != nil || len(v0.Services[0].Incidents) != 1 {
		t.Fatalf("static = %+v", v0.Services[0])
	}
	if !v1.Services[0].Health.Enabled || v1.Services[0].Autoscale != nil {
		t.Fatalf("eject = %+v", v1.Services[0])
	}
	if !v2.Services[0].Health.Enabled || v2.Services[0].Autoscale == nil {
		t.Fatalf("autoscale+eject = %+v", v2.Services[0])
	}
	v2.Services[0].Autoscale.Target = 99
	v2.Services[0].Classes[0].Name = "x"
	if e.Spec.Services[0].Autoscale.Target != 8 || e.Spec.Services[0].Classes[0].Name != "interactive" {
		t.Fatal("VariantSpec shares memory with the experiment")
	}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
}

const time60s = 60 * hwmodel.Second

// minimal is the smallest valid experiment; bad cases patch it.
const minimal = `cluster: dgx-h100x64
horizon: 10m
services:
  - name: svc
    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 20, max_concurrent: 8}
    replicas: {initial: 1}
    arrivals: {rate: 1}
    classes:
      - name: c
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 10}
`

func TestParseExperimentDefaults(t *testing.T) {
	e, err := ParseExperiment([]byte(minimal), "min.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := e.Spec.Services[0]
	if e.Spec.Bucket != DefaultBucket || e.Seed != 1 || e.Batch != nil || e.Cluster.Preset != "dgx-h100x64" {
		t.Fatalf("%+v", e)
	}
	if s.Replicas != (ReplicaBounds{1, 1, 1}) || s.Routing != DefaultRouting || s.GPUsPerReplica != 1 || s.Health.Enabled || s.Health.LatencyRatio != 2 || s.Autoscale != nil {
		t.Fatalf("%+v", s)
	}
	if s.Classes[0].Weight != 1 {
		t.Fatalf("weight %g", s.Classes[0].Weight)
	}
	if got := e.Names(); len(got) != 1 || got[0] != "default" {
		t.Fatalf("names %v", got)
	}
	// JSON reads the same.
	j := `{"cluster": "dgx-h100x64", "horizon": "10m", "services": [{"name": "svc",
	  "replica": {"prefill_tokens_per_s": 1000, "decode_tokens_per_s": 20, "max_concurrent": 8},
	  "replicas": {"initial": 1}, "arrivals": {"rate": 1},
	  "classes": [{"name": "c", "input_tokens": {"dist": "constant", "mean": 100}, "output_tokens": {"dist": "constant", "mean": 10}}]}]}`
	ej, err := ParseExperiment([]byte(j), "min.json")
	if err != nil {
		t.Fatal(err)
	}
	if ej.Spec.Services[0].Replicas != s.Replicas || ej.Spec.Horizon != e.Spec.Horizon {
		t.Fatalf("json %+v", ej.Spec.Services[0])
	}
}

func TestParseExperimentErrors(t *testing.T) {
	patch := func(old, new string) string {
		if !strings.Contains(minimal, old) {
			panic(old)
		}
		return strings.Replace(minimal, old, new, 1)
	}
	cases := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{"x.yaml: the file is empty"}},
		{"syntax", "cluster: [", []string{"x.yaml:", "YAML"}},
		{"not a mapping", "- 1\n", []string{"x.yaml:1: want a mapping with fields cluster"}},
		{"unknown top", minimal + "horizn: 1h\n", []string{"x.yaml:12: horizn: unknown field", `did you mean "horizon"?`}},
		{"duplicate", minimal + "horizon: 1h\n", []string{"x.yaml:12: horizon: appears twice (also on line 2)"}},
		{"missing cluster", strings.Replace(minimal, "cluster: dgx-h100x64\n", "", 1), []string{"cluster: required field is missing"}},
		{"unknown preset", patch("dgx-h100x64", "dgx-h100"), []string{`x.yaml:1: cluster: unknown preset "dgx-h100"`}},
		{"bad duration", patch("horizon: 10m", "horizon: fast"), []string{`x.yaml:2: horizon: want a duration like "500ms", "90s" or "1h30m", got "fast"`}},
		{"number duration", patch("horizon: 10m", "horizon: 600"), []string{`x.yaml:2: horizon: want a duration like "90s", "20m" or "1h30m", got number 600`}},
		{"class ttft", patch("name: c\n", "name: c\n        ttft_target: fast\n"),
			[]string{`x.yaml:10: services[0].classes[0].ttft_target: want a duration like "500ms", "90s" or "1h30m", got "fast"`}},
		{"unknown service field", patch("    replicas:", "    replicaz: 1\n    replicas:"), []string{`services[0].replicaz: unknown field`, `did you mean "replica"?`}},
		{"routing", patch("    replicas:", "    routing: random\n    replicas:"), []string{`x.yaml:6: services[0].routing: unknown routing "random" (known: round-robin, least-outstanding, latency-aware, priority-lanes)`}},
		{"metric", patch("    replicas: {initial: 1}", "    replicas: {initial: 1, max: 3}\n    autoscale: {metric: qps, target: 2}"), []string{`x.yaml:7: services[0].autoscale.metric: unknown metric "qps"`}},
		{"target missing", patch("    replicas: {initial: 1}", "    replicas: {initial: 1, max: 3}\n    autoscale: {metric: latency}"), []string{`services[0].autoscale.target: want a target > 0 (or on_alert without a target), got 0`}},
		{"dist kind", patch("dist: constant, mean: 100", "dist: normal, mean: 100"), []string{`x.yaml:10: services[0].classes[0].input_tokens.dist: unknown distribution "normal" (known: constant, exponential, lognormal, uniform)`}},
		{"lognormal sigma", patch("dist: constant, mean: 100", "dist: lognormal, mean: 100"), []string{`services[0].classes[0].input_tokens.sigma: want the underlying normal's standard deviation`}},
		{"replicas bounds", patch("initial: 1", "initial: 5, max: 3"), []string{`services[0].replicas.initial: want min (5) <= initial <= max (3), got 5`}},
		{"string for int", patch("max_concurrent: 8", "max_concurrent: eight"), []string{`x.yaml:5: services[0].replica.max_concurrent: want a whole number, got "eight"`}},
		{"fraction for int", patch("max_concurrent: 8", "max_concurrent: 8.5"), []string{`services[0].replica.max_concurrent: want a whole number, got 8.5`}},
		{"zero concurrency", patch("max_concurrent: 8", "max_concurrent: 0"), []string{`x.yaml:5: services[0].replica.max_concurrent: want 1 to 1000000`}},
		{"incident kind", minimal + "    incidents: [{at: 5m, kind: melt}]\n", []string{`x.yaml:12: services[0].incidents[0].kind: unknown incident kind "melt" (known: slow, fail)`}},
		{"incident late", minimal + "    incidents: [{at: 2h, kind: slow, factor: 2}]\n", []string{`services[0].incidents[0].at: want a time within the horizon (10m0s), got 2h0m0s`}},
		{"steps order", patch("arrivals: {rate: 1}", "arrivals: {rate: 1, steps: [{at: 5m, rate: 2}, {at: 1m, rate: 3}]}"), []string{`services[0].arrivals.steps[1].at: steps must be in time order`}},
		{"trace and rate", patch("arrivals: {rate: 1}", "arrivals: {rate: 1, trace: r.csv}"), []string{`services[0].arrivals: a trace replaces rate and steps`}},
		{"gpu model", patch("  - name: svc\n", "  - name: svc\n    gpu_model: H900\n"), []string{`services[0].gpu_model: unknown GPU model "H900"`}},
		{"dup class", patch("    classes:\n", "    classes:\n      - name: c\n        input_tokens: {dist: constant, mean: 1}\n        output_tokens: {dist: constant, mean: 1}\n"), []string{`services[0].classes[1].name: "c" is already the name of classes[0]`}},
		{"variant switch", minimal + "variants: [{name: a, health: maybe}]\n", []string{`x.yaml:12: variants[0].health: want on or off, got "maybe"`}},
		{"variant autoscale", minimal + "variants: [{name: a, autoscale: on}]\n", []string{`variants[0].autoscale: no service declares an autoscale section`}},
		{"variant dup", minimal + "variants: [{name: a}, {name: a}]\n", []string{`variants[1].name: "a" is already the name of variants[0]`}},
		{"variant name", minimal + "variants: [{name: a/b}]\n", []string{`variants[0].name: want letters, digits`}},
		{"batch both", minimal + "batch: {synthetic: {jobs: 3}, trace: t.csv}\n", []string{`batch: synthetic and trace are alternatives`}},
		{"batch policy", minimal + "batch: {synthetic: {jobs: 3}, policy: lifo}\n", []string{`batch.policy: policy "lifo": unknown queue order "lifo"`}},
		{"batch jobs", minimal + "batch: {synthetic: {load: 0.5}}\n", []string{`batch.synthetic.jobs: required field is missing`}},
		{"inline cluster", strings.Replace(minimal, "cluster: dgx-h100x64", "cluster: {name: c, node_groups: [{name_prefix: n, count: 1, gpus_per_node: 8, gpu_model: H100, color: red}]}", 1),
			[]string{`x.yaml:1: cluster.node_groups[0].color: unknown field`}},
		{"missing tokens", patch("        input_tokens: {dist: constant, mean: 100}\n", ""), []string{"x.yaml:9: services[0].classes[0].input_tokens: required with the token model"}},
		{"two documents", minimal + "---\nseed: 2\n", []string{"x.yaml:12: a second YAML document"}},
		{"several", strings.Replace(patch("horizon: 10m", "horizon: 0s"), "rate: 1}", "rate: -1}", 1), []string{"x.yaml:2: horizon: want a duration > 0", "x.yaml:7: services[0].arrivals.rate: want 0 to"}},
		{"negative", patch("horizon: 10m", "horizon: 10m\nbucket: -1s"), []string{`x.yaml:3: bucket: want a duration >= 0, got "-1s"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(c.in), "x.yaml")
			if err == nil {
				t.Fatalf("no error for\n%s", c.in)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %v\nwant it to contain\n  %s", err, w)
				}
			}
		})
	}
}

func TestLoadExperimentFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("cluster.yaml", "name: tiny\nnode_groups: [{name_prefix: node, count: 1, gpu_model: H100, gpus_per_node: 8}]\n")
	write("r.csv", TraceHeader+"\n1,c,10,10\n")
	exp := strings.Replace(strings.Replace(minimal, "dgx-h100x64", "cluster.yaml", 1), "arrivals: {rate: 1}", "arrivals: {trace: r.csv}", 1)
	e, err := LoadExperiment(write("e.yaml", exp))
	if err != nil {
		t.Fatal(err)
	}
	if e.Cluster.Path != filepath.Join(dir, "cluster.yaml") || e.Spec.Services[0].Arrivals.Trace != filepath.Join(dir, "r.csv") {
		t.Fatalf("paths not resolved against the file's folder: %+v %q", e.Cluster, e.Spec.Services[0].Arrivals.Trace)
	}
	if cs, err := e.Cluster.Spec(); err != nil || cs.Name != "tiny" {
		t.Fatalf("cluster %v %v", cs, err)
	}
	_, err = LoadExperiment(write("bad.yaml", strings.Replace(exp, "r.csv", "missing.csv", 1)))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:7: services[0].arrivals.trace:") || !strings.Contains(err.Error(), "missing.csv") {
		t.Fatalf("err = %v", err)
	}
}

func TestValidateGoExperiment(t *testing.T) {
	e, err := ParseExperiment([]byte(minimal), "")
	if err != nil {
		t.Fatal(err)
	}
	e.doc = nil
	e.Spec.Services[0].Replica.MaxConcurrent = 0
	err = e.Validate()
	if err == nil || err.Error() != "services[0].replica.max_concurrent: want 1 to 1000000 requests, got 0" {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParseExperiment(f *testing.F) {
	for _, s := range []string{minimal, "", "cluster: [", "a: &a [*a, *a]", "services: [{}]", "variants: [{name: x}]",
		minimal + "faults: {node_mtbf: 1d, node_repair: {kind: lognormal, mean: 1h, sigma: 1}, fail: [dgx-h100-001@1m+1h]}\nvariants: [{name: a, faults: off}]\n",
		minimal + "alerts: [{name: a, service: svc, class: c, metric: ttft, quantile: 0.99, above: 0.2, window: 1m, for: 2m}]\nevaluation_interval: 10s\n"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("testdata/small.yaml"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseExperiment(data, "f.yaml")
		if err != nil {
			if e != nil {
				t.Fatal("an experiment and an error")
			}
			return
		}
		for i := range e.Names() {
			_ = e.VariantSpec(i)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("parsed, then invalid: %v", err)
		}
	})
}

func TestParseExperimentFaults(t *testing.T) {
	cases := []struct {
		name, in string
		check    func(t *testing.T, e *Experiment)
	}{
		{"defaults", minimal + "faults: {node_mtbf: 30d}\n", func(t *testing.T, e *Experiment) {
			want := Faults{Model: hwmodel.FailureModel{NodeMTBF: 30 * hwmodel.Day, Distribution: "exponential",
				NodeRepair: hwmodel.RepairModel{Kind: "fixed", Mean: 2 * hwmodel.Hour}, GPURepair: hwmodel.RepairModel{Kind: "fixed", Mean: 4 * hwmodel.Hour}},
				HeartbeatInterval: 5 * hwmodel.Second, HeartbeatTimeout: 30 * hwmodel.Second, Retry: "fixed", MaxRetries: 3}
			if e.Faults == nil || !reflectEqualFaults(*e.Faults, want) {
				t.Fatalf("faults = %+v, want %+v", e.Faults, want)
			}
			if !e.FaultsOn(0) {
				t.Fatal("the default variant runs without the faults")
			}
		}},
		{"every field", minimal + `faults:
  node_mtbf: 10d
  gpu_mtbf: 100d
  distribution: weibull
  weibull_shape: 0.7
  node_repair: {kind: lognormal, mean: 3h, sigma: 0.5}
  gpu_repair: 30m
  fail: [dgx-h100-003@40m+2h, "dgx-h100-010/gpu2@1h+30m"]
  heartbeat_interval: 10s
  heartbeat_timeout: 1m
  retry: deadline
  max_retries: 0
  restart_time: 2m
variants:
  - {name: "on"}
  - {name: "off", faults: off}
  - {name: forced, faults: on}
`, func(t *testing.T, e *Experiment) {
			x := e.Faults
			m := x.Model
			if m.NodeMTBF != 10*hwmodel.Day || m.GPUMTBF != 100*hwmodel.Day || m.Distribution != "weibull" || m.WeibullShape != 0.7 ||
				m.NodeRepair != (hwmodel.RepairModel{Kind: "lognormal", Mean: 3 * hwmodel.Hour, Sigma: 0.5}) ||
				m.GPURepair != (hwmodel.RepairModel{Kind: "fixed", Mean: 30 * hwmodel.Minute}) {
				t.Fatalf("model = %+v", m)
			}
			if strings.Join(x.Fail, ",") != "dgx-h100-003@40m+2h,dgx-h100-010/gpu2@1h+30m" || x.HeartbeatInterval != 10*hwmodel.Second ||
				x.HeartbeatTimeout != hwmodel.Minute || x.Retry != "deadline" || x.MaxRetries != 0 || x.RestartTime != 2*hwmodel.Minute {
				t.Fatalf("faults = %+v", x)
			}
			if !e.FaultsOn(0) || e.FaultsOn(1) || !e.FaultsOn(2) {
				t.Fatalf("faults on: %v %v %v", e.FaultsOn(0), e.FaultsOn(1), e.FaultsOn(2))
			}
			spec, _ := e.Cluster.Spec()
			c, err := spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			rf, err := e.RunnerFaults(c)
			if err != nil {
				t.Fatal(err)
			}
			want := []hwmodel.Fault{{At: 40 * hwmodel.Minute, Node: 3, GPU: -1, Repair: 2 * hwmodel.Hour}, {At: hwmodel.Hour, Node: 10, GPU: 2, Repair: 30 * hwmodel.Minute}}
			if len(rf.Named) != 2 || rf.Named[0] != want[0] || rf.Named[1] != want[1] || rf.Model != m || rf.Retry != "deadline" || rf.RestartTime != 2*hwmodel.Minute {
				t.Fatalf("runner faults = %+v", rf)
			}
		}},
		{"named only", minimal + "faults:\n  fail:\n    - dgx-h100-000@5m+1h\n", func(t *testing.T, e *Experiment) {
			if e.Faults.Model.Enabled() || len(e.Faults.Fail) != 1 {
				t.Fatalf("faults = %+v", e.Faults)
			}
		}},
		{"none", minimal, func(t *testing.T, e *Experiment) {
			if e.Faults != nil || e.FaultsOn(0) {
				t.Fatalf("faults = %+v", e.Faults)
			}
			if rf, err := e.RunnerFaults(nil); rf != nil || err != nil {
				t.Fatalf("runner faults %+v %v", rf, err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := ParseExperiment([]byte(c.in), "x.yaml")
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, e)
		})
	}
}

func reflectEqualFaults(a, b Faults) bool {
	return a.Model == b.Model && slices.Equal(a.Fail, b.Fail) && a.HeartbeatInterval == b.HeartbeatInterval &&
		a.HeartbeatTimeout == b.HeartbeatTimeout && a.Retry == b.Retry && a.MaxRetries == b.MaxRetries && a.RestartTime == b.RestartTime
}

func TestParseExperimentFaultErrors(t *testing.T) {
	// The faults section starts on line 12 of minimal + it.
	cases := []struct {
		name, in string
		want     []string
	}{
		{"unknown field", "faults: {node_mtbf: 1d, node_mtfb: 2d}\n", []string{`x.yaml:12: faults.node_mtfb: unknown field`, `did you mean "node_mtbf"?`}},
		{"nothing", "faults: {retry: none}\n", []string{`x.yaml:12: faults: injects nothing; give node_mtbf, gpu_mtbf or fail`}},
		{"not a mapping", "faults: 30d\n", []string{`x.yaml:12: faults: want a mapping with fields node_mtbf`}},
		{"mtbf number", "faults:\n  node_mtbf: 30\n", []string{`x.yaml:13: faults.node_mtbf: want a duration like "90s", "20m" or "1h30m", got number 30`}},
		{"distribution", "faults:\n  node_mtbf: 1d\n  distribution: gamma\n", []string{`x.yaml:14: faults.distribution: unknown distribution "gamma" (known: exponential, weibull)`}},
		{"weibull shape", "faults:\n  node_mtbf: 1d\n  distribution: weibull\n", []string{`faults.weibull_shape: want a shape in (0, 100]`}},
		{"shape without weibull", "faults:\n  node_mtbf: 1d\n  weibull_shape: 2\n", []string{`x.yaml:14: faults.weibull_shape: is for distribution weibull`}},
		{"repair kind", "faults:\n  node_mtbf: 1d\n  node_repair: {kind: gamma, mean: 2h}\n", []string{`x.yaml:14: faults.node_repair.kind: unknown repair kind "gamma" (known: fixed, exponential, lognormal)`}},
		{"repair mean", "faults:\n  node_mtbf: 1d\n  node_repair: {kind: exponential}\n", []string{`x.yaml:14: faults.node_repair.mean: required field is missing`}},
		{"repair sigma", "faults:\n  node_mtbf: 1d\n  gpu_repair:\n    kind: lognormal\n    mean: 2h\n", []string{`faults.gpu_repair.sigma: want a log-space standard deviation in (0, 10], got 0`}},
		{"sigma for fixed", "faults:\n  node_mtbf: 1d\n  gpu_repair: {mean: 1h, sigma: 1}\n", []string{`x.yaml:14: faults.gpu_repair.sigma: is for kind lognormal`}},
		{"zero repair", "faults:\n  node_mtbf: 1d\n  node_repair: 0s\n", []string{`x.yaml:14: faults.node_repair: want a duration > 0, got "0s" (leave it out for the default)`}},
		{"repair number", "faults:\n  node_mtbf: 1d\n  node_repair: 2\n", []string{`x.yaml:14: faults.node_repair: want a duration like "90s"`}},
		{"fail not a list", "faults:\n  fail: dgx-h100-003@40m+2h\n", []string{`x.yaml:13: faults.fail: want a list, got "dgx-h100-003@40m+2h"`}},
		{"fail node", "faults:\n  fail:\n    - dgx-h100-003@40m+2h\n    - node-3@40m+2h\n", []string{`x.yaml:15: faults.fail[1]: failure "node-3@40m+2h": no node named "node-3" in the cluster (its nodes are dgx-h100-000 … dgx-h100-063)`}},
		{"fail gpu", "faults:\n  fail: [dgx-h100-003/gpu9@40m+2h]\n", []string{`x.yaml:13: faults.fail[0]: failure "dgx-h100-003/gpu9@40m+2h": node "dgx-h100-003" has GPUs 0..7, got gpu 9`}},
		{"fail syntax", "faults:\n  fail: [dgx-h100-003]\n", []string{`faults.fail[0]: failure "dgx-h100-003": want NODE@TIME+REPAIR`}},
		{"fail number", "faults:\n  fail: [3]\n", []string{`x.yaml:13: faults.fail[0]: want a string, got number 3`}},
		{"heartbeat", "faults:\n  node_mtbf: 1d\n  heartbeat_interval: 1m\n  heartbeat_timeout: 30s\n", []string{`x.yaml:15: faults.heartbeat_timeout: want a timeout of at least the interval (1m0s), got 30s`}},
		{"zero heartbeat", "faults:\n  node_mtbf: 1d\n  heartbeat_interval: 0s\n", []string{`x.yaml:14: faults.heartbeat_interval: want a duration > 0`}},
		{"retry", "faults:\n  node_mtbf: 1d\n  retry: always\n", []string{`x.yaml:14: faults.retry: unknown retry policy "always" (known: trace, none, fixed, deadline)`}},
		{"max retries", "faults:\n  node_mtbf: 1d\n  max_retries: -1\n", []string{`x.yaml:14: faults.max_retries: want 0 to 1000000, got -1`}},
		{"restart", "faults:\n  node_mtbf: 1d\n  restart_time: -2m\n", []string{`x.yaml:14: faults.restart_time: want a duration >= 0, got "-2m"`}},
		{"variant switch", "variants: [{name: a, faults: maybe}]\nfaults: {node_mtbf: 1d}\n", []string{`x.yaml:12: variants[0].faults: want on or off, got "maybe"`}},
		{"variant without section", "variants: [{name: a, faults: on}]\n", []string{`x.yaml:12: variants[0].faults: the experiment has no faults section`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseExperiment([]byte(minimal+c.in), "x.yaml")
			if err == nil {
				t.Fatalf("no error for\n%s", c.in)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %v\nwant it to contain\n  %s", err, w)
				}
			}
		})
	}
}

// Named failures in a file whose cluster is a spec file are resolved when
// LoadExperiment reads it, and by CheckCluster.
func TestLoadExperimentFaultsClusterFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("cluster.yaml", "name: tiny\nnode_groups: [{name_prefix: node, count: 2, gpu_model: H100, gpus_per_node: 8}]\n")
	exp := strings.Replace(minimal, "dgx-h100x64", "cluster.yaml", 1) + "faults:\n  fail: [node-001@1m+1h]\n"
	e, err := LoadExperiment(write("e.yaml", exp))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := e.Cluster.Spec()
	c, _ := spec.Build()
	if err := e.CheckCluster(c); err != nil {
		t.Fatal(err)
	}
	bad := write("bad.yaml", strings.Replace(exp, "node-001", "node-007", 1))
	if _, err := LoadExperiment(bad); err == nil || !strings.Contains(err.Error(), bad+`:13: faults.fail[0]: failure "node-007@1m+1h": no node named "node-007"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseExperimentFaultNegativeRepairOneError(t *testing.T) {
	_, err := ParseExperiment([]byte(minimal+"faults:\n  node_mtbf: 1d\n  node_repair: -1h\n"), "x.yaml")
	if err == nil || err.Error() != `x.yaml:14: faults.node_repair: want a duration >= 0, got "-1h"` {
		t.Fatalf("err = %v", err)
	}
}

// A file with several mistakes reports each once, in line order, with an
// inline cluster's problems at their own lines.
func TestParseExperimentReportsEveryProblem(t *testing.T) {
	in := `cluster:
  name: lab
  node_groups:
    - {name_prefix: h, count: 2, gpu_model: H100, gpus_per_node: nine}
horizon: 10m
bucket: 30
services:
  - name: svc
    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 20, max_concurrent: 0}
    replicas: {initial: 1}
    arrivals: {rate: 1}
    classes:
      - name: c
        weight: -1
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constnat, mean: 10}
variants: [{name: a, helth: off}]
`
	_, err := ParseExperiment([]byte(in), "x.yaml")
	want := `x.yaml:4: cluster.node_groups[0].gpus_per_node: want a whole number, got "nine"
x.yaml:6: bucket: want a duration like "90s", "20m" or "1h30m", got number 30
x.yaml:9: services[0].replica.max_concurrent: want 1 to 1000000 requests, got 0
x.yaml:12: services[0].classes: no class has a weight > 0; want at least one
x.yaml:14: services[0].classes[0].weight: want a weight >= 0, got -1
x.yaml:16: services[0].classes[0].output_tokens.dist: unknown distribution "constnat" (known: constant, exponential, lognormal, uniform)
x.yaml:17: variants[0].helth: unknown field (known fields: name, routing, health, autoscale, incidents, on_no_gpus, faults, failover, prefix_cache); did you mean "health"?`
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}
