package runner

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Options are a run's engine settings: the one struct that command-line
// flags fill, that Spec carries to every policy's run, and that Prepare
// turns into the engine's sim.Config (engineConfig, the one place each
// setting reaches the engine). A new engine setting is a field here and a
// line there.
type Options struct {
	// Bucket is the time-series resolution; 0 picks one hour.
	Bucket hwmodel.Time
	// CheckInvariants re-verifies the engine's books after every event
	// (sim.Config.CheckInvariants; slow).
	CheckInvariants bool
	// FragTarget, when set, turns on fragmentation tracking: after every
	// batch of events the cluster's fragmentation against it is measured
	// (policies.FragTracker, which re-evaluates only the nodes that
	// changed), and the time series and summary report GPU fragmentation.
	FragTarget *policies.TargetWorkload
	// MIGReconfigTime is how long a MIG reconfiguration blocks its GPU
	// when the policy's MIG mode reconfigures (sim.Config.MIGReconfigTime).
	MIGReconfigTime hwmodel.Time
	// StartupDelay is added to every attempt (sim.Config.StartupDelay).
	StartupDelay hwmodel.Time
	// ProcessorSharing: sim.Config.ProcessorSharing.
	ProcessorSharing bool
	// PreemptRestart and SaveOnPreempt: what a preemption costs
	// (sim.Config's).
	PreemptRestart hwmodel.Time
	SaveOnPreempt  bool
	// Speeds and SpeedReference: sim.Config's; nil Speeds runs every job
	// at its measured pace on every model.
	Speeds         *hwmodel.SpeedTable
	SpeedReference hwmodel.ModelID
	// Interval is the decision grid (sim.Config.Interval; 0: none); Apps
	// the application model that times jobs that train an application
	// (sim.Config.Apps).
	Interval hwmodel.Time
	Apps     *hwmodel.AppModel
	// Faults sets detection, retries, restart and default checkpoints;
	// nil leaves the engine's defaults. Run draws the failures it
	// injects once, from Spec.Seed's failure stream, so every policy
	// faces the same ones.
	Faults *Faults

	// What a policy spec decides (ForPolicy sets them; Run does for each
	// policy of a Spec): whether policies see true durations, and MIG
	// reconfiguration as sim.Config has it.
	RevealOracle                    bool
	MIGReconfigure, MIGConvertWhole bool
	// FaultSchedule is the failures to inject (Faults.Schedule); Run
	// fills it.
	FaultSchedule []hwmodel.Fault
}

// ForPolicy is o with the settings policy spec p decides.
func (o Options) ForPolicy(p policies.Spec) Options {
	o.RevealOracle, o.MIGReconfigure, o.MIGConvertWhole = p.UseOracle, p.MIGReconfigure, p.MIGConvertWhole
	return o
}

// engineConfig is the engine's configuration for o, without the cluster,
// workload, policy and observer that Prepare adds.
func (o Options) engineConfig() sim.Config {
	cfg := sim.Config{
		RevealOracle:     o.RevealOracle,
		CheckInvariants:  o.CheckInvariants,
		MIGReconfigure:   o.MIGReconfigure,
		MIGConvertWhole:  o.MIGConvertWhole,
		MIGReconfigTime:  o.MIGReconfigTime,
		StartupDelay:     o.StartupDelay,
		ProcessorSharing: o.ProcessorSharing,
		PreemptRestart:   o.PreemptRestart,
		SaveOnPreempt:    o.SaveOnPreempt,
		Faults:           o.FaultSchedule,
		Speeds:           o.Speeds,
		SpeedReference:   o.SpeedReference,
		Interval:         o.Interval,
		Apps:             o.Apps,
	}
	if f := o.Faults; f != nil {
		cfg.Heartbeat = sim.Heartbeat{Interval: f.HeartbeatInterval, Timeout: f.HeartbeatTimeout}
		cfg.Retry = sim.RetryPolicy{Kind: f.Retry, Max: f.MaxRetries, BackoffBase: f.Backoff, BackoffFactor: f.BackoffFactor}
		cfg.RestartTime = f.RestartTime
		cfg.DefaultCheckpoint = sim.Checkpoint{Every: f.CheckpointEvery, Cost: f.CheckpointCost}
	}
	return cfg
}

// Spec is one comparison: a workload, a cluster, and the policies to run
// with the same engine Options.
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
	// Seed is the run's root seed: recorded in the summaries, and the
	// failure stream of Options.Faults draws from it.
	Seed uint64
	// StarvationThreshold is the wait above which a job counts as
	// starved; 0 takes SharedStarvationThreshold of the runs.
	StarvationThreshold hwmodel.Time
	// Parallel is how many policies run at once; 0 or 1 runs them in turn.
	Parallel int
	// Options are the engine settings every policy runs with.
	Options
	// DropOutcomes lets each run's engine outcomes go once they are
	// records (PolicyRun.Engine.Jobs is then nil), so that a job's outcome
	// is held once, not twice, for callers that read only the records.
	DropOutcomes bool
	// Records, when set, takes every run's job records as the run ends, a
	// piece at a time and the policies in their order (one call at a
	// time, whatever Parallel), in place of PolicyRun.Jobs: a run keeps
	// its jobs' results.JobStats (PolicyRun.Stats) instead, what its
	// summary and plots read. results.JobFiles.Add is one.
	Records func(results.PolicyJobs) error
	// Progress, when not nil, is told as the runs advance how many jobs
	// have ended over all the policies' runs, out of total (the jobs
	// times the policies): at most a few hundred calls per run, from
	// several goroutines but one at a time. It cannot change any result.
	Progress func(done, total int)
}

// PolicyRun is one policy's results.
type PolicyRun struct {
	Policy    string // the policy's label, e.g. "sjf+bf"
	TotalGPUs int
	Summary   results.Summary
	Jobs      []results.JobRecord
	// Stats are the jobs' JobStats, in place of Jobs (then nil), when
	// Spec.Records took the records.
	Stats    []results.JobStats
	Timeline *results.Timeline
	// Arrivals is the timeline's integrals up to the last submission.
	Arrivals *results.Integrals
	// Engine is the engine's result; its per-job outcomes (Engine.Jobs)
	// are nil when Spec.DropOutcomes let them go.
	Engine *sim.Result
	// unsatisfiable counts the jobs failed at submission because the
	// policy's MIG mode cannot serve them; unsatisfiableExample is the
	// first one's name and reason.
	unsatisfiable        int
	unsatisfiableExample string
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
	ended := make([]int, len(spec.Policies))
	total, sum := len(spec.Workload.Jobs)*len(spec.Policies), 0
	// turns[k] closes when policy k's run has handed over its records (or
	// failed), so that Spec.Records takes the policies in order.
	turns := make([]chan struct{}, len(spec.Policies))
	for k := range turns {
		turns[k] = make(chan struct{})
	}
	for k, p := range spec.Policies {
		var progress func(int)
		if spec.Progress != nil {
			progress = func(n int) {
				progressMu.Lock()
				defer progressMu.Unlock()
				sum += n - ended[k]
				ended[k] = n
				spec.Progress(sum, total)
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		turn := func() error { return nil }
		if k > 0 {
			turn = func() error {
				<-turns[k-1]
				if errs[k-1] != nil {
					return fmt.Errorf("not written: policy %s failed", spec.Policies[k-1])
				}
				return nil
			}
		}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer close(turns[k])
			runs[k], errs[k] = runOne(spec, p, schedule, progress, turn)
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
			Stats:               r.Stats,
			Timeline:            r.Timeline,
			StarvationThreshold: threshold,
			Events:              r.Engine.Events,
			Arrivals:            r.Arrivals,
			MIGReconfigurations: r.Engine.MIGReconfigurations,
			MIGReconfigGPUTime:  r.Engine.MIGReconfigGPUTime,
			Faults:              FaultEvents(r.Engine),
			Data:                dataSummary(r.Engine),
		})
	}
}

// dataSummary is the run's data locality for summary.json; nil when no
// job read a dataset.
func dataSummary(res *sim.Result) *results.DataSummary {
	d := res.Data
	if d.Attempts == 0 {
		return nil
	}
	return &results.DataSummary{Attempts: d.Attempts, LocalAttempts: d.Local, HitRatio: d.HitRatio(),
		RemoteGB: d.RemoteMB / 1000, ReadS: d.ReadTime.Seconds()}
}

// SharedStarvationThreshold is the default starvation threshold of a
// comparison: max(10 × median wait, 1 h), the median taken over the jobs of
// every policy together, so that "starved" means the same wait for every
// policy compared.
func SharedStarvationThreshold(runs []PolicyRun) hwmodel.Time {
	// Each job's wait, when it has had an attempt, from its record or its
	// JobStats.
	each := func(yield func(hwmodel.Time)) {
		for _, r := range runs {
			for i := range r.Jobs {
				if j := &r.Jobs[i]; j.Attempts > 0 {
					yield(j.Wait)
				}
			}
			for i := range r.Stats {
				if j := &r.Stats[i]; j.Attempts > 0 {
					yield(j.Wait)
				}
			}
		}
	}
	n := 0
	each(func(hwmodel.Time) { n++ })
	waits := make([]hwmodel.Time, 0, n) // sized once: every policy's jobs
	each(func(w hwmodel.Time) { waits = append(waits, w) })
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

// runOne runs policy p. With Spec.Records it hands over the records once
// turn, which waits for the policies before p to hand over theirs, says
// so.
func runOne(spec Spec, p policies.Spec, schedule []hwmodel.Fault, progress func(ended int), turn func() error) (PolicyRun, error) {
	p.Placer = spec.Placer
	policy, err := p.New()
	if err != nil {
		return PolicyRun{}, err
	}
	cluster, err := spec.NewCluster()
	if err != nil {
		return PolicyRun{}, err
	}
	opt := spec.Options.ForPolicy(p)
	opt.FaultSchedule = schedule
	prep, err := Prepare(cluster, spec.Workload, policy, opt)
	if err != nil {
		return PolicyRun{}, err
	}
	prep.Progress = progress
	res, err := prep.Engine.Run()
	if err != nil {
		return PolicyRun{}, err
	}
	if progress != nil {
		progress(len(spec.Workload.Jobs))
	}
	prep.Timeline.Close(res.End)
	// The result points into the engine: held, it would hold the whole
	// engine (every job's state, the queues, the policy) for as long as
	// the run is kept. A copy holds only the outcomes, until they are
	// records.
	own := *res
	run := PolicyRun{Policy: policy.Name(), TotalGPUs: cluster.TotalGPUs(), Timeline: prep.Timeline, Engine: &own, Arrivals: prep.Arrivals()}
	if spec.Records == nil {
		run.Jobs = records(spec.Workload, cluster, &own, 0, len(own.Jobs), spec.DropOutcomes)
		run.countUnsatisfiable(run.Jobs)
	} else if err := run.handOver(spec, cluster, turn); err != nil {
		return PolicyRun{}, err
	}
	if spec.DropOutcomes {
		own.Jobs = nil
	}
	return run, nil
}

// recordsPiece is how many jobs' records a run makes at a time for
// Spec.Records: a few megabytes.
var recordsPiece = 8192

// handOver makes the run's records a piece at a time, hands each to
// spec.Records once turn allows, and keeps their JobStats. Each outcome
// is let go as it becomes a record under Spec.DropOutcomes.
func (r *PolicyRun) handOver(spec Spec, c *hwmodel.Cluster, turn func() error) error {
	// The engine is garbage from here (the run keeps a copy of its
	// result), a third of a run's heap, but the collector would let the
	// records' pieces and the stats grow the heap by as much again before
	// it took it back. Collected first, its memory is theirs. One
	// collection is a small part of a run large enough to stream.
	runtime.GC()
	if err := turn(); err != nil {
		return err
	}
	res := r.Engine
	r.Stats = make([]results.JobStats, len(res.Jobs))
	// One piece's records and attempts, reused: Records has written what
	// it needs of them when it returns (the strings they point to stay).
	var buf recordsBuf
	for lo := 0; lo < len(res.Jobs); lo += recordsPiece {
		recs := buf.records(spec.Workload, c, res, lo, min(lo+recordsPiece, len(res.Jobs)), spec.DropOutcomes)
		if err := spec.Records(results.PolicyJobs{Policy: r.Policy, Jobs: recs}); err != nil {
			return err
		}
		for i := range recs {
			r.Stats[lo+i] = results.StatsOf(&recs[i])
		}
		r.countUnsatisfiable(recs)
	}
	return nil
}

// countUnsatisfiable counts, in the run's books, the jobs of recs failed
// at submission because the policy's MIG mode cannot serve them.
func (r *PolicyRun) countUnsatisfiable(recs []results.JobRecord) {
	for i := range recs {
		if j := &recs[i]; j.Reason == results.ReasonUnsatisfiable {
			if r.unsatisfiable == 0 {
				r.unsatisfiableExample = j.Name + ": " + j.ReasonDetail
			}
			r.unsatisfiable++
		}
	}
}

// Prepared is an engine wired to a timeline, ready to Run.
type Prepared struct {
	Engine   *sim.Engine
	Timeline *results.Timeline
	// Progress, when set before the run, is told how many of the
	// workload's jobs have ended, as they end; at most about
	// progressSteps calls per run, so it costs nothing per event.
	Progress func(ended int)
	arrivals *results.Integrals
}

// progressSteps is about how many times a run calls Prepared.Progress.
const progressSteps = 200

// Arrivals is the timeline's integrals over the arrival window, once the
// run has reached the last submission; nil before.
func (p *Prepared) Arrivals() *results.Integrals { return p.arrivals }

// Prepare builds an engine for w on the idle cluster c under policy, with
// the settings opt (see Options.ForPolicy for the policy's own) and a
// timeline fed after every batch of events, as every command runs it.
func Prepare(c *hwmodel.Cluster, w *workloads.Workload, policy policies.Policy, opt Options) (*Prepared, error) {
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
	var frag *policies.FragTracker
	if opt.FragTarget != nil {
		frag = policies.NewFragTracker(c.View(), *opt.FragTarget)
	}
	// Jobs ended = jobs arrived - jobs in the system; arrived counts the
	// jobs submitted by now (Jobs is sorted by Submit, and the engine
	// observes after every arrival instant).
	arrived, step, next := 0, max(1, len(w.Jobs)/progressSteps), 0
	cfg := opt.engineConfig()
	cfg.Cluster, cfg.Workload, cfg.Policy = c, w, policy
	cfg.Observe = func(now hwmodel.Time, o sim.Observation) {
		state := results.State{Queued: o.Queued, Running: o.Running, InSystem: o.InSystem, AllocatedMilli: o.AllocatedMilli,
			MIGSlices: int64(o.MIGSlices), MIGBusySlices: int64(o.MIGBusySlices),
			MIGFreeSlices: int64(o.MIGFreeSlices), MIGFragSlices: int64(o.MIGFragSlices)}
		if frag != nil {
			state.FragmentedMilli = frag.Milli()
		}
		state.DownMilli = o.DownMilli
		p.Timeline.ObserveTenants(now, state, o.TenantMilli)
		if p.arrivals == nil && now >= lastSubmit {
			// The engine observes at every arrival instant, so this is
			// the integral over exactly [first submit, last submit].
			ig := p.Timeline.Integrals()
			p.arrivals = &ig
		}
		if p.Progress != nil {
			for arrived < len(w.Jobs) && w.Jobs[arrived].Submit <= now {
				arrived++
			}
			if ended := arrived - o.InSystem; ended >= next {
				p.Progress(ended)
				next = ended + step
			}
		}
	}
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
	return records(w, c, res, 0, len(res.Jobs), false)
}

// records is Records of jobs lo to hi (not included); with release, it
// clears each outcome once it is a record, so that its attempt log and
// placements can go while the rest are converted (a run's outcomes and
// records are then never all held at once).
func records(w *workloads.Workload, c *hwmodel.Cluster, res *sim.Result, lo, hi int, release bool) []results.JobRecord {
	var b recordsBuf
	return b.records(w, c, res, lo, hi, release)
}

// recordsBuf holds the arrays of the records it last made, for the next
// to reuse.
type recordsBuf struct {
	out []results.JobRecord
	all []results.AttemptRecord
}

// records is the package's records, into b's arrays (grown as needed):
// the records are b's until its next call.
func (b *recordsBuf) records(w *workloads.Workload, c *hwmodel.Cluster, res *sim.Result, lo, hi int, release bool) []results.JobRecord {
	out := grow(b.out, hi-lo)
	b.out = out
	var names strings.Builder
	nodes := func(p hwmodel.Placement) string {
		if len(p) == 1 {
			return c.Node(p[0].Node).Name // the node's own string: no copy per job
		}
		names.Reset()
		for k, share := range p {
			if k > 0 {
				names.WriteByte('+')
			}
			names.WriteString(c.Node(share.Node).Name)
		}
		return names.String()
	}
	// Every job's attempts in one array, each job's log a piece of it
	// capped at its length: one allocation per run, not one per job.
	attempts := 0
	for i := lo; i < hi; i++ {
		attempts += int(res.Jobs[i].Attempts)
	}
	all := grow(b.all, attempts)
	b.all = all
	for i := lo; i < hi; i++ {
		o := &res.Jobs[i]
		j := &w.Jobs[i]
		last := nodes(o.Placement)
		var log []results.AttemptRecord
		if n := int(o.Attempts); n > 0 {
			log, all = all[:n:n], all[n:]
			for k := range n {
				a := o.Attempt(k)
				at := last
				if !samePlacement(a.Placement, o.Placement) {
					at = nodes(a.Placement)
				}
				log[k] = results.AttemptRecord{Start: a.Start, End: a.End, Wait: a.Wait, Nodes: at,
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
		out[i-lo] = results.JobRecord{
			ID: int32(i), Name: j.Name, DAG: j.DAG, Tenant: j.Tenant, Priority: j.Priority,
			Submit: o.Submit, Ready: ready, Start: o.Start, End: o.End, Wait: o.Wait, Run: o.Run,
			GPUs: j.Req.GPUs, GPUMilli: milli, MIGProfile: o.MIGProfile, Nodes: last, Attempts: int(o.Attempts), State: state,
			HardwareFailures: o.HardwareFailures, Lost: o.LostTime, Checkpoint: o.CheckpointTime,
			Preemptions: o.Preemptions, PreemptLost: o.PreemptLost,
			Reason: FailReason(o.FailReason), ReasonDetail: o.Reason, AttemptLog: log,
			CPUMilli: j.Req.CPUMilli, MemoryMiB: j.Req.MemoryMiB, Deps: deps,
		}
		if release {
			*o = sim.Outcome{}
		}
	}
	return out
}

// grow is s with length n, its old array when it has room: cleared, so
// that every field of a record it holds is set anew.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// samePlacement is whether a and b are one slice (the engine keeps an
// attempt's placement rather than copying it), so that they name the same
// nodes.
func samePlacement(a, b hwmodel.Placement) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Files lists what Write writes, in order.
var Files = []string{"summary.json", "jobs.parquet", "attempts.parquet", "timeseries.parquet", "tenants.parquet", "jobs.csv", "timeseries.csv", "tenants.csv"}

// Write stores a comparison's results in dir, each file written atomically:
// summary.json, jobs.parquet, attempts.parquet, timeseries.parquet and
// tenants.parquet, and the CSV twins jobs.csv, timeseries.csv and
// tenants.csv (docs/results.md).
func Write(dir string, runs []PolicyRun) error { return WriteFiles(dir, runs, nil) }

// WriteFiles is Write, calling step (when not nil) after each file.
func WriteFiles(dir string, runs []PolicyRun, step func()) error {
	return writeFiles(dir, runs, step, nil)
}

// writeFiles is WriteFiles; with closeJobFiles, the runs' records went to
// a results.JobFiles, which closeJobFiles completes in jobs.parquet's
// place among the files (and attempts.parquet's and jobs.csv's are
// nothing more to do).
func writeFiles(dir string, runs []PolicyRun, step func(), closeJobFiles func() error) error {
	sums := make([]results.Summary, len(runs))
	jobs := make([]results.PolicyJobs, len(runs))
	series := make([]results.PolicyTimeline, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
		jobs[i] = results.PolicyJobs{Policy: r.Summary.Policy, Jobs: r.Jobs}
		series[i] = results.PolicyTimeline{Policy: r.Summary.Policy, Timeline: r.Timeline}
	}
	writers := []func() error{
		func() error { return results.WriteSummaryJSON(filepath.Join(dir, "summary.json"), sums) },
		func() error { return results.WriteJobsParquet(filepath.Join(dir, "jobs.parquet"), jobs) },
		func() error { return results.WriteAttemptsParquet(filepath.Join(dir, "attempts.parquet"), jobs) },
		func() error { return results.WriteTimeseriesParquet(filepath.Join(dir, "timeseries.parquet"), series) },
		func() error { return results.WriteTenantsParquet(filepath.Join(dir, "tenants.parquet"), series) },
		func() error { return results.WriteJobsCSV(filepath.Join(dir, "jobs.csv"), jobs) },
		func() error { return results.WriteTimeseriesCSV(filepath.Join(dir, "timeseries.csv"), series) },
		func() error { return results.WriteTenantsCSV(filepath.Join(dir, "tenants.csv"), series) },
	}
	if closeJobFiles != nil {
		done := func() error { return nil }
		writers[1], writers[2], writers[5] = closeJobFiles, done, done
	}
	for _, write := range writers {
		if err := write(); err != nil {
			return err
		}
		if step != nil {
			step()
		}
	}
	return nil
}
