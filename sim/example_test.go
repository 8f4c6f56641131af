package sim_test

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

// Example runs three jobs on one 8-GPU node under FCFS: the 8-GPU job waits
// for the first job, and the last job waits behind it (strict order).
func Example() {
	h100, _ := hwmodel.LookupModel("H100")
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{{Name: "node-0", Model: h100.ID, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10}})
	gpus := func(n int) hwmodel.Request { return hwmodel.Request{GPUs: n, GPUMilli: hwmodel.MilliPerGPU} }
	w, err := workloads.Build([]workloads.Job{
		{Name: "a", Tenant: "t", Submit: 0, Duration: 10 * hwmodel.Minute, Req: gpus(4)},
		{Name: "b", Tenant: "t", Submit: hwmodel.Minute, Duration: 5 * hwmodel.Minute, Req: gpus(8)},
		{Name: "c", Tenant: "t", Submit: 2 * hwmodel.Minute, Duration: 5 * hwmodel.Minute, Req: gpus(2)},
	}, nil, nil, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	fcfs, _ := policies.New("fcfs", policies.Options{})
	eng, err := sim.New(sim.Config{Cluster: cluster, Workload: w, Policy: fcfs, CheckInvariants: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := eng.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, o := range res.Jobs {
		fmt.Printf("%s: %s, waited %v min, ended at %v min\n", w.Jobs[i].Name, o.State, o.Wait/hwmodel.Minute, o.End/hwmodel.Minute)
	}
	// Output:
	// a: succeeded, waited 0 min, ended at 10 min
	// b: succeeded, waited 9 min, ended at 15 min
	// c: succeeded, waited 13 min, ended at 20 min
}
