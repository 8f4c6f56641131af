package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// benchRun is one policy's records the size of a real run: n jobs of 15
// tenants on 312 nodes, each with one attempt, and an hourly timeline
// tracking the tenants over the run.
func benchRun(policy string, n int, seed uint64) (PolicyJobs, PolicyTimeline) {
	rng := rand.New(rand.NewPCG(seed, 11))
	js := make([]JobRecord, n)
	window := hwmodel.Time(n) * 100 * hwmodel.Second
	tl := NewTimeline(hwmodel.Hour, 2_496_000)
	var tenants []string
	for k := range 15 {
		tenants = append(tenants, fmt.Sprintf("vc%02d", k))
	}
	fair := make([]float64, len(tenants))
	milli := make([]int64, len(tenants))
	for k := range fair {
		fair[k], milli[k] = 1/float64(len(tenants)), int64(k)*1000
	}
	tl.TrackTenants(tenants, fair)
	end := hwmodel.Time(0)
	for i := range js {
		submit := window * hwmodel.Time(i) / hwmodel.Time(n)
		wait := hwmodel.Time(math.Exp(rng.NormFloat64()*3+6) * 1e6)
		run := hwmodel.Time(math.Exp(rng.NormFloat64()*2+8)*1e6) + 1
		node := fmt.Sprintf("p100-%03d", rng.IntN(312))
		js[i] = JobRecord{
			ID: int32(i), Name: fmt.Sprintf("philly-%d", i+2), Tenant: tenants[rng.IntN(len(tenants))],
			Submit: submit, Ready: submit, Start: submit + wait, End: submit + wait + run,
			Wait: wait, Run: run, GPUs: 1, GPUMilli: 1000, Nodes: node, Attempts: 1, State: Succeeded,
			AttemptLog: []AttemptRecord{{Start: submit + wait, End: submit + wait + run, Wait: wait, Nodes: node, Ended: AttemptSucceeded, ExitCode: NoExitCode}},
		}
		end = max(end, js[i].End)
	}
	for _, j := range js {
		tl.ObserveTenants(j.Submit, State{Queued: 1, Running: 10, InSystem: 11, AllocatedMilli: 105_000}, milli)
	}
	tl.Close(end)
	return PolicyJobs{Policy: policy, Jobs: js}, PolicyTimeline{Policy: policy, Timeline: tl}
}

// BenchmarkWrite writes each results file of a run of one and of four
// policies, the way runner.Write does.
func BenchmarkWrite(b *testing.B) {
	for _, c := range []struct {
		jobs int
		pols []string
	}{{20000, []string{"fcfs"}}, {82247, []string{"fcfs"}}, {82247, []string{"fcfs", "sjf", "priority", "fair"}}} {
		var jobs []PolicyJobs
		var series []PolicyTimeline
		var sums []Summary
		made := false
		// The records are made once, by the first writer that runs: a
		// -bench pattern that selects none of a case's writers skips them.
		makeRecords := func() {
			if made {
				return
			}
			made = true
			for k, p := range c.pols {
				j, s := benchRun(p, c.jobs, uint64(k))
				jobs, series = append(jobs, j), append(series, s)
				sums = append(sums, Summarize(RunInput{Policy: p, TotalGPUs: 2496, Jobs: j.Jobs, Timeline: s.Timeline}))
			}
		}
		writers := []struct {
			name  string
			write func(path string) error
		}{
			{"summary.json", func(p string) error { return WriteSummaryJSON(p, sums) }},
			{"jobs.parquet", func(p string) error { return WriteJobsParquet(p, jobs) }},
			{"attempts.parquet", func(p string) error { return WriteAttemptsParquet(p, jobs) }},
			{"timeseries.parquet", func(p string) error { return WriteTimeseriesParquet(p, series) }},
			{"tenants.parquet", func(p string) error { return WriteTenantsParquet(p, series) }},
			{"jobs.csv", func(p string) error { return WriteJobsCSV(p, jobs) }},
			{"timeseries.csv", func(p string) error { return WriteTimeseriesCSV(p, series) }},
			{"tenants.csv", func(p string) error { return WriteTenantsCSV(p, series) }},
		}
		for _, w := range writers {
			b.Run(fmt.Sprintf("jobs=%d/policies=%d/%s", c.jobs, len(c.pols), w.name), func(b *testing.B) {
				makeRecords()
				path := filepath.Join(b.TempDir(), w.name)
				for b.Loop() {
					if err := w.write(path); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
