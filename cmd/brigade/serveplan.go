package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brigadesim/brigade/plan"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/serving"
)

// servePlan is brigade serve --plan: capacity planning for one service of
// the experiment. It is a mode of serve rather than a subcommand of its
// own because its input is the same experiment file (the service, its
// replica model, classes and traffic) and it shares serve's --out,
// --seed and --quiet; brigade plan sizes clusters for batch workloads
// from a trace and has none of a service's settings. A subcommand such
// as "brigade serve plan FILE" would also make a file named "plan"
// ambiguous.
//
// The file's variants, batch jobs, cluster, faults and autoscaling are
// left out: every replica count is a run of the service alone with that
// many warm replicas on a cluster just big enough (plan.Replicas, which
// runs serving.Fixed).
func servePlan(exp *serving.Experiment, f serveFlags, stdout, stderr io.Writer) error {
	targets, err := plan.ParseTargets(f.plan, plan.ServiceMetrics())
	if err != nil {
		return usageError{fmt.Errorf("--plan: %w", err)}
	}
	if f.planMax < 1 {
		return usageError{fmt.Errorf("--plan-max must be >= 1, got %d", f.planMax)}
	}
	if !(f.planRate >= 0) || f.planRate > 1e9 {
		return usageError{fmt.Errorf("--plan-rate must be a rate in requests per second >= 0 (0: the file's arrivals), got %g", f.planRate)}
	}
	seeds := []uint64{exp.Seed}
	if f.seeds != "" {
		if seeds, err = parseSeeds(f.seeds); err != nil {
			return usageError{fmt.Errorf("--seeds: %w", err)}
		}
	}
	cfg := plan.ReplicaConfig{Spec: &exp.Spec, Service: f.planService, Targets: targets, MaxReplicas: f.planMax,
		Seeds: seeds, Rate: f.planRate}
	if !f.quiet {
		name := f.planService
		if name == "" && len(exp.Spec.Services) == 1 {
			name = exp.Spec.Services[0].Name
		}
		traffic := "the file's arrivals"
		if f.planRate > 0 {
			traffic = fmt.Sprintf("a constant %g rps", f.planRate)
		}
		fmt.Fprintf(stderr, "brigade serve: planning replicas of %s in 1..%d for %s over %s, seeds %s; autoscaling, incidents and batch jobs left out\n",
			name, f.planMax, traffic, results.HumanDuration(exp.Spec.Horizon.Seconds()), joinSeeds(seeds))
		cfg.Progress = func(p plan.Point) {
			fmt.Fprintf(stderr, "brigade serve: %d replicas (%d GPUs): %s\n", p.Size, p.GPUs, passFail(p.OK()))
		}
	}
	r, err := plan.Replicas(cfg)
	if err != nil {
		return err
	}
	// Write into a fresh folder beside --out, then move: a failed write
	// leaves nothing half-written.
	out := filepath.Clean(f.out)
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var plots []string
	if !f.noPlots {
		plots = []string{"png"}
	}
	files, err := r.WriteFiles(tmp, plots...)
	if err != nil {
		return err
	}
	if err := publishOutputs(tmp, out, files); err != nil {
		return err
	}
	rate := ""
	if r.Rate > 0 {
		rate = fmt.Sprintf(" at %g rps", r.Rate)
	}
	fmt.Fprintf(stdout, "service %s%s: %d replica counts simulated (of %d in range), each on %d seed(s); %d GPUs of %s per replica\n",
		r.Service, rate, len(r.Points), r.Hi, len(r.Seeds), r.GPUsPer, r.Models[0])
	if err := r.WriteTable(stdout); err != nil {
		return err
	}
	if r.Best < 0 {
		return fmt.Errorf("%s", r.Answer())
	}
	fmt.Fprintln(stdout, r.Answer())
	if !f.quiet {
		fmt.Fprintf(stderr, "brigade serve: wrote %s to %s\n", strings.Join(files, ", "), f.out)
	}
	return nil
}

func joinSeeds(seeds []uint64) string {
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}
