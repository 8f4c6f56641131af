package serving_test

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/serving"
)

// A chat service on 4 single-GPU replicas behind least-outstanding
// routing, 20 requests per second for ten minutes, on an idle 8-GPU node.
func ExampleRun() {
	h100, _ := hwmodel.LookupModel("H100-80GB")
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{{Name: "n0", Model: h100.ID, GPUs: 8, CPUMilli: 1 << 40, MemoryMiB: 1 << 40}})
	spec := &serving.Spec{Horizon: 10 * hwmodel.Minute, Services: []serving.Service{{
		Name: "chat", GPUModel: "H100-80GB", GPUsPerReplica: 1, Routing: serving.LeastOutstanding,
		Replica:  serving.ReplicaModel{PrefillTokensPerS: 20000, DecodeTokensPerS: 50, BatchSlowdown: 0.005, MaxConcurrent: 32},
		Replicas: serving.ReplicaBounds{Initial: 4, Min: 4, Max: 4},
		Arrivals: serving.Arrivals{Rate: 20},
		Classes: []serving.Class{{Name: "chat", Weight: 1,
			InputTokens:  serving.Dist{Kind: "lognormal", Mean: 800, Sigma: 0.8},
			OutputTokens: serving.Dist{Kind: "lognormal", Mean: 120, Sigma: 0.6},
			TTFTTarget:   500 * hwmodel.Millisecond, E2ETarget: 10 * hwmodel.Second}},
	}}}
	res, err := serving.Run(serving.Config{Spec: spec, Cluster: cluster, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	all := res.Services[0].All
	fmt.Printf("%d requests, %d completed\n", all.Requests, all.Completed)
	fmt.Printf("E2E p50 %.1f s, p99 %.1f s; SLO attained %.0f%%\n", all.E2E.P50, all.E2E.P99, 100*all.SLOAttained)
	fmt.Printf("GPU-hours %.2f, saturation %.0f%%\n", res.Services[0].GPUHours, 100*res.Services[0].Saturation)
	// Output:
	// 12102 requests, 12061 completed
	// E2E p50 2.2 s, p99 8.5 s; SLO attained 100%
	// GPU-hours 0.67, saturation 41%
}
