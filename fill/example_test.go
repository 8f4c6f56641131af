package fill_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/brigadesim/brigade/fill"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// ExampleRun fills a three-node cluster (8 GPUs) with pods drawn from a
// six-pod list until they ask for 1.2 × its GPUs, under two placement
// policies and two seeds, and prints the mean curves at a few points and
// the summary table.
func ExampleRun() {
	nodes, err := hwmodel.ParseOpenBNodeList(strings.NewReader(`sn,cpu_milli,memory_mib,gpu,model
node-a,32000,131072,4,T4
node-b,32000,131072,2,T4
node-c,16000,65536,2,P100
`), "nodes.csv", "tiny")
	if err != nil {
		log.Fatal(err)
	}
	pods, err := workloads.ReadOpenBPods(strings.NewReader(`name,cpu_milli,memory_mib,num_gpu,gpu_milli
pod-1,4000,8192,1,500
pod-2,8000,16384,1,1000
pod-3,2000,4096,0,0
pod-4,16000,32768,2,1000
pod-5,4000,8192,1,300
pod-6,4000,8192,1,700
`), "pods.csv")
	if err != nil {
		log.Fatal(err)
	}
	res, err := fill.Run(fill.Experiment{
		Trace: "tiny-pods", Cluster: nodes, Pods: pods,
		Policies: []string{"fgd", "random"}, Seeds: []uint64{1, 2}, Load: 1.2,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Describe())
	for _, m := range res.Means() {
		fmt.Printf("%s: %.0f pods; allocated %.2f%% at 50%%, %.2f%% at 100%%, %.2f%% at 120%%\n",
			m.Policy, m.Pods, m.Alloc[50], m.Alloc[100], m.Alloc[120])
	}
	if err := res.WriteSummary(os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// tiny-pods on tiny (3 nodes, 8 GPUs): load 1.2, seeds 1-2, policies fgd,random
	// fgd: 14 pods; allocated 45.62% at 50%, 91.25% at 100%, 91.25% at 120%
	// random: 14 pods; allocated 45.62% at 50%, 85.00% at 100%, 85.00% at 120%
	// policy  alloc@100%  alloc@120%  frag@100%  frag@120%  failed
	// fgd     91.25       91.25       72.22      72.22      10.4%
	// random  85.00       85.00       90.97      90.97      13.5%
}
