package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

func defaultSpec(t testing.TB, names ...string) runner.Spec {
	t.Helper()
	w, err := workloads.Default()
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	cs, err := hwmodel.ResolveCluster("philly-sample")
	if err != nil {
		t.Fatal(err)
	}
	specs := make([]policies.Spec, len(names))
	for i, n := range names {
		specs[i] = policies.Spec{Order: n} // unparsed: an unknown order must reach Run
	}
	return runner.Spec{Workload: w, WorkloadName: "default", NewCluster: cs.Build, ClusterName: cs.Name, Policies: specs, Parallel: 2}
}

func TestRunKeepsPolicyOrderAndSharesTheStarvationThreshold(t *testing.T) {
	runs, err := runner.Run(defaultSpec(t, "sjf", "fcfs", "fair"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Summary.Policy)
	}
	if strings.Join(got, ",") != "sjf,fcfs,fair" {
		t.Fatalf("policies came back as %v, want the order they were named", got)
	}
	th := runs[0].Summary.Starvation.ThresholdS
	for _, r := range runs {
		if r.Summary.Starvation.ThresholdS != th {
			t.Fatalf("%s starvation threshold %v, %s has %v: a comparison must use one threshold",
				r.Summary.Policy, r.Summary.Starvation.ThresholdS, runs[0].Summary.Policy, th)
		}
		if r.Summary.JobsSubmitted != len(r.Jobs) || r.Summary.JobsSucceeded+r.Summary.JobsFailed != len(r.Jobs) {
			t.Fatalf("%s: %d submitted, %d succeeded, %d failed, %d records", r.Summary.Policy,
				r.Summary.JobsSubmitted, r.Summary.JobsSucceeded, r.Summary.JobsFailed, len(r.Jobs))
		}
	}
	// Policies that order the queue differently must not all coincide.
	if runs[0].Summary.WaitS.Mean == runs[1].Summary.WaitS.Mean {
		t.Errorf("sjf and fcfs have the same mean wait %v on a contended trace", runs[0].Summary.WaitS.Mean)
	}
}

func TestRunRejectsUnknownPolicyBeforeRunning(t *testing.T) {
	spec := defaultSpec(t, "fcfs", "lottery")
	built := 0
	build := spec.NewCluster
	spec.NewCluster = func() (*hwmodel.Cluster, error) { built++; return build() }
	if _, err := runner.Run(spec); err == nil || !strings.Contains(err.Error(), "lottery") {
		t.Fatalf("err = %v, want one naming the unknown policy", err)
	}
	if built != 0 {
		t.Fatalf("%d clusters built before the bad name was reported", built)
	}
}

func TestWriteProducesAllFiles(t *testing.T) {
	runs, err := runner.Run(defaultSpec(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := runner.Write(dir, runs); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := slices.Clone(runner.Files)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("wrote %v, want exactly %v (no temporary files left)", names, want)
	}
	jobs, _ := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	if lines := strings.Count(string(jobs), "\n"); lines != 1+len(runs[0].Jobs) {
		t.Fatalf("jobs.csv has %d lines, want header + %d", lines, len(runs[0].Jobs))
	}
}

// Example compares two policies on the embedded Philly sample.
func Example() {
	w, _ := workloads.Default()
	w.FillEstimates()
	cs, _ := hwmodel.ResolveCluster("philly-sample")
	runs, err := runner.Run(runner.Spec{
		Workload: w, WorkloadName: workloads.DefaultName,
		NewCluster: cs.Build, ClusterName: cs.Name,
		Policies: []policies.Spec{policies.MustParseSpec("fcfs"), policies.MustParseSpec("sjf")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		fmt.Printf("%s: %d jobs, mean wait %.1f h\n", r.Summary.Policy, r.Summary.JobsSucceeded, r.Summary.WaitS.Mean/3600)
	}
	// Output:
	// fcfs: 3621 jobs, mean wait 4.1 h
	// sjf: 3621 jobs, mean wait 1.6 h
}
