package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/pollux"
)

const polluxUsage = `Usage: brigade pollux [flags]

Runs the Tiresias experiment of the Pollux artifact (Qiao et al., OSDI'21;
petuum/adaptdl, branch osdi21-artifact, simulator/): its 8 workloads at
job loads 0.5, 1.0, 1.5 and 2.0 on 16 nodes of 4 GPUs, through Brigade's
engine with the artifact's application model (--apps), 60 s decision grid
(--interval 60s), 30 s restart (--startup-delay 30s, --save-on-preempt)
and the policy tiresias/mostfree. The workloads, the application model
and the published JCTs are embedded (pollux/data).

Prints, per workload and load, the mean JCT beside the published one and
how many jobs have exactly the published JCT, then the means over the
workloads of each load (the paper's figure 8a measure) and the count of
exact jobs. Definitions: pollux/doc.go and docs/pollux.md.`

const polluxExamples = `  brigade pollux
  brigade pollux --load 1.0
  brigade pollux --policy las/mostfree
`

func runPollux(args []string, stdout, stderr io.Writer) error {
	var loads []string
	var policy string
	fs := newFlagSet("pollux", polluxUsage, polluxExamples)
	fs.StringSliceVar(&loads, "load", nil, "comma-separated job `loads` to run, of "+strings.Join(pollux.Loads, ", ")+" (default: all)")
	fs.StringVar(&policy, "policy", pollux.Policy, "policy `spec` to run the workloads under (the published JCTs are Tiresias')")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	for _, l := range loads {
		if !slices.Contains(pollux.Loads, l) {
			return usageError{fmt.Errorf("--load: want loads among %s, got %q", strings.Join(pollux.Loads, ", "), l)}
		}
	}
	rows, err := pollux.Compare(policy, loads)
	if err != nil {
		return err
	}
	return pollux.Write(stdout, rows)
}
