package serving

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/sim"
)

// handMade is a run set built by hand: two variants of one service with
// two classes, and a batch run where one job was preempted once.
func handMade() *RunSet {
	class := func(name string, n int64, p99 float64) ClassResult {
		return ClassResult{Name: name, Requests: n, Completed: n - 2, Errors: 1, Timeouts: 1, Throughput: float64(n-2) / 600,
			ErrorRate: 2 / float64(n), SLOAttained: 0.95, TTFT: Latency{Mean: 0.2, P50: 0.15, P95: 0.5, P99: 0.9, Max: 1.2},
			E2E: Latency{Mean: 4, P50: 3.5, P95: 9, P99: p99, Max: 40}}
	}
	svc := func(outs int64) ServiceResult {
		return ServiceResult{Name: "llm", All: class("all", 300, 20), Classes: []ClassResult{class("chat", 200, 12.5), class("api", 100, 30)},
			Replicas: []ReplicaResult{
				{ID: 0, Requested: 0, Placed: 0, Ready: 0, Released: 600 * hwmodel.Second, Node: 3, Completed: 240, BusyIntegral: 960, SojournSum: 2400},
				{ID: 1, Requested: 60 * hwmodel.Second, Placed: -1, Ready: -1, Released: -1},
			},
			Series: []Bucket{
				{Start: 0, Arrivals: 150, Completed: 149, Errors: 1, TTFTP99: 0.8, E2EP50: 3.5, E2EP99: 11, ReplicasReady: 1, ReplicasHeld: 1, GPUs: 4},
				{Start: 300 * hwmodel.Second, Arrivals: 150, Completed: 149, Errors: 1, TTFTP99: 1.0 / 3, E2EP50: 3.25, E2EP99: 12, ReplicasReady: 1, ReplicasHeld: 2, GPUs: 8, QueueLen: 7},
			},
			GPUHours: 0.6667, ScaleOuts: outs, Ejections: 2, MeanReplicas: 1.25, Saturation: 0.5}
	}
	job := func(wait hwmodel.Time, preempted bool) sim.Outcome {
		o := sim.Outcome{State: sim.Succeeded, Wait: wait}
		o.SetLog([]sim.Attempt{{Ended: sim.AttemptSucceeded}})
		if preempted {
			o.SetLog([]sim.Attempt{{Ended: sim.AttemptPreempted}, {Ended: sim.AttemptSucceeded}})
		}
		return o
	}
	base := &sim.Result{Jobs: []sim.Outcome{job(0, false), job(10*hwmodel.Second, false)}}
	batch := &sim.Result{Jobs: []sim.Outcome{job(30*hwmodel.Second, true), job(10*hwmodel.Second, false)}}
	return &RunSet{Experiment: "hand", Cluster: "tiny (8 GPUs)", Seed: 4, Baseline: base, Variants: []VariantRun{
		{Name: "static", Result: &Result{Horizon: 600 * hwmodel.Second, Services: []ServiceResult{svc(0)}, Batch: base, Requests: 300}},
		{Name: "autoscale", Result: &Result{Horizon: 600 * hwmodel.Second, Services: []ServiceResult{svc(3)}, Batch: batch, Requests: 300}},
	}}
}

func TestWriteRunSet(t *testing.T) {
	rs := handMade()
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := WriteRunSet(d, rs); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range Files {
		a, _ := os.ReadFile(filepath.Join(dirs[0], f))
		b, _ := os.ReadFile(filepath.Join(dirs[1], f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%s: empty or not reproducible", f)
		}
	}
	ts, _ := os.ReadFile(filepath.Join(dirs[0], "serving_timeseries.csv"))
	want := "variant,service,bucket_start_s,arrivals,completed,errors,ttft_p99_s,e2e_p50_s,e2e_p99_s,replicas_ready,replicas_held,gpus,queue_len\n" +
		"static,llm,0,150,149,1,0.8,3.5,11,1,1,4,0\n" +
		"static,llm,300,150,149,1,0.333333,3.25,12,1,2,8,7\n"
	if !strings.HasPrefix(string(ts), want) || strings.Count(string(ts), "\n") != 5 {
		t.Fatalf("timeseries:\n%s", ts)
	}
	rp, _ := os.ReadFile(filepath.Join(dirs[0], "replicas.csv"))
	// Made-up books that break Little's law: busy 960 request-s over
	// 600 s gives L = 1.6, but X = 240/600 = 0.4/s and W = 2400/240 = 10 s
	// give X × W = 4; little_error = |1.6 - 4| / 1.6 = 1.5.
	if !strings.Contains(string(rp), "\nstatic,llm,0,3,0,0,0,600,600,240,0,0,1.6,0.4,10,1.5\n") ||
		!strings.Contains(string(rp), "\nstatic,llm,1,,60,,,,,0,0,0,,,,\n") {
		t.Fatalf("replicas:\n%s", rp)
	}
	var sum struct {
		Baseline struct {
			WaitMean float64 `json:"wait_mean_s"`
		} `json:"baseline"`
		Variants []struct {
			Name  string `json:"name"`
			Batch struct {
				Preemptions int     `json:"preemptions"`
				ExtraWait   float64 `json:"extra_wait_mean_s"`
			} `json:"batch"`
			Services []struct {
				Classes []struct {
					Name string `json:"name"`
					E2E  struct {
						P99 float64 `json:"p99"`
					} `json:"vllm:e2e_request_latency_seconds"`
				} `json:"classes"`
				ScaleOuts int `json:"scale_outs"`
			} `json:"services"`
		} `json:"variants"`
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], "serving_summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	v := sum.Variants[1]
	if sum.Baseline.WaitMean != 5 || v.Name != "autoscale" || v.Batch.Preemptions != 1 || v.Batch.ExtraWait != 15 ||
		v.Services[0].ScaleOuts != 3 || v.Services[0].Classes[1].Name != "api" || v.Services[0].Classes[1].E2E.P99 != 30 {
		t.Fatalf("summary: %+v\n%s", sum, b)
	}
}

func TestFormatTable(t *testing.T) {
	var buf bytes.Buffer
	if err := FormatTable(&buf, handMade()); err != nil {
		t.Fatal(err)
	}
	want := `variant    service  class  rps  TTFT p50  TTFT p99  E2E p50  E2E p99  errors  SLO    GPU-h  mean repl  scale-outs  ejections  batch preempted  batch +wait
static     llm      chat   0.3  150ms     900ms     3.50s    12s      1.0%    95.0%  0.7    1.2        0           2          0                0s
static     llm      api    0.2  150ms     900ms     3.50s    30s      2.0%    95.0%
static     llm      all    0.5  150ms     900ms     3.50s    20s      0.7%    95.0%
autoscale  llm      chat   0.3  150ms     900ms     3.50s    12s      1.0%    95.0%  0.7    1.2        3           2          1                +15s
autoscale  llm      api    0.2  150ms     900ms     3.50s    30s      2.0%    95.0%
autoscale  llm      all    0.5  150ms     900ms     3.50s    20s      0.7%    95.0%
`
	if buf.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestWritePlots(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		names, err := WritePlots(d, handMade())
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != 2*len(PlotNames) {
			t.Fatalf("wrote %v", names)
		}
	}
	for _, p := range PlotNames {
		for _, ext := range []string{".png", ".svg"} {
			a, _ := os.ReadFile(filepath.Join(dirs[0], p+ext))
			b, _ := os.ReadFile(filepath.Join(dirs[1], p+ext))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Fatalf("%s%s: empty or not reproducible", p, ext)
			}
		}
	}
}

// With faults, the table gains a lost column (- for variants without
// faults), and the summary tells replicas lost, the batch attempts lost
// to hardware and each variant against the baseline with its faults.
func TestFaultsInOutputs(t *testing.T) {
	rs := handMade()
	clean := &sim.Result{Jobs: []sim.Outcome{{State: sim.Succeeded}, {State: sim.Succeeded}}}
	rs.BaselineNoFaults = clean
	rs.Baseline = &sim.Result{Jobs: []sim.Outcome{{State: sim.Succeeded, Wait: 20 * hwmodel.Second, HardwareFailures: 1}, {State: sim.Succeeded}}}
	rs.Faults = &FaultSet{Describe: "named", Schedule: []hwmodel.Fault{{At: 60 * hwmodel.Second, Node: 1, GPU: -1, Repair: hwmodel.Hour}}}
	auto := rs.Variants[1].Result
	auto.Services[0].ReplicasLost = 2
	auto.Batch = &sim.Result{Jobs: []sim.Outcome{{State: sim.Succeeded, Wait: 50 * hwmodel.Second, HardwareFailures: 2}, {State: sim.Succeeded, HardwareFailures: 1}},
		Faults: []sim.FaultRecord{{At: 60 * hwmodel.Second, Detected: 90 * hwmodel.Second, Node: 1, GPU: -1}}}
	rs.Variants[1].Faults = true
	var buf bytes.Buffer
	if err := FormatTable(&buf, rs); err != nil {
		t.Fatal(err)
	}
	want := `variant    service  class  rps  TTFT p50  TTFT p99  E2E p50  E2E p99  errors  SLO    GPU-h  mean repl  scale-outs  ejections  lost  batch preempted  batch +wait
static     llm      chat   0.3  150ms     900ms     3.50s    12s      1.0%    95.0%  0.7    1.2        0           2          -     0                +5.0s
static     llm      api    0.2  150ms     900ms     3.50s    30s      2.0%    95.0%
static     llm      all    0.5  150ms     900ms     3.50s    20s      0.7%    95.0%
autoscale  llm      chat   0.3  150ms     900ms     3.50s    12s      1.0%    95.0%  0.7    1.2        3           2          2     0                +15s
autoscale  llm      api    0.2  150ms     900ms     3.50s    30s      2.0%    95.0%
autoscale  llm      all    0.5  150ms     900ms     3.50s    20s      0.7%    95.0%
`
	if buf.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
	var sb bytes.Buffer
	if err := WriteSummaryJSON(&sb, rs); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Faults struct {
			Schedule []string `json:"schedule"`
		} `json:"faults"`
		Baseline struct {
			HW int `json:"hardware_failures"`
		} `json:"baseline"`
		Clean *struct {
			HW int `json:"hardware_failures"`
		} `json:"baseline_no_faults"`
		Variants []struct {
			Faults *struct {
				Injected, Detected int
			} `json:"faults"`
			Batch struct {
				HW        int     `json:"hardware_failures"`
				ExtraWait float64 `json:"extra_wait_mean_s"`
			} `json:"batch"`
			Services []struct {
				Lost *int `json:"replicas_lost"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(sb.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	s, a := sum.Variants[0], sum.Variants[1]
	if len(sum.Faults.Schedule) != 1 || sum.Faults.Schedule[0] != "#1@60s+3600s" || sum.Baseline.HW != 1 || sum.Clean == nil || sum.Clean.HW != 0 ||
		s.Faults != nil || s.Services[0].Lost == nil || *s.Services[0].Lost != 0 || s.Batch.ExtraWait != 5 ||
		a.Faults == nil || a.Faults.Injected != 1 || a.Faults.Detected != 1 || *a.Services[0].Lost != 2 || a.Batch.HW != 3 || a.Batch.ExtraWait != 15 {
		t.Fatalf("summary:\n%s", sb.Bytes())
	}
}

// Failures are marked on the plots of a run set with faults.
func TestWritePlotsWithFaults(t *testing.T) {
	plain, faulty := t.TempDir(), t.TempDir()
	if _, err := WritePlots(plain, handMade()); err != nil {
		t.Fatal(err)
	}
	rs := handMade()
	rs.Faults = &FaultSet{Schedule: []hwmodel.Fault{{At: 120 * hwmodel.Second, Node: 0, GPU: -1, Repair: hwmodel.Hour}, {At: 2 * hwmodel.Hour, Node: 0, GPU: -1, Repair: hwmodel.Hour}}}
	rs.Variants[1].Faults = true
	if _, err := WritePlots(faulty, rs); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(plain, "replicas.svg"))
	b, _ := os.ReadFile(filepath.Join(faulty, "replicas.svg"))
	if !bytes.Contains(b, []byte("hardware failure")) || bytes.Contains(a, []byte("hardware failure")) {
		t.Fatal("want the failure marked (and in the legend) only with faults")
	}
}
