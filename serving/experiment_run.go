package serving

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// RunOptions change how an experiment runs, never its results.
type RunOptions struct {
	// CheckInvariants re-checks the batch engine's invariants after every
	// event (slow).
	CheckInvariants bool
	// Log, when set, is told what is about to run: the cluster, the batch
	// workload, the variants and the faults, one line each.
	Log func(line string)
	// Progress, when set, is told how many of the runs have ended.
	Progress func(done, total int)
}

// RunExperiment runs the batch-only baseline (and, when some variant runs
// without the faults, a baseline without them too) and every variant of
// exp, up to GOMAXPROCS at once, and returns them in the experiment's
// order. The failures are drawn once, from the seed's failure stream, so
// the baseline and every variant with faults on face the same ones. The
// same experiment gives the same RunSet whatever the parallelism.
func RunExperiment(exp *Experiment, opt RunOptions) (*RunSet, error) {
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
	rs := &RunSet{Experiment: name, Cluster: fmt.Sprintf("%s (%s)", spec.Name, hwmodel.Plural(probe.TotalGPUs(), "GPU", "GPUs")), Workload: workload, Seed: exp.Seed}
	if faults != nil {
		rs.Faults = &FaultSet{Schedule: schedule, Cluster: probe, Describe: describeFaults(exp.Faults, schedule, faults.Horizon)}
	}
	names := exp.Names()
	rs.Variants = make([]VariantRun, len(names))
	if opt.Log != nil {
		batch := "no batch jobs"
		if w != nil {
			batch = fmt.Sprintf("%s under %s", workload, exp.Batch.PolicySpec())
		}
		opt.Log(fmt.Sprintf("%s on %s; batch: %s; variants %s", exp.File, rs.Cluster, batch, strings.Join(names, ", ")))
		if rs.Faults != nil {
			opt.Log("faults: " + rs.Faults.Describe)
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
		return &workloads.Workload{Jobs: append([]workloads.Job(nil), w.Jobs...), Tenants: append([]workloads.Tenant(nil), w.Tenants...), Classes: w.Classes, Datasets: w.Datasets}
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
					Options: runner.Options{CheckInvariants: opt.CheckInvariants, Faults: faults},
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
			cfg := Config{Spec: exp.VariantSpec(i), Cluster: c, Seed: exp.Seed}
			if batchW != nil {
				cfg.Batch = batchW // and its own policy
				if cfg.Policy, err = exp.Batch.PolicySpec().New(); err != nil {
					return err
				}
			}
			on := faults != nil && exp.FaultsOn(i)
			cfg.Sim = func(c *sim.Config) {
				c.CheckInvariants = opt.CheckInvariants
				if on {
					SimFaults(c, faults, schedule)
				}
			}
			res, err := Run(cfg)
			if err != nil {
				return err
			}
			rs.Variants[i] = VariantRun{Name: n, Result: res, Faults: on}
			return nil
		}})
	}
	errs := make([]error, len(jobs))
	done := 0
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
			done++
			if opt.Progress != nil {
				opt.Progress(done, len(jobs))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rs, nil
}

// WriteFolder writes the results folder dir whole (results.WriteFolder):
// the serving files, the plots when plots is set, and run.json (info,
// with the seed and the files filled in), so that a later run may
// replace the folder and a failed one leaves the earlier folder as it
// was.
func (rs *RunSet) WriteFolder(dir string, plots bool, info results.RunInfo) error {
	return results.WriteFolder(dir, func(tmp string) error {
		if err := WriteRunSet(tmp, rs); err != nil {
			return err
		}
		if plots {
			if _, err := WritePlots(filepath.Join(tmp, "plots"), rs); err != nil {
				return err
			}
		}
		info.Seed, info.Files = rs.Seed, Files
		return results.WriteRunJSON(filepath.Join(tmp, "run.json"), info)
	})
}

// describeFaults says what the experiment injects: the failure model and
// the named failures, what was drawn up to the horizon, and the detection
// and retry settings.
func describeFaults(x *Faults, schedule []hwmodel.Fault, horizon hwmodel.Time) string {
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
