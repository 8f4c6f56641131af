package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/serving"
)

func serve(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = mainWithArgs(append([]string{"serve"}, args...), &o, &e)
	return code, o.String(), e.String()
}

// servedFiles lists every file of a serve output folder, relative.
func servedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestServeSmall(t *testing.T) {
	tmp := t.TempDir()
	outs := []string{filepath.Join(tmp, "a"), filepath.Join(tmp, "b", "nested")}
	var tables []string
	for _, out := range outs {
		code, stdout, stderr := serve(t, "testdata/serve-small.yaml", "--out", out, "--quiet")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if stderr != "" {
			t.Errorf("--quiet printed %q", stderr)
		}
		tables = append(tables, stdout)
	}
	if tables[0] != tables[1] {
		t.Fatalf("two runs printed different tables:\n%s\n%s", tables[0], tables[1])
	}
	lines := strings.Split(strings.TrimSpace(tables[0]), "\n")
	if !strings.HasPrefix(lines[0], "variant ") || !strings.Contains(lines[0], "TTFT p99") || !strings.Contains(lines[0], "batch +wait") {
		t.Fatalf("header %q", lines[0])
	}
	// Three variants × (two classes + all).
	if len(lines) != 1+3*3 {
		t.Fatalf("table has %d lines, want 10:\n%s", len(lines), tables[0])
	}
	for i, v := range []string{"static", "eject", "autoscale+eject"} {
		for k, c := range []string{"interactive", "batch-api", "all"} {
			f := strings.Fields(lines[1+3*i+k])
			if f[0] != v || f[1] != "chat" || f[2] != c {
				t.Errorf("row %d = %q, want %s chat %s", 1+3*i+k, lines[1+3*i+k], v, c)
			}
		}
	}
	want := append([]string{"run.json"}, serving.Files...)
	for _, p := range serving.PlotNames {
		want = append(want, filepath.Join("plots", p+".png"), filepath.Join("plots", p+".svg"))
	}
	slices.Sort(want)
	for _, out := range outs {
		if got := servedFiles(t, out); !slices.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", out, got, want)
		}
	}
	for _, f := range want {
		if f == "run.json" {
			continue // it records the command line, which names --out
		}
		a, err := os.ReadFile(filepath.Join(outs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(outs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same experiment", f)
		}
	}
	// A second run into the same folder replaces the files and leaves
	// no temporary folder behind.
	if code, _, stderr := serve(t, "testdata/serve-small.yaml", "--out", outs[0], "--quiet", "--seed", "9"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 2 {
		t.Fatalf("%s holds %d entries, want a and b", tmp, len(entries))
	}
	ts, err := os.ReadFile(filepath.Join(outs[0], "serving_timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(ts), strings.Join(serving.TimeseriesHeader, ",")+"\n") || !strings.Contains(string(ts), "\nautoscale+eject,chat,") {
		t.Fatalf("timeseries:\n%.300s", ts)
	}
	sum, err := os.ReadFile(filepath.Join(outs[0], "serving_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), `"seed": 9,`) || !strings.Contains(string(sum), `"extra_wait_mean_s"`) {
		t.Fatalf("summary:\n%.600s", sum)
	}
}

func TestServeErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, err := os.ReadFile("testdata/serve-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := write("bad.yaml", strings.Replace(string(small), "ttft_target: 1s", "ttft_target: fast", 1))
	// A replica of 16 GPUs fits no node of 8: the run itself fails.
	unfit := write("unfit.yaml", strings.Replace(string(small), "gpus_per_replica: 2", "gpus_per_replica: 16", 1))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{bad}, exitError, bad + `:40: services[0].classes[0].ttft_target: want a duration like "500ms", "90s" or "1h30m", got "fast"`},
		{[]string{unfit}, exitError, unfit + ":18: services[0].gpus_per_replica: a replica needs 16 H100-80GB GPUs on one node; the cluster's largest such node has 8"},
		{[]string{filepath.Join(dir, "none.yaml")}, exitError, "none.yaml"},
		{[]string{"a.yaml", "b.yaml"}, exitUsage, "want at most one experiment file"},
		{[]string{"--bogus"}, exitUsage, "unknown flag: --bogus"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := serve(t, append(c.args, "--out", out, "--quiet")...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("serve %v left %s behind", c.args, out)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%s holds %d entries after failed runs, want the 2 files", dir, len(entries))
	}
	if code, stdout, _ := serve(t, "--help"); code != exitOK || !strings.Contains(stdout, "brigade serve [EXPERIMENT.yaml]") || !strings.Contains(stdout, "--out") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}

// The embedded example is the shipped file, byte for byte.
func TestServeEmbeddedExample(t *testing.T) {
	b, err := os.ReadFile("../../examples/serving/burst.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, embeddedServingExample) {
		t.Fatal("cmd/brigade/embedded/serving-burst.yaml differs from examples/serving/burst.yaml; copy it")
	}
	e, err := serving.ParseExperiment(embeddedServingExample, servingExampleName)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Names(), ","); got != "static,eject,autoscale,autoscale+eject" {
		t.Fatalf("variants %s", got)
	}
}

// A service driven by a request trace, with no batch jobs: every request
// of the trace arrives; a trace naming an unknown class fails the run.
func TestServeTrace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("r.csv", serving.TraceHeader+"\n0,interactive,100,10\n0.5,batch-api,200,20\n2,interactive,50,5\n")
	write("bad.csv", serving.TraceHeader+"\n0,chat,100,10\n")
	exp := `cluster: dgx-a100x16
horizon: 2m
services:
  - name: svc
    gpus_per_replica: 1
    replica: {prefill_tokens_per_s: 1000, decode_tokens_per_s: 20, max_concurrent: 4}
    replicas: {initial: 1}
    arrivals: {trace: TRACE}
    classes:
      - {name: interactive, priority: 1, ttft_target: 1s, e2e_target: 5s}
      - {name: batch-api}
`
	good := write("good.yaml", strings.Replace(exp, "TRACE", "r.csv", 1))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := serve(t, good, "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "default  svc      all") {
		t.Fatalf("table:\n%s", stdout)
	}
	sum, err := os.ReadFile(filepath.Join(out, "serving_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), `"requests": 3,`) || strings.Contains(string(sum), `"baseline"`) {
		t.Fatalf("summary:\n%s", sum)
	}
	if _, err := os.Stat(filepath.Join(out, "plots")); !os.IsNotExist(err) {
		t.Fatalf("--no-plots drew plots")
	}
	bad := write("bad.yaml", strings.Replace(exp, "TRACE", "bad.csv", 1))
	out2 := filepath.Join(dir, "out2")
	code, _, stderr = serve(t, bad, "--out", out2, "--quiet")
	if code != exitError || !strings.Contains(stderr, `bad.csv:2: class: "chat" is not a class of service svc`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Fatalf("a failed run left %s", out2)
	}
}

// The table docs/serving-example.md shows is what the shipped example
// prints.
func TestServeExampleMatchesDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example (about a second)")
	}
	code, stdout, stderr := serve(t, "--out", filepath.Join(t.TempDir(), "out"), "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile("../../docs/serving-example.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), stdout) {
		t.Fatalf("docs/serving-example.md does not show the example's table; update it (and the reading in examples/serving.yaml) with 'go run ./cmd/brigade run --page examples/serving.yaml':\n%s", stdout)
	}
}

// The shipped faults example: two nodes under replicas fail; every
// variant with faults faces them, replicas are lost and replaced, outlier
// ejection ends the black hole long before the detection, and the table
// docs/serving.md shows is what it prints.
func TestServeFaultsExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := serve(t, "../../examples/serving/faults.yaml", "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if head := strings.SplitN(stdout, "\n", 2)[0]; !strings.Contains(head, "  ejections  lost  batch preempted") {
		t.Fatalf("header %q", head)
	}
	b, err := os.ReadFile(filepath.Join(out, "serving_summary.json"))
	if err != nil {
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
			Name   string `json:"name"`
			Faults *struct {
				Injected int `json:"injected"`
				Detected int `json:"detected"`
			} `json:"faults"`
			Services []struct {
				All struct {
					Errors int64 `json:"errors"`
				} `json:"all"`
				Lost     int64 `json:"replicas_lost"`
				Replicas int   `json:"replicas_created"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sum.Faults.Schedule, ","); got != "dgx-h100-001@1200s+7200s,dgx-h100-003@3000s+7200s" {
		t.Fatalf("schedule %s", got)
	}
	if sum.Baseline.HW == 0 || sum.Clean == nil || sum.Clean.HW != 0 {
		t.Errorf("baseline hardware failures %d, baseline without faults %+v: want the first to face the faults, the second not", sum.Baseline.HW, sum.Clean)
	}
	errs := map[string]int64{}
	for _, v := range sum.Variants {
		s := v.Services[0]
		errs[v.Name] = s.All.Errors
		if v.Name == "no-faults" {
			if v.Faults != nil || s.Lost != 0 || s.All.Errors != 0 {
				t.Errorf("no-faults: faults %+v, %d lost, %d errors", v.Faults, s.Lost, s.All.Errors)
			}
			continue
		}
		if v.Faults == nil || v.Faults.Injected != 2 || v.Faults.Detected != 2 {
			t.Errorf("%s: faults %+v, want both injected and detected", v.Name, v.Faults)
		}
		if s.Lost == 0 || s.Replicas < 8+int(s.Lost) {
			t.Errorf("%s: %d replicas lost, %d created: want lost ones, each replaced", v.Name, s.Lost, s.Replicas)
		}
	}
	if !(errs["faults+eject"] < errs["faults"]/10) || errs["faults+eject"] == 0 {
		t.Errorf("errors with ejection %d, without %d: want errors before ejection, far fewer than the black hole's until the detection", errs["faults+eject"], errs["faults"])
	}
	if testing.Short() {
		return
	}
	doc, err := os.ReadFile("../../docs/serving-faults.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), stdout) {
		t.Fatalf("docs/serving-faults.md does not show the faults example's table; update it (and the reading in examples/serving-faults.yaml) with 'go run ./cmd/brigade run --page examples/serving-faults.yaml':\n%s", stdout)
	}
}

// The shipped failover example: a rack under the 70B service fails at
// 20 min; with the circuit, its traffic goes to the 8B backup from that
// instant until 2 min after the replacements are ready, the requests sent
// there are booked in llm-70b's classes, and errors fall to the requests
// in flight on the lost replicas. docs/serving.md shows what it prints.
func TestServeFailoverExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := serve(t, "../../examples/serving/failover.yaml", "--out", out, "--quiet", "--no-plots")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if head := strings.SplitN(stdout, "\n", 2)[0]; !strings.Contains(head, "  SLO     to backup  GPU-h") {
		t.Fatalf("header %q", head)
	}
	b, err := os.ReadFile(filepath.Join(out, "serving_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	type class struct {
		Errors   int64  `json:"errors"`
		Degraded *int64 `json:"degraded"`
	}
	var sum struct {
		Variants []struct {
			Name     string `json:"name"`
			Services []struct {
				Name     string  `json:"name"`
				All      class   `json:"all"`
				Classes  []class `json:"classes"`
				Received int64   `json:"received_from_failover"`
				Failover *struct {
					Openings int64 `json:"openings"`
					Events   []struct {
						Open  float64  `json:"open_s"`
						Close *float64 `json:"close_s"`
					} `json:"events"`
					Degraded int64 `json:"degraded"`
				} `json:"failover"`
			} `json:"services"`
		} `json:"variants"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	errs := map[string]int64{}
	for _, v := range sum.Variants {
		p, bk := v.Services[0], v.Services[1]
		errs[v.Name] = p.All.Errors
		if v.Name != "faults+failover" {
			if p.Failover != nil || bk.Received != 0 || p.All.Degraded != nil {
				t.Errorf("%s: a circuit without failover: %+v, %d received", v.Name, p.Failover, bk.Received)
			}
			continue
		}
		f := p.Failover
		if f == nil || f.Openings != 1 || len(f.Events) != 1 || f.Events[0].Open != 1200 || f.Events[0].Close == nil {
			t.Fatalf("circuit %+v: want one opening at the failure (1200 s), closed within the run", f)
		}
		var classes int64
		for _, c := range p.Classes {
			classes += *c.Degraded
		}
		if f.Degraded == 0 || f.Degraded != bk.Received || f.Degraded != *p.All.Degraded || classes != f.Degraded {
			t.Errorf("degraded %d, backup received %d, all %d, classes %d: want them equal and > 0", f.Degraded, bk.Received, *p.All.Degraded, classes)
		}
	}
	if errs["no-faults"] != 0 || !(errs["faults+failover"] < errs["faults"]/10) {
		t.Errorf("errors %v: want none without faults, and failover to keep a tenth of those without", errs)
	}
	if testing.Short() {
		return
	}
	doc, err := os.ReadFile("../../docs/serving.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), stdout) {
		t.Fatalf("docs/serving.md does not show the failover example's table; update the section \"Failover and degradation\" with 'go run ./cmd/brigade serve examples/serving/failover.yaml --quiet --no-plots':\n%s", stdout)
	}
}
