package scenario

import (
	"strings"
	"testing"
)

// TestParseErrors: every problem of a file at once, each with its line
// and field.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"empty", "", []string{"f.yaml"}},
		{"missing", "workload: {jobs: [{name: a, duration: 1h, gpus: 1}]}\n", []string{"f.yaml:1: cluster: missing: want a preset", "f.yaml:1: policy: missing: want a policy spec"}},
		{"no workload", "cluster: h200x8\npolicy: fcfs\nworkload: {}\n", []string{"f.yaml:3: workload: want a trace, the embedded sample (embedded: true), a synthetic generator or jobs"}},
		{"durations", `cluster: h200x8
policy: fcfs
workload:
  jobs:
    - {name: a, duration: soon, gpus: 1}
    - {name: a, duration: 0s, gpus: -1, checkpoint: {every: 0s}}
`, []string{
			`f.yaml:5: workload.jobs[0].duration: want a duration such as 30s, 5m, 2h or 21d, got "soon"`,
			`f.yaml:6: workload.jobs[1].name: "a" is already jobs[0]'s name`,
			"f.yaml:6: workload.jobs[1].gpus: want >= 0, got -1",
			`workload.jobs[1].duration: want a positive duration`,
			`workload.jobs[1].checkpoint.every: want a positive duration`,
		}},
		{"preemption", "cluster: h200x8\npolicy: srtf\nworkload: {jobs: [{name: a, duration: 1h, gpus: 1}]}\npreemption: {restart: -1s, save: true}\nsetups:\n  - {name: x, preemption: {restart: soon}}\n", []string{
			`f.yaml:4: preemption.restart: want a duration such as 30s, 5m, 2h or 21d, got "-1s"`,
			`f.yaml:6: setups[0].preemption.restart: want a duration such as 30s, 5m, 2h or 21d, got "soon"`,
		}},
		{"generator", `cluster: h200x8
policy: fcfs
workload:
  synthetic:
    jobs: 0
    rate_per_hour: 10
    load: 0.5
    mig:
      phases:
        - classes: [{min_slices: 9, weight: 0}]
        - classes: []
`, []string{
			"f.yaml:5: workload.synthetic.jobs: want 1 to 5000000, got 0",
			"f.yaml:7: workload.synthetic.load: give rate_per_hour or load, not both",
			"workload.synthetic.mig.phase_length: several phases need a positive phase length",
			"f.yaml:10: workload.synthetic.mig.phases[0].classes[0].min_slices: want 1 to 7, got 9",
			"workload.synthetic.mig.phases[0].classes[0].weight: want a positive weight",
			"f.yaml:11: workload.synthetic.mig.phases[1].classes: want at least one class",
		}},
		{"setups and outputs", `cluster: h200x8
policy: fcfs
workload: {trace: t.csv, synthetic: {jobs: 5}}
setups:
  - {name: x, no_faults: true}
  - {name: x, policy: lifo}
columns:
  - {header: h, value: job.a.colour}
  - {header: h, value: wait_s.mean, format: hex}
charts:
  - {title: t, value: goodput, series: down_gpus}
  - {title: u, series: temperature, log_scale: true}
`, []string{
			"f.yaml:3: workload.trace: a trace cannot be combined with synthetic or jobs",
			"f.yaml:5: setups[0].no_faults: the file has no faults section to leave out",
			`f.yaml:6: setups[1].name: "x" is already setups[0]'s name`,
			`f.yaml:6: setups[1].policy:`,
			`f.yaml:8: columns[0].value: "job.a.colour": want job.NAME.FIELD`,
			"f.yaml:9: columns[1].format:",
			"f.yaml:11: charts[0].series: give value (bars) or series (a time series), not both",
			"f.yaml:12: charts[1].series:",
			"f.yaml:12: charts[1].log_scale: a logarithmic axis is for bars (value)",
			"charts: charts need a plot file",
		}},
		{"plan", `policy: fair
cluster: h200x8
workload: {embedded: true}
setups: [{name: a}]
plan:
  targets: [wait_s.p99<=1h, colour>=3]
  gpu_models: [p100, tpu]
  prices: {p100: 1, v100: 2}
  gpus_per_node: 8
  min_gpus: 64
  max_gpus: 32
`, []string{
			"f.yaml:2: cluster: a plan sizes clusters",
			"f.yaml:4: setups: a plan sizes clusters",
			"f.yaml:6: plan.targets[1]:",
			`f.yaml:7: plan.gpu_models[1]: unknown model "tpu"`,
			"f.yaml:8: plan.prices.v100: v100 is not among gpu_models",
			"f.yaml:11: plan.max_gpus: min_gpus 64 and max_gpus 32 leave no cluster",
		}},
		{"serving", `serving: nowhere.yaml
cluster: h200x8
setups: [{name: a}]
`, []string{
			"f.yaml:1: serving: stat nowhere.yaml",
			"f.yaml:2: cluster: the serving experiment file names",
			"f.yaml:3: setups: the serving experiment file names",
		}},
		{"types", "cluster: h200x8\npolicy: fcfs\nseed: -1\nworkload: {jobs: [{name: a, duration: 1h, gpus: two}]}\nfaults: {node_mtbf: 30d, retry: sometimes}\n", []string{
			"f.yaml:3: seed:",
			"f.yaml:4: workload.jobs[0].gpus: want a whole number",
			"f.yaml:5: faults.node_repair: want a positive duration",
			`f.yaml:5: faults.retry: want one of trace, none, fixed, deadline, got "sometimes"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.body), "f.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestRunExplicitJobs: explicit jobs keep their names and order, setups
// change only what they name, and the value grammar reads them.
func TestRunExplicitJobs(t *testing.T) {
	got := runTable(t, `cluster: h200x8
policy: fcfs
workload:
  jobs:
    - {name: big, duration: 2h, gpus: 8}
    - {name: small, submit: 1m, duration: 10m, gpus: 1}
    - {name: late, submit: 2m, duration: 5m, gpus: 8}
setups:
  - {name: fcfs}
  - {name: sjf, policy: sjf}
columns:
  - {header: setup, value: setup.policy}
  - {header: small waits, value: job.small.wait_s, format: int}
  - {header: late waits, value: job.late.wait_s, format: int}
  - {header: done, value: jobs_succeeded / jobs_submitted, format: of}
`)
	// Both wait for big to end at 2h. FCFS starts small (submitted
	// first) at 2h and late, which needs all 8 GPUs, when small ends at
	// 2h10m; SJF starts late (5m) first and small at 2h05m.
	want := "setup | small waits | late waits | done\n" +
		"fcfs | 7140 | 7680 | 3/3\n" +
		"sjf | 7440 | 7080 | 3/3\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// TestRunPreemptionCost: the preemption section sets what a preempted
// job loses and pays, for the file and per setup.
func TestRunPreemptionCost(t *testing.T) {
	got := runTable(t, `cluster: h200x8
policy: srtf
workload:
  jobs:
    - {name: long, duration: 2h, gpus: 8, checkpoint: {every: 30m}}
    - {name: short, submit: 45m, duration: 10m, gpus: 8}
preemption: {restart: 5m}
setups:
  - {name: checkpoints}
  - {name: save, preemption: {save: true}}
  - {name: save+restart, preemption: {restart: 5m, save: true}}
columns:
  - {header: setup, value: setup.name}
  - {header: long jct, value: job.long.jct_s, format: int}
  - {header: preemptions, value: job.long.preemptions, format: int}
  - {header: lost, value: job.long.preempt_lost_s, format: int}
  - {header: short jct, value: job.short.jct_s, format: int}
`)
	// At 45m short (10m left) preempts long (75m left). Long resumes at
	// 55m plus the restart: from its 30m checkpoint (15m of progress
	// lost, 90m to go), or from where it stopped when it saves.
	want := "setup | long jct | preemptions | lost | short jct\n" +
		"checkpoints | 9000 | 1 | 1200 | 600\n" +
		"save | 7800 | 1 | 0 | 600\n" +
		"save+restart | 8100 | 1 | 300 | 600\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

// runTable runs a scenario file's setups and gives its results table,
// one row per line, cells joined by " | ".
func runTable(t *testing.T, body string) string {
	t.Helper()
	f, err := Parse([]byte(body), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(f, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := res.Table()
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range rows {
		got += strings.Join(r, " | ") + "\n"
	}
	return got
}
