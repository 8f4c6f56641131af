package policies

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// DefaultBackfillDepth is how many queued jobs behind the blocked one EASY
// backfill looks at per call when Options.BackfillDepth is 0.
const DefaultBackfillDepth = 1000

// Options configures a named policy. The zero value gives the defaults.
type Options struct {
	// Placement names the placer: "firstfit" (default, also "") or one of
	// PlacementNames.
	Placement string
	// Placer configures the placement: the seed of "random" and the target
	// workload that "fgd" needs.
	Placer PlacerConfig
	// Backfill turns on EASY backfilling: the first job that cannot start
	// gets a reservation, and jobs behind it start only if they cannot
	// delay it. Without it the order is strict: the first job that cannot
	// start blocks all behind it.
	Backfill bool
	// BackfillDepth bounds how many jobs behind the blocked one a call
	// examines; 0 means DefaultBackfillDepth, negative is an error.
	BackfillDepth int
	// PriorityWeight and WaitWeightPerHour weigh the "priority" order's
	// score, WPriority·priority + WWait·(hours waited). 0 means the default,
	// 1 (so one priority level is worth one hour of waiting); a negative
	// value switches that term off.
	PriorityWeight    float64
	WaitWeightPerHour float64
	// UseOracle makes duration-based decisions (SJF's order, backfill's
	// estimated ends, the work left that gavel's finish-time fairness
	// counts) use Job.Oracle, the true duration, when the driver reveals
	// it (> 0), instead of the user's estimate.
	UseOracle bool
	// MIGReconfigure turns on dynamic MIG reconfiguration: a queued MIG job
	// that finds no free matching instance may get a Reconfigure decision
	// that repartitions a MIG GPU's free slices (mig.go). Without it MIG
	// layouts are static. The driver must allow reconfiguration too.
	MIGReconfigure bool
	// MIGConvertWhole, with MIGReconfigure, also lets the policy turn an
	// entirely idle whole GPU of a MIG-capable model into a MIG GPU when
	// no MIG GPU can be repartitioned for the job.
	MIGConvertWhole bool
	// Fastest places each job on the GPU model it runs fastest on (by the
	// run's speed table, View.Rate) among the models with room for it now,
	// the placement choosing the node within that model; without speeds
	// it changes nothing.
	Fastest bool
	// Local places a job that reads a dataset on a node holding it when
	// one has room; with LocalDelay > 0 a job waits up to that long after
	// it was queued for such a node before it goes remote (delay
	// scheduling). Without datasets it changes nothing.
	Local      bool
	LocalDelay Time
	// DataWeight weighs d_i in the seed order's score (0 means the
	// default, 1; negative switches the term off, as PriorityWeight).
	DataWeight float64

	// The preemptive orders (preemptorders.go). Thresholds are las' and
	// tiresias' service thresholds, increasing, the unused ones 0 (all 0:
	// DefaultLASThresholds, DefaultTiresiasThresholds); las counts
	// service in wall time, tiresias in GPU-time (a Time of one GPU).
	// Promote is their starvation knob (0: off). Quantum is gandiva's
	// time slice (0: DefaultQuantum). Preempt makes the priority order
	// evict lower priorities.
	Thresholds [MaxThresholds]Time
	Promote    float64
	Quantum    Time
	Preempt    bool
	// Objective is the gavel order's objective, GavelMaxMin ("" too) or
	// GavelFTF; Round its round (0: DefaultRound).
	Objective string
	Round     Time
	// Multifactor configures the multifactor order (multifactor.go).
	Multifactor Multifactor
	// Kueue is the kueue order's configuration (ClusterQueues, flavors,
	// cohorts), which that order needs and no other reads.
	Kueue *Kueue
}

// orderEntry is one named queue order in the registry.
type orderEntry struct {
	name string
	desc string
	make func(o Options, s *scheduler) queue
	// preemptive, for a preemptive order, makes it instead (make is nil).
	preemptive func(o Options) preemptOrder
	// build makes an order that is a policy of its own rather than a
	// queue of the scheduler (kueue); nil for the others.
	build func(label string, placer Placer, o Options) (Policy, error)
	// own makes a preemptive order that is a policy of its own and that
	// a spec alone builds (gavel); nil for the others.
	own func(label string, placer Placer, o Options) (Policy, error)
}

func weight(w float64) float64 {
	switch {
	case w == 0:
		return 1
	case w < 0:
		return 0
	}
	return w
}

// orders lists the queue orders by name. Add new orders here.
var orders = []orderEntry{
	{"fcfs", "first come, first served: submit time, then job ID",
		func(Options, *scheduler) queue {
			return newTreeQueue(func(j *Job) qitem { return qitem{a: int64(j.Submit), id: j.ID} })
		}, nil, nil, nil},
	{"sjf", "shortest job first: estimated (or, with the oracle, true) duration, then submit time, then job ID",
		func(_ Options, s *scheduler) queue {
			return newTreeQueue(func(j *Job) qitem {
				return qitem{a: int64(s.duration(j)), b: int64(j.Submit), id: j.ID}
			})
		}, nil, nil, nil},
	{"priority", "highest priority·w_p + hours waited·w_wait first, then job ID (aging)",
		func(o Options, _ *scheduler) queue {
			wp, ww := weight(o.PriorityWeight), weight(o.WaitWeightPerHour)
			// score(now) = wp·p + ww·(now-Queued)/h, and now is common to
			// all jobs: wp·p - ww·Queued/h orders them the same, statically.
			return newTreeQueue(func(j *Job) qitem {
				return qitem{f: -(wp*float64(j.Priority) - ww*float64(j.Queued)/float64(hwmodel.Hour)), id: j.ID}
			})
		}, nil, nil, nil},
	{"fair", "weighted dominant-resource fair share across tenants, FCFS within a tenant",
		func(Options, *scheduler) queue { return newFairQueue() }, nil, nil, nil},
	{"seed", "the seed's score: priority·w_p + locality·w_d + hours waited·w_wait, highest first, then job ID (locality: 1 when a node holding the job's dataset has room)",
		func(o Options, _ *scheduler) queue { return newSeedQueue(o) }, nil, nil, nil},
	{"multifactor", "Slurm's multifactor priority: w_age·age + w_fs·fair-share (usage decayed by a half-life) + w_size·job size + w_qos·priority, highest first, recomputed every calc period, then job ID",
		func(o Options, _ *scheduler) queue { return newMFQueue(o) }, nil, nil, nil},
	{"las", "preemptive: least attained service (wall time run) over discretised queues (thresholds=, default 1h:2h:4h:8h:16h), FIFO within a queue; promote=K lifts a job that waited K times its run time",
		nil, func(o Options) preemptOrder {
			return &lasOrder{thresholds: o.thresholdsOr(DefaultLASThresholds), promote: o.Promote}
		}, nil, nil},
	{"tiresias", "preemptive: Tiresias' two-dimensional LAS, attained GPU-time (run time × GPUs) over discretised queues (thresholds=, default 16h of GPU-time: two queues), FIFO within a queue; promote=K lifts a job that waited K times its run time",
		nil, func(o Options) preemptOrder {
			return &lasOrder{gpuTime: true, thresholds: o.thresholdsOr(DefaultTiresiasThresholds), promote: o.Promote}
		}, nil, nil},
	{"srtf", "preemptive: shortest remaining time first on the users' estimates (estimate − time run)",
		nil, func(Options) preemptOrder { return srtfOrder{} }, nil, nil},
	{"gandiva", "preemptive: Gandiva-style time slicing, round robin with a quantum (quantum=, default 30m) among jobs of one GPU count",
		nil, func(o Options) preemptOrder {
			if o.Quantum <= 0 {
				o.Quantum = DefaultQuantum
			}
			return gandivaOrder{quantum: o.Quantum}
		}, nil, nil},
	{"kueue", "Kueue's admission: ClusterQueues with quotas per flavor, cohorts, borrowing and lending limits, preemption and fair sharing, read from Kueue manifests (--kueue FILE)",
		nil, nil, func(label string, placer Placer, o Options) (Policy, error) {
			if o.Backfill || o.UseOracle || o.MIGReconfigure || o.Fastest || o.Local {
				return nil, fmt.Errorf("policy %s: the kueue order takes no option but a placement", label)
			}
			return newKueue(label, placer, o.Kueue)
		}, nil},
	{"gavel", "preemptive: Gavel's heterogeneity-aware allocation from an LP over the speed table, max-min fairness of normalised throughput (objective=maxmin, the default) or finish-time fairness (objective=ftf), carried out in rounds (round=, default 6m) by priority = share / share received",
		nil, nil, nil, func(label string, placer Placer, o Options) (Policy, error) {
			if err := refusePreemptive(label, "gavel", o); err != nil {
				return nil, err
			}
			if o.Objective != "" && o.Objective != GavelMaxMin && o.Objective != GavelFTF {
				return nil, fmt.Errorf("policy %s: objective must be %s or %s, got %q", label, GavelMaxMin, GavelFTF, o.Objective)
			}
			if o.Round < 0 {
				return nil, fmt.Errorf("policy %s: round must be > 0, got %gs", label, o.Round.Seconds())
			}
			return newGavel(label, placer, o), nil
		}},
	{"optimus", "preemptive: the Pollux artifact's Optimus, which every round (round=, default 1m) sizes every job by a greedy on the predicted drop in its time to finish per added GPU and places resized jobs on the nodes with the most idle GPUs; needs the application model",
		nil, nil, nil, func(label string, placer Placer, o Options) (Policy, error) {
			if err := refusePreemptive(label, "optimus", o); err != nil {
				return nil, err
			}
			if o.Round < 0 {
				return nil, fmt.Errorf("policy %s: round must be > 0, got %gs", label, o.Round.Seconds())
			}
			return newOptimus(label, placer, o), nil
		}},
}

// thresholdsOr is o's thresholds, or def when it sets none.
func (o Options) thresholdsOr(def []Time) []Time {
	n := 0
	for n < MaxThresholds && o.Thresholds[n] > 0 {
		n++
	}
	if n == 0 {
		return def
	}
	return append([]Time(nil), o.Thresholds[:n]...)
}

// Preemptive reports whether the order called name, with options o,
// preempts running jobs.
func Preemptive(name string, o Options) bool {
	for _, e := range orders {
		if e.name == name {
			return e.preemptive != nil || e.own != nil || (name == "priority" && o.Preempt)
		}
	}
	return false
}

// Names lists the known policy names, sorted.
func Names() []string {
	out := make([]string, len(orders))
	for i, o := range orders {
		out[i] = o.name
	}
	slices.Sort(out)
	return out
}

// NonPreemptiveNames lists, sorted, the orders a spec alone builds that
// never preempt: the plain scheduler's queue orders, with which backfill
// and the other walk options combine.
func NonPreemptiveNames() []string {
	var out []string
	for _, n := range StandaloneNames() {
		if !Preemptive(n, Options{}) {
			out = append(out, n)
		}
	}
	return out
}

// StandaloneNames lists, sorted, the orders a spec alone builds: all but
// kueue, which needs its manifests in Options.Kueue.
func StandaloneNames() []string {
	var out []string
	for _, o := range orders {
		if o.build == nil {
			out = append(out, o.name)
		}
	}
	slices.Sort(out)
	return out
}

// Describe returns a one-line description of a policy name for --help, or
// "" for an unknown name.
func Describe(name string) string {
	for _, o := range orders {
		if o.name == name {
			return o.desc
		}
	}
	return ""
}

// New builds the policy of queue order name with options opt. Its Name()
// is the canonical spec label (Spec.String), e.g. "fcfs", "sjf+bf",
// "fair/bestfit", "sjf+oracle", "priority+wwait=2+mig=dynamic", which
// ParseSpec reads back to the same policy. Spec.New is the usual way in.
func New(name string, opt Options) (Policy, error) {
	k := slices.IndexFunc(orders, func(o orderEntry) bool { return o.name == name })
	if k < 0 {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	placer, err := NewPlacerWith(opt.Placement, opt.Placer)
	if err != nil {
		return nil, err
	}
	for _, w := range []float64{opt.PriorityWeight, opt.WaitWeightPerHour} {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("priority and wait weights must be finite, got %v", w)
		}
	}
	if err := opt.Multifactor.check(); err != nil {
		return nil, err
	}
	switch {
	case opt.BackfillDepth < 0:
		return nil, fmt.Errorf("backfill depth must be >= 0, got %d", opt.BackfillDepth)
	case opt.BackfillDepth == 0:
		opt.BackfillDepth = DefaultBackfillDepth
	}
	label := Spec{Order: name, Options: opt}.String()
	if opt.MIGConvertWhole && !opt.MIGReconfigure {
		return nil, fmt.Errorf("MIGConvertWhole needs MIGReconfigure")
	}
	if b := orders[k].build; b != nil {
		return b(label, placer, opt)
	}
	if b := orders[k].own; b != nil {
		return b(label, placer, opt)
	}
	if Preemptive(name, opt) {
		return newPreemptor(label, name, placer, opt, orders[k].preemptive)
	}
	s := newScheduler(label, nil, placer, opt)
	s.q = orders[k].make(opt, s)
	return s, nil
}

// refusePreemptive refuses the options that only the queue walk of the
// plain scheduler implements, for the preemptive order name.
func refusePreemptive(label, name string, opt Options) error {
	for _, o := range []struct {
		on   bool
		what string
	}{{opt.Backfill, "EASY backfill (bf)"}, {opt.MIGReconfigure, "MIG reconfiguration (mig=)"},
		{opt.Fastest, "the fastest option"}, {opt.Local, "the local option"}} {
		if o.on {
			return fmt.Errorf("policy %s: %s does not combine with the preemptive order %s", label, o.what, name)
		}
	}
	return nil
}

// newPreemptor builds a preemptive order's scheduler; the options that
// only the queue walk of the plain scheduler implements are refused.
func newPreemptor(label, name string, placer Placer, opt Options, mk func(Options) preemptOrder) (Policy, error) {
	if err := refusePreemptive(label, name, opt); err != nil {
		return nil, err
	}
	var order preemptOrder = priorityPreemptOrder{}
	if mk != nil {
		order = mk(opt)
	}
	if lo, ok := order.(*lasOrder); ok {
		for k := 1; k < len(lo.thresholds); k++ {
			if lo.thresholds[k] <= lo.thresholds[k-1] {
				return nil, fmt.Errorf("policy %s: thresholds must increase", label)
			}
		}
	}
	if math.IsNaN(opt.Promote) || math.IsInf(opt.Promote, 0) || opt.Promote < 0 {
		return nil, fmt.Errorf("policy %s: promote must be a finite number >= 0, got %v", label, opt.Promote)
	}
	return &preemptor{name: label, placer: placer, order: order, depth: opt.BackfillDepth}, nil
}
