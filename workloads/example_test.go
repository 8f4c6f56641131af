package workloads_test

import (
	"fmt"
	"log"

	"github.com/brigadesim/brigade/workloads"
)

func ExampleReadFile() {
	w, err := workloads.ReadFile("testdata/philly/good.csv", "philly")
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range w.Jobs {
		fmt.Printf("%-9s tenant %-7s submit %5gs  %2d GPUs for %gs  (%s)\n",
			j.Name, j.Tenant, j.Submit.Seconds(), j.Req.GPUs, j.Duration.Seconds(), j.Source)
	}
	fmt.Println(w.Tenants)
	// Output:
	// philly-3  tenant 11cb48  submit     0s   8 GPUs for 3600.5s  (testdata/philly/good.csv:3)
	// philly-2  tenant 6214e9  submit    10s   1 GPUs for 120s  (testdata/philly/good.csv:2)
	// philly-4  tenant unknown submit    10s   2 GPUs for 60s  (testdata/philly/good.csv:4)
	// philly-5  tenant 6214e9  submit  7200s   1 GPUs for 1s  (testdata/philly/good.csv:5)
	// [{11cb48 1} {6214e9 1} {unknown 1}]
}

func ExampleReadFile_error() {
	_, err := workloads.ReadFile("testdata/brigade/bad-cycle.csv", "brigade")
	fmt.Println(err)
	// Output:
	// testdata/brigade/bad-cycle.csv:2: field "deps": dependency cycle: "a" (testdata/brigade/bad-cycle.csv:2) -> "c" (testdata/brigade/bad-cycle.csv:4) -> "b" (testdata/brigade/bad-cycle.csv:3) -> "a"; each job depends on the next
}

func ExampleGenerate() {
	cfg := workloads.DefaultSyntheticConfig()
	cfg.Jobs = 6
	cfg.DAG = workloads.DAGConfig{Probability: 0.5, Shape: "chain", Tasks: 3}
	w, err := workloads.Generate(cfg, 2024)
	if err != nil {
		log.Fatal(err)
	}
	for _, j := range w.Jobs {
		fmt.Printf("%s dag=%-3q %s prio %d submit %6.0fs run %7.0fs est %7.0fs %2d GPUs deps %v\n",
			j.Name, j.DAG, j.Tenant, j.Priority, j.Submit.Seconds(), j.Duration.Seconds(), j.Estimate.Seconds(), j.Req.GPUs, j.Deps)
	}
	fmt.Printf("mean GPU demand of the default config: %.0f GPUs\n", workloads.DefaultSyntheticConfig().MeanGPUDemand())
	// Same seed, same workload.
	again, _ := workloads.Generate(cfg, 2024)
	fmt.Println(again.Jobs[5].Duration == w.Jobs[5].Duration)
	// Output:
	// j0 dag="j0" team-d prio 2 submit      0s run     148s est     129s  1 GPUs deps []
	// j1 dag="j0" team-d prio 2 submit      0s run    1307s est    3965s  1 GPUs deps [0]
	// j2 dag="j0" team-d prio 2 submit      0s run    7376s est   17162s  1 GPUs deps [1]
	// j3 dag="j3" team-b prio 1 submit     56s run      12s est      37s  1 GPUs deps []
	// j4 dag="j3" team-b prio 1 submit     56s run      67s est      84s  1 GPUs deps [3]
	// j5 dag="j3" team-b prio 1 submit     56s run    2808s est    4385s  1 GPUs deps [4]
	// mean GPU demand of the default config: 331 GPUs
	// true
}
