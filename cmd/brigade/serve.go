package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/serving"
)

// embeddedServingExample is examples/serving/burst.yaml, copied here
// because go:embed cannot reach above the package's folder; a test keeps
// the two identical. brigade serve runs it when given no file.
//
//go:embed embedded/serving-burst.yaml
var embeddedServingExample []byte

// servingExampleName is the embedded example's name in errors and tables.
const servingExampleName = "examples/serving/burst.yaml"

const serveUsage = `Usage: brigade serve [EXPERIMENT.yaml] [flags]

Simulates inference services beside batch training jobs on one shared
cluster (docs/serving.md). The experiment file names the cluster, the batch
workload, the services (replica model, replicas, routing, outlier ejection,
autoscaling, request classes with their targets, arrivals by a rate
schedule or a request trace, incidents), hardware faults (node and GPU
failures, random or named, with heartbeat detection; a replica on broken
hardware fails its requests until ejected and is replaced once the failure
is detected) and the variants to compare.

It runs the batch-only baseline (the same cluster, batch jobs, policy and
faults without any service; one without faults too when a variant runs
without them) and every variant (in parallel; results in the file's
order), prints one row per variant, service and class (throughput, TTFT
and end-to-end p50/p99, error rate, SLO attainment, GPU-hours, mean
replicas, scale-outs, ejections, replicas lost to faults when there are
any, batch attempts preempted and the batch jobs' extra mean wait against
the baseline), and writes into --out:
serving_summary.json, serving_timeseries.csv, replicas.csv, alerts.csv
(the experiment's alert rules' state changes) and plots/ (e2e-p99,
replicas, error-rate as PNG and SVG). With alert rules the table is
followed by how many times each fired per variant and for how long.
Nothing is written when a run fails.

With --plan TARGETS it plans instead: the smallest fixed replica count
of one service (--plan-service when the file has several) meeting every
target, e.g. 'interactive.ttft_p99<=1s,e2e_p95<=20s,slo>=0.99,
errors<=0.001,saturation<=0.8' (METRIC or CLASS.METRIC; latencies ttft_*,
e2e_*, wait_* as mean, p50, p95, p99 or max; slo, errors, unfinished,
throughput, saturation), on every seed (--seeds). Each count is a run of
the service alone, without autoscaling, incidents or batch jobs, with N
warm replicas on a dedicated cluster just big enough; --plan-rate R
replaces its arrivals by a constant R rps. It searches 1, 2, 4, ... up to
--plan-max, then bisects, prints every count tried with each target's
metric (the worst over seeds) and pass or fail, and the answer (replicas,
GPUs, GPU-hours per hour), and writes plan.csv and plan.png into --out;
with no count meeting every target it says which failed and exits 1.

With no file it runs the shipped example, examples/serving/burst.yaml
(embedded): a 50 -> 500 rps burst on a cluster busy with training jobs,
with and without autoscaling and outlier ejection, one replica turned slow
midway.`

const serveExamples = `  brigade serve
  brigade serve examples/serving/burst.yaml --out serving-out
  brigade serve examples/serving/faults.yaml --out faults-out
  brigade serve my-experiment.yaml --seed 7 --quiet
  brigade serve examples/serving/burst.yaml --plan 'interactive.ttft_p99<=1s,interactive.e2e_p99<=20s,errors<=0.001' --plan-rate 500
`

type serveFlags struct {
	out     string
	seed    uint64
	quiet   bool
	noPlots bool
	check   bool

	// Capacity planning (serveplan.go).
	plan, planService, seeds string
	planMax                  int
	planRate                 float64

	// Calibration (servecalibrate.go).
	calibrate, calibrateService, calibrateOut string
}

func runServe(args []string, stdout, stderr io.Writer) error {
	var f serveFlags
	fset := newFlagSet("serve", serveUsage, serveExamples)
	fset.StringVar(&f.out, "out", "serving-out", "results `directory`, written whole: a new one, an empty one or an earlier Brigade results folder, replaced only once every run has succeeded")
	fset.Uint64Var(&f.seed, "seed", 0, "root seed, replacing the file's seed: request streams and a synthetic batch workload without its own seed draw from it")
	fset.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and the table")
	fset.BoolVar(&f.noPlots, "no-plots", false, "do not draw the plots into --out/plots/")
	fset.BoolVar(&f.check, "check-invariants", false, "re-check the batch engine's invariants after every event (slow)")
	fset.StringVar(&f.plan, "plan", "", "plan instead of compare: the smallest fixed replica count meeting these comma-separated `targets`, e.g. \"interactive.ttft_p99<=1s,errors<=0.001\"")
	fset.StringVar(&f.planService, "plan-service", "", "with --plan: the `service` to plan (needed when the file has several)")
	fset.IntVar(&f.planMax, "plan-max", 256, "with --plan: the largest replica count to consider")
	fset.Float64Var(&f.planRate, "plan-rate", 0, "with --plan: replace the service's arrivals by a constant `rps` (plan for a sustained peak); 0 keeps the file's")
	fset.StringVar(&f.seeds, "seeds", "", "with --plan: seeds, e.g. 1-3 or 1,5,9; every target must hold on each (default: the file's seed, or --seed)")
	fset.StringVar(&f.calibrate, "calibrate", "", "fit instead of compare: the iteration-level service's latency coefficients to measured requests, a `CSV` with arrival_time_us, input_tokens, output_tokens, first_chunk_time_us, last_chunk_time_us (BLIS's per-request trace)")
	fset.StringVar(&f.calibrateService, "calibrate-service", "", "with --calibrate: the `service` to fit (needed when the file has several)")
	fset.StringVar(&f.calibrateOut, "calibrate-out", "", "with --calibrate: write the fitted coefficients to this new `file` (default: print them)")
	if err := fset.parseFlags(args, stdout); err != nil {
		return err
	}
	if fset.NArg() > 1 {
		return usageError{fmt.Errorf("want at most one experiment file, got %d arguments", fset.NArg())}
	}
	var (
		exp *serving.Experiment
		err error
	)
	if fset.NArg() == 1 {
		exp, err = serving.LoadExperiment(fset.Arg(0))
	} else {
		exp, err = serving.ParseExperiment(embeddedServingExample, servingExampleName)
	}
	if err != nil {
		return err
	}
	if fset.Changed("seed") {
		exp.Seed = f.seed
	}
	if fset.Changed("plan") {
		return servePlan(exp, f, stdout, stderr)
	}
	if fset.Changed("calibrate") {
		return serveCalibrate(exp, f, stdout, stderr)
	}
	for _, name := range []string{"calibrate-service", "calibrate-out"} {
		if fset.Changed(name) {
			return usageError{fmt.Errorf("--%s is for calibration: give --calibrate FILE too", name)}
		}
	}
	for _, name := range []string{"plan-service", "plan-max", "plan-rate", "seeds"} {
		if fset.Changed(name) {
			return usageError{fmt.Errorf("--%s is for planning: give --plan TARGETS too", name)}
		}
	}
	var inputs []string
	if fset.NArg() == 1 {
		inputs = append(inputs, fset.Arg(0))
	}
	if err := results.CheckOut(f.out, inputs...); err != nil {
		return err // before the runs, which take a while
	}
	var bar *progress // made at the first report, which carries the total
	opt := serving.RunOptions{CheckInvariants: f.check, Progress: func(done, total int) {
		if bar == nil {
			bar = newProgress(stderr, f.quiet, "brigade serve", "runs", total)
		}
		bar.Set(done)
	}}
	if !f.quiet {
		opt.Log = func(line string) { fmt.Fprintf(stderr, "brigade serve: %s\n", line) }
	}
	rs, err := serving.RunExperiment(exp, opt)
	bar.Done()
	if err != nil {
		return err
	}
	var in []results.InputFile
	for _, p := range inputs {
		x, err := results.FileInput("experiment", p)
		if err != nil {
			return err
		}
		in = append(in, x)
	}
	if len(inputs) == 0 {
		in = append(in, results.InputFile{Role: "experiment", Path: servingExampleName, Embedded: true, SHA256: results.SHA256Hex(embeddedServingExample)})
	}
	if err := rs.WriteFolder(f.out, !f.noPlots, results.RunInfo{Command: append([]string{"brigade", "serve"}, args...), Inputs: in}); err != nil {
		return err
	}
	if err := serving.FormatTable(stdout, rs); err != nil {
		return err
	}
	if !f.quiet {
		plots := " and plots/"
		if f.noPlots {
			plots = ""
		}
		fmt.Fprintf(stderr, "brigade serve: wrote %s%s to %s\n", strings.Join(serving.Files, ", "), plots, f.out)
	}
	return nil
}

// publishOutputs moves the files (relative paths) written into tmp, a
// fresh folder beside out, into out: the whole folder when out does not
// exist yet, else file by file, replacing those of the same names
// (serve --plan's output).
func publishOutputs(tmp, out string, files []string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, out)
	}
	for _, p := range files {
		dst := filepath.Join(out, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, p), dst); err != nil {
			return err
		}
	}
	return nil
}
