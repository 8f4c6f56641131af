package runner_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
)

// Simulate is brigade sim in one call: the workload, the cluster, the
// policies and the engine settings go in; the runs come out, and the
// results folder is written whole.
func ExampleSimulate() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	s, err := runner.Simulate(runner.Comparison{
		Synthetic: 200, Cluster: "h200x8", Seed: 1,
		Policies: []policies.Spec{policies.MustParseSpec("fcfs"), policies.MustParseSpec("sjf+bf")},
		Options:  runner.Options{StartupDelay: 4 * hwmodel.Second},
		Out:      filepath.Join(dir, "out"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.WorkloadName, "on", s.ClusterName)
	for _, sum := range s.Summaries() {
		fmt.Println(sum.Policy, sum.JobsSucceeded)
	}
	_, err = os.Stat(filepath.Join(dir, "out", "run.json"))
	fmt.Println("run.json written:", err == nil)
	// Output:
	// synthetic: 200 jobs, load 0.9, seed 1 on h200x8
	// fcfs 200
	// sjf+bf 200
	// run.json written: true
}
