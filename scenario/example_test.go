package scenario_test

import (
	"fmt"
	"strings"

	"github.com/brigadesim/brigade/scenario"
)

// A scenario compares setups of one experiment: here one training job
// of 16 GPUs queued behind 1-GPU jobs, with and without EASY backfill.
func Example() {
	f, err := scenario.Parse([]byte(`
cluster: h200x8
policy: fcfs
workload:
  jobs:
    - {name: first, duration: 1h, gpus: 4}
    - {name: train, submit: 1m, duration: 3h, gpus: 8}
    - {name: quick, submit: 2m, duration: 30m, gpus: 2}
setups:
  - {name: fcfs}
  - {name: backfill, policy: fcfs+bf}
columns:
  - {header: setup, value: setup.name}
  - {header: quick waits, value: job.quick.wait_s, format: duration}
  - {header: train waits, value: job.train.wait_s, format: duration}
`), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := scenario.Run(f, scenario.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, _ := res.Table()
	for _, row := range rows {
		fmt.Println(strings.Join(row, " | "))
	}
	// Output:
	// setup | quick waits | train waits
	// fcfs | 4.0h | 59m
	// backfill | 0s | 59m
}
