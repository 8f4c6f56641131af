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

type simFlags struct {
	synthetic                                  int
	load                                       float64
	trace, format, cluster, tenantWeights, out string
	replay                                     string
	nodes                                      string
	pol                                        policyFlags
	seed                                       uint64
	seedSet                                    bool // --seed was given
	bucket, starvation                         string
	checkInvariants, quiet                     bool
	noPlots                                    bool
	migReconfigTime                            string
	startupDelay, gpuSharing                   string
	faults                                     faultFlags
	args                                       []string // the command line after "sim", for run.json
}

// faultFlags are the fault injection flags of sim (docs/faults.md).
type faultFlags struct {
	nodeMTBF, nodeRepair, gpuMTBF, gpuRepair string
	repairDist, dist                         string
	repairSigma, weibullShape                float64
	fail                                     []string
	failTrace                                string
	hbInterval, hbTimeout                    string
	retry                                    string
	maxRetries                               int
	backoff                                  string
	backoffFactor                            float64
	restart, ckptEvery, ckptCost             string
}

func addFaultFlags(fs *flagSet, f *faultFlags) {
	fs.StringVar(&f.nodeMTBF, "node-mtbf", "", "inject random node failures: mean `time` between failures of each node, e.g. 30d (failures draw from their own stream of --seed, so every policy faces the same ones; they are drawn up to 10 × (last submission + longest job))")
	fs.StringVar(&f.nodeRepair, "node-repair", "2h", "mean node repair `time`")
	fs.StringVar(&f.gpuMTBF, "gpu-mtbf", "", "inject random single-GPU failures: mean `time` between failures of each GPU")
	fs.StringVar(&f.gpuRepair, "gpu-repair", "4h", "mean GPU repair `time`")
	fs.StringVar(&f.repairDist, "repair-dist", "fixed", "repair time distribution: fixed, exponential or lognormal (with --repair-sigma)")
	fs.Float64Var(&f.repairSigma, "repair-sigma", 1, "log-space standard deviation of lognormal repair times")
	fs.StringVar(&f.dist, "failure-dist", "exponential", "time-to-failure distribution: exponential or weibull (mean = the MTBF)")
	fs.Float64Var(&f.weibullShape, "weibull-shape", 0.7, "Weibull shape k (< 1: early failures more likely, > 1: wear-out)")
	fs.StringArrayVar(&f.fail, "fail", nil, "inject one failure, `NODE@TIME+REPAIR` or NODE/gpuN@TIME+REPAIR, e.g. node-12@3h+30m (repeatable)")
	fs.StringVar(&f.failTrace, "fail-trace", "", "inject the failures of a CSV `file` time_s,node,gpu,duration_s (gpu empty: the whole node)")
	fs.StringVar(&f.hbInterval, "heartbeat-interval", "5s", "nodes send a heartbeat every `interval`")
	fs.StringVar(&f.hbTimeout, "heartbeat-timeout", "30s", "a node is declared dead this `long` after its last heartbeat; its jobs then fail and are retried")
	fs.StringVar(&f.retry, "retry", "trace", "retry policy after a failure: trace (each job's own retries), none, fixed (--max-retries) or deadline (deadline-aware, capped by --max-retries)")
	fs.IntVar(&f.maxRetries, "max-retries", 3, "retry cap of --retry fixed and deadline")
	fs.StringVar(&f.backoff, "backoff", "0", "exponential back-off: the first retry waits this `long`, each further one --backoff-factor times longer (0: none)")
	fs.Float64Var(&f.backoffFactor, "backoff-factor", 2, "back-off growth per retry")
	fs.StringVar(&f.restart, "restart-time", "0", "`time` an attempt after a failure spends restarting (loading its checkpoint) before it progresses")
	fs.StringVar(&f.ckptEvery, "checkpoint-every", "0", "jobs whose trace sets no checkpoints checkpoint every this much `progress` (0: never)")
	fs.StringVar(&f.ckptCost, "checkpoint-cost", "0", "`time` each checkpoint takes")
}

// faultsFromFlags reads the fault flags; c resolves node names. It returns
// nil when the flags inject no failure and change no fault setting.
func faultsFromFlags(f faultFlags, c *hwmodel.Cluster) (*runner.Faults, error) {
	dur := func(name, v string, positive bool) (hwmodel.Time, error) {
		if v == "" {
			return 0, nil
		}
		t, err := hwmodel.ParseDuration(v)
		if err == nil && (t < 0 || positive && t == 0) {
			err = fmt.Errorf("must be %s", map[bool]string{true: "positive", false: ">= 0"}[positive])
		}
		if err != nil {
			return 0, usageError{fmt.Errorf("--%s: %v", name, err)}
		}
		return t, nil
	}
	var out runner.Faults
	var err error
	m := &out.Model
	if m.NodeMTBF, err = dur("node-mtbf", f.nodeMTBF, true); err != nil {
		return nil, err
	}
	if m.GPUMTBF, err = dur("gpu-mtbf", f.gpuMTBF, true); err != nil {
		return nil, err
	}
	if m.NodeRepair.Mean, err = dur("node-repair", f.nodeRepair, true); err != nil {
		return nil, err
	}
	if m.GPURepair.Mean, err = dur("gpu-repair", f.gpuRepair, true); err != nil {
		return nil, err
	}
	m.NodeRepair.Kind, m.GPURepair.Kind = f.repairDist, f.repairDist
	m.NodeRepair.Sigma, m.GPURepair.Sigma = f.repairSigma, f.repairSigma
	m.Distribution, m.WeibullShape = f.dist, f.weibullShape
	if err := m.Validate(); err != nil {
		return nil, usageError{err}
	}
	for _, s := range f.fail {
		x, err := hwmodel.ParseFault(s, c)
		if err != nil {
			return nil, usageError{fmt.Errorf("--fail: %w", err)}
		}
		out.Named = append(out.Named, x)
	}
	if f.failTrace != "" {
		xs, err := hwmodel.ReadFaultTrace(f.failTrace, c)
		if err != nil {
			return nil, err
		}
		out.Named = append(out.Named, xs...)
	}
	if out.HeartbeatInterval, err = dur("heartbeat-interval", f.hbInterval, true); err != nil {
		return nil, err
	}
	if out.HeartbeatTimeout, err = dur("heartbeat-timeout", f.hbTimeout, true); err != nil {
		return nil, err
	}
	switch f.retry {
	case "trace", "none", "fixed", "deadline":
	default:
		return nil, usageError{fmt.Errorf("--retry: want trace, none, fixed or deadline, got %q", f.retry)}
	}
	if f.maxRetries < 0 {
		return nil, usageError{fmt.Errorf("--max-retries must be >= 0, got %d", f.maxRetries)}
	}
	if !(f.backoffFactor >= 1) {
		return nil, usageError{fmt.Errorf("--backoff-factor must be >= 1, got %g", f.backoffFactor)}
	}
	out.Retry, out.MaxRetries, out.BackoffFactor = f.retry, f.maxRetries, f.backoffFactor
	if out.Backoff, err = dur("backoff", f.backoff, false); err != nil {
		return nil, err
	}
	if out.RestartTime, err = dur("restart-time", f.restart, false); err != nil {
		return nil, err
	}
	if out.CheckpointEvery, err = dur("checkpoint-every", f.ckptEvery, false); err != nil {
		return nil, err
	}
	if out.CheckpointCost, err = dur("checkpoint-cost", f.ckptCost, false); err != nil {
		return nil, err
	}
	if out.CheckpointCost > 0 && out.CheckpointEvery == 0 {
		return nil, usageError{fmt.Errorf("--checkpoint-cost needs --checkpoint-every")}
	}
	return &out, nil
}

func runSim(args []string, stdout, stderr io.Writer) error {
	var f simFlags
	fs := newFlagSet("sim", simUsage, simExamples)
	fs.StringVar(&f.trace, "trace", "", "workload trace `file` (.gz is read transparently); default: the embedded Philly sample")
	fs.StringVar(&f.replay, "replay", "", "replay the jobs of a results `folder` (of brigade sim or brigade live: jobs.parquet or jobs.csv) with their measured run times, under --policy or else the folder's policies, on --cluster or else the cluster its run.json records; see docs/replay.md")
	fs.StringVar(&f.format, "format", "auto", "trace format: philly, openb, brigade (see docs/trace-format.md), or auto to tell by the header")
	fs.IntVar(&f.synthetic, "synthetic", 0, "instead of a trace, generate this many `jobs` from --seed (Poisson arrivals, lognormal durations of median 19m capped at 2d, Philly-like GPU counts, 4 weighted tenants, priorities, noisy estimates)")
	fs.Float64Var(&f.load, "load", 0, "offered load: space arrivals (keeping their order and durations) so the jobs' GPU-time is this multiple of cluster GPUs × arrival window; default 0.9 with --synthetic, as recorded for traces")
	fs.StringVar(&f.cluster, "cluster", "", "cluster preset name, YAML/JSON `spec` file (docs/cluster.md) or Alibaba openb node list (told by its header); default philly-sample for the embedded trace, philly-like otherwise")
	fs.StringVar(&f.nodes, "nodes", "", "the same as --cluster, for an openb node list `file` (openb_node_list_gpu_node.csv)")
	addPolicyFlags(fs, &f.pol, "comma-separated policy `specs` to compare (default: "+strings.Join(defaultPolicies(), ",")+"; grammar below)", nil)
	fs.StringVar(&f.migReconfigTime, "mig-reconfig-time", DefaultMIGReconfigTime, "how long a MIG reconfiguration keeps its GPU's new instances unusable (an assumption; see docs/mig.md)")
	fs.StringVar(&f.startupDelay, "startup-delay", "0", "`time` added to every attempt before it makes progress: a process and its CUDA context starting (3.2-4.8 s measured for PyTorch on an H200; see docs/replay.md)")
	fs.StringVar(&f.gpuSharing, "gpu-sharing", "none", "how fractional jobs on one GPU share it: none (each runs at full speed; traces' durations already include any slow-down) or processor (they share its compute in proportion to their demand, gpu_demand_milli else gpu_milli; see docs/replay.md)")
	addFaultFlags(fs, &f.faults)
	fs.StringVar(&f.tenantWeights, "tenant-weights", "", "CSV `file` of tenant,weight for fair share (default: every tenant weighs 1)")
	fs.Uint64Var(&f.seed, "seed", 1, "root seed of the run, recorded in summary.json; seeded parts (synthetic workloads, randomised policies) derive their streams from it")
	fs.StringVar(&f.out, "out", "brigade-out", "results `directory` (created if missing)")
	fs.StringVar(&f.bucket, "bucket", "1h", "time-series bucket `width`, e.g. 10m, 1h")
	fs.StringVar(&f.starvation, "starvation-threshold", "", "`wait` above which a job counts as starved (default: max(10 × median wait over all policies compared, 1h))")
	fs.BoolVar(&f.noPlots, "no-plots", false, "do not draw the plots (PNG and SVG) into --out/plots/")
	fs.BoolVar(&f.checkInvariants, "check-invariants", false, "re-check every engine invariant after every event (slow; for debugging)")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and the table (no progress bar either; the bar shows only when stderr is a terminal)")
	f.args = args
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	f.seedSet = fs.Changed("seed")
	return simulate(f, stdout, stderr)
}

func simulate(f simFlags, stdout, stderr io.Writer) error {
	if f.replay != "" {
		if f.trace != "" || f.synthetic > 0 {
			return usageError{fmt.Errorf("--replay replaces --trace and --synthetic; give one")}
		}
		if f.load != 0 {
			return usageError{fmt.Errorf("--replay keeps the recorded submit times; it takes no --load")}
		}
		source := ""
		if len(f.pol.specs) == 1 {
			source = f.pol.specs[0]
		}
		path := filepath.Join(f.out, "replay-jobs.csv")
		pols, cluster, skipped, err := replayTrace(f.replay, source, path)
		if err != nil {
			return err
		}
		if skipped > 0 && !f.quiet {
			fmt.Fprintf(stderr, "brigade: warning: %d jobs of %s never ran there and are left out of the replay\n", skipped, f.replay)
		}
		if len(f.pol.specs) == 0 {
			f.pol.specs = pols
		}
		if seed, ok := recordedSeed(f.replay); ok && !f.seedSet {
			// The seed the folder's policies drew from (random
			// placement's stream): 0 for a live run.
			f.seed = seed
		}
		if f.cluster == "" && f.nodes == "" {
			if cluster == "" {
				return usageError{fmt.Errorf("--replay %s: the folder has no run.json naming its cluster; name one with --cluster", f.replay)}
			}
			f.cluster = cluster
		}
		f.trace, f.format = path, "brigade"
	}
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
	specs, err := f.pol.resolve(defaultPolicies())
	if err != nil {
		return err
	}
	reconfigTime, err := migReconfigTime(f.migReconfigTime)
	if err != nil {
		return err
	}
	startupDelay, err := hwmodel.ParseDuration(f.startupDelay)
	if err == nil && startupDelay < 0 {
		err = fmt.Errorf("must be >= 0")
	}
	if err != nil {
		return usageError{fmt.Errorf("--startup-delay: %v", err)}
	}
	if f.gpuSharing != "none" && f.gpuSharing != "processor" {
		return usageError{fmt.Errorf("--gpu-sharing: want none or processor, got %q", f.gpuSharing)}
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
	probe, err := spec.Build()
	if err != nil {
		return err
	}
	faults, err := faultsFromFlags(f.faults, probe)
	if err != nil {
		return err
	}
	reqs := make([]hwmodel.Request, len(w.Jobs))
	for i := range w.Jobs {
		reqs[i] = w.Jobs[i].Req
	}
	target := policies.TargetFromRequests(reqs)
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade: %d jobs from %s on %s, policies %s\n", len(w.Jobs), workloadName, spec.Name, joinSpecs(specs))
	}
	bar := newProgress(stderr, f.quiet, "brigade sim", "policies", len(specs))
	runs, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: workloadName,
		NewCluster: spec.Build, ClusterName: spec.Name,
		Policies: specs, Placer: policies.PlacerConfig{Seed: f.seed, Target: target}, Seed: f.seed,
		Bucket: bucket, StarvationThreshold: starvation,
		CheckInvariants:  f.checkInvariants,
		FragTarget:       &target,
		Parallel:         runtime.GOMAXPROCS(0),
		MIGReconfigTime:  reconfigTime,
		StartupDelay:     startupDelay,
		ProcessorSharing: f.gpuSharing == "processor",
		Faults:           faults,
		Progress:         bar.Func(),
	})
	bar.Done()
	if err != nil {
		return err
	}
	if !f.quiet {
		warnUnsatisfiable(stderr, w, runs[0].Engine)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	if err := simPlots(f, runs); err != nil {
		return err
	}
	if err := runner.Write(f.out, runs); err != nil {
		return err
	}
	inputs, err := runInputs(f)
	if err != nil {
		return err
	}
	if err := results.WriteRunJSON(filepath.Join(f.out, "run.json"), results.RunInfo{
		Seed: f.seed, Command: append([]string{"brigade", "sim"}, f.args...),
		Inputs: inputs, Files: runner.Files,
	}); err != nil {
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
		fmt.Fprintf(stderr, "brigade: wrote run.json, %s to %s\n", strings.Join(runner.Files, ", "), f.out)
	}
	return nil
}

// runInputs lists the files a run read, for run.json: the trace (or the
// embedded default), the cluster (a file, or a built-in preset), the tenant
// weights and the failure trace. A synthetic workload is no file: its seed
// is in run.json.
func runInputs(f simFlags) ([]results.InputFile, error) {
	var in []results.InputFile
	add := func(role, path string) error {
		x, err := results.FileInput(role, path)
		if err == nil {
			in = append(in, x)
		}
		return err
	}
	switch {
	case f.synthetic > 0:
	case f.trace == "":
		in = append(in, results.InputFile{Role: "trace", Path: workloads.DefaultFile, Embedded: true, SHA256: workloads.DefaultSHA256()})
	default:
		if err := add("trace", f.trace); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(f.cluster); err == nil && !fi.IsDir() {
		if err := add("cluster", f.cluster); err != nil {
			return nil, err
		}
	} else {
		in = append(in, results.InputFile{Role: "cluster", Path: f.cluster, Embedded: true})
	}
	for _, x := range []struct{ role, path string }{{"tenant-weights", f.tenantWeights}, {"fail-trace", f.faults.failTrace}} {
		if x.path != "" {
			if err := add(x.role, x.path); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
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

// migReconfigTime reads --mig-reconfig-time.
func migReconfigTime(reconfig string) (hwmodel.Time, error) {
	t, err := hwmodel.ParseDuration(reconfig)
	if err != nil || t < 0 {
		if err == nil {
			err = fmt.Errorf("must be >= 0")
		}
		return 0, usageError{fmt.Errorf("--mig-reconfig-time: %v", err)}
	}
	return t, nil
}
