package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/pollux"
)

const polluxUsage = `Usage: brigade pollux [flags]

Runs the baseline experiments of the Pollux artifact (Qiao et al.,
OSDI'21; petuum/adaptdl, branch osdi21-artifact, simulator/) through
Brigade's engine with the artifact's application model (--apps), 60 s
decision grid (--interval 60s), 30 s restart (--startup-delay 30s,
--save-on-preempt), on 16 nodes of 4 GPUs:

  tiresias  its 8 workloads at job loads 0.5, 1.0, 1.5 and 2.0 under the
            policy tiresias/mostfree
  optimus   the same 32 runs under the policy optimus

The workloads, the application model and the published JCTs are embedded
(pollux/data).

Prints, per baseline, workload and load, the mean JCT beside the
published one and how many jobs have exactly the published JCT, then the
means over the workloads of each baseline and load (the paper's figure 8a
measure) and the count of exact jobs. Definitions: pollux/doc.go and
docs/pollux.md.`

const polluxExamples = `  brigade pollux
  brigade pollux --baseline optimus --load 1.0
  brigade pollux --baseline tiresias --load 1.0
  brigade pollux --baseline tiresias --policy las/mostfree
`

func runPollux(args []string, stdout, stderr io.Writer) error {
	var loads, baselines []string
	var policy string
	var names, allLoads []string
	for _, b := range pollux.Baselines {
		names = append(names, b.Name)
		for _, l := range b.Loads {
			if !slices.Contains(allLoads, l) {
				allLoads = append(allLoads, l)
			}
		}
	}
	slices.Sort(allLoads)
	fs := newFlagSet("pollux", polluxUsage, polluxExamples)
	fs.StringSliceVar(&baselines, "baseline", nil, "comma-separated published `runs` to reproduce, of "+strings.Join(names, ", ")+" (default: all)")
	fs.StringSliceVar(&loads, "load", nil, "comma-separated job `loads` to run, of "+strings.Join(allLoads, ", ")+" (default: all a baseline publishes)")
	fs.StringVar(&policy, "policy", "", "policy `spec` to run the workloads under instead of each baseline's own (compared with the baseline's published JCTs)")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	for _, l := range loads {
		if !slices.Contains(allLoads, l) {
			return usageError{fmt.Errorf("--load: want loads among %s, got %q", strings.Join(allLoads, ", "), l)}
		}
	}
	for _, b := range baselines {
		if !slices.Contains(names, b) {
			return usageError{fmt.Errorf("--baseline: want baselines among %s, got %q", strings.Join(names, ", "), b)}
		}
	}
	var rows []pollux.Row
	for _, b := range pollux.Baselines {
		if baselines != nil && !slices.Contains(baselines, b.Name) {
			continue
		}
		var ls []string
		for _, l := range b.Loads {
			if loads == nil || slices.Contains(loads, l) {
				ls = append(ls, l)
			}
		}
		if ls == nil {
			continue
		}
		r, err := pollux.CompareBaseline(b, policy, ls)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if rows == nil {
		return usageError{fmt.Errorf("--load %s: no selected baseline publishes it", strings.Join(loads, ","))}
	}
	return pollux.Write(stdout, rows)
}
