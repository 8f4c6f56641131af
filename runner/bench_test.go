package runner_test

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/runner"
)

// BenchmarkFaults measures the fault machinery's overhead: the same FCFS
// case without and with node (MTBF 30 d) and GPU (MTBF 90 d) failures,
// heartbeats every 5 s, 5-minute checkpoints. Compare events/s of the
// pairs; run the large case with
//
//	go test ./runner -run '^$' -bench 'Faults/gpus=80000' -benchtime 1x
func BenchmarkFaults(b *testing.B) {
	faults := &runner.Faults{
		Model: hwmodel.FailureModel{NodeMTBF: 30 * hwmodel.Day, GPUMTBF: 90 * hwmodel.Day,
			NodeRepair: hwmodel.RepairModel{Mean: 2 * hwmodel.Hour}, GPURepair: hwmodel.RepairModel{Mean: 4 * hwmodel.Hour}},
		Retry: "fixed", MaxRetries: 10, RestartTime: 2 * hwmodel.Minute,
		CheckpointEvery: 5 * hwmodel.Minute, CheckpointCost: 10 * hwmodel.Second,
	}
	for _, c := range []runner.BenchCase{
		{Jobs: 100000, GPUs: 1000, Policy: "fcfs", Load: 0.9, Seed: 1},
		{Jobs: 1000000, GPUs: 80000, Policy: "fcfs", Load: 0.2, Seed: 1},
	} {
		w, err := c.BenchWorkload()
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []*runner.Faults{nil, faults} {
			c.Faults = f
			b.Run(fmt.Sprintf("gpus=%d/jobs=%d/faults=%v", c.GPUs, c.Jobs, f != nil), func(b *testing.B) {
				var events, nfaults int64
				for b.Loop() {
					b.StopTimer()
					prep, err := c.Prepare(w)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					r, err := runner.Measure(prep)
					if err != nil {
						b.Fatal(err)
					}
					events += r.Events
					nfaults += int64(r.Faults)
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(nfaults)/float64(b.N), "faults/run")
			})
		}
	}
}
