package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brigadesim/brigade/fill"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

const fillUsage = `Usage: brigade fill --nodes FILE (--pods FILE | --all-traces DIR) [flags]

Runs the experiment of the FGD paper (Weng et al., "Beware of
Fragmentation", USENIX ATC'23, Figure 9(a)): for each seed, pods are drawn
from the pod list (all of it, shuffled, then more drawn with replacement)
until their GPU requests reach --load times the cluster's GPU capacity.
They arrive one by one and never leave; a pod that does not fit fails and
the next one comes. Each policy places the same pods on a fresh cluster.

Writes to --out: fill.csv (trace, policy, seed, arrived_pct, gpu_alloc_pct,
frag_pct at every whole arrived percent from 0 to the load), and fill.png
and fill.svg (GPU allocation against arrived load, mean over seeds, one line
per policy). Prints per policy the means over seeds at 100% and at the final
load, beside the published means when the pod list is one of the shipped
ones and the published results are found (--reference).

--nodes takes an Alibaba openb node list (sn,cpu_milli,memory_mib,gpu,model)
or any cluster spec or preset that --cluster takes. The pod list is an
openb pod list, with or without times (the five-column multigpu lists
too). Definitions: fill/doc.go.`

const fillExamples = `  brigade fill --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv
  brigade fill --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_multigpu50.csv --policy fgd,bestfit --seeds 42,43 --out runs/mg50
  brigade fill --nodes openb_node_list_gpu_node.csv --pods openb_pod_list_default.csv --seeds 1-100 --load 1.1 --quiet
  brigade fill --nodes openb_node_list_gpu_node.csv --all-traces ../shared/traces/alibaba-gpu-v2023 --markdown docs/fgd-reproduction.md
`

// fillPolicies are the FGD paper's six policies, in the order it lists them.
var fillPolicies = []string{"fgd", "bestfit", "dotprod", "packing", "clustering", "random"}

type fillFlags struct {
	nodes, pods, allTraces, out, reference, markdown, seeds string
	policies                                                []string
	load                                                    float64
	quiet                                                   bool
}

func runFill(args []string, stdout, stderr io.Writer) error {
	var f fillFlags
	fs := newFlagSet("fill", fillUsage, fillExamples)
	fs.StringVar(&f.nodes, "nodes", "", "node list `file` (openb sn,cpu_milli,memory_mib,gpu,model), or a cluster spec file or preset")
	fs.StringVar(&f.pods, "pods", "", "openb pod list `file` to draw pods from")
	fs.StringVar(&f.allTraces, "all-traces", "", "instead of --pods, run every openb_pod_list_*.csv in this `directory`, each into its own folder under --out")
	fs.StringSliceVar(&f.policies, "policy", fillPolicies, "comma-separated placement policies (known: "+strings.Join(policies.PlacementNames(), ", ")+")")
	fs.StringVar(&f.seeds, "seeds", "42-51", "workload `seeds`: a list and ranges, e.g. 42-51 or 1,3,10-12")
	fs.Float64Var(&f.load, "load", 1.3, fmt.Sprintf("stop drawing pods when their GPU requests reach this multiple of the cluster's GPU capacity (0 < load <= %d)", fill.MaxLoad))
	fs.StringVar(&f.out, "out", "fill-out", "results `directory`, written whole: a new one, an empty one or an earlier Brigade results folder (with --all-traces, one such folder per trace inside it)")
	fs.StringVar(&f.reference, "reference", "", "`directory` with the published results (fgd-atc23/analysis_allo_discrete.csv), or none; default: "+fill.DefaultPublishedDir+" if it exists")
	fs.StringVar(&f.markdown, "markdown", "", "also write the comparison with the published means as Markdown to this `file`")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and the tables (no progress bar either; the bar shows only when stderr is a terminal)")
	if err := fs.parse(args, stdout); err != nil {
		return err
	}
	return fillMain(f, stdout, stderr)
}

func fillMain(f fillFlags, stdout, stderr io.Writer) error {
	switch {
	case f.nodes == "":
		return usageError{fmt.Errorf("--nodes is required (e.g. openb_node_list_gpu_node.csv)")}
	case f.pods == "" && f.allTraces == "":
		return usageError{fmt.Errorf("give --pods FILE or --all-traces DIR")}
	case f.pods != "" && f.allTraces != "":
		return usageError{fmt.Errorf("--pods and --all-traces are alternatives; give one")}
	case !(f.load > 0 && f.load <= fill.MaxLoad):
		return usageError{fmt.Errorf("--load must be in (0, %d], got %g", fill.MaxLoad, f.load)}
	case len(f.policies) == 0:
		return usageError{fmt.Errorf("--policy: name at least one policy")}
	}
	for _, p := range f.policies {
		if !slices.Contains(policies.PlacementNames(), p) {
			return usageError{fmt.Errorf("--policy: unknown placement %q (known: %s)", p, strings.Join(policies.PlacementNames(), ", "))}
		}
	}
	if dup := firstDuplicate(f.policies); dup != "" {
		return usageError{fmt.Errorf("--policy: %q is named twice", dup)}
	}
	seeds, err := parseSeeds(f.seeds)
	if err != nil {
		return usageError{fmt.Errorf("--seeds: %v", err)}
	}
	var pub *fill.Published
	if f.reference != "none" {
		if pub, err = fill.FindPublished(f.reference); err != nil {
			return err
		}
	}
	spec, err := hwmodel.ResolveCluster(f.nodes)
	if err != nil {
		return err
	}
	podFiles := []string{f.pods}
	if f.allTraces != "" {
		podFiles, _ = filepath.Glob(filepath.Join(f.allTraces, "openb_pod_list_*.csv"))
		if len(podFiles) == 0 {
			return fmt.Errorf("--all-traces: no openb_pod_list_*.csv in %s", f.allTraces)
		}
		slices.Sort(podFiles)
	}
	if !f.quiet && pub == nil && f.reference != "none" {
		fmt.Fprintf(stderr, "brigade fill: no published results found (looked in %s); showing ours only\n", fill.DefaultPublishedDir)
	}
	outOf := func(podFile string) string {
		if f.allTraces != "" {
			return filepath.Join(f.out, traceName(podFile))
		}
		return f.out
	}
	// Every results folder is checked before the first run.
	for _, podFile := range podFiles {
		if err := results.CheckOut(outOf(podFile), podFile, f.nodes); err != nil {
			return err
		}
	}
	var all []*fill.Results
	start := time.Now()
	for _, podFile := range podFiles {
		pods, err := workloads.ReadOpenBPodsFile(podFile)
		if err != nil {
			return err
		}
		e := fill.Experiment{
			Trace: traceName(podFile), Cluster: spec, Pods: pods,
			Policies: f.policies, Seeds: seeds, Load: f.load,
		}
		bar := newProgress(stderr, f.quiet, "brigade fill "+e.Trace, "runs", len(f.policies)*len(seeds))
		e.Progress = bar.Func()
		t0 := time.Now()
		res, err := fill.Run(e)
		bar.Done()
		if err != nil {
			return err
		}
		wall := time.Since(t0)
		out := outOf(podFile)
		err = results.WriteFolder(out, func(dir string) error {
			if err := fill.WriteCSV(filepath.Join(dir, "fill.csv"), res); err != nil {
				return err
			}
			if err := res.WritePlots(filepath.Join(dir, "fill.png"), filepath.Join(dir, "fill.svg")); err != nil {
				return err
			}
			return results.WriteRunJSON(filepath.Join(dir, "run.json"), results.RunInfo{
				Seed: seeds[0], Command: append([]string{"brigade", "fill"}, reproArgs(f)...), Files: []string{"fill.csv", "fill.png", "fill.svg"},
			})
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", res.Describe())
		if err := res.WriteSummary(stdout, pub); err != nil {
			return err
		}
		if note := pubNote(res, pub); note != "" {
			fmt.Fprintln(stdout, note)
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "brigade fill: %s in %.2fs (%.3fs per policy and seed on %s); wrote fill.csv, fill.png and fill.svg to %s\n",
				hwmodel.Plural(len(res.Curves), "run", "runs"), wall.Seconds(), wall.Seconds()/float64(len(res.Curves)), hwmodel.Plural(workers(), "worker", "workers"), out)
		}
		if len(podFiles) > 1 {
			fmt.Fprintln(stdout)
		}
		all = append(all, res)
	}
	if f.markdown != "" {
		cmd := "brigade fill " + strings.Join(reproArgs(f), " ")
		err := results.AtomicWriteFile(f.markdown, func(w io.Writer) error {
			return fill.WriteMarkdown(w, all, pub, cmd)
		})
		if err != nil {
			return err
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "brigade fill: wrote %s (%s in %.1fs)\n", f.markdown, hwmodel.Plural(len(all), "trace", "traces"), time.Since(start).Seconds())
		}
	}
	return nil
}

// traceName is a pod list's base name without .gz and .csv, as the
// published CSVs' workload column names it.
func traceName(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".csv")
}

// pubNote says which published seeds the comparison used, when it used any.
func pubNote(res *fill.Results, pub *fill.Published) string {
	if pub == nil {
		return ""
	}
	policy := ""
	for _, p := range res.Policies {
		if fill.PublishedPolicy(p) != "" {
			policy = p
			break
		}
	}
	if policy == "" {
		return ""
	}
	ps := pub.Seeds(res.Trace, policy, res.Load)
	if len(ps) == 0 {
		if len(pub.Seeds(res.Trace, policy, 1.3)) > 0 {
			return fmt.Sprintf("(published results for %s are at load 1.3 only; none shown for load %g)", res.Trace, res.Load)
		}
		return ""
	}
	var common []uint64
	for _, s := range res.Seeds {
		if slices.Contains(ps, s) {
			common = append(common, s)
		}
	}
	if len(common) == 0 {
		common = ps
	}
	return fmt.Sprintf("(published: FGD artifact, %s, mean over its seeds %s; diff = ours - published, in points)", filepath.Join(pub.Dir, "analysis_allo_discrete.csv"), formatSeeds(common))
}

// reproArgs are the flags that reproduce a run, for the Markdown report.
func reproArgs(f fillFlags) []string {
	args := []string{"--nodes", f.nodes}
	if f.allTraces != "" {
		args = append(args, "--all-traces", f.allTraces)
	} else {
		args = append(args, "--pods", f.pods)
	}
	args = append(args, "--policy", strings.Join(f.policies, ","), "--seeds", f.seeds, "--load", strconv.FormatFloat(f.load, 'g', -1, 64), "--out", f.out)
	if f.reference != "" {
		args = append(args, "--reference", f.reference)
	}
	return append(args, "--markdown", f.markdown)
}

// parseSeeds reads "42-51", "1,3,5-7": at most 100,000 distinct seeds,
// in the order given.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	add := func(v uint64) error {
		if seen[v] {
			return fmt.Errorf("seed %d is given twice", v)
		}
		if len(out) >= 100_000 {
			return fmt.Errorf("more than 100,000 seeds")
		}
		seen[v] = true
		out = append(out, v)
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("want seeds such as 42-51 or 1,3,5-7, found an empty item in %q", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 63)
		if err != nil {
			return nil, fmt.Errorf("want a whole number or a range a-b, found %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 63); err != nil || b < a {
				return nil, fmt.Errorf("want a range a-b with a <= b, found %q", part)
			}
		}
		if b-a >= 100_000 {
			return nil, fmt.Errorf("range %q holds more than 100,000 seeds", part)
		}
		for v := a; v <= b; v++ {
			if err := add(v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// formatSeeds writes sorted seeds compactly: "42-51".
func formatSeeds(seeds []uint64) string {
	s := slices.Clone(seeds)
	slices.Sort(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.FormatUint(s[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func firstDuplicate(names []string) string {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return n
		}
	}
	return ""
}

func workers() int { return runtime.GOMAXPROCS(0) }
