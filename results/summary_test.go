package results

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// job builds a single-attempt record from seconds: it waited from ready to
// start and ran from start to end. attempts 0 makes a job that never ran
// (start = ready = end, no wait, no run).
func job(id int32, tenant string, submit, ready, start, end float64, gpus int, state JobState, attempts int) JobRecord {
	j := JobRecord{
		ID: id, Name: "j", Tenant: tenant,
		Submit: hwmodel.FromSeconds(submit), Ready: hwmodel.FromSeconds(ready),
		Start: hwmodel.FromSeconds(start), End: hwmodel.FromSeconds(end),
		GPUs: gpus, GPUMilli: 1000, Attempts: attempts, State: state,
	}
	if gpus == 0 {
		j.GPUMilli = 0
	}
	if attempts > 0 {
		j.Wait = j.Start - j.Ready
		j.Run = j.End - j.Start
	}
	return j
}

// handJobs is the hand-worked run (seconds):
//
//	id tenant submit ready start end  wait run gpus state       JCT  bsld (τ=10)
//	0  A      0      0     10    110  10   100 2    succeeded   110  110/100 = 1.1
//	1  A      0      0     20    60   20   40  1    succeeded   60   60/40   = 1.5
//	2  B      10     10    60    65   50   5   1    succeeded   55   55/10   = 5.5
//	3  B      20     20    50    125  30   75  1    failed (ran)105  105/75  = 1.4
//	4  B      20     125   125   125  0    0   1    failed, never ran (a dependency failed)
//
// GPU-seconds: A = 2×100 + 40 = 240, B = 5 + 75 = 80, so shares 0.75 / 0.25.
func handJobs() []JobRecord {
	return []JobRecord{
		job(0, "A", 0, 0, 10, 110, 2, Succeeded, 1),
		job(1, "A", 0, 0, 20, 60, 1, Succeeded, 1),
		job(2, "B", 10, 10, 60, 65, 1, Succeeded, 1),
		job(3, "B", 20, 20, 50, 125, 1, Failed, 1),
		job(4, "B", 20, 125, 125, 125, 1, Failed, 0),
	}
}

// C has twice the weight but submits nothing, so it is left out of the fair
// shares of A and B (1/2 each) and out of Jain's index.
var handTenants = []policies.Tenant{{Name: "A", Weight: 1}, {Name: "B", Weight: 1}, {Name: "C", Weight: 2, AllocatedMilliGPU: 99}}

// timelineFromJobs replays the records into a Timeline, the way a correct
// engine would observe them: a job is in the system over [Submit, End),
// queued over [Ready, Start) and running (holding its GPUs) over [Start, End)
// if it ran. skip drops one job from InSystem, to fake a bookkeeping bug.
func timelineFromJobs(jobs []JobRecord, capacityMilli int64, skip int32) *Timeline {
	type delta struct {
		at hwmodel.Time
		d  State
	}
	var ds []delta
	add := func(from, to hwmodel.Time, s State) {
		if to > from {
			neg := State{Queued: -s.Queued, Running: -s.Running, InSystem: -s.InSystem, AllocatedMilli: -s.AllocatedMilli}
			ds = append(ds, delta{from, s}, delta{to, neg})
		}
	}
	for _, j := range jobs {
		if j.ID != skip {
			add(j.Submit, j.End, State{InSystem: 1})
		}
		if j.Attempts > 0 {
			add(j.Ready, j.Start, State{Queued: 1})
			add(j.Start, j.End, State{Running: 1, AllocatedMilli: int64(j.GPUs) * int64(j.GPUMilli)})
		}
	}
	slices.SortStableFunc(ds, func(a, b delta) int { return int(a.at - b.at) })
	tl := NewTimeline(10*hwmodel.Second, capacityMilli)
	var cur State
	for i, d := range ds {
		cur.Queued += d.d.Queued
		cur.Running += d.d.Running
		cur.InSystem += d.d.InSystem
		cur.AllocatedMilli += d.d.AllocatedMilli
		if i+1 == len(ds) || ds[i+1].at != d.at {
			tl.Observe(d.at, cur)
		}
	}
	end := hwmodel.Time(0)
	if len(ds) > 0 {
		end = ds[len(ds)-1].at
	}
	tl.Close(end)
	return tl
}

func handInput() RunInput {
	jobs := handJobs()
	return RunInput{
		Policy: "fcfs", Seed: 42, Cluster: "toy-4", Workload: "hand",
		TotalGPUs: 4, Tenants: handTenants, Jobs: jobs,
		Timeline: timelineFromJobs(jobs, 4000, -1),
		Events:   17,
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

func TestSummarizeHandWorked(t *testing.T) {
	s := Summarize(handInput())

	checks := []struct {
		name      string
		got, want float64
	}{
		{"jobs_submitted", float64(s.JobsSubmitted), 5},
		{"jobs_succeeded", float64(s.JobsSucceeded), 3},
		{"jobs_failed", float64(s.JobsFailed), 2},
		{"makespan_s", s.MakespanS, 125},
		// waits of jobs that ran: 10 20 50 30 → sorted 10 20 30 50
		{"wait mean", s.WaitS.Mean, 27.5},
		{"wait p50 (index ceil(0.5·4)−1 = 1)", s.WaitS.P50, 20},
		{"wait p95 (index ceil(3.8)−1 = 3)", s.WaitS.P95, 50},
		{"wait p99", s.WaitS.P99, 50},
		{"wait max", s.WaitS.Max, 50},
		// JCTs: 110 60 55 105 → sorted 55 60 105 110
		{"jct mean", s.JCTS.Mean, 82.5},
		{"jct p50", s.JCTS.P50, 60},
		{"jct p95", s.JCTS.P95, 110},
		{"jct max", s.JCTS.Max, 110},
		// slowdowns: 1.1 1.5 5.5 1.4 → sorted 1.1 1.4 1.5 5.5
		{"bsld mean", s.BoundedSlowdown.Mean, 9.5 / 4},
		{"bsld p50", s.BoundedSlowdown.P50, 1.4},
		{"bsld p99", s.BoundedSlowdown.P99, 5.5},
		{"bsld max", s.BoundedSlowdown.Max, 5.5},
		// 3 succeeded in 125 s
		{"throughput_jobs_per_h", s.ThroughputJobsPerH, 3 * 3600.0 / 125},
		// 320 GPU-s allocated on 4 GPUs over 125 s
		{"gpu_utilisation", s.GPUUtilisation, 320.0 / (4 * 125)},
		{"gpu_hours_allocated", s.GPUHoursAllocated, 320.0 / 3600},
		// ∫Queued = Σ waits = 110 job-s over 125 s; two queued at once at most
		{"queue mean", s.QueueLength.Mean, 110.0 / 125},
		{"queue max", float64(s.QueueLength.Max), 2},
		// default threshold max(10 × 20 s, 1 h) = 1 h: nobody starved
		{"starvation threshold", s.Starvation.ThresholdS, 3600},
		{"starved", float64(s.Starvation.StarvedJobs), 0},
		{"longest wait", s.Starvation.LongestWaitS, 50},
		{"longest wait job", float64(s.Starvation.LongestWaitJob), 2},
		// shares/fair = 0.75/0.5, 0.25/0.5 = 1.5, 0.5 → (2)² / (2 × 2.5) = 0.8
		{"jain", s.JainIndex, 0.8},
		// Σ (End − Submit) over the 5 finished = 110+60+55+105+105 = 435
		{"L", s.LittlesLaw.MeanInSystem, 435.0 / 125},
		{"λ", s.LittlesLaw.ThroughputPerS, 5.0 / 125},
		{"W", s.LittlesLaw.MeanTimeInSystemS, 87},
		{"events", float64(s.Events), 17},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.LittlesLaw.RelError > 1e-12 {
		t.Errorf("Little's law error %v on a consistent run, want ~0", s.LittlesLaw.RelError)
	}

	wantTenants := []TenantSummary{
		{Tenant: "A", Weight: 1, Jobs: 2, GPUHours: 240.0 / 3600, Share: 0.75, FairShare: 0.5, ShareOverFair: 1.5, MeanWaitS: 15, MaxWaitS: 20},
		{Tenant: "B", Weight: 1, Jobs: 3, GPUHours: 80.0 / 3600, Share: 0.25, FairShare: 0.5, ShareOverFair: 0.5, MeanWaitS: 40, MaxWaitS: 50},
		{Tenant: "C", Weight: 2},
	}
	if len(s.Tenants) != len(wantTenants) {
		t.Fatalf("tenants = %+v", s.Tenants)
	}
	for i, w := range wantTenants {
		g := s.Tenants[i]
		if g.Tenant != w.Tenant || g.Jobs != w.Jobs || !near(g.Weight, w.Weight) || !near(g.GPUHours, w.GPUHours) ||
			!near(g.Share, w.Share) || !near(g.FairShare, w.FairShare) || !near(g.ShareOverFair, w.ShareOverFair) ||
			!near(g.MeanWaitS, w.MeanWaitS) || !near(g.MaxWaitS, w.MaxWaitS) {
			t.Errorf("tenant %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestSummarizeJain(t *testing.T) {
	// One 1-GPU job per row, run for the given seconds; weights as given.
	cases := []struct {
		name    string
		weights []float64
		runs    []float64 // seconds of GPU time per tenant; <0: no job
		want    float64
	}{
		{"equal weights 3:1", []float64{1, 1}, []float64{300, 100}, 0.8},
		{"perfectly fair", []float64{1, 1, 1}, []float64{50, 50, 50}, 1},
		{"weighted and fair", []float64{3, 1}, []float64{300, 100}, 1},
		{"one tenant takes all of three", []float64{1, 1, 1}, []float64{90, 0, 0}, 1.0 / 3},
		{"idle tenant ignored", []float64{1, 1, 5}, []float64{300, 100, -1}, 0.8},
		{"zero weight ignored", []float64{1, 1, 0}, []float64{300, 100, 100}, 0.8},
		{"nobody ran: undefined", []float64{1, 1}, []float64{0, 0}, 0},
		{"no tenants", nil, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ts []policies.Tenant
			var jobs []JobRecord
			for i, w := range c.weights {
				name := string(rune('A' + i))
				ts = append(ts, policies.Tenant{Name: name, Weight: w})
				if c.runs[i] >= 0 {
					jobs = append(jobs, job(int32(len(jobs)), name, 0, 0, 0, c.runs[i], 1, Succeeded, 1))
				}
			}
			s := Summarize(RunInput{Tenants: ts, Jobs: jobs, TotalGPUs: 4})
			if !near(s.JainIndex, c.want) {
				t.Errorf("jain = %v, want %v", s.JainIndex, c.want)
			}
		})
	}
}

func TestSummarizeUnknownTenantIsListed(t *testing.T) {
	jobs := []JobRecord{
		job(0, "A", 0, 0, 0, 100, 1, Succeeded, 1),
		job(1, "Z", 0, 0, 0, 300, 1, Succeeded, 1),
	}
	s := Summarize(RunInput{Tenants: []policies.Tenant{{Name: "A", Weight: 1}}, Jobs: jobs})
	if len(s.Tenants) != 2 || s.Tenants[1].Tenant != "Z" || s.Tenants[1].Weight != 0 ||
		!near(s.Tenants[1].Share, 0.75) || s.Tenants[1].FairShare != 0 || s.Tenants[1].ShareOverFair != 0 {
		t.Fatalf("tenants = %+v", s.Tenants)
	}
	// A alone in the index: fair share 1, share 0.25 → one tenant, index 1.
	if s.JainIndex != 1 {
		t.Errorf("jain = %v, want 1", s.JainIndex)
	}
}

func TestLittlesLawDetectsInconsistentTimeline(t *testing.T) {
	in := handInput()
	// The engine "forgot" job 4 (failed by a dependency, in the system from
	// 20 s to 125 s): ∫InSystem = 435 − 105 = 330 instead of 435.
	in.Timeline = timelineFromJobs(in.Jobs, 4000, 4)
	s := Summarize(in)
	want := (435.0 - 330) / 435
	if !near(s.LittlesLaw.RelError, want) {
		t.Errorf("rel_error = %v, want %v", s.LittlesLaw.RelError, want)
	}
	if s.LittlesLaw.RelError < 0.2 {
		t.Errorf("rel_error %v does not flag the missing job", s.LittlesLaw.RelError)
	}

	// No timeline at all: L = 0 against λW > 0, the largest error.
	in.Timeline = nil
	if s := Summarize(in); s.LittlesLaw.RelError != 1 || s.GPUUtilisation != 0 || s.QueueLength != (QueueLength{}) {
		t.Errorf("nil timeline: %+v util %v queue %+v", s.LittlesLaw, s.GPUUtilisation, s.QueueLength)
	}
}

func TestStarvationThreshold(t *testing.T) {
	// waits in seconds of jobs that ran; one more job never ran.
	mk := func(waits ...float64) []JobRecord {
		var js []JobRecord
		for i, w := range waits {
			js = append(js, job(int32(i), "A", 0, 0, w, w+60, 1, Succeeded, 1))
		}
		return append(js, job(int32(len(waits)), "A", 0, 0, 0, 0, 1, Failed, 0))
	}
	cases := []struct {
		name          string
		waits         []float64
		given         hwmodel.Time
		wantThreshold float64
		wantStarved   int
		wantLongest   int32
	}{
		// median of 10 20 30 50 is 20 → 10×20 s < 1 h
		{"floor of 1 h", []float64{10, 20, 30, 50}, 0, 3600, 0, 3},
		// median of 600 900 1200 9000 9500 is 1200 → 12000 s; 9000 and 9500 are below it
		{"ten times the median", []float64{600, 900, 1200, 9000, 9500}, 0, 12000, 0, 4},
		{"ten times the median, one starved", []float64{600, 900, 1200, 9000, 12001}, 0, 12000, 1, 4},
		{"given threshold", []float64{10, 20, 30, 50}, 25 * hwmodel.Second, 25, 2, 3},
		{"strictly greater", []float64{10, 25}, 25 * hwmodel.Second, 25, 0, 1},
		{"ties go to the lowest id", []float64{40, 40}, 0, 3600, 0, 0},
		{"nobody waited", []float64{0, 0}, 0, 3600, 0, -1},
		{"no job ran", nil, 0, 3600, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Summarize(RunInput{Jobs: mk(c.waits...), StarvationThreshold: c.given})
			st := s.Starvation
			if st.ThresholdS != c.wantThreshold || st.StarvedJobs != c.wantStarved || st.LongestWaitJob != c.wantLongest {
				t.Errorf("starvation = %+v, want threshold %v starved %d longest job %d",
					st, c.wantThreshold, c.wantStarved, c.wantLongest)
			}
		})
	}
}

func TestBoundedSlowdownBound(t *testing.T) {
	j := job(0, "A", 0, 0, 95, 100, 1, Succeeded, 1) // JCT 100, run 5
	cases := []struct {
		tau  hwmodel.Time
		want float64
	}{
		{0, 10},                         // default τ = 10 s: 100/10
		{20 * hwmodel.Second, 5},        // 100/20
		{hwmodel.Second, 20},            // run 5 s > τ: 100/5
		{1000 * hwmodel.Second, 1},      // floor at 1
		{-3 * hwmodel.Second, 10},       // negative means default
		{100 * hwmodel.Second, 1},       // exactly 1
		{50 * hwmodel.Second, 2},        // 100/50
		{4 * hwmodel.Second, 100.0 / 5}, // run dominates
	}
	for _, c := range cases {
		if got := BoundedSlowdown(j, c.tau); got != c.want {
			t.Errorf("τ=%d: %v, want %v", c.tau, got, c.want)
		}
	}
}

func TestSummarizeEmptyIsFiniteJSON(t *testing.T) {
	inputs := map[string]RunInput{
		"nothing":         {},
		"no finished job": {Jobs: []JobRecord{{ID: 0, Tenant: "A", Submit: 5}}, Tenants: []policies.Tenant{{Name: "A", Weight: math.NaN()}}},
		"zero makespan": {
			Jobs:     []JobRecord{job(0, "A", 3, 3, 3, 3, 1, Succeeded, 1)},
			Timeline: NewTimeline(0, 0), TotalGPUs: 0,
		},
	}
	for _, name := range []string{"nothing", "no finished job", "zero makespan"} {
		in := inputs[name]
		if in.Timeline != nil {
			in.Timeline.Close(3 * hwmodel.Microsecond)
		}
		s := Summarize(in)
		b, err := json.Marshal(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Tenants == nil {
			t.Errorf("%s: tenants is nil, would encode as null", name)
		}
		if s.Starvation.LongestWaitJob != -1 || s.JainIndex != 0 || s.MakespanS != 0 {
			t.Errorf("%s: %s", name, b)
		}
	}
}

func TestJainIndexSlowdownHandWorked(t *testing.T) {
	s := hwmodel.Second
	jobs := []JobRecord{
		// Slowdown 1: ran at once.
		{ID: 0, Tenant: "a", Submit: 0, Ready: 0, Start: 0, End: 10 * s, Run: 10 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Succeeded},
		// Slowdown 4: waited 30 s, ran 10 s.
		{ID: 1, Tenant: "b", Submit: 0, Ready: 0, Start: 30 * s, End: 40 * s, Wait: 30 * s, Run: 10 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Succeeded},
	}
	sum := Summarize(RunInput{Policy: "p", TotalGPUs: 1, Jobs: jobs,
		Tenants: []policies.Tenant{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}}})
	if got, want := sum.JainIndexSlowdown, 25.0/34; math.Abs(got-want) > 1e-12 {
		t.Errorf("jain_index_slowdown = %v, want (1+4)²/(2·(1²+4²)) = %v", got, want)
	}
	if sum.Tenants[1].MeanBoundedSlowdown != 4 {
		t.Errorf("tenant b mean bounded slowdown = %v, want 4", sum.Tenants[1].MeanBoundedSlowdown)
	}
}

func TestGPUUtilisationArrivalsHandWorked(t *testing.T) {
	s := hwmodel.Second
	jobs := []JobRecord{
		{ID: 0, Submit: 0, End: 10 * s, Run: 10 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Succeeded},
		{ID: 1, Submit: 100 * s, Start: 100 * s, End: 1000 * s, Run: 900 * s, GPUs: 1, GPUMilli: 1000, Attempts: 1, State: Succeeded},
	}
	// 2 GPUs; 50 GPU-seconds allocated over the 100 s arrival window.
	sum := Summarize(RunInput{Policy: "p", TotalGPUs: 2, Jobs: jobs, Arrivals: &Integrals{AllocatedMilliGPUSeconds: 50_000}})
	if got, want := sum.GPUUtilisationArrivals, 0.25; math.Abs(got-want) > 1e-12 {
		t.Errorf("gpu_utilisation_arrivals = %v, want 50 GPU-s / (2 GPUs × 100 s) = %v", got, want)
	}
	if sum := Summarize(RunInput{Policy: "p", TotalGPUs: 2, Jobs: jobs}); sum.GPUUtilisationArrivals != 0 {
		t.Errorf("without an arrival window gpu_utilisation_arrivals = %v, want 0", sum.GPUUtilisationArrivals)
	}
}

// A run summarised from its records' JobStats is the summary of the
// records, field for field; no JobStats field can be left out of it.
func TestSummarizeFromStats(t *testing.T) {
	for _, in := range []RunInput{handInput(), {Policy: "empty"}} {
		want := Summarize(in)
		in.Stats, in.Jobs = Stats(in.Jobs), nil
		if got := Summarize(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: from JobStats %+v\nfrom records %+v", in.Policy, got, want)
		}
	}
}
