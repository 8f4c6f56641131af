package serving

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// prefixExperiment: one Qwen3-14B replica on an H100 (the iteration
// model, BLIS's files) serving 2 requests/s of 2,500 prompt and 100
// output tokens for 5 minutes; prefix is the class's extra YAML.
func prefixExperiment(t *testing.T, prefix string) *Experiment {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join("iteration/testdata/blis", p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	text := fmt.Sprintf(`cluster: dgx-h100x64
horizon: 5m
seed: 3
services:
  - name: qwen
    replica:
      max_concurrent: 1000
      iteration: {model: %s, hardware: %s, gpu: H100, coefficients: %s}
    replicas: {initial: 1}
    arrivals: {rate: 2}
    classes:
      - name: chat
        input_tokens: {dist: constant, mean: 2500}
        output_tokens: {dist: constant, mean: 100}
%s`, abs("qwen3-14b-config.json"), abs("hardware_config.json"), abs("defaults.yaml"), prefix)
	exp, err := ParseExperiment([]byte(text), filepath.Join(t.TempDir(), "x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// TestPrefixSystemPrompt: a 2,000-token system prompt shared by 4
// groups. The cache (15,909 blocks) is far larger than what the run
// cycles through, so nothing a group left is evicted: every completed
// request but the first of each group finds its group's 125 blocks, so
// the class's hit ratio is (C − 4) × 2,000 / (C × 2,500), C the completed
// requests; and a request that finds them computes 500 prompt tokens
// instead of 2,500: one engine step instead of two (2,048 + 452 tokens
// at the 2,048-token budget), so the mean TTFT (about 60 ms, of which
// the 15.6 ms queueing overhead) falls by more than 30 %.
func TestPrefixSystemPrompt(t *testing.T) {
	exp := prefixExperiment(t, "        prefix: {groups: 4, tokens: 2000}\nvariants: [{name: cached}, {name: uncached, prefix_cache: off}]\n")
	rs, err := RunExperiment(exp, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	with, without := rs.Variants[0].Result.Services[0], rs.Variants[1].Result.Services[0]
	c := with.Classes[0]
	if c.Completed < 500 {
		t.Fatalf("%d completed: want a busy run", c.Completed)
	}
	want := float64(c.Completed-4) * 2000 / (float64(c.Completed) * 2500)
	if math.Abs(c.PrefixHitRatio-want) > 1e-9 {
		t.Errorf("hit ratio %.6f, want (C-4)·2000/(C·2500) = %.6f for C = %d", c.PrefixHitRatio, want, c.Completed)
	}
	if with.All.PrefixHitRatio != c.PrefixHitRatio {
		t.Errorf("the service's ratio %g differs from its one class's %g", with.All.PrefixHitRatio, c.PrefixHitRatio)
	}
	e := with.Engine
	if e == nil || e.PrefixHits%2000 != 0 || math.Abs(e.PrefixHitRatio-0.8) > 0.01 || e.PrefixQueries != 2500*(e.PrefixHits/2000+4) {
		t.Errorf("engine books %+v: want hits in whole prefixes of 2,000 tokens and all but 4 requests hit", e)
	}
	if without.Classes[0].PrefixHitRatio != 0 || without.Engine.PrefixHits != 0 {
		t.Errorf("prefix_cache off: hit ratio %g, %d hit tokens; want none", without.Classes[0].PrefixHitRatio, without.Engine.PrefixHits)
	}
	if without.Classes[0].Requests != c.Requests {
		t.Errorf("prefix_cache off: %d requests, want the same %d", without.Classes[0].Requests, c.Requests)
	}
	if w, wo := c.TTFT.Mean, without.Classes[0].TTFT.Mean; !(w < 0.7*wo) {
		t.Errorf("mean TTFT %.4f s with the shared prompt cached, %.4f s without: want less than 70 %%", w, wo)
	}
}

// TestPrefixGroupsPerClass: two classes of the same prompts, one prefix
// group each. Their groups are distinct, so each class's first request
// finds nothing: each class's ratio is (C − 1) × 2,000 / (C × 2,500).
// Were the groups one, only one class would have a first request.
func TestPrefixGroupsPerClass(t *testing.T) {
	exp := prefixExperiment(t, `        prefix: {groups: 1, tokens: 2000}
      - name: chat2
        input_tokens: {dist: constant, mean: 2500}
        output_tokens: {dist: constant, mean: 100}
        prefix: {groups: 1, tokens: 2000}
`)
	rs, err := RunExperiment(exp, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rs.Variants[0].Result.Services[0].Classes {
		want := float64(c.Completed-1) * 2000 / (float64(c.Completed) * 2500)
		if c.Completed < 100 || math.Abs(c.PrefixHitRatio-want) > 1e-9 {
			t.Errorf("class %s: %d completed, hit ratio %.6f, want %.6f", c.Name, c.Completed, c.PrefixHitRatio, want)
		}
	}
}

func TestPrefixExperimentErrors(t *testing.T) {
	for _, c := range []struct{ name, prefix, want string }{
		{"with a trace", "        prefix: {groups: 2, tokens: 9}\n", "x.yaml:16: services[0].classes[0].prefix: a request trace gives each request's prefix"},
		{"no groups", "        prefix: {groups: 0, tokens: 100}\n", "x.yaml:16: services[0].classes[0].prefix.groups: want 1 to 1048576 prefix groups, got 0"},
		{"no tokens", "        prefix: {groups: 2, tokens: -5}\n", "x.yaml:16: services[0].classes[0].prefix.tokens: want 1 to 1073741824 shared prompt tokens, got -5"},
		{"tokens missing", "        prefix: {groups: 2}\n", "services[0].classes[0].prefix.tokens: required field is missing"},
		{"misspelt", "        prefix: {groups: 2, token: 9}\n", `services[0].classes[0].prefix.token: unknown field`},
		{"variant switch", "variants: [{name: a, prefix_cache: maybe}]\n", `x.yaml:16: variants[0].prefix_cache: want on or off, got "maybe"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(prefixYAML, "PREFIX\n", c.prefix, 1)
			if c.name == "with a trace" {
				text = strings.Replace(text, "arrivals: {rate: 1}", "arrivals: {trace: r.csv}", 1)
			}
			_, err := ParseExperiment([]byte(text), "x.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// prefixYAML is a token-rate service whose class takes a prefix section
// (the token-rate model ignores it, but it is checked all the same).
const prefixYAML = `cluster: dgx-h100x64
horizon: 10m
services:
  - name: svc
    replica:
      prefill_tokens_per_s: 10000
      decode_tokens_per_s: 50
      max_concurrent: 8
    replicas: {initial: 1}
    arrivals: {rate: 1}
    classes:
      - name: c
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 10}
        ttft_target: 1s
PREFIX
`

// TestPrefixTraceColumns: a trace's prefix columns reach the engine. Two
// requests of group sys, 5 s apart (the first is long done): the second
// finds the first's 3 prefix blocks, 48 of the 128 prompt tokens.
func TestPrefixTraceColumns(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(TraceHeaderPrefix+"\n0,c,64,2,sys,50\n5,c,64,2,sys,50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp, err := ParseExperiment([]byte(iterExperiment(t, trace, "")), filepath.Join(dir, "x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RunExperiment(exp, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sv := rs.Variants[0].Result.Services[0]
	if c := sv.Classes[0]; c.Completed != 2 || c.PrefixHitRatio != 48.0/128 || sv.Engine.PrefixHits != 48 || sv.Engine.PrefixQueries != 128 {
		t.Errorf("completed %d, hit ratio %g, engine %+v; want 2, 0.375, 48 of 128 tokens", c.Completed, c.PrefixHitRatio, sv.Engine)
	}
}
