package policies_test

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// The driver loop: a driver holds a Host, tells it of every transition,
// and at a scheduling point lets it call the policy and apply the
// decisions through the driver's own apply function.
func Example() {
	cluster, _ := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "a", Model: 1, GPUs: 4, CPUMilli: 32000, MemoryMiB: 256 << 10},
		{Name: "b", Model: 1, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10},
	})
	var h policies.Host
	if err := h.Init(cluster, []policies.Tenant{{Name: "lab", Weight: 1}}, nil); err != nil {
		panic(err)
	}
	for i, gpus := range []int{8, 4, 2} {
		id := h.AddJob(policies.Job{
			Submit: policies.Time(i), Estimate: hwmodel.Hour,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: 1000, CPUMilli: int64(gpus) * 4000},
		})
		h.Queue(id)
	}

	spec, err := policies.ParseSpec("fcfs+bf/bestfit")
	if err != nil {
		panic(err)
	}
	p, err := spec.New()
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name())
	// The Host drops the policy's reservations, then applies each decision
	// through apply; a refusal reaches the policy as a Rejection.
	h.Schedule(p, func(d policies.Decision) string {
		if err := h.Start(d.Job, d.Placement); err != nil {
			return err.Error()
		}
		for _, s := range d.Placement {
			fmt.Printf("%s job %d on node %s GPUs %08b\n", d.Kind, d.Job, cluster.Node(s.Node).Name, s.GPUs)
		}
		return ""
	})
	fmt.Printf("tenant lab holds %d milli-GPU and %d milli-CPU\n", h.Tenants()[0].AllocatedMilliGPU, h.Tenants()[0].AllocatedCPUMilli)
	// Output:
	// fcfs+bf/bestfit
	// start job 0 on node b GPUs 11111111
	// start job 1 on node a GPUs 00001111
	// tenant lab holds 12000 milli-GPU and 48000 milli-CPU
}

// A spec's label is canonical and parses back to the same policy.
func ExampleParseSpec() {
	s, err := policies.ParseSpec("priority+wwait=0.5+bf/bestfit")
	if err != nil {
		panic(err)
	}
	fmt.Println(s, s.Backfill, s.WaitWeightPerHour)
	_, err = policies.ParseSpec("sjf+bff")
	fmt.Println(err)
	// Output:
	// priority+bf+wwait=0.5/bestfit true 0.5
	// policy "sjf+bff": unknown option "bff" (known: bf, oracle, wprio, wwait, wdata, age, fs, size, qos, small, maxage, halflife, calc, local, fastest, preempt, thresholds, promote, quantum, objective, round, mig); did you mean "bf"?
}
