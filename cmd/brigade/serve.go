package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/serving"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
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
serving_summary.json, serving_timeseries.csv, replicas.csv and plots/
(e2e-p99, replicas, error-rate as PNG and SVG). Nothing is written when a
run fails.

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
	rs, err := runExperiment(exp, f, stderr)
	if err != nil {
		return err
	}
	if err := writeServeOutputs(f, rs, append([]string{"brigade", "serve"}, args...), inputs); err != nil {
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

// runExperiment runs the batch-only baseline and every variant of exp,
// all at once up to GOMAXPROCS, and returns them in the experiment's
// order.
func runExperiment(exp *serving.Experiment, f serveFlags, stderr io.Writer) (*serving.RunSet, error) {
	spec, err := exp.Cluster.Spec()
	if err != nil {
		return nil, err
	}
	probe, err := spec.Build()
	if err != nil {
		return nil, err
	}
	if err := exp.CheckCluster(probe); err != nil {
		return nil, err
	}
	var (
		w        *workloads.Workload
		workload string
	)
	if exp.Batch != nil {
		if w, workload, err = exp.Batch.Workload(probe.TotalGPUs(), exp.Seed); err != nil {
			return nil, err
		}
	}
	// The failures are drawn once, from the seed's failure stream, so the
	// baseline and every variant with faults on face the same ones.
	faults, err := exp.RunnerFaults(probe)
	if err != nil {
		return nil, err
	}
	var schedule []hwmodel.Fault
	if faults != nil {
		faults.Horizon = exp.FaultHorizon(w)
		if schedule, err = faults.Schedule(probe, w, exp.Seed); err != nil {
			return nil, err
		}
	}
	name := strings.TrimSuffix(filepath.Base(exp.File), filepath.Ext(exp.File))
	rs := &serving.RunSet{Experiment: name, Cluster: fmt.Sprintf("%s (%s)", spec.Name, hwmodel.Plural(probe.TotalGPUs(), "GPU", "GPUs")), Workload: workload, Seed: exp.Seed}
	if faults != nil {
		rs.Faults = &serving.FaultSet{Schedule: schedule, Cluster: probe, Describe: describeFaults(exp.Faults, schedule, faults.Horizon)}
	}
	names := exp.Names()
	rs.Variants = make([]serving.VariantRun, len(names))
	if !f.quiet {
		batch := "no batch jobs"
		if w != nil {
			batch = fmt.Sprintf("%s under %s", workload, policyLabel(exp.Batch))
		}
		fmt.Fprintf(stderr, "brigade serve: %s on %s; batch: %s; variants %s\n", exp.File, rs.Cluster, batch, strings.Join(names, ", "))
		if rs.Faults != nil {
			fmt.Fprintf(stderr, "brigade serve: faults: %s\n", rs.Faults.Describe)
		}
	}

	type job struct {
		name string
		run  func() error
	}
	// Every run gets its own copy of the jobs, made before any starts.
	copyOf := func() *workloads.Workload {
		if w == nil {
			return nil
		}
		return &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: append([]workloads.Tenant(nil), w.Tenants...)}
	}
	jobs := make([]job, 0, len(names)+1)
	if w != nil {
		baseW := copyOf()
		var baseFaults *runner.Faults
		if faults != nil {
			// The schedule as named failures: the baseline faces exactly
			// the variants' failures.
			bf := *faults
			bf.Model, bf.Named = hwmodel.FailureModel{}, slices.Clone(schedule)
			baseFaults = &bf
		}
		baseline := func(w *workloads.Workload, faults *runner.Faults, into **sim.Result) func() error {
			return func() error {
				runs, err := runner.Run(runner.Spec{
					Workload: w, WorkloadName: workload, NewCluster: spec.Build, ClusterName: spec.Name,
					Policies: []policies.Spec{exp.Batch.PolicySpec()}, Seed: exp.Seed,
					Options: runner.Options{CheckInvariants: f.check, Faults: faults},
				})
				if err != nil {
					return err
				}
				*into = runs[0].Engine
				return nil
			}
		}
		jobs = append(jobs, job{"baseline", baseline(baseW, baseFaults, &rs.Baseline)})
		for i := range names {
			if faults != nil && !exp.FaultsOn(i) {
				// Variants without the faults are compared with a
				// batch-only run without them.
				jobs = append(jobs, job{"baseline without faults", baseline(copyOf(), nil, &rs.BaselineNoFaults)})
				break
			}
		}
	}
	for i, n := range names {
		batchW := copyOf()
		jobs = append(jobs, job{"variant " + n, func() error {
			c, err := spec.Build()
			if err != nil {
				return err
			}
			cfg := serving.Config{Spec: exp.VariantSpec(i), Cluster: c, Seed: exp.Seed}
			if batchW != nil {
				cfg.Batch = batchW // and its own policy
				if cfg.Policy, err = exp.Batch.PolicySpec().New(); err != nil {
					return err
				}
			}
			on := faults != nil && exp.FaultsOn(i)
			cfg.Sim = func(c *sim.Config) {
				c.CheckInvariants = f.check
				if on {
					serving.SimFaults(c, faults, schedule)
				}
			}
			res, err := serving.Run(cfg)
			if err != nil {
				return err
			}
			rs.Variants[i] = serving.VariantRun{Name: n, Result: res, Faults: on}
			return nil
		}})
	}
	bar := newProgress(stderr, f.quiet, "brigade serve", "runs", len(jobs))
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := j.run(); err != nil {
				errs[k] = fmt.Errorf("%s: %w", j.name, err)
			}
			mu.Lock()
			bar.Add()
			mu.Unlock()
		}()
	}
	wg.Wait()
	bar.Done()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rs, nil
}

func policyLabel(b *serving.Batch) string {
	if b.Backfill {
		return b.Policy + "+bf"
	}
	return b.Policy
}

// writeServeOutputs writes the results folder whole (results.WriteFolder):
// the serving files, the plots unless --no-plots, and run.json listing
// them, so that a later run may replace the folder and a failed one
// leaves the earlier folder as it was.
func writeServeOutputs(f serveFlags, rs *serving.RunSet, command, inputs []string) error {
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
	return results.WriteFolder(f.out, func(dir string) error {
		if err := serving.WriteRunSet(dir, rs); err != nil {
			return err
		}
		if !f.noPlots {
			if _, err := serving.WritePlots(filepath.Join(dir, "plots"), rs); err != nil {
				return err
			}
		}
		return results.WriteRunJSON(filepath.Join(dir, "run.json"), results.RunInfo{Seed: rs.Seed, Command: command, Inputs: in, Files: serving.Files})
	})
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

// describeFaults says what the experiment injects: the failure model and
// the named failures, what was drawn up to the horizon, and the detection
// and retry settings.
func describeFaults(x *serving.Faults, schedule []hwmodel.Fault, horizon hwmodel.Time) string {
	var parts []string
	m := x.Model
	repair := func(r hwmodel.RepairModel) string {
		if r.Kind == "fixed" {
			return "repaired " + results.HumanDuration(r.Mean.Seconds()) + " later"
		}
		return fmt.Sprintf("repaired after a %s time of mean %s", r.Kind, results.HumanDuration(r.Mean.Seconds()))
	}
	dist := m.Distribution
	if dist == "weibull" {
		dist = fmt.Sprintf("weibull (shape %g)", m.WeibullShape)
	}
	if m.NodeMTBF > 0 {
		parts = append(parts, fmt.Sprintf("node MTBF %s (%s), %s", results.HumanDuration(m.NodeMTBF.Seconds()), dist, repair(m.NodeRepair)))
	}
	if m.GPUMTBF > 0 {
		parts = append(parts, fmt.Sprintf("GPU MTBF %s (%s), %s", results.HumanDuration(m.GPUMTBF.Seconds()), dist, repair(m.GPURepair)))
	}
	if m.Enabled() {
		parts = append(parts, fmt.Sprintf("%d drawn up to %s", len(schedule)-len(x.Fail), results.HumanDuration(horizon.Seconds())))
	}
	if len(x.Fail) > 0 {
		parts = append(parts, "named "+strings.Join(x.Fail, ", "))
	}
	parts = append(parts, fmt.Sprintf("heartbeat every %s, timeout %s; batch retry %s", results.HumanDuration(x.HeartbeatInterval.Seconds()),
		results.HumanDuration(x.HeartbeatTimeout.Seconds()), x.Retry))
	if x.Retry == "fixed" || x.Retry == "deadline" {
		parts[len(parts)-1] += fmt.Sprintf(" (at most %d)", x.MaxRetries)
	}
	return strings.Join(parts, "; ")
}
