package results

import (
	"encoding/json"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// Defaults for RunInput's zero values.
const (
	// DefaultSlowdownBound is τ in bounded slowdown when RunInput.SlowdownBound is 0.
	DefaultSlowdownBound = 10 * hwmodel.Second
	// MinStarvationThreshold is the floor of the default starvation
	// threshold, max(StarvationMedianFactor × median wait, 1 h).
	MinStarvationThreshold = hwmodel.Hour
	// StarvationMedianFactor multiplies the median wait in the default
	// starvation threshold.
	StarvationMedianFactor = 10
)

// RunInput is everything Summarize reads about one policy's run.
type RunInput struct {
	Policy   string
	Seed     uint64
	Cluster  string
	Workload string
	// TotalGPUs is the cluster's GPU count; capacity is TotalGPUs × 1000 milli-GPU.
	TotalGPUs int
	// Tenants gives the tenants' names and weights, in report order; the usage
	// fields are ignored.
	Tenants []policies.Tenant
	// Jobs is every submitted job, in ID order; Stats, when Jobs is nil,
	// is the same jobs' JobStats.
	Jobs  []JobRecord
	Stats []JobStats
	// Timeline is the run's closed Timeline; nil gives zero for every
	// timeline-derived metric (utilisation, GPU hours, queue length, L).
	Timeline *Timeline
	// StarvationThreshold is the wait beyond which a job counts as starved;
	// 0 means max(10 × median wait, 1 h).
	StarvationThreshold hwmodel.Time
	// Arrivals, when set, holds the Timeline's integrals over the arrival
	// window [first Submit, last Submit], taken by the caller when the
	// timeline reached the last submission; it yields
	// GPUUtilisationArrivals.
	Arrivals *Integrals
	// SlowdownBound is τ in bounded slowdown; 0 means DefaultSlowdownBound.
	SlowdownBound hwmodel.Time
	// Events is the number of events the engine processed; copied as is.
	Events int64
	// MIGReconfigurations is how many MIG reconfigurations the run applied
	// and MIGReconfigGPUTime the GPU-time they made unavailable (each
	// reconfiguration blocks its GPU for the run's reconfiguration time);
	// copied as is.
	MIGReconfigurations int64
	MIGReconfigGPUTime  hwmodel.Time
	// Faults are the hardware failures the run injected (sim.Result.Faults),
	// in any order; nil in a run without faults.
	Faults []FaultEvent
	// Data is the run's data locality, copied as is; nil when no job read
	// a dataset.
	Data *DataSummary
}

// FaultEvent is one injected hardware failure as the summary reads it: when
// it happened, when the orchestrator detected it (missed heartbeats; a
// value before At, such as -1, means never), and how many running jobs it
// hit.
type FaultEvent struct {
	At, Detected hwmodel.Time
	JobsHit      int
}

// FaultSummary counts hardware failures.
type FaultSummary struct {
	// Count is the number of failures injected (node and GPU).
	Count int `json:"count"`
	// JobsHit is Σ over failures of the running jobs each one ended.
	JobsHit int `json:"jobs_hit"`
	// DetectionDelayS is Detected − At over the failures detected before
	// the run ended (Detected >= At), in seconds (mean and max; zeros
	// without any).
	DetectionDelayS MeanMax `json:"detection_delay_s"`
}

// MeanMax is a sample's mean and maximum.
type MeanMax struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Dist summarises a sample. Percentiles use gonum's stat.Quantile with
// stat.Empirical on the sorted sample: the p-quantile is the smallest sample
// value x[i] (0-based, ascending) with i+1 >= p·n, so it is always an
// observed value and never an interpolation. An empty sample gives zeros.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// QueueLength is the number of queued (ready, not running) jobs.
type QueueLength struct {
	// Mean is ∫Queued dt from the Timeline divided by the makespan.
	Mean float64 `json:"mean"`
	// Max is the largest queue that held for a positive length of time.
	Max int `json:"max"`
}

// Starvation reports jobs that waited too long.
type Starvation struct {
	// ThresholdS is the threshold used, in seconds (given, or the default).
	ThresholdS float64 `json:"threshold_s"`
	// StarvedJobs counts submitted jobs (any state) whose Wait exceeds the
	// threshold strictly.
	StarvedJobs int `json:"starved_jobs"`
	// LongestWaitS is the largest Wait over all submitted jobs.
	LongestWaitS float64 `json:"longest_wait_s"`
	// LongestWaitJob is that job's ID (the lowest ID on a tie), or -1 when
	// no job waited at all.
	LongestWaitJob int32 `json:"longest_wait_job"`
}

// TenantSummary is one tenant's line of the fairness report.
type TenantSummary struct {
	Tenant string `json:"tenant"`
	// Weight is the tenant's weight; a tenant that submitted jobs but is not
	// in RunInput.Tenants, and any non-finite or negative weight, reads 0.
	Weight float64 `json:"weight"`
	// Jobs counts the tenant's submitted jobs, in any state.
	Jobs int `json:"jobs"`
	// GPUHours is Σ GPUs × GPUMilli/1000 × Run over the tenant's jobs, in
	// GPU-hours (from the job records, not the Timeline).
	GPUHours float64 `json:"gpu_hours"`
	// Share is GPUHours over all tenants' GPUHours; 0 when nobody ran.
	Share float64 `json:"share"`
	// FairShare is Weight over the sum of the weights of tenants that
	// submitted at least one job; 0 for a tenant that submitted none.
	FairShare float64 `json:"fair_share"`
	// ShareOverFair is Share / FairShare; 0 when FairShare is 0.
	ShareOverFair float64 `json:"share_over_fair"`
	// MeanWaitS and MaxWaitS cover the tenant's jobs that ran at least once.
	MeanWaitS float64 `json:"mean_wait_s"`
	MaxWaitS  float64 `json:"max_wait_s"`
	// MeanBoundedSlowdown is over the tenant's jobs that ran.
	MeanBoundedSlowdown float64 `json:"mean_bounded_slowdown"`
}

// LittlesLaw compares the two sides of L = λW, each from its own books.
type LittlesLaw struct {
	// MeanInSystem is L: the Timeline's ∫InSystem dt divided by the makespan.
	MeanInSystem float64 `json:"mean_in_system"`
	// ThroughputPerS is λ: finished (succeeded or failed) jobs per second of
	// makespan, from the job records.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// MeanTimeInSystemS is W: mean End − Submit over finished jobs,
	// including failed jobs that never ran, from the job records.
	MeanTimeInSystemS float64 `json:"mean_time_in_system_s"`
	// RelError is |L − λW| / max(L, λW); 0 when both sides are 0. It lies in
	// [0, 1]; a run whose Timeline and records agree gives ~1e-15.
	RelError float64 `json:"rel_error"`
}

// Summary is one policy's run, reduced. Its JSON form is the stable results
// format: keys are snake_case with the unit in the name, and the struct's
// field order is the key order. Every float is finite: a quantity whose
// denominator is zero (no jobs, zero makespan, zero capacity) reads 0.
//
// Coverage: "finished" jobs are those in state succeeded or failed; jobs
// that "ran" are finished jobs with Attempts > 0 (failed jobs that ran count;
// jobs failed before ever starting, e.g. by a failed DAG dependency, do not).
type Summary struct {
	Policy   string `json:"policy"`
	Seed     uint64 `json:"seed"`
	Cluster  string `json:"cluster"`
	Workload string `json:"workload"`

	JobsSubmitted int `json:"jobs_submitted"` // len(Jobs)
	JobsSucceeded int `json:"jobs_succeeded"`
	JobsFailed    int `json:"jobs_failed"` // whether or not they ran

	// MakespanS is from the earliest Submit of any job to the latest End of
	// any finished job; 0 if nothing finished.
	MakespanS float64 `json:"makespan_s"`

	// WaitS (JobRecord.Wait), JCTS (End − Submit) and BoundedSlowdown
	// (max(1, JCT / max(Run, τ))) cover jobs that ran.
	WaitS           Dist `json:"wait_s"`
	JCTS            Dist `json:"jct_s"`
	BoundedSlowdown Dist `json:"bounded_slowdown"`

	// ThroughputJobsPerH is succeeded jobs per hour of makespan.
	ThroughputJobsPerH float64 `json:"throughput_jobs_per_h"`
	// GPUUtilisation is the Timeline's ∫AllocatedMilli dt over
	// (TotalGPUs × 1000 × makespan).
	GPUUtilisation float64 `json:"gpu_utilisation"`
	// GPUUtilisationArrivals is the same ratio over the arrival window
	// [first Submit, last Submit] only (RunInput.Arrivals): the contended
	// period, before a few long jobs drain alone and dilute the ratio over
	// the makespan. 0 when the caller gave no window or it is empty.
	GPUUtilisationArrivals float64 `json:"gpu_utilisation_arrivals"`
	// GPUFragRatio is ∫FragmentedMilli dt over ∫(capacity − AllocatedMilli)
	// dt across the run: the share of idle GPU capacity that the target
	// workload could not use (the FGD paper's fragmentation ratio, time-
	// averaged over idle capacity). 0 when fragmentation was not tracked.
	GPUFragRatio float64 `json:"gpu_frag_ratio"`
	// GPUHoursAllocated is the Timeline's ∫AllocatedMilli dt in GPU-hours.
	GPUHoursAllocated float64 `json:"gpu_hours_allocated"`

	// MIG metrics, all 0 on a cluster without MIG GPUs.
	// MIGSliceUtilisation is the Timeline's ∫MIGBusySlices dt over
	// ∫MIGSlices dt: busy compute slices over the compute slices of
	// MIG-enabled GPUs, time-averaged.
	MIGSliceUtilisation float64 `json:"mig_slice_utilisation"`
	// MIGFragmentation is ∫MIGFragSlices dt over ∫MIGFreeSlices dt: while
	// MIG requests were queued, the share of free usable MIG slices that sat
	// in instances no queued MIG request fits.
	MIGFragmentation float64 `json:"mig_fragmentation"`
	// MIGReconfigurations counts the MIG reconfigurations applied;
	// MIGReconfigGPUS is the GPU-seconds they made unavailable.
	MIGReconfigurations int64   `json:"mig_reconfigurations"`
	MIGReconfigGPUS     float64 `json:"mig_reconfig_gpu_s"`

	// Fault metrics, all 0 in a run without faults.
	Faults FaultSummary `json:"faults"`
	// Retries is Σ over jobs of the attempts started again after a
	// hardware failure: HardwareFailures, less one for a job that failed for
	// good after its last hardware failure.
	Retries int `json:"retries"`
	// JobsFailedHardware counts jobs that failed for good having been hit
	// by at least one hardware failure (retries exhausted, or no attempt
	// could finish before the deadline).
	JobsFailedHardware int `json:"jobs_failed_hardware"`
	// LostGPUHours is Σ GPUs × GPUMilli/1000 × Lost over jobs: GPU-time run
	// without lasting progress (work since the last checkpoint, detection
	// delay, restart). CheckpointGPUHours is the same over Checkpoint.
	LostGPUHours       float64 `json:"lost_gpu_hours"`
	CheckpointGPUHours float64 `json:"checkpoint_gpu_hours"`
	// Goodput is useful GPU-time over allocated GPU-time, both from the job
	// records over finished jobs: Σ GPUs × GPUMilli × (Run − Lost −
	// Checkpoint) over Σ GPUs × GPUMilli × Run. 1 when nothing was lost or
	// checkpointed, 0 when no GPU job ran.
	Goodput float64 `json:"goodput"`
	// DownGPUHours is the Timeline's ∫DownMilli dt in GPU-hours: capacity
	// out of service, from failure until repair.
	DownGPUHours float64 `json:"down_gpu_hours"`

	QueueLength QueueLength     `json:"queue_length"`
	Starvation  Starvation      `json:"starvation"`
	Tenants     []TenantSummary `json:"tenants"`
	// JainIndex is Jain's fairness index (Σx)² / (n Σx²) over x = ShareOverFair
	// of the tenants with at least one job and a positive weight. It lies in
	// [1/n, 1]; 0 means undefined (no such tenant, or none used any GPU time).
	JainIndex float64 `json:"jain_index"`
	// JainIndexSlowdown is Jain's index over the tenants' mean bounded
	// slowdown (tenants with at least one job that ran): 1 when every tenant
	// is slowed down alike. Once every job has finished, each tenant's
	// GPU-time is what it asked for whatever the policy, so JainIndex
	// measures the demand mix more than the policy; this one separates
	// policies by how evenly they spread waiting across tenants.
	JainIndexSlowdown float64    `json:"jain_index_slowdown"`
	LittlesLaw        LittlesLaw `json:"littles_law"`
	Events            int64      `json:"events"`
	// Data is what the jobs read from the storage tier; absent in a run
	// whose jobs read no dataset.
	Data *DataSummary `json:"data,omitempty"`
	// Preemption is what preemptions cost; absent in a run without any.
	Preemption *PreemptionSummary `json:"preemption,omitempty"`
}

// PreemptionSummary is the preemptions of a run's jobs, from their
// records (JobRecord.Preemptions, PreemptLost).
type PreemptionSummary struct {
	// Count is the attempts preempted; Jobs the jobs preempted at least
	// once; PerJobMax the most preemptions of one job, and PerJobMean
	// their mean over the jobs that ran.
	Count      int64   `json:"count"`
	Jobs       int     `json:"jobs"`
	PerJobMax  int     `json:"per_job_max"`
	PerJobMean float64 `json:"per_job_mean"`
	// LostGPUHours is Σ GPUs × GPUMilli/1000 × PreemptLost: the GPU-time
	// preemptions cost (part of LostGPUHours).
	LostGPUHours float64 `json:"lost_gpu_hours"`
}

// preemptionSummary is the Summary's Preemption: nil when no job was
// preempted.
func preemptionSummary(jobs jobList) *PreemptionSummary {
	var p PreemptionSummary
	var lost acc
	ran := 0
	for i := range jobs.len() {
		j := jobs.at(i)
		if j.Attempts > 0 {
			ran++
		}
		if j.Preemptions <= 0 {
			continue
		}
		p.Count += int64(j.Preemptions)
		p.Jobs++
		p.PerJobMax = max(p.PerJobMax, int(j.Preemptions))
		if j.GPUs > 0 && j.GPUMilli > 0 {
			lost.addMul(int64(j.GPUs)*int64(j.GPUMilli), int64(max(j.PreemptLost, 0)))
		}
	}
	if p.Count == 0 {
		return nil
	}
	p.PerJobMean = ratio(float64(p.Count), float64(ran))
	p.LostGPUHours = lost.float() / hwmodel.MilliPerGPU / float64(hwmodel.Hour)
	return &p
}

// DataSummary is data locality over a run's attempts of jobs that read a
// dataset (sim.DataStats).
type DataSummary struct {
	Attempts      int64 `json:"attempts"`
	LocalAttempts int64 `json:"local_attempts"`
	// HitRatio is LocalAttempts over Attempts: the share of attempts whose
	// placement held all their data.
	HitRatio float64 `json:"hit_ratio"`
	// RemoteGB is what they read from the storage tier; ReadS the wall
	// time they spent reading it, summed over attempts.
	RemoteGB float64 `json:"remote_gb"`
	ReadS    float64 `json:"read_s"`
}

// FieldNames lists every field summary.json can hold by dotted path, the
// optional ones (data.*) included: what commands that name a field accept.
func FieldNames() []string {
	m := Summary{Data: &DataSummary{}, Preemption: &PreemptionSummary{}}.Fields()
	return slices.Sorted(maps.Keys(m))
}

// Fields is a summary's summary.json fields by dotted path (wait_s.p99,
// faults.count): numbers as float64 and text as string; lists (per-tenant
// rows) are left out. Commands that name a field (plan targets, scenario
// columns) look it up here, so the names are summary.json's own.
func (s Summary) Fields() map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Summary's fields are numbers, strings and slices of them
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		panic(err)
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, c)
			}
		case float64, string:
			out[prefix] = x
		}
	}
	walk("", tree)
	return out
}

// BoundedSlowdown returns max(1, (End − Submit) / max(Run, tau)) for j;
// tau <= 0 means DefaultSlowdownBound.
func BoundedSlowdown(j JobRecord, tau hwmodel.Time) float64 {
	return boundedSlowdown(j.End-j.Submit, j.Run, tau)
}

func boundedSlowdown(jct, run, tau hwmodel.Time) float64 {
	if tau <= 0 {
		tau = DefaultSlowdownBound
	}
	return max(1, float64(jct)/float64(max(run, tau)))
}

// Summarize reduces one run. It reads in.Jobs (or in.Stats) in order and
// in.Tenants in order and iterates no map, so equal inputs give equal
// Summaries, whether from records or their JobStats.
func Summarize(in RunInput) Summary {
	jobs := jobList{recs: in.Jobs, stats: in.Stats}
	s := Summary{
		Policy:        in.Policy,
		Seed:          in.Seed,
		Cluster:       in.Cluster,
		Workload:      in.Workload,
		JobsSubmitted: jobs.len(),
		Tenants:       []TenantSummary{},
		Data:          in.Data,
	}
	tau := in.SlowdownBound
	if tau <= 0 {
		tau = DefaultSlowdownBound
	}

	// Makespan and the record side of Little's law.
	var (
		firstSubmit, lastEnd hwmodel.Time
		finished             int
		sojourn              acc // Σ End − Submit over finished jobs, µs
	)
	for i := range jobs.len() {
		j := jobs.at(i)
		if i == 0 || j.Submit < firstSubmit {
			firstSubmit = j.Submit
		}
		switch {
		case j.Succeeded():
			s.JobsSucceeded++
		case j.Failed():
			s.JobsFailed++
		}
		if !j.Finished() {
			continue
		}
		if finished == 0 || j.End > lastEnd {
			lastEnd = j.End
		}
		finished++
		sojourn.addMul(max(int64(j.End-j.Submit), 0), 1)
	}
	var makespan hwmodel.Time // µs
	if finished > 0 && lastEnd > firstSubmit {
		makespan = lastEnd - firstSubmit
	}
	s.MakespanS = makespan.Seconds()

	// Distributions over jobs that ran, computed in µs (exact integers in
	// float64) and converted to seconds at the end.
	ran := 0
	for i := range jobs.len() {
		if j := jobs.at(i); j.Ran() {
			ran++
		}
	}
	// Sized once: grown by append, the three would leave about as much
	// again behind them as garbage.
	waits, jcts, slows := make([]float64, 0, ran), make([]float64, 0, ran), make([]float64, 0, ran)
	for i := range jobs.len() {
		j := jobs.at(i)
		if !j.Ran() {
			continue
		}
		waits = append(waits, float64(j.Wait))
		jcts = append(jcts, float64(j.End-j.Submit))
		slows = append(slows, j.BoundedSlowdown(tau))
	}
	s.WaitS = distribution(waits, 1/float64(hwmodel.Second))
	s.JCTS = distribution(jcts, 1/float64(hwmodel.Second))
	s.BoundedSlowdown = distribution(slows, 1)

	hours := makespan.Seconds() / 3600
	s.ThroughputJobsPerH = ratio(float64(s.JobsSucceeded), hours)

	// Timeline side.
	var ig Integrals
	var tmax State
	if in.Timeline != nil {
		ig = in.Timeline.Integrals()
		tmax = in.Timeline.Max()
	}
	capacityMilli := float64(in.TotalGPUs) * hwmodel.MilliPerGPU
	s.GPUUtilisation = ratio(ig.AllocatedMilliGPUSeconds, capacityMilli*makespan.Seconds())
	if in.Arrivals != nil && jobs.len() > 0 {
		first, last := jobs.at(0).Submit, jobs.at(0).Submit
		for i := range jobs.len() {
			first = min(first, jobs.at(i).Submit)
			last = max(last, jobs.at(i).Submit)
		}
		s.GPUUtilisationArrivals = ratio(in.Arrivals.AllocatedMilliGPUSeconds, capacityMilli*(last-first).Seconds())
	}
	s.GPUFragRatio = ratio(ig.FragmentedMilliGPUSeconds, capacityMilli*makespan.Seconds()-ig.AllocatedMilliGPUSeconds)
	s.GPUHoursAllocated = ig.AllocatedMilliGPUSeconds / hwmodel.MilliPerGPU / 3600
	s.MIGSliceUtilisation = ratio(ig.MIGBusySliceSeconds, ig.MIGSliceSeconds)
	s.MIGFragmentation = ratio(ig.MIGFragSliceSeconds, ig.MIGFreeSliceSeconds)
	s.MIGReconfigurations = in.MIGReconfigurations
	s.MIGReconfigGPUS = in.MIGReconfigGPUTime.Seconds()
	s.DownGPUHours = ig.DownMilliGPUSeconds / hwmodel.MilliPerGPU / 3600
	s.Faults, s.Retries, s.JobsFailedHardware, s.LostGPUHours, s.CheckpointGPUHours, s.Goodput = faultMetrics(in.Faults, jobs)
	s.Preemption = preemptionSummary(jobs)
	s.QueueLength = QueueLength{Mean: ratio(ig.QueuedJobSeconds, makespan.Seconds()), Max: tmax.Queued}

	// Little's law: L from the Timeline, λ and W from the records.
	ll := LittlesLaw{
		MeanInSystem:      ratio(ig.InSystemJobSeconds, makespan.Seconds()),
		ThroughputPerS:    ratio(float64(finished), makespan.Seconds()),
		MeanTimeInSystemS: ratio(sojourn.float(), float64(finished)) / float64(hwmodel.Second),
	}
	lw := ll.ThroughputPerS * ll.MeanTimeInSystemS
	ll.RelError = ratio(math.Abs(ll.MeanInSystem-lw), max(ll.MeanInSystem, lw))
	s.LittlesLaw = ll

	s.Starvation = starvation(jobs, in.StarvationThreshold, waits)
	s.Tenants, s.JainIndex, s.JainIndexSlowdown = tenants(in.Tenants, jobs, in.SlowdownBound)
	s.Events = in.Events
	return s
}

// ratio is a / b, or 0 when b is 0 or the result is not finite.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return finite(a / b)
}

// finite maps NaN and ±Inf to 0, so that JSON encoding cannot fail.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// distribution sorts x in place and summarises it, scaling every statistic
// by scale.
func distribution(x []float64, scale float64) Dist {
	if len(x) == 0 {
		return Dist{}
	}
	slices.Sort(x)
	return Dist{
		Mean: finite(stat.Mean(x, nil) * scale),
		P50:  finite(quantile(0.50, x) * scale),
		P95:  finite(quantile(0.95, x) * scale),
		P99:  finite(quantile(0.99, x) * scale),
		Max:  finite(x[len(x)-1] * scale),
	}
}

// quantile is the estimator every percentile in this package uses; x must
// be sorted and non-empty.
func quantile(p float64, sorted []float64) float64 {
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}

// starvation computes the starvation report. sortedWaits holds the waits of
// the jobs that ran, in µs, sorted (the default threshold reads its median).
func starvation(jobs jobList, threshold hwmodel.Time, sortedWaits []float64) Starvation {
	if threshold <= 0 {
		threshold = MinStarvationThreshold
		if len(sortedWaits) > 0 {
			threshold = max(threshold, StarvationMedianFactor*hwmodel.Time(quantile(0.5, sortedWaits)))
		}
	}
	st := Starvation{ThresholdS: threshold.Seconds(), LongestWaitJob: -1}
	var longest hwmodel.Time
	for i := range jobs.len() {
		j := jobs.at(i)
		if j.Wait > threshold {
			st.StarvedJobs++
		}
		if j.Wait > longest {
			longest = j.Wait
			st.LongestWaitJob = j.ID
		}
	}
	st.LongestWaitS = longest.Seconds()
	return st
}

// tenants builds the per-tenant lines, in the order of given, followed by
// tenants that appear only in jobs, in order of their first job.
func tenants(given []policies.Tenant, jobs jobList, tau hwmodel.Time) ([]TenantSummary, float64, float64) {
	type agg struct {
		slowdownSum float64 // bounded slowdown over jobs that ran
		jobs        int
		gpuTime     acc // Σ GPUs × GPUMilli × Run, milli-GPU·µs
		waitSum     acc // over jobs that ran, µs
		waitMax     hwmodel.Time
		ran         int
		weight      float64
		name        string
	}
	rows := make([]agg, 0, len(given))
	index := make(map[string]int, len(given)) // lookups only; never iterated
	for _, t := range given {
		if _, dup := index[t.Name]; dup {
			continue // a repeated name is reported once, with its first weight
		}
		w := t.Weight
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			w = 0
		}
		index[t.Name] = len(rows)
		rows = append(rows, agg{name: t.Name, weight: w})
	}
	var total acc
	for i := range jobs.len() {
		j := jobs.at(i)
		k, ok := index[j.Tenant]
		if !ok {
			k = len(rows)
			index[j.Tenant] = k
			rows = append(rows, agg{name: j.Tenant})
		}
		r := &rows[k]
		r.jobs++
		if j.GPUs > 0 && j.GPUMilli > 0 && j.Run > 0 {
			r.gpuTime.addMul(int64(j.GPUs)*int64(j.GPUMilli), int64(j.Run))
			total.addMul(int64(j.GPUs)*int64(j.GPUMilli), int64(j.Run))
		}
		if j.Ran() {
			r.ran++
			r.waitSum.addMul(max(int64(j.Wait), 0), 1)
			r.waitMax = max(r.waitMax, j.Wait)
			r.slowdownSum += j.BoundedSlowdown(tau)
		}
	}

	var weightSum float64
	for i := range rows {
		if rows[i].jobs > 0 {
			weightSum += rows[i].weight
		}
	}
	out := make([]TenantSummary, len(rows))
	var sx, sxx, sy, syy float64
	var n, ny int
	for i := range rows {
		r := &rows[i]
		ts := TenantSummary{
			Tenant:   r.name,
			Weight:   r.weight,
			Jobs:     r.jobs,
			GPUHours: r.gpuTime.float() / hwmodel.MilliPerGPU / float64(hwmodel.Hour),
			Share:    ratio(r.gpuTime.float(), total.float()),
			MaxWaitS: r.waitMax.Seconds(),
		}
		ts.MeanWaitS = ratio(r.waitSum.float(), float64(r.ran)) / float64(hwmodel.Second)
		ts.MeanBoundedSlowdown = ratio(r.slowdownSum, float64(r.ran))
		if r.ran > 0 {
			sy += ts.MeanBoundedSlowdown
			syy += ts.MeanBoundedSlowdown * ts.MeanBoundedSlowdown
			ny++
		}
		if r.jobs > 0 {
			ts.FairShare = ratio(r.weight, weightSum)
		}
		ts.ShareOverFair = ratio(ts.Share, ts.FairShare)
		if r.jobs > 0 && r.weight > 0 {
			x := ts.ShareOverFair
			sx += x
			sxx += x * x
			n++
		}
		out[i] = ts
	}
	jain := ratio(sx*sx, float64(n)*sxx)
	jainSlowdown := ratio(sy*sy, float64(ny)*syy)
	return out, jain, jainSlowdown
}

// faultMetrics computes the fault part of the Summary.
func faultMetrics(faults []FaultEvent, jobs jobList) (fs FaultSummary, retries, failedHW int, lostH, ckptH, goodput float64) {
	fs.Count = len(faults)
	var delay acc
	var maxDelay hwmodel.Time
	detected := 0
	for _, f := range faults {
		fs.JobsHit += f.JobsHit
		if f.Detected < f.At {
			continue // not detected before the run ended
		}
		d := f.Detected - f.At
		detected++
		delay.addMul(int64(d), 1)
		maxDelay = max(maxDelay, d)
	}
	fs.DetectionDelayS = MeanMax{
		Mean: ratio(delay.float(), float64(detected)) / float64(hwmodel.Second),
		Max:  maxDelay.Seconds(),
	}
	var lost, ckpt, useful, alloc acc // milli-GPU·µs
	for i := range jobs.len() {
		j := jobs.at(i)
		retries += int(j.HardwareFailures)
		if j.Failed() && j.HardwareFailures > 0 {
			retries--
			failedHW++
		}
		if j.GPUs <= 0 || j.GPUMilli <= 0 {
			continue
		}
		m := int64(j.GPUs) * int64(j.GPUMilli)
		lost.addMul(m, int64(max(j.Lost, 0)))
		ckpt.addMul(m, int64(max(j.Checkpoint, 0)))
		if j.Finished() && j.Run > 0 {
			alloc.addMul(m, int64(j.Run))
			useful.addMul(m, int64(max(j.Run-j.Lost-j.Checkpoint, 0)))
		}
	}
	gpuHours := func(a acc) float64 { return a.float() / hwmodel.MilliPerGPU / float64(hwmodel.Hour) }
	return fs, retries, failedHW, gpuHours(lost), gpuHours(ckpt), ratio(useful.float(), alloc.float())
}
