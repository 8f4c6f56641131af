package main

import (
	"fmt"
	"github.com/brigadesim/brigade/hwmodel"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

const simUsage = `Usage: brigade sim [flags]

Replays a workload trace on a modelled cluster under each named policy and
prints a comparison table. Results go to --out: summary.json (one object per
policy), jobs.parquet and its twin jobs.csv (one row per job and policy),
attempts.parquet (one row per attempt), timeseries.parquet and
timeseries.csv (per time bucket and policy), tenants.parquet and
tenants.csv (each tenant's GPU share per time bucket and policy, against
its fair share), and run.json (version, seed,
command line, inputs with their sha256); see docs/results.md.
The plots (wait and JCT CDFs, utilisation and queue over time, tenant
shares, wait percentiles, starvation) go to --out/plots/ as PNG and SVG
(docs/report.md); 'brigade report DIR' makes one HTML page of the folder.

With no --trace, it replays the embedded default: a two-day cut of the
Microsoft Philly trace (virtual clusters as tenants) on the philly-sample
cluster, under every built-in policy.`

const simExamples = `  brigade sim
  brigade sim --format openb --nodes openb_node_list_gpu_node.csv --trace openb_pod_list_default.csv --policy fcfs --placement fgd
  brigade sim --trace philly.csv --format philly --cluster philly-like --policy fcfs,fair
  brigade sim --trace jobs.csv --cluster examples/cluster.yaml --policy sjf --backfill --seed 7 --out runs/sjf
  brigade sim --policy priority --priority-weight 2 --wait-weight 0.5
  brigade sim --synthetic 2000 --policy fcfs,sjf --backfill --node-mtbf 30d --node-repair 2h --retry fixed --max-retries 3 --checkpoint-every 5m --checkpoint-cost 10s
  brigade sim --replay live-out --out replay-out
  brigade sim --cluster dgx-h100x64 --synthetic 500 --fail dgx-h100-007@3h+30m --fail dgx-h100-012/gpu3@5h+1h --heartbeat-timeout 30s
`

// simFlags are sim's flags: most fill the runner.Comparison directly.
type simFlags struct {
	c              runner.Comparison
	cluster, nodes string
	replay         string
	pol            policyFlags
	seedSet        bool // --seed was given
	noPlots, quiet bool
	gpuSharing     string
	faults         runner.Faults
	repairDist     string
	repairSigma    float64
	args           []string // the command line after "sim", for run.json
	classes        string   // --classes, read by workloads.ParseClassList
	datasets       string   // --datasets, likewise
}

// addFaultFlags defines the fault injection flags (docs/faults.md),
// filling f; the repair distribution and its sigma apply to nodes and GPUs
// alike (applyRepair).
func addFaultFlags(fs *flagSet, f *runner.Faults, repairDist *string, repairSigma *float64) {
	m := &f.Model
	fs.duration(&m.NodeMTBF, "node-mtbf", "", positive, "inject random node failures: mean time between failures of each node, e.g. 30d (failures draw from their own stream of --seed, so every policy faces the same ones; they are drawn up to 10 × (last submission + longest job))")
	fs.duration(&m.NodeRepair.Mean, "node-repair", "2h", positive, "mean node repair time")
	fs.duration(&m.GPUMTBF, "gpu-mtbf", "", positive, "inject random single-GPU failures: mean time between failures of each GPU")
	fs.duration(&m.GPURepair.Mean, "gpu-repair", "4h", positive, "mean GPU repair time")
	fs.duration(&m.RackMTBF, "rack-mtbf", "", positive, "inject correlated failures: each rack's switch fails with this mean time between failures and takes all the rack's nodes down at once (racks: docs/cluster.md)")
	fs.duration(&m.RackRepair.Mean, "rack-repair", "2h", positive, "mean rack (switch) repair time")
	fs.StringVar(repairDist, "repair-dist", "fixed", "repair time distribution: fixed, exponential or lognormal (with --repair-sigma)")
	fs.Float64Var(repairSigma, "repair-sigma", 1, "log-space standard deviation of lognormal repair times")
	fs.StringVar(&m.Distribution, "failure-dist", "exponential", "time-to-failure distribution: exponential or weibull (mean = the MTBF)")
	fs.Float64Var(&m.WeibullShape, "weibull-shape", 0.7, "Weibull shape k (< 1: early failures more likely, > 1: wear-out)")
	fs.duration(&f.HeartbeatInterval, "heartbeat-interval", "5s", positive, "nodes send a heartbeat every this long")
	fs.duration(&f.HeartbeatTimeout, "heartbeat-timeout", "30s", positive, "a node is declared dead this long after its last heartbeat; its jobs then fail and are retried")
	fs.StringVar(&f.Retry, "retry", "trace", "retry policy after a failure: trace (each job's own retries), none, fixed (--max-retries) or deadline (deadline-aware, capped by --max-retries)")
	fs.IntVar(&f.MaxRetries, "max-retries", 3, "retry cap of --retry fixed and deadline")
	fs.duration(&f.Backoff, "backoff", "0", nonNegative, "exponential back-off: the first retry waits this long, each further one --backoff-factor times longer (0: none)")
	fs.Float64Var(&f.BackoffFactor, "backoff-factor", 2, "back-off growth per retry")
	fs.duration(&f.RestartTime, "restart-time", "0", nonNegative, "time an attempt after a failure spends restarting (loading its checkpoint) before it progresses")
	fs.duration(&f.CheckpointEvery, "checkpoint-every", "0", nonNegative, "jobs whose trace sets no checkpoints checkpoint every this much progress (0: never)")
	fs.duration(&f.CheckpointCost, "checkpoint-cost", "0", nonNegative, "time each checkpoint takes")
}

// checkFaults checks the fault settings the flags filled, with the
// repair distribution applied to nodes and GPUs.
func checkFaults(f *runner.Faults, repairDist string, repairSigma float64) error {
	m := &f.Model
	m.NodeRepair.Kind, m.GPURepair.Kind, m.RackRepair.Kind = repairDist, repairDist, repairDist
	m.NodeRepair.Sigma, m.GPURepair.Sigma, m.RackRepair.Sigma = repairSigma, repairSigma, repairSigma
	if err := m.Validate(); err != nil {
		return usageError{err}
	}
	switch f.Retry {
	case "trace", "none", "fixed", "deadline":
	default:
		return usageError{fmt.Errorf("--retry: want trace, none, fixed or deadline, got %q", f.Retry)}
	}
	if f.MaxRetries < 0 {
		return usageError{fmt.Errorf("--max-retries must be >= 0, got %d", f.MaxRetries)}
	}
	if !(f.BackoffFactor >= 1) || math.IsInf(f.BackoffFactor, 0) {
		return usageError{fmt.Errorf("--backoff-factor must be >= 1, got %g", f.BackoffFactor)}
	}
	if f.CheckpointCost > 0 && f.CheckpointEvery == 0 {
		return usageError{fmt.Errorf("--checkpoint-cost needs --checkpoint-every")}
	}
	return nil
}

func runSim(args []string, stdout, stderr io.Writer) error {
	f, err := parseSim(args, stdout)
	if err != nil {
		return err
	}
	return simulate(f, stdout, stderr)
}

// parseSim reads sim's flags; its error is what runSim returns (help
// included).
func parseSim(args []string, stdout io.Writer) (simFlags, error) {
	var f simFlags
	c := &f.c
	fs := newFlagSet("sim", simUsage, simExamples)
	fs.StringVar(&c.Trace, "trace", "", "workload trace `file` (.gz is read transparently); default: the embedded Philly sample")
	fs.StringVar(&f.replay, "replay", "", "replay the jobs of a results `folder` (of brigade sim or brigade live: jobs.parquet or jobs.csv) with their measured run times, under --policy or else the folder's policies, on --cluster or else the cluster its run.json records; see docs/replay.md")
	fs.StringVar(&c.Format, "format", workloads.AutoFormat, "trace format: "+strings.Join(workloads.FormatNames(), ", ")+" (see docs/trace-format.md), or auto to tell by the header")
	fs.IntVar(&c.Synthetic, "synthetic", 0, "instead of a trace, generate this many `jobs` from --seed (Poisson arrivals, lognormal durations of median 19m capped at 2d, Philly-like GPU counts, 4 weighted tenants, priorities, noisy estimates), on --cluster, by default "+runner.DefaultCluster(false, 1))
	fs.StringVar(&f.classes, "classes", "", "give each job a class for --speeds, drawn (from --seed) from `list` CLASS[=WEIGHT],... (weights default to 1), e.g. resnet50,bert=2,llama2-70b-lora; for --synthetic or a trace without a class column")
	fs.StringVar(&f.datasets, "datasets", "", "give each job a dataset of --cluster's (docs/cluster.md), drawn (from --seed) from `list` NAME[=WEIGHT],...; for --synthetic or a trace without a dataset column")
	fs.Float64Var(&c.Load, "load", 0, "offered load: space arrivals (keeping their order and durations) so the jobs' GPU-time is this multiple of cluster GPUs × arrival window; default 0.9 with --synthetic, as recorded for traces")
	fs.StringVar(&f.cluster, "cluster", "", fmt.Sprintf("cluster preset name, YAML/JSON `spec` file (docs/cluster.md) or Alibaba openb node list (told by its header); default %s for the embedded trace, %s with --synthetic, %s for a trace file",
		runner.DefaultCluster(false, 0), runner.DefaultCluster(false, 1), runner.DefaultCluster(true, 0)))
	fs.StringVar(&f.nodes, "nodes", "", "the same as --cluster, for an openb node list `file` (openb_node_list_gpu_node.csv)")
	addPolicyFlags(fs, &f.pol, "comma-separated policy `specs` to compare (default: "+strings.Join(defaultPolicies(), ",")+"; grammar below)", nil)
	fs.StringVar(&f.pol.slurmConf, "slurm-conf", "", "also run the multifactor policy that this slurm.conf `file`'s priority keys (PriorityWeightAge, PriorityDecayHalfLife, ...) configure, after the --policy specs, or alone without --policy; other keys are ignored (see docs/policies.md)")
	fs.duration(&c.MIGReconfigTime, "mig-reconfig-time", DefaultMIGReconfigTime, nonNegative, "how long a MIG reconfiguration keeps its GPU's new instances unusable (an assumption; see docs/mig.md)")
	fs.duration(&c.StartupDelay, "startup-delay", "0", nonNegative, "time added to every attempt before it makes progress: a process and its CUDA context starting (3.2-4.8 s measured for PyTorch on an H200; see docs/replay.md)")
	fs.duration(&c.PreemptRestart, "preempt-restart", "0", nonNegative, "time added to every attempt after a preemption before it makes progress (rescheduling, reloading), counted as lost")
	fs.BoolVar(&c.SaveOnPreempt, "save-on-preempt", false, "a preempted job saves all its progress as it stops (default: it keeps only what its completed checkpoints saved, --checkpoint-every)")
	fs.duration(&c.Interval, "interval", "0", nonNegative, "decision grid: call the policy only at multiples of this (the Pollux artifact's 60s), so what happens between two points waits for the next one (0: at every event; see docs/pollux.md)")
	fs.StringVar(&c.AppsDir, "apps", "", "application model `folder` (apps.csv, linear.csv, and per application placements.csv and validation-<batch>.csv; docs/pollux.md) that times the jobs of a pollux trace, epoch by epoch at the pace of their placement")
	fs.StringVar(&c.Speeds, "speeds", "", "GPU-model speeds: `table` is a speed table file (class,gpu_model,speed,source; see docs/speeds.md) or default for the one Brigade ships; a job then runs on each model at its class's speed there relative to the model its duration was measured on (default: every model runs every job at its measured pace)")
	fs.StringVar(&c.SpeedReference, "speed-reference", "", "with --speeds: the GPU `model` the trace's durations were measured on, for jobs whose trace does not say (measured_on); default: the cluster's most common model")
	fs.StringVar(&f.gpuSharing, "gpu-sharing", "none", "how fractional jobs on one GPU share it: none (each runs at full speed; traces' durations already include any slow-down) or processor (they share its compute in proportion to their demand, gpu_demand_milli else gpu_milli; see docs/replay.md)")
	addFaultFlags(fs, &f.faults, &f.repairDist, &f.repairSigma)
	fs.StringArrayVar(&c.Fail, "fail", nil, "inject one failure, `NODE@TIME+REPAIR` or NODE/gpuN@TIME+REPAIR, e.g. node-12@3h+30m (repeatable)")
	fs.StringVar(&c.FailTrace, "fail-trace", "", "inject the failures of a CSV `file` time_s,node,gpu,duration_s (gpu empty: the whole node)")
	fs.StringVar(&c.Kueue, "kueue", "", "Kueue manifest `file` (ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass; docs/kueue.md) that --policy kueue admits by; each job goes to the LocalQueue its tenant names")
	fs.StringVar(&c.TenantWeights, "tenant-weights", "", "CSV `file` of tenant,weight for fair share (default: every tenant weighs 1)")
	fs.Uint64Var(&c.Seed, "seed", 1, "root seed of the run, recorded in summary.json; seeded parts (synthetic workloads, randomised policies) derive their streams from it")
	fs.StringVar(&c.Out, "out", "brigade-out", "results `directory`, written whole: a new one, an empty one or an earlier Brigade results folder, replaced only once the run has succeeded")
	fs.duration(&c.Bucket, "bucket", "1h", positive, "time-series bucket width, e.g. 10m, 1h")
	fs.duration(&c.StarvationThreshold, "starvation-threshold", "", positive, "wait above which a job counts as starved (default: max(10 × median wait over all policies compared, 1h))")
	fs.BoolVar(&f.noPlots, "no-plots", false, "do not draw the plots (PNG and SVG) into --out/plots/")
	fs.BoolVar(&c.CheckInvariants, "check-invariants", false, "re-check every engine invariant after every event (slow; for debugging)")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors, warnings and the table (no progress bar either; the bar shows only when stderr is a terminal)")
	f.args = args
	if err := fs.parse(args, stdout); err != nil {
		return f, err
	}
	f.seedSet = fs.Changed("seed")
	if fs.Changed("synthetic") && c.Synthetic <= 0 {
		return f, usageError{fmt.Errorf("--synthetic: want a positive number of jobs, got %d", c.Synthetic)}
	}
	return f, nil
}

// simPlotter draws a run's plots into the folder being written; tests
// replace it with one that fails.
var simPlotter = simPlots

// largeRunGOGC is the collector's GOGC for a comparison of at least
// largeRunRecords job records (jobs × policies), unless the environment
// sets one. Below that the default's CPU is worth its memory: the Philly
// trace under four policies (329,000 records) takes about a tenth more
// CPU at GOGC 50 for 30 MB less.
const (
	largeRunGOGC    = 50
	largeRunRecords = 1_000_000
)

// simulate is brigade sim once its flags are read: the comparison they
// ask for, one call that runs it and writes the results folder, and what
// is printed.
func simulate(f simFlags, stdout, stderr io.Writer) error {
	c, err := f.comparison(stderr)
	if err != nil {
		return err
	}
	var bar *progress
	c.Started = func(s *runner.Simulation) {
		if s.Jobs*len(s.Policies) >= largeRunRecords && os.Getenv("GOGC") == "" {
			// A large comparison's heap is mostly live (the workload, the
			// engines' state): the collector's default lets as much again
			// pile up as garbage before it collects. Half as much costs
			// no measurable time at 1,000,000 jobs and about a quarter of
			// the peak memory (docs/speed.md, "Memory").
			debug.SetGCPercent(largeRunGOGC)
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "brigade: %s from %s on %s, policies %s\n", hwmodel.Plural(s.Jobs, "job", "jobs"), s.WorkloadName, s.ClusterName, joinSpecs(s.Policies))
		}
		bar = newProgress(stderr, f.quiet, "brigade sim", "jobs", s.Jobs*len(s.Policies))
	}
	c.Progress = func(done, total int) { bar.Set(done) }
	var writing *progress
	c.Writing = func(done, total int) {
		if writing == nil {
			bar.Done()
			writing = newProgress(stderr, f.quiet, "brigade sim: writing "+c.Out, "files", total)
		}
		writing.Set(done)
	}
	s, err := runner.Simulate(c)
	bar.Done()
	writing.Done()
	if err != nil {
		return err
	}
	if err := results.FormatTable(stdout, s.Summaries()); err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade: wrote run.json, %s to %s\n", strings.Join(s.Files, ", "), c.Out)
	}
	return nil
}

// comparison is the runner.Comparison the flags ask for: --replay's
// trace, the cluster, the policies, the engine and fault settings, checked
// as far as they can be without the workload.
func (f simFlags) comparison(stderr io.Writer) (runner.Comparison, error) {
	c := f.c
	c.Command = append([]string{"brigade", "sim"}, f.args...)
	c.Parallel = runtime.GOMAXPROCS(0)
	// Warnings are about the input, so --quiet keeps them.
	c.Warn = func(msg string) { fmt.Fprintf(stderr, "brigade: warning: %s\n", msg) }
	if c.Synthetic > 0 && c.Trace != "" {
		return c, usageError{fmt.Errorf("--synthetic and --trace are alternatives; give one")}
	}
	if f.classes != "" {
		var err error
		if c.Classes, c.ClassWeights, err = workloads.ParseClassList(f.classes); err != nil {
			return c, usageError{fmt.Errorf("--classes: %w", err)}
		}
	}
	if f.datasets != "" {
		var err error
		if c.Datasets, c.DatasetWeights, err = workloads.ParseClassList(f.datasets); err != nil {
			return c, usageError{fmt.Errorf("--datasets: %w", err)}
		}
	}
	if !(c.Load >= 0) || math.IsInf(c.Load, 0) {
		return c, usageError{fmt.Errorf("--load must be positive, got %g", c.Load)}
	}
	if f.nodes != "" {
		if f.cluster != "" {
			return c, usageError{fmt.Errorf("--nodes and --cluster are the same thing; give one")}
		}
		f.cluster = f.nodes
	}
	c.Cluster = f.cluster
	if f.replay != "" {
		if c.Trace != "" || c.Synthetic > 0 {
			return c, usageError{fmt.Errorf("--replay replaces --trace and --synthetic; give one")}
		}
		if c.Load != 0 {
			return c, usageError{fmt.Errorf("--replay keeps the recorded submit times; it takes no --load")}
		}
		source := ""
		if len(f.pol.specs) == 1 {
			source = f.pol.specs[0]
		}
		trace, pols, cluster, skipped, err := replayTrace(f.replay, source)
		if err != nil {
			return c, err
		}
		if skipped > 0 && c.Warn != nil {
			c.Warn(fmt.Sprintf("%s of %s never ran there and %s left out of the replay", hwmodel.Plural(skipped, "job", "jobs"), f.replay, map[bool]string{true: "is", false: "are"}[skipped == 1]))
		}
		if len(f.pol.specs) == 0 {
			f.pol.specs = pols
		}
		if seed, ok := recordedSeed(f.replay); ok && !f.seedSet {
			// The seed the folder's policies drew from (random
			// placement's stream): 0 for a live run.
			c.Seed = seed
		}
		if c.Cluster == "" {
			if cluster == "" {
				return c, usageError{fmt.Errorf("--replay %s: the folder has no run.json naming its cluster; name one with --cluster", f.replay)}
			}
			c.Cluster = cluster
		}
		c.Generated = &runner.GeneratedTrace{File: "replay-jobs.csv", Data: trace}
	}
	var err error
	if c.Policies, err = f.pol.resolve(defaultPolicies()); err != nil {
		return c, err
	}
	switch f.gpuSharing {
	case "none":
	case "processor":
		c.ProcessorSharing = true
	default:
		return c, usageError{fmt.Errorf("--gpu-sharing: want none or processor, got %q", f.gpuSharing)}
	}
	faults := f.faults
	if err := checkFaults(&faults, f.repairDist, f.repairSigma); err != nil {
		return c, err
	}
	c.Faults = &faults
	if !f.noPlots {
		c.Extra = simPlotter
	}
	return c, nil
}

// defaultPolicies lists the orders brigade sim compares by default, in
// the order people compare them: the classic four. The seed order is left
// out: it weighs data locality, which a run without datasets does not
// have, and then it orders as priority does.
func defaultPolicies() []string {
	return []string{"fcfs", "sjf", "priority", "fair"}
}

// DefaultMIGReconfigTime is --mig-reconfig-time's default. It is an
// assumption, not a measurement: creating or destroying a GPU instance
// with nvidia-smi takes seconds, but repartitioning a GPU in a cluster
// (NVIDIA's mig-parted or the Kubernetes MIG manager) also stops the GPU's
// clients and restarts the device plugin, which takes tens of seconds or
// more. docs/mig.md says the same.
const DefaultMIGReconfigTime = "30s"
