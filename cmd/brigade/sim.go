package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

const simUsage = `Usage: brigade sim [flags]

Replays a workload trace on a modelled cluster under each named policy and
prints a comparison table. Results go to --out: summary.json (one object per
policy), jobs.csv (one row per job and policy) and timeseries.csv.

With no --trace, it replays the embedded default: a two-day cut of the
Microsoft Philly trace (virtual clusters as tenants) on the philly-sample
cluster, under every built-in policy.`

const simExamples = `  brigade sim
  brigade sim --format openb --nodes openb_node_list_gpu_node.csv --trace openb_pod_list_default.csv --policy fcfs --placement fgd
  brigade sim --trace philly.csv --format philly --cluster philly-like --policy fcfs,fair
  brigade sim --trace jobs.csv --cluster examples/cluster.yaml --policy sjf --backfill --seed 7 --out runs/sjf
  brigade sim --policy priority --priority-weight 2 --wait-weight 0.5
`

type simFlags struct {
	synthetic                                  int
	load                                       float64
	trace, format, cluster, tenantWeights, out string
	nodes                                      string
	policies                                   []string
	placement                                  string
	backfill                                   bool
	backfillDepth                              int
	priorityWeight, waitWeight                 float64
	oracle                                     bool
	seed                                       uint64
	bucket, starvation                         string
	checkInvariants, quiet                     bool
	mig, migReconfigTime                       string
}

func runSim(args []string, stdout, stderr io.Writer) error {
	var f simFlags
	fs := newFlagSet("sim", simUsage, simExamples)
	fs.StringVar(&f.trace, "trace", "", "workload trace `file` (.gz is read transparently); default: the embedded Philly sample")
	fs.StringVar(&f.format, "format", "auto", "trace format: philly, openb, brigade (see docs/trace-format.md), or auto to tell by the header")
	fs.IntVar(&f.synthetic, "synthetic", 0, "instead of a trace, generate this many `jobs` from --seed (Poisson arrivals, lognormal durations of median 19m capped at 2d, Philly-like GPU counts, 4 weighted tenants, priorities, noisy estimates)")
	fs.Float64Var(&f.load, "load", 0, "offered load: space arrivals (keeping their order and durations) so the jobs' GPU-time is this multiple of cluster GPUs × arrival window; default 0.9 with --synthetic, as recorded for traces")
	fs.StringVar(&f.cluster, "cluster", "", "cluster preset name, YAML/JSON `spec` file (docs/cluster.md) or Alibaba openb node list (told by its header); default philly-sample for the embedded trace, philly-like otherwise")
	fs.StringVar(&f.nodes, "nodes", "", "the same as --cluster, for an openb node list `file` (openb_node_list_gpu_node.csv)")
	fs.StringSliceVar(&f.policies, "policy", nil, "comma-separated policies to compare (default: all of "+strings.Join(policies.Names(), ",")+")")
	fs.StringVar(&f.placement, "placement", "firstfit", "GPU placement: one of "+strings.Join(policies.PlacementNames(), ", ")+" (fgd's target workload is the trace's requests; random draws from --seed)")
	fs.BoolVar(&f.backfill, "backfill", false, "EASY backfill: let later jobs start if they do not delay the first blocked job's reservation")
	fs.IntVar(&f.backfillDepth, "backfill-depth", 1000, "most queued jobs backfill examines per scheduling point")
	fs.Float64Var(&f.priorityWeight, "priority-weight", 1, "priority policy: weight of the job's priority in its score")
	fs.Float64Var(&f.waitWeight, "wait-weight", 1, "priority policy: score gained per hour of waiting (aging)")
	fs.BoolVar(&f.oracle, "oracle", false, "let SJF and backfill use true job durations instead of runtime estimates")
	fs.StringVar(&f.mig, "mig", "static", "MIG layouts: static (as the cluster spec gives them), dynamic (a policy may repartition MIG GPUs for queued MIG jobs, never destroying busy instances) or convert (dynamic, and idle whole GPUs may become MIG GPUs and back); see docs/mig.md")
	fs.StringVar(&f.migReconfigTime, "mig-reconfig-time", DefaultMIGReconfigTime, "how long a MIG reconfiguration keeps its GPU's new instances unusable (an assumption; see docs/mig.md)")
	fs.StringVar(&f.tenantWeights, "tenant-weights", "", "CSV `file` of tenant,weight for fair share (default: every tenant weighs 1)")
	fs.Uint64Var(&f.seed, "seed", 1, "root seed of the run, recorded in summary.json; seeded parts (synthetic workloads, randomised policies) derive their streams from it")
	fs.StringVar(&f.out, "out", "brigade-out", "results `directory` (created if missing)")
	fs.StringVar(&f.bucket, "bucket", "1h", "time-series bucket `width`, e.g. 10m, 1h")
	fs.StringVar(&f.starvation, "starvation-threshold", "", "`wait` above which a job counts as starved (default: max(10 × median wait over all policies compared, 1h))")
	fs.BoolVar(&f.checkInvariants, "check-invariants", false, "re-check every engine invariant after every event (slow; for debugging)")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and the table")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	return simulate(f, stdout, stderr)
}

func simulate(f simFlags, stdout, stderr io.Writer) error {
	bucket, err := hwmodel.ParseDuration(f.bucket)
	if err != nil || bucket <= 0 {
		return usageError{fmt.Errorf("--bucket: %v", orPositive(err))}
	}
	var starvation hwmodel.Time
	if f.starvation != "" {
		if starvation, err = hwmodel.ParseDuration(f.starvation); err != nil || starvation <= 0 {
			return usageError{fmt.Errorf("--starvation-threshold: %v", orPositive(err))}
		}
	}
	names := f.policies
	if len(names) == 0 {
		names = defaultPolicies()
	}
	opts := policies.Options{
		Placement: f.placement, Backfill: f.backfill, BackfillDepth: f.backfillDepth,
		PriorityWeight: f.priorityWeight, WaitWeightPerHour: f.waitWeight, UseOracle: f.oracle,
	}
	reconfigTime, err := migFlags(f.mig, f.migReconfigTime, &opts)
	if err != nil {
		return err
	}
	if !slices.Contains(policies.PlacementNames(), f.placement) {
		return usageError{fmt.Errorf("unknown placement %q (known: %s)", f.placement, strings.Join(policies.PlacementNames(), ", "))}
	}
	check := opts
	check.Placement = "" // fgd needs the trace's requests, read below
	for _, n := range names {
		if _, err := policies.New(n, check); err != nil {
			return usageError{err}
		}
	}
	if f.nodes != "" {
		if f.cluster != "" {
			return usageError{fmt.Errorf("--nodes and --cluster are the same thing; give one")}
		}
		f.cluster = f.nodes
	}
	var (
		w            *workloads.Workload
		workloadName string
	)
	if f.cluster == "" {
		switch {
		case f.synthetic > 0:
			f.cluster = "dgx-h100x64"
		case f.trace == "":
			f.cluster = "philly-sample"
		default:
			f.cluster = "philly-like"
		}
	}
	spec, err := hwmodel.ResolveCluster(f.cluster)
	if err != nil {
		return err
	}
	switch {
	case f.synthetic > 0 && f.trace != "":
		return usageError{fmt.Errorf("--synthetic and --trace are alternatives; give one")}
	case f.synthetic > 0:
		w, workloadName, err = synthetic(f, spec)
	case f.trace == "":
		w, err = workloads.Default()
		workloadName = workloads.DefaultName
	default:
		format := f.format
		if format == "auto" {
			if format, err = detectFormat(f.trace); err != nil {
				return err
			}
		}
		w, err = workloads.ReadFile(f.trace, format)
		workloadName = filepath.Base(f.trace)
	}
	if err != nil {
		return err
	}
	if f.load != 0 && f.synthetic == 0 {
		c, err := spec.Build()
		if err != nil {
			return err
		}
		before := w.OfferedLoad(c.TotalGPUs())
		if err := w.ScaleToLoad(c.TotalGPUs(), f.load); err != nil {
			return usageError{fmt.Errorf("--load: %w", err)}
		}
		workloadName += fmt.Sprintf(", arrivals rescaled from load %.3g to %g", before, f.load)
	}
	if f.tenantWeights != "" {
		weights, err := workloads.ReadTenantWeights(f.tenantWeights)
		if err != nil {
			return err
		}
		for _, t := range weights {
			if !slices.ContainsFunc(w.Tenants, func(x workloads.Tenant) bool { return x.Name == t.Name }) {
				fmt.Fprintf(stderr, "brigade: warning: %s names tenant %q, which has no jobs in the trace\n", f.tenantWeights, t.Name)
			}
		}
		if err := w.ApplyTenantWeights(weights); err != nil {
			return err
		}
	}
	w.FillEstimates()
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	target := policies.TargetFromRequests(reqs)
	opts.Placer = policies.PlacerConfig{Seed: f.seed, Target: target}
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade: %d jobs from %s on %s, policies %s\n", len(w.Jobs), workloadName, spec.Name, strings.Join(names, ","))
	}
	runs, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: workloadName,
		NewCluster: spec.Build, ClusterName: spec.Name,
		Policies: names, Options: opts, Seed: f.seed,
		Bucket: bucket, StarvationThreshold: starvation,
		CheckInvariants: f.checkInvariants,
		FragTarget:      &target,
		Parallel:        runtime.GOMAXPROCS(0),
		MIGReconfigTime: reconfigTime,
	})
	if err != nil {
		return err
	}
	if !f.quiet {
		warnUnsatisfiable(stderr, w, runs[0].Engine)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	if err := runner.Write(f.out, runs); err != nil {
		return err
	}
	sums := make([]results.Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
	}
	if err := results.FormatTable(stdout, sums); err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade: wrote summary.json, jobs.csv and timeseries.csv to %s\n", f.out)
	}
	return nil
}

// synthetic generates --synthetic jobs at --load on the cluster
// (runner.SyntheticAtLoad).
func synthetic(f simFlags, spec *hwmodel.ClusterSpec) (*workloads.Workload, string, error) {
	if f.load == 0 {
		f.load = 0.9
	}
	if !(f.load > 0) {
		return nil, "", usageError{fmt.Errorf("--load must be positive, got %g", f.load)}
	}
	c, err := spec.Build()
	if err != nil {
		return nil, "", err
	}
	w, err := runner.SyntheticAtLoad(f.synthetic, f.seed, c.TotalGPUs(), f.load)
	if err != nil {
		return nil, "", err
	}
	return w, fmt.Sprintf("synthetic: %d jobs, load %g, seed %d", f.synthetic, f.load, f.seed), nil
}

// warnUnsatisfiable tells the user about jobs no node of the cluster could
// ever hold: the engine fails them at submission, and a silent failure would
// look like a policy's doing. Every policy sees the same ones.
func warnUnsatisfiable(stderr io.Writer, w *workloads.Workload, res *sim.Result) {
	n, example := 0, ""
	for i, o := range res.Jobs {
		if strings.HasPrefix(o.Reason, sim.ReasonUnsatisfiable) {
			if n == 0 {
				example = w.Jobs[i].Name + ": " + o.Reason
			}
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(stderr, "brigade: warning: %d jobs can never fit this cluster and were failed at submission, e.g. %s\n", n, example)
	}
}

// defaultPolicies lists every built-in policy, the classic ones first in
// the order people compare them.
func defaultPolicies() []string {
	first := []string{"fcfs", "sjf", "priority", "fair"}
	out := append([]string(nil), first...)
	for _, n := range policies.Names() {
		if !slices.Contains(first, n) {
			out = append(out, n)
		}
	}
	return out
}

func orPositive(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("must be positive")
}

// detectFormat tells a trace's format from its header line.
func detectFormat(path string) (string, error) {
	if strings.HasSuffix(path, ".gz") {
		return "", usageError{fmt.Errorf("--format auto cannot look inside %s; name the format with --format", path)}
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "timestamp,duration,num_gpus"):
			return "philly", nil
		case strings.HasPrefix(line, "name,cpu_milli,memory_mib,num_gpu"):
			return "openb", nil
		case strings.Contains(line, "submit_s"):
			return "brigade", nil
		}
		return "", usageError{fmt.Errorf("%s:1: cannot tell the trace format from header %q; name it with --format philly|openb|brigade", path, line)}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: the file is empty", path)
}

// DefaultMIGReconfigTime is --mig-reconfig-time's default. It is an
// assumption, not a measurement: creating or destroying a GPU instance
// with nvidia-smi takes seconds, but repartitioning a GPU in a cluster
// (NVIDIA's mig-parted or the Kubernetes MIG manager) also stops the GPU's
// clients and restarts the device plugin, which takes tens of seconds or
// more. docs/mig.md says the same.
const DefaultMIGReconfigTime = "30s"

// migFlags reads --mig and --mig-reconfig-time into opts and returns the
// reconfiguration time.
func migFlags(mode, reconfig string, opts *policies.Options) (hwmodel.Time, error) {
	switch mode {
	case "static":
	case "dynamic":
		opts.MIGReconfigure = true
	case "convert":
		opts.MIGReconfigure, opts.MIGConvertWhole = true, true
	default:
		return 0, usageError{fmt.Errorf("--mig: want static, dynamic or convert, got %q", mode)}
	}
	t, err := hwmodel.ParseDuration(reconfig)
	if err != nil || t < 0 {
		if err == nil {
			err = fmt.Errorf("must be >= 0")
		}
		return 0, usageError{fmt.Errorf("--mig-reconfig-time: %v", err)}
	}
	return t, nil
}
