package fill

import (
	"testing"
)

// BenchmarkFill is one (policy, seed) fill of the default Alibaba trace
// (seed 42: 10,866 pods on 1,213 nodes) per iteration, per policy:
// placing every pod and measuring allocation and fragmentation after each.
// Sampling the workload is not timed.
//
//	go test ./fill -run - -bench Fill -benchtime 5x
func BenchmarkFill(b *testing.B) {
	for _, policy := range []string{"fgd", "bestfit", "dotprod", "packing", "clustering", "random"} {
		b.Run(policy, func(b *testing.B) {
			e := realExperiment(b, "default", []string{policy}, []uint64{42})
			e.Workers = 1
			prep, err := prepare(e)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				r := prep.run(0, 0)
				if _, err := r.do(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/fill")
		})
	}
}

// BenchmarkExperiment is the whole default-trace experiment of the paper,
// 6 policies × 10 seeds, on GOMAXPROCS workers, per iteration.
//
//	go test ./fill -run - -bench Experiment -benchtime 1x
func BenchmarkExperiment(b *testing.B) {
	seeds := []uint64{42, 43, 44, 45, 46, 47, 48, 49, 50, 51}
	e := realExperiment(b, "default", []string{"fgd", "bestfit", "dotprod", "packing", "clustering", "random"}, seeds)
	for range b.N {
		if _, err := Run(e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/experiment")
}
