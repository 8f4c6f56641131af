package serving

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/serving/iteration"
)

// iterExperiment is a one-service experiment on the iteration-level
// model with BLIS's Qwen3-14B / H100 files, fed by trace.
func iterExperiment(t *testing.T, trace, extra string) string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join("iteration/testdata/blis", p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return fmt.Sprintf(`cluster: dgx-h100x64
horizon: 2h
services:
  - name: qwen
    replica:
      max_concurrent: 100000
      iteration: {model: %s, hardware: %s, gpu: H100, coefficients: %s%s}
    replicas: {initial: 1}
    arrivals: {trace: %s}
    classes:
      - name: c
        input_tokens: {dist: constant, mean: 100}
        output_tokens: {dist: constant, mean: 10}
`, abs("qwen3-14b-config.json"), abs("hardware_config.json"), abs("defaults.yaml"), extra, trace)
}

// TestIterationServeMatchesReplay runs BLIS's first rate-14 requests
// through brigade serve's event loop with one iteration-level replica and
// through iteration.Replay: the gateway hands each request on at once,
// so both must give the same TTFT and E2E to the µs.
func TestIterationServeMatchesReplay(t *testing.T) {
	reqs, err := iteration.ReadBLISTrace("iteration/testdata/blis/r14_head.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	reqs = reqs[:300]
	var b strings.Builder
	b.WriteString("time_s,class,input_tokens,output_tokens\n")
	for k := range reqs {
		reqs[k].Arrive = reqs[k].Arrive / 1000 * 1000 // whole ms, exact in time_s
		fmt.Fprintf(&b, "%d.%03d,c,%d,%d\n", reqs[k].Arrive/1e6, reqs[k].Arrive/1000%1000, reqs[k].In, reqs[k].Out)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
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
	got := rs.Variants[0].Result.Services[0].Classes[0]
	im := exp.Spec.Services[0].Replica.Iteration
	r, err := iteration.Replay(im.params, im.lat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	var ttft, e2e, itlSum, itlN float64
	var preempted int64
	for _, q := range r.Reqs {
		ttft += float64(q.First - q.Arrive)
		e2e += float64(q.Done - q.Arrive)
		itlSum += float64(q.ITLSum)
		itlN += float64(q.ITLs)
		preempted += int64(q.Preempted)
	}
	// The golden signals come from the engine's own books: the ITL mean
	// weights every gap, the preemptions are the requests' own.
	if got.Preemptions != preempted || preempted != r.Preemptions {
		t.Errorf("class preemptions %d, replay's requests %d, replay %d", got.Preemptions, preempted, r.Preemptions)
	}
	if all := rs.Variants[0].Result.Services[0].All; math.Abs(all.KVCacheUsage-r.BlockUS/r.BusyUS/15909) > 1e-12 || all.KVCacheUsage <= 0 {
		t.Errorf("KV cache usage %g, replay %g", all.KVCacheUsage, r.BlockUS/r.BusyUS/15909)
	}
	n := float64(len(reqs))
	if e := rs.Variants[0].Result.Services[0].Engine; e == nil || e.Steps != r.Steps || e.Preemptions != r.Preemptions || e.KVBlocks != 15909 {
		t.Errorf("engine books %+v; want %d steps, %d preemptions, 15,909 blocks as the replay", e, r.Steps, r.Preemptions)
	}
	if got.Completed != int64(len(reqs)) {
		t.Fatalf("completed %d of %d", got.Completed, len(reqs))
	}
	// The same run with alert rules on the KV cache and the error rate:
	// the first fires at the first evaluation (blocks are held then), the
	// second never (nothing fails); the alerts change nothing else.
	withAlerts := iterExperiment(t, trace, "") + "alerts:\n" +
		"  - {name: kv, service: qwen, metric: kv_cache_usage, above: 0, window: 15s}\n" +
		"  - {name: errors, service: qwen, metric: error_rate, above: 0}\n"
	exp2, err := ParseExperiment([]byte(withAlerts), filepath.Join(dir, "x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rs2, err := RunExperiment(exp2, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r2 := rs2.Variants[0].Result
	if ev := r2.Alerts; len(ev) == 0 || ev[0].Alert != "kv" || ev[0].State != AlertFiring || ev[0].At != 15*sec || !(ev[0].Value > 0 && ev[0].Value <= 1) {
		t.Errorf("alerts %+v, want kv firing at 15 s with a usage in (0, 1]", ev)
	}
	if st := r2.AlertStats; len(st) != 2 || st[1].Fired != 0 {
		t.Errorf("alert stats %+v, want errors never fired", st)
	}
	if c2 := r2.Services[0].Classes[0]; c2.TTFT != got.TTFT || c2.ITL != got.ITL {
		t.Errorf("with alerts TTFT %+v ITL %+v, without %+v %+v", c2.TTFT, c2.ITL, got.TTFT, got.ITL)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"TTFT mean", got.TTFT.Mean, ttft / n / 1e6}, {"E2E mean", got.E2E.Mean, e2e / n / 1e6}, {"ITL mean", got.ITL.Mean, itlSum / itlN / 1e6}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: serve %.9f s, replay %.9f s", c.name, c.got, c.want)
		}
	}
}

func TestIterationExperimentErrors(t *testing.T) {
	for _, c := range []struct {
		name, extra, want string
	}{
		{"unknown GPU", ", gpu: B300", "no GPU \"B300\""},
		{"bad utilisation", ", gpu_memory_utilization: 1.5", "gpu_memory_utilization: want a fraction"},
		{"cache too small", ", kv_blocks: 10", "cannot hold one request"},
		{"misspelt field", ", max_num_seq: 8", "max_num_seq"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(dir, "trace.csv")
			if err := os.WriteFile(trace, []byte("time_s,class,input_tokens,output_tokens\n0,c,10,10\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(iterExperiment(t, trace, c.extra), "gpu: H100, ", "", strings.Count(c.extra, "gpu:"))
			path := filepath.Join(dir, "x.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadExperiment(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "x.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// TestIterationScaleIn drains an iteration-level replica: the autoscaler
// removes one of two replicas while both hold requests, the drained one
// finishes them (its end is found by running a copy of its engine) and
// gives its GPUs back; no request is lost.
func TestIterationScaleIn(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("time_s,class,input_tokens,output_tokens\n")
	for k := range 400 {
		fmt.Fprintf(&b, "%d.%03d,c,%d,%d\n", k/10, k%10*100, 500+k%7*100, 200+k%5*50)
	}
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text := iterExperiment(t, trace, "")
	text = strings.Replace(text, "replicas: {initial: 1}", "replicas: {initial: 2, min: 1, max: 2}\n    routing: round-robin\n    autoscale: {metric: concurrency, target: 1000, interval: 15s, scale_down_cooldown: 15s}", 1)
	exp, err := ParseExperiment([]byte(text), filepath.Join(dir, "x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RunExperiment(exp, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sv := rs.Variants[0].Result.Services[0]
	if sv.ScaleIns == 0 {
		t.Fatal("no scale-in: the test does not test a drain")
	}
	if c := sv.All; c.Completed != 400 || c.Errors+c.Timeouts+c.Unfinished != 0 {
		t.Errorf("completed %d, errors %d, timeouts %d, unfinished %d; want all 400 completed", c.Completed, c.Errors, c.Timeouts, c.Unfinished)
	}
	released := 0
	for _, r := range sv.Replicas {
		if r.Released >= 0 && r.Released < exp.Spec.Horizon {
			released++
			if r.Released > 60e6 {
				t.Errorf("replica %d released at %v, long after its last request could end", r.ID, r.Released)
			}
		}
	}
	if released == 0 {
		t.Errorf("no replica gave its GPUs back before the horizon: %+v", sv.Replicas)
	}
}
