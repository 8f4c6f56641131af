package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// policyFlags are the policy flags of sim and plan: --policy takes specs
// (policies.ParseSpec), and the other flags are shorthand applied to every
// spec when given on the command line, so `--policy sjf --backfill` and
// `--policy sjf+bf` run the same policy.
type policyFlags struct {
	specs          []string
	placement      string
	backfill       bool
	backfillDepth  int
	priorityWeight float64
	waitWeight     float64
	oracle         bool
	mig            string
	// slurmConf is a slurm.conf whose priority keys configure one more
	// policy, the multifactor order (sim's --slurm-conf).
	slurmConf string
	changed   func(name string) bool
}

// policyHelp lists the grammar, the orders and the placements with one
// line each, for the --help of every command that takes specs.
func policyHelp() string {
	var b strings.Builder
	b.WriteString("Policy specs: ORDER{+OPTION}[/PLACEMENT], e.g. sjf+bf/bestfit, priority+wwait=0.5, fcfs+bf=200+mig=dynamic.\n  Orders:\n")
	for _, n := range policies.Names() {
		fmt.Fprintf(&b, "    %-11s %s\n", n, policies.Describe(n))
	}
	b.WriteString("  Options:\n")
	for _, o := range policies.SpecOptions() {
		fmt.Fprintf(&b, "    +%-10s %s\n", o[0], o[1])
	}
	b.WriteString("  Placements:\n")
	for _, n := range policies.PlacementNames() {
		fmt.Fprintf(&b, "    /%-10s %s\n", n, policies.DescribePlacement(n))
	}
	return b.String()
}

func addPolicyFlags(fs *flagSet, f *policyFlags, policyUsage string, defaults []string) {
	fs.StringSliceVar(&f.specs, "policy", defaults, policyUsage)
	fs.StringVar(&f.placement, "placement", "firstfit", "shorthand: this GPU placement in every spec (/PLACEMENT); fgd's target workload is the trace's requests, random draws from --seed")
	fs.BoolVar(&f.backfill, "backfill", false, "shorthand: EASY backfill in every spec (+bf): later jobs start if they do not delay the first blocked job's reservation")
	fs.IntVar(&f.backfillDepth, "backfill-depth", policies.DefaultBackfillDepth, "shorthand: most queued jobs backfill examines per scheduling point (+bf=N)")
	fs.Float64Var(&f.priorityWeight, "priority-weight", 1, "shorthand: priority order's weight of a job's priority (+wprio=W; 0 switches it off)")
	fs.Float64Var(&f.waitWeight, "wait-weight", 1, "shorthand: priority order's score gained per hour of waiting, i.e. aging (+wwait=W; 0 switches it off)")
	fs.BoolVar(&f.oracle, "oracle", false, "shorthand: SJF and backfill use true job durations instead of runtime estimates (+oracle)")
	fs.StringVar(&f.mig, "mig", "static", "shorthand (+mig=MODE): MIG layouts static (as the cluster spec gives them), dynamic (a policy may repartition MIG GPUs for queued MIG jobs, never destroying busy instances) or convert (dynamic, and idle whole GPUs may become MIG GPUs and back); see docs/mig.md")
	f.changed = fs.Changed
	fs.grammar = policyHelp()
}

// resolve parses the specs (defaults when none were given) and applies
// the shorthand flags given on the command line. Each spec is checked to
// build (fgd's target aside, which the caller supplies).
func (f *policyFlags) resolve(defaults []string) ([]policies.Spec, error) {
	texts := f.specs
	if len(texts) == 0 {
		texts = defaults
	}
	set := func(name string) bool { return f.changed != nil && f.changed(name) }
	if f.slurmConf != "" && !set("policy") {
		texts = nil // the slurm.conf's policy alone
	}
	specs, err := policies.ParseSpecs(texts)
	if err != nil {
		return nil, usageError{fmt.Errorf("--policy: %w", err)}
	}
	if f.slurmConf != "" {
		data, err := config.ReadFile(f.slurmConf, "slurm.conf", config.MaxSlurmConfBytes)
		if err != nil {
			return nil, err
		}
		p, err := config.ReadSlurmConf(data, f.slurmConf)
		if err != nil {
			return nil, err
		}
		specs = append(specs, slurmSpec(p))
	}
	for i := range specs {
		s := &specs[i]
		if set("placement") {
			s.Placement = f.placement
		}
		if set("backfill") {
			s.Backfill = f.backfill
		}
		if set("backfill-depth") {
			if f.backfillDepth <= 0 {
				return nil, usageError{fmt.Errorf("--backfill-depth: want > 0, got %d", f.backfillDepth)}
			}
			s.BackfillDepth = f.backfillDepth
		}
		for _, w := range []struct {
			flag string
			v    float64
			dst  *float64
		}{{"priority-weight", f.priorityWeight, &s.PriorityWeight}, {"wait-weight", f.waitWeight, &s.WaitWeightPerHour}} {
			if !set(w.flag) {
				continue
			}
			if !(w.v >= 0) || w.v > 1e300 {
				return nil, usageError{fmt.Errorf("--%s: want a finite weight >= 0, got %v", w.flag, w.v)}
			}
			*w.dst = w.v
			if w.v == 0 {
				*w.dst = -1 // off; Options keeps 0 for the default
			}
		}
		if set("oracle") {
			s.UseOracle = f.oracle
		}
		if set("mig") {
			mode, err := policies.ParseSpec("fcfs+mig=" + f.mig)
			if err != nil {
				return nil, usageError{fmt.Errorf("--mig: want static, dynamic or convert, got %q", f.mig)}
			}
			s.MIGReconfigure, s.MIGConvertWhole = mode.MIGReconfigure, mode.MIGConvertWhole
		}
		if !slices.Contains(policies.PlacementNames(), s.Placement) && s.Placement != "" {
			return nil, usageError{fmt.Errorf("--placement: unknown placement %q (known: %s)", s.Placement, strings.Join(policies.PlacementNames(), ", "))}
		}
		*s = s.Canonical()
		if err := s.Check(); err != nil {
			return nil, usageError{fmt.Errorf("--policy %s: %w", s, err)}
		}
	}
	return specs, nil
}

// joinSpecs writes specs as a --policy flag takes them.
func joinSpecs(specs []policies.Spec) string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.String()
	}
	return strings.Join(out, ",")
}

// slurmSpec is the multifactor policy of a slurm.conf's priority keys.
// PriorityWeightPartition is read but has no effect: a Brigade cluster is
// one partition, where the partition factor is the same for every job.
func slurmSpec(p config.SlurmPriority) policies.Spec {
	at := func(d time.Duration) hwmodel.Time { return hwmodel.Time(d / time.Microsecond) }
	m := policies.Multifactor{
		Age: p.WeightAge, Fairshare: p.WeightFairshare, JobSize: p.WeightJobSize, QOS: p.WeightQOS,
		MaxAge: at(p.MaxAge), HalfLife: at(p.DecayHalfLife), CalcPeriod: at(p.CalcPeriod), FavorSmall: p.FavorSmall,
	}
	if m.HalfLife == 0 {
		m.HalfLife = -1 // Slurm's 0: no decay
	}
	return policies.Spec{Order: "multifactor", Options: policies.Options{Multifactor: m}}.Canonical()
}
