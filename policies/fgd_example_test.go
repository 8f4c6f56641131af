package policies_test

import (
	"fmt"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// ExampleNewPlacerWith places a GPU-sharing job with FGD: where the
// expected fragmentation of the target workload grows least.
func ExampleNewPlacerWith() {
	t4, _ := hwmodel.LookupModel("T4")
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "a", Model: t4.ID, GPUs: 2, CPUMilli: 32000, MemoryMiB: 128 << 10},
		{Name: "b", Model: t4.ID, GPUs: 2, CPUMilli: 32000, MemoryMiB: 128 << 10},
	})
	// Node a's GPU 0 already runs a job using 600 milli-GPU.
	_ = cluster.Allocate(hwmodel.Placement{{Node: 0, GPUs: 1 << 0, Milli: 600, CPUMilli: 1000}})

	// The workload the cluster expects: half whole-GPU jobs, half jobs
	// asking for 0.4 of a GPU.
	trace := []hwmodel.Request{
		{GPUs: 1, GPUMilli: 1000, CPUMilli: 1000, MemoryMiB: 4096},
		{GPUs: 1, GPUMilli: 400, CPUMilli: 1000, MemoryMiB: 2048},
	}
	target := policies.TargetFromRequests(trace)
	placer, err := policies.NewPlacerWith("fgd", policies.PlacerConfig{Seed: 1, Target: target})
	if err != nil {
		fmt.Println(err)
		return
	}

	// A job asking for 0.3 of a GPU. On node a's GPU 0 it leaves 100
	// milli that no job of the target can use, but it also stops that
	// GPU's 400 milli from blocking a whole-GPU job; anywhere else it
	// would split an idle GPU that a whole-GPU job could have used.
	job := hwmodel.Request{GPUs: 1, GPUMilli: 300, CPUMilli: 500, MemoryMiB: 1024}
	p, ok := placer.Place(nil, cluster.View(), job)
	if !ok {
		fmt.Println("no room")
		return
	}
	before := policies.ClusterFragmentation(cluster.View(), target)
	_ = cluster.Allocate(p)
	after := policies.ClusterFragmentation(cluster.View(), target)
	fmt.Printf("node %s, GPU %d\n", cluster.Node(p[0].Node).Name, bits.TrailingZeros64(p[0].GPUs))
	fmt.Printf("fragmentation %.0f -> %.0f milli-GPU\n", before, after)
	// Output:
	// node a, GPU 0
	// fragmentation 200 -> 100 milli-GPU
}
