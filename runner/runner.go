package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Spec is one comparison: a workload, a cluster, and the policies to run.
type Spec struct {
	Workload     *workloads.Workload
	WorkloadName string
	// NewCluster builds a fresh idle cluster; it is called once per policy.
	NewCluster  func() (*hwmodel.Cluster, error)
	ClusterName string
	// Policies are the policies to compare, each a complete spec (its MIG
	// mode also sets the engine's, its oracle what the engine reveals).
	Policies []policies.Spec
	// Placer configures the placements that need it: the seed of
	// "random" and the target workload of "fgd"; every spec gets it.
	Placer policies.PlacerConfig
	Seed   uint64
	// Bucket is the time-series resolution; 0 picks one hour.
	Bucket              hwmodel.Time
	StarvationThreshold hwmodel.Time
	CheckInvariants     bool
	// FragTarget, when set, is the workload fragmentation is measured
	// against; the time series and summary then report GPU fragmentation.
	FragTarget *policies.TargetWorkload
	// Parallel is how many policies run at once; 0 or 1 runs them in turn.
	Parallel int
	// MIGReconfigTime is how long a MIG reconfiguration blocks its GPU
	// when a spec's MIG mode reconfigures (sim.Config.MIGReconfigTime).
	MIGReconfigTime hwmodel.Time
	// StartupDelay is added to every attempt (sim.Config.StartupDelay).
	StartupDelay hwmodel.Time
	// ProcessorSharing: sim.Config.ProcessorSharing.
	ProcessorSharing bool
	// Faults, when not nil, injects hardware failures: the schedule is
	// drawn once, from Seed's failure stream, so every policy faces the
	// same failures.
	Faults *Faults
	// Progress, when not nil, is called after each policy's run ends with
	// how many of the policies have ended; calls may come from several
	// goroutines, one at a time. It cannot change any result.
	Progress func(done, total int)
}

// PolicyRun is one policy's results.
type PolicyRun struct {
	Policy    string // the policy's label, e.g. "sjf+bf"
	TotalGPUs int
	Summary   results.Summary
	Jobs      []results.JobRecord
	Timeline  *results.Timeline
	// Arrivals is the timeline's integrals up to the last submission.
	Arrivals *results.Integrals
	Engine   *sim.Result
}

// Run runs every policy in spec and returns their results in the order the
// policies were named. Policy names are checked before any run starts.
func Run(spec Spec) ([]PolicyRun, error) {
	if len(spec.Policies) == 0 {
		return nil, fmt.Errorf("no policy named (known: %s)", strings.Join(policies.Names(), ", "))
	}
	for _, p := range spec.Policies {
		p.Placer = spec.Placer
		if _, err := p.New(); err != nil {
			return nil, err
		}
	}
	var schedule []hwmodel.Fault
	if spec.Faults.Injects() {
		c, err := spec.NewCluster()
		if err != nil {
			return nil, err
		}
		if schedule, err = spec.Faults.Schedule(c, spec.Workload, spec.Seed); err != nil {
			return nil, err
		}
	}
	runs := make([]PolicyRun, len(spec.Policies))
	errs := make([]error, len(spec.Policies))
	parallel := max(1, spec.Parallel)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var progressMu sync.Mutex
	finished := 0
	for k, p := range spec.Policies {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			runs[k], errs[k] = runOne(spec, p, schedule)
			if spec.Progress != nil {
				progressMu.Lock()
				finished++
				spec.Progress(finished, len(spec.Policies))
				progressMu.Unlock()
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", spec.Policies[k], err)
		}
	}
	threshold := spec.StarvationThreshold
	if threshold <= 0 {
		threshold = SharedStarvationThreshold(runs)
	}
	Summarize(spec, runs, threshold)
	return runs, nil
}

// Summarize fills each run's Summary from its records, with the starvation
// threshold given (Run uses spec.StarvationThreshold, else
// SharedStarvationThreshold of its runs). Callers that run policies of one
// comparison through several Run calls (e.g. with different options) use
// it to summarise them all against one shared threshold.
func Summarize(spec Spec, runs []PolicyRun, threshold hwmodel.Time) {
	tenants := make([]policies.Tenant, len(spec.Workload.Tenants))
	for i, t := range spec.Workload.Tenants {
		tenants[i] = policies.Tenant{Name: t.Name, Weight: t.Weight}
	}
	for k := range runs {
		r := &runs[k]
		r.Summary = results.Summarize(results.RunInput{
			Policy:              r.Policy,
			Seed:                spec.Seed,
			Cluster:             spec.ClusterName,
			Workload:            spec.WorkloadName,
			TotalGPUs:           r.TotalGPUs,
			Tenants:             tenants,
			Jobs:                r.Jobs,
			Timeline:            r.Timeline,
			StarvationThreshold: threshold,
			Events:              r.Engine.Events,
			Arrivals:            r.Arrivals,
			MIGReconfigurations: r.Engine.MIGReconfigurations,
			MIGReconfigGPUTime:  r.Engine.MIGReconfigGPUTime,
			Faults:              FaultEvents(r.Engine),
		})
	}
}

// SharedStarvationThreshold is the default starvation threshold of a
// comparison: max(10 × median wait, 1 h), the median taken over the jobs of
// every policy together, so that "starved" means the same wait for every
// policy compared.
func SharedStarvationThreshold(runs []PolicyRun) hwmodel.Time {
	var waits []hwmodel.Time
	for _, r := range runs {
		for _, j := range r.Jobs {
			if j.Attempts > 0 {
				waits = append(waits, j.Wait)
			}
		}
	}
	threshold := results.MinStarvationThreshold
	if len(waits) > 0 {
		slices.Sort(waits)
		median := waits[(len(waits)+1)/2-1] // the lower median, as results' quantiles
		threshold = max(threshold, results.StarvationMedianFactor*median)
	}
	return threshold
}

// FaultEvents converts the engine's fault records for results.Summarize.
func FaultEvents(res *sim.Result) []results.FaultEvent {
	if len(res.Faults) == 0 {
		return nil
	}
	out := make([]results.FaultEvent, len(res.Faults))
	for i, f := range res.Faults {
		out[i] = results.FaultEvent{At: f.At, Detected: f.Detected, JobsHit: f.JobsHit}
	}
	return out
}

func runOne(spec Spec, p policies.Spec, schedule []hwmodel.Fault) (PolicyRun, error) {
	p.Placer = spec.Placer
	policy, err := p.New()
	if err != nil {
		return PolicyRun{}, err
	}
	cluster, err := spec.NewCluster()
	if err != nil {
		return PolicyRun{}, err
	}
	prep, err := Prepare(cluster, spec.Workload, policy, PrepareOptions{
		Bucket: spec.Bucket, RevealOracle: p.UseOracle, CheckInvariants: spec.CheckInvariants,
		FragTarget:     spec.FragTarget,
		MIGReconfigure: p.MIGReconfigure, MIGConvertWhole: p.MIGConvertWhole,
		MIGReconfigTime: spec.MIGReconfigTime, StartupDelay: spec.StartupDelay, ProcessorSharing: spec.ProcessorSharing,
		Faults: spec.Faults, FaultSchedule: schedule,
	})
	if err != nil {
		return PolicyRun{}, err
	}
	res, err := prep.Engine.Run()
	if err != nil {
		return PolicyRun{}, err
	}
	prep.Timeline.Close(res.End)
	return PolicyRun{
		Policy: policy.Name(), TotalGPUs: cluster.TotalGPUs(),
		Jobs: Records(spec.Workload, cluster, res), Timeline: prep.Timeline, Engine: res, Arrivals: prep.Arrivals(),
	}, nil
}

// PrepareOptions tune Prepare.
type PrepareOptions struct {
	Bucket          hwmodel.Time // time-series resolution; 0 means one hour
	RevealOracle    bool
	CheckInvariants bool
	// FragTarget, when set, turns on fragmentation tracking: after every
	// batch of events the cluster's fragmentation against it is measured
	// (a pass over the nodes, re-evaluating only those that changed).
	FragTarget *policies.TargetWorkload
	// MIG reconfiguration, as sim.Config has it.
	MIGReconfigure, MIGConvertWhole bool
	MIGReconfigTime                 hwmodel.Time
	// StartupDelay is added to every attempt (sim.Config.StartupDelay).
	StartupDelay hwmodel.Time
	// ProcessorSharing: sim.Config.ProcessorSharing.
	ProcessorSharing bool
	// Faults sets detection, retries, restart and default checkpoints, and
	// FaultSchedule is the failures to inject (Faults.Schedule); both may
	// be nil.
	Faults        *Faults
	FaultSchedule []hwmodel.Fault
}

// Prepared is an engine wired to a timeline, ready to Run.
type Prepared struct {
	Engine   *sim.Engine
	Timeline *results.Timeline
	arrivals *results.Integrals
}

// Arrivals is the timeline's integrals over the arrival window, once the
// run has reached the last submission; nil before.
func (p *Prepared) Arrivals() *results.Integrals { return p.arrivals }

// Prepare builds an engine for w on the idle cluster c under policy, with a
// timeline fed after every batch of events, as every command runs it.
func Prepare(c *hwmodel.Cluster, w *workloads.Workload, policy policies.Policy, opt PrepareOptions) (*Prepared, error) {
	bucket := opt.Bucket
	if bucket <= 0 {
		bucket = hwmodel.Hour
	}
	p := &Prepared{Timeline: results.NewTimeline(bucket, int64(c.TotalGPUs())*hwmodel.MilliPerGPU)}
	names := make([]string, len(w.Tenants))
	weights := make([]float64, len(w.Tenants))
	hasJobs := make([]bool, len(w.Tenants))
	idx := make(map[string]int, len(w.Tenants))
	for k, t := range w.Tenants {
		names[k], weights[k], idx[t.Name] = t.Name, t.Weight, k
	}
	for i := range w.Jobs {
		if k, ok := idx[w.Jobs[i].Tenant]; ok {
			hasJobs[k] = true
		}
	}
	p.Timeline.TrackTenants(names, results.FairShares(weights, hasJobs))
	var lastSubmit hwmodel.Time
	if n := len(w.Jobs); n > 0 {
		lastSubmit = w.Jobs[n-1].Submit
	}
	var meter *policies.FragMeter
	if opt.FragTarget != nil {
		meter = policies.NewFragMeter(*opt.FragTarget)
	}
	cfg := sim.Config{
		Cluster:          c,
		Workload:         w,
		Policy:           policy,
		RevealOracle:     opt.RevealOracle,
		CheckInvariants:  opt.CheckInvariants,
		MIGReconfigure:   opt.MIGReconfigure,
		MIGConvertWhole:  opt.MIGConvertWhole,
		MIGReconfigTime:  opt.MIGReconfigTime,
		StartupDelay:     opt.StartupDelay,
		ProcessorSharing: opt.ProcessorSharing,
		Observe: func(now hwmodel.Time, o sim.Observation) {
			state := results.State{Queued: o.Queued, Running: o.Running, InSystem: o.InSystem, AllocatedMilli: o.AllocatedMilli,
				MIGSlices: int64(o.MIGSlices), MIGBusySlices: int64(o.MIGBusySlices),
				MIGFreeSlices: int64(o.MIGFreeSlices), MIGFragSlices: int64(o.MIGFragSlices)}
			if meter != nil {
				state.FragmentedMilli = int64(math.Round(meter.Cluster(c.View())))
			}
			state.DownMilli = o.DownMilli
			p.Timeline.ObserveTenants(now, state, o.TenantMilli)
			if p.arrivals == nil && now >= lastSubmit {
				// The engine observes at every arrival instant, so this is
				// the integral over exactly [first submit, last submit].
				ig := p.Timeline.Integrals()
				p.arrivals = &ig
			}
		},
	}
	if f := opt.Faults; f != nil {
		cfg.Heartbeat = sim.Heartbeat{Interval: f.HeartbeatInterval, Timeout: f.HeartbeatTimeout}
		cfg.Retry = sim.RetryPolicy{Kind: f.Retry, Max: f.MaxRetries, BackoffBase: f.Backoff, BackoffFactor: f.BackoffFactor}
		cfg.RestartTime = f.RestartTime
		cfg.DefaultCheckpoint = sim.Checkpoint{Every: f.CheckpointEvery, Cost: f.CheckpointCost}
	}
	cfg.Faults = opt.FaultSchedule
	eng, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	p.Engine = eng
	return p, nil
}

// FailReason maps the engine's reason for a failed job to the results
// vocabulary (results.ReasonRetriesExhausted and the others); "" for
// sim.FailNone. It panics on a value the engine does not define.
func FailReason(r sim.FailReason) string {
	switch r {
	case sim.FailNone:
		return ""
	case sim.FailRetriesExhausted:
		return results.ReasonRetriesExhausted
	case sim.FailDeadline:
		return results.ReasonDeadline
	case sim.FailDependency:
		return results.ReasonDependencyFailed
	case sim.FailUnsatisfiable:
		return results.ReasonUnsatisfiable
	}
	panic(fmt.Sprintf("runner: no results reason for %v", r))
}

// AttemptEnd maps how the engine ended an attempt to the results
// vocabulary (results.AttemptSucceeded and the others). It panics on a
// value the engine does not define.
func AttemptEnd(e sim.AttemptEnd) string {
	switch e {
	case sim.AttemptSucceeded:
		return results.AttemptSucceeded
	case sim.AttemptFailed:
		return results.AttemptFailed
	case sim.AttemptPreempted:
		return results.AttemptPreempted
	case sim.AttemptHardware:
		return results.AttemptHardwareFailure
	case sim.AttemptRunning:
		return results.AttemptRunning
	}
	panic(fmt.Sprintf("runner: no results attempt end for %q", string(e)))
}

// Records converts the engine's outcomes into result records: the
// engine's FailReason and attempt ends in the results vocabulary
// (FailReason, AttemptEnd), its Reason as the detail, and no exit codes
// (results.NoExitCode: the simulator runs no process), and each job's
// CPU and memory request and its dependencies by name from the workload.
func Records(w *workloads.Workload, c *hwmodel.Cluster, res *sim.Result) []results.JobRecord {
	out := make([]results.JobRecord, len(res.Jobs))
	var names strings.Builder
	nodes := func(p hwmodel.Placement) string {
		names.Reset()
		for k, share := range p {
			if k > 0 {
				names.WriteByte('+')
			}
			names.WriteString(c.Node(share.Node).Name)
		}
		return names.String()
	}
	for i, o := range res.Jobs {
		j := &w.Jobs[i]
		var log []results.AttemptRecord
		if len(o.AttemptLog) > 0 {
			log = make([]results.AttemptRecord, len(o.AttemptLog))
			for k, a := range o.AttemptLog {
				log[k] = results.AttemptRecord{Start: a.Start, End: a.End, Wait: a.Wait, Nodes: nodes(a.Placement),
					Ended: AttemptEnd(a.Ended), ExitCode: results.NoExitCode}
			}
		}
		state := results.Succeeded
		if o.State == sim.Failed {
			state = results.Failed
		}
		milli := j.Req.GPUMilli
		if o.MIGProfile != "" {
			milli = o.Placement[0].Milli // the instance's share of its GPU
		}
		var deps []string
		if len(j.Deps) > 0 {
			deps = make([]string, len(j.Deps))
			for k, d := range j.Deps {
				deps[k] = w.Jobs[d].Name
			}
		}
		ready := o.Ready
		if o.State == sim.Pending || o.FailReason == sim.FailDependency || o.FailReason == sim.FailUnsatisfiable {
			ready = results.NotReady // never queued: Outcome.Ready is unset
		}
		out[i] = results.JobRecord{
			ID: int32(i), Name: j.Name, DAG: j.DAG, Tenant: j.Tenant, Priority: j.Priority,
			Submit: o.Submit, Ready: ready, Start: o.Start, End: o.End, Wait: o.Wait, Run: o.Run,
			GPUs: j.Req.GPUs, GPUMilli: milli, MIGProfile: o.MIGProfile, Nodes: nodes(o.Placement), Attempts: o.Attempts, State: state,
			HardwareFailures: o.HardwareFailures, Lost: o.LostTime, Checkpoint: o.CheckpointTime,
			Reason: FailReason(o.FailReason), ReasonDetail: o.Reason, AttemptLog: log,
			CPUMilli: j.Req.CPUMilli, MemoryMiB: j.Req.MemoryMiB, Deps: deps,
		}
	}
	return out
}

// Files lists what Write writes, in order.
var Files = []string{"summary.json", "jobs.parquet", "attempts.parquet", "timeseries.parquet", "tenants.parquet", "jobs.csv", "timeseries.csv", "tenants.csv"}

// Write stores a comparison's results in dir, each file written atomically:
// summary.json, jobs.parquet, attempts.parquet, timeseries.parquet and
// tenants.parquet, and the CSV twins jobs.csv, timeseries.csv and
// tenants.csv (docs/results.md).
func Write(dir string, runs []PolicyRun) error {
	sums := make([]results.Summary, len(runs))
	jobs := make([]results.PolicyJobs, len(runs))
	series := make([]results.PolicyTimeline, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
		jobs[i] = results.PolicyJobs{Policy: r.Summary.Policy, Jobs: r.Jobs}
		series[i] = results.PolicyTimeline{Policy: r.Summary.Policy, Timeline: r.Timeline}
	}
	if err := results.WriteSummaryJSON(filepath.Join(dir, "summary.json"), sums); err != nil {
		return err
	}
	if err := results.WriteJobsParquet(filepath.Join(dir, "jobs.parquet"), jobs); err != nil {
		return err
	}
	if err := results.WriteAttemptsParquet(filepath.Join(dir, "attempts.parquet"), jobs); err != nil {
		return err
	}
	if err := results.WriteTimeseriesParquet(filepath.Join(dir, "timeseries.parquet"), series); err != nil {
		return err
	}
	if err := results.WriteTenantsParquet(filepath.Join(dir, "tenants.parquet"), series); err != nil {
		return err
	}
	if err := results.WriteJobsCSV(filepath.Join(dir, "jobs.csv"), jobs); err != nil {
		return err
	}
	if err := results.WriteTimeseriesCSV(filepath.Join(dir, "timeseries.csv"), series); err != nil {
		return err
	}
	return results.WriteTenantsCSV(filepath.Join(dir, "tenants.csv"), series)
}
