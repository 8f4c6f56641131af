package policies

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Spec names a complete policy: a queue order and every option that
// changes its decisions. It is what users write (`--policy sjf+bf/bestfit`,
// a sweep grid's policies, a serving experiment's batch policy, a live
// run) and what results record: a Spec's String is the label of every
// table row and results file, and ParseSpec reads that label back to the
// same policy.
//
// The grammar, one token per option, options in any order when parsed and
// in the order below when written:
//
//	spec      = order { "+" option } [ "/" placement ]
//	order     = fcfs | sjf | priority | fair | seed | multifactor | las | tiresias | srtf | gandiva | gavel
//	          | kueue                                   (Names; kueue takes no option, its configuration is Options.Kueue)
//	option    = "bf" [ "=" depth ]                      EASY backfill, examining depth queued jobs per call (default 1000)
//	          | "oracle"                                true durations drive SJF's order, backfill's ends and gavel's work left (objective=ftf)
//	          | "wprio=" number                         priority order: weight of a job's priority (default 1, 0 switches it off)
//	          | "wwait=" number                         priority order: score gained per hour waited (default 1, 0 switches it off)
//	          | "wdata=" number                         seed order: weight of a job's data locality (default 1)
//	          | "age=" | "fs=" | "size=" | "qos=" number  multifactor order: factor weights (default 0 each)
//	          | "small"                                 multifactor order: the job-size factor favours small jobs
//	          | "maxage=" | "halflife=" | "calc=" duration  multifactor order: 7d, 7d, 5m by default; halflife=0 no decay, calc=0 every call
//	          | "local" [ "=" duration ]                locality-aware placement, with delay scheduling
//	          | "fastest"                               each job on the GPU model it runs fastest on
//	          | "mig=" ( "dynamic" | "convert" )        MIG reconfiguration (default static layouts)
//	          | "objective=" ( "maxmin" | "ftf" )       gavel order: max-min fairness (default) or finish-time fairness
//	          | "round=" duration                       gavel order: its round (default 6m)
//	placement = firstfit | bestfit | ... | fgd          (PlacementNames; default firstfit)
//
// A label is canonical: it names only options that change decisions
// (weights only for the priority order, the oracle only for SJF or with
// backfill) and only where they differ from the defaults, so two specs
// that run the same policy have the same label.
type Spec struct {
	Order string
	Options
}

// specOption is one "+name[=value]" token of the grammar. Add new policy
// options (preemption, quotas) here: parse, canonical form and label come
// from this table alone.
type specOption struct {
	name string
	desc string
	// set applies the token's value ("" when the token has none).
	set func(s *Spec, value string) error
	// label returns the token as written into a canonical label, or ""
	// when the option is at its default or does not change s's decisions.
	label func(s *Spec) string
}

var specOptions = []specOption{
	{"bf", "EASY backfill; bf=N examines at most N queued jobs behind the blocked one per call (default 1000)",
		func(s *Spec, v string) error {
			s.Backfill = true
			if v == "" {
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("want a backfill depth > 0, got %q", v)
			}
			s.BackfillDepth = n
			return nil
		},
		func(s *Spec) string {
			switch {
			case !s.Backfill:
				return ""
			case s.BackfillDepth == DefaultBackfillDepth:
				return "bf"
			}
			return "bf=" + strconv.Itoa(s.BackfillDepth)
		}},
	{"oracle", "true job durations instead of the users' estimates (changes SJF's order, backfill's reservations and the work left that gavel's finish-time fairness counts)",
		func(s *Spec, v string) error {
			if v != "" {
				return fmt.Errorf("takes no value, got %q", v)
			}
			s.UseOracle = true
			return nil
		},
		func(s *Spec) string {
			if s.UseOracle {
				return "oracle"
			}
			return ""
		}},
	{"wprio", "priority order: weight of a job's priority in its score (default 1; 0 switches the term off)",
		func(s *Spec, v string) error { return setWeight(&s.PriorityWeight, v) },
		func(s *Spec) string { return weightLabel("wprio", s.Order, s.PriorityWeight) }},
	{"wwait", "priority order: score gained per hour waited, i.e. aging (default 1; 0 switches it off)",
		func(s *Spec, v string) error { return setWeight(&s.WaitWeightPerHour, v) },
		func(s *Spec) string { return weightLabel("wwait", s.Order, s.WaitWeightPerHour) }},
	{"wdata", "seed order: weight of a job's data locality in its score (default 1; 0 switches it off)",
		func(s *Spec, v string) error { return setWeight(&s.DataWeight, v) },
		func(s *Spec) string {
			if s.Order != "seed" {
				return ""
			}
			return weightLabel("wdata", s.Order, s.DataWeight)
		}},
	{"age", "multifactor order: weight of the age factor, Slurm's PriorityWeightAge (default 0)",
		func(s *Spec, v string) error { return setMFWeight(&s.Multifactor.Age, v) },
		func(s *Spec) string { return mfWeightLabel("age", s, s.Multifactor.Age) }},
	{"fs", "multifactor order: weight of the fair-share factor, PriorityWeightFairshare (default 0)",
		func(s *Spec, v string) error { return setMFWeight(&s.Multifactor.Fairshare, v) },
		func(s *Spec) string { return mfWeightLabel("fs", s, s.Multifactor.Fairshare) }},
	{"size", "multifactor order: weight of the job-size factor, PriorityWeightJobSize (default 0)",
		func(s *Spec, v string) error { return setMFWeight(&s.Multifactor.JobSize, v) },
		func(s *Spec) string { return mfWeightLabel("size", s, s.Multifactor.JobSize) }},
	{"qos", "multifactor order: weight of the QOS factor (the job's priority normalised), PriorityWeightQOS (default 0)",
		func(s *Spec, v string) error { return setMFWeight(&s.Multifactor.QOS, v) },
		func(s *Spec) string { return mfWeightLabel("qos", s, s.Multifactor.QOS) }},
	{"small", "multifactor order: the job-size factor favours small jobs, PriorityFavorSmall=YES",
		func(s *Spec, v string) error {
			if v != "" {
				return fmt.Errorf("takes no value, got %q", v)
			}
			s.Multifactor.FavorSmall = true
			return nil
		},
		func(s *Spec) string {
			if s.Order == "multifactor" && s.Multifactor.FavorSmall {
				return "small"
			}
			return ""
		}},
	{"maxage", "multifactor order: the wait at which the age factor reaches 1, PriorityMaxAge (default 7d)",
		func(s *Spec, v string) error { return setMFDuration(&s.Multifactor.MaxAge, v, false) },
		func(s *Spec) string { return mfDurationLabel("maxage", s, s.Multifactor.MaxAge) }},
	{"halflife", "multifactor order: half-life of the usage decay, PriorityDecayHalfLife (default 7d; 0: no decay)",
		func(s *Spec, v string) error { return setMFDuration(&s.Multifactor.HalfLife, v, true) },
		func(s *Spec) string { return mfDurationLabel("halflife", s, s.Multifactor.HalfLife) }},
	{"calc", "multifactor order: how often priorities are recomputed, PriorityCalcPeriod (default 5m; 0: at every call)",
		func(s *Spec, v string) error { return setMFDuration(&s.Multifactor.CalcPeriod, v, true) },
		func(s *Spec) string { return mfDurationLabel("calc", s, s.Multifactor.CalcPeriod) }},
	{"local", "locality-aware placement: a job goes to a node holding its dataset when one has room; local=DELAY also waits up to DELAY (e.g. 10m) for one before going remote",
		func(s *Spec, v string) error {
			s.Local = true
			if v == "" {
				return nil
			}
			d, err := hwmodel.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a delay such as 10m, got %q", v)
			}
			s.LocalDelay = d
			return nil
		},
		func(s *Spec) string {
			switch {
			case !s.Local:
				return ""
			case s.LocalDelay > 0:
				return "local=" + strconv.FormatFloat(s.LocalDelay.Seconds(), 'g', -1, 64) + "s"
			}
			return "local"
		}},
	{"fastest", "heterogeneity-aware placement: each job goes to the GPU model where it runs fastest (the run's speed table) among those with room now; the placement picks the node",
		func(s *Spec, v string) error {
			if v != "" {
				return fmt.Errorf("takes no value, got %q", v)
			}
			s.Fastest = true
			return nil
		},
		func(s *Spec) string {
			if s.Fastest {
				return "fastest"
			}
			return ""
		}},
	{"preempt", "priority order: a queued job evicts running jobs of lower priority (the lowest, most recently started first, as few as it needs)",
		func(s *Spec, v string) error {
			if v != "" {
				return fmt.Errorf("takes no value, got %q", v)
			}
			s.Preempt = true
			return nil
		},
		func(s *Spec) string {
			if s.Preempt && s.Order == "priority" {
				return "preempt"
			}
			return ""
		}},
	{"thresholds", "las, tiresias: the service thresholds between their queues, increasing, joined by ':' (e.g. 1h:4h; tiresias counts GPU-time, so 16h is 16 GPU-hours)",
		setThresholds,
		func(s *Spec) string {
			if s.Order != "las" && s.Order != "tiresias" || s.Thresholds == ([MaxThresholds]Time{}) {
				return ""
			}
			var parts []string
			for _, t := range s.Thresholds {
				if t > 0 {
					parts = append(parts, durationLabel(t))
				}
			}
			return "thresholds=" + strings.Join(parts, ":")
		}},
	{"promote", "las, tiresias: the starvation knob: a job below the top queue that waited K times the time it has run goes back to the top queue (default 0: never)",
		func(s *Spec, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("want a finite number >= 0, got %q", v)
			}
			s.Promote = f
			return nil
		},
		func(s *Spec) string {
			if (s.Order != "las" && s.Order != "tiresias") || s.Promote == 0 {
				return ""
			}
			return "promote=" + strconv.FormatFloat(s.Promote, 'g', -1, 64)
		}},
	{"quantum", "gandiva: the time slice a running job keeps before a waiting job of its GPU count may take its turn (default 30m)",
		func(s *Spec, v string) error {
			d, err := hwmodel.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a duration such as 10m, got %q", v)
			}
			s.Quantum = d
			return nil
		},
		func(s *Spec) string {
			if s.Order != "gandiva" || s.Quantum == 0 || s.Quantum == DefaultQuantum {
				return ""
			}
			return "quantum=" + durationLabel(s.Quantum)
		}},
	{"objective", "gavel: the LP's objective, maxmin (max-min fairness of throughput normalised by an equal share, the default) or ftf (finish-time fairness)",
		func(s *Spec, v string) error {
			if v != GavelMaxMin && v != GavelFTF {
				return fmt.Errorf("want %s or %s, got %q", GavelMaxMin, GavelFTF, v)
			}
			s.Objective = v
			return nil
		},
		func(s *Spec) string {
			if s.Order != "gavel" || s.Objective != GavelFTF {
				return ""
			}
			return "objective=" + s.Objective
		}},
	{"round", "gavel: how often jobs are given GPU types again (default 6m); optimus: how often jobs are sized again (default 1m)",
		func(s *Spec, v string) error {
			d, err := hwmodel.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a duration such as 6m, got %q", v)
			}
			s.Round = d
			return nil
		},
		func(s *Spec) string {
			if def, ok := roundDefault(s.Order); !ok || s.Round == 0 || s.Round == def {
				return ""
			}
			return "round=" + durationLabel(s.Round)
		}},
	{"mig", "MIG layouts: mig=dynamic repartitions MIG GPUs for queued MIG jobs, mig=convert also turns idle whole GPUs into MIG GPUs (default static)",
		setMIG,
		func(s *Spec) string {
			switch {
			case s.MIGConvertWhole:
				return "mig=convert"
			case s.MIGReconfigure:
				return "mig=dynamic"
			}
			return ""
		}},
}

// setThresholds reads las' and tiresias' thresholds, T1:T2:...
func setThresholds(s *Spec, v string) error {
	parts := strings.Split(v, ":")
	if len(parts) > MaxThresholds {
		return fmt.Errorf("want at most %d thresholds, got %d", MaxThresholds, len(parts))
	}
	s.Thresholds = [MaxThresholds]Time{}
	for k, part := range parts {
		d, err := hwmodel.ParseDuration(part)
		if err != nil || d <= 0 {
			return fmt.Errorf("want durations such as 1h:4h, got %q", part)
		}
		if k > 0 && d <= s.Thresholds[k-1] {
			return fmt.Errorf("want increasing thresholds, got %s after %s", part, parts[k-1])
		}
		s.Thresholds[k] = d
	}
	return nil
}

// setMIG reads a MIG mode, as sim's --mig flag names them.
func setMIG(s *Spec, v string) error {
	switch v {
	case "static":
		s.MIGReconfigure, s.MIGConvertWhole = false, false
	case "dynamic":
		s.MIGReconfigure, s.MIGConvertWhole = true, false
	case "convert":
		s.MIGReconfigure, s.MIGConvertWhole = true, true
	default:
		return fmt.Errorf("want static, dynamic or convert, got %q", v)
	}
	return nil
}

// setWeight reads a weight as the label writes it: the effective weight,
// where 0 switches the term off (Options keeps 0 for "default", so off is
// stored as -1).
func setWeight(w *float64, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("want a finite weight >= 0, got %q", v)
	}
	if f == 0 {
		f = -1
	}
	*w = f
	return nil
}

func weightLabel(name, order string, w float64) string {
	if order != "priority" && order != "seed" {
		return ""
	}
	if e := weight(w); e != 1 {
		return name + "=" + strconv.FormatFloat(e, 'g', -1, 64)
	}
	return ""
}

// setMFWeight reads a multifactor weight: finite and >= 0, 0 the default.
func setMFWeight(w *float64, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("want a finite weight >= 0, got %q", v)
	}
	*w = f
	return nil
}

func mfWeightLabel(name string, s *Spec, w float64) string {
	if s.Order != "multifactor" || w == 0 {
		return ""
	}
	return name + "=" + strconv.FormatFloat(w, 'g', -1, 64)
}

// setMFDuration reads a multifactor duration such as 7d or 5m; with
// zeroOff, 0 is allowed and stored as -1 (Options keeps 0 for the
// default).
func setMFDuration(d *Time, v string, zeroOff bool) error {
	t, err := hwmodel.ParseDuration(v)
	switch {
	case err != nil || t < 0 || (t == 0 && !zeroOff):
		want := "> 0"
		if zeroOff {
			want = ">= 0"
		}
		return fmt.Errorf("want a duration %s such as 7d, 12h or 5m, got %q", want, v)
	case t == 0:
		t = -1
	}
	*d = t
	return nil
}

func mfDurationLabel(name string, s *Spec, d Time) string {
	switch {
	case s.Order != "multifactor" || d == 0:
		return ""
	case d < 0:
		return name + "=0"
	}
	return name + "=" + durationLabel(d)
}

// durationLabel writes d in the largest unit that divides it (d, h, m),
// else in seconds; hwmodel.ParseDuration reads each back exactly.
func durationLabel(d Time) string {
	for _, u := range []struct {
		t    Time
		name string
	}{{hwmodel.Day, "d"}, {hwmodel.Hour, "h"}, {hwmodel.Minute, "m"}} {
		if d%u.t == 0 {
			return strconv.FormatInt(int64(d/u.t), 10) + u.name
		}
	}
	return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) + "s"
}

// SpecOptions lists the option names of the grammar with a one-line
// description each, in the order labels write them, for --help.
func SpecOptions() [][2]string {
	out := make([][2]string, len(specOptions))
	for i, o := range specOptions {
		out[i] = [2]string{o.name, o.desc}
	}
	return out
}

// ParseSpec reads a policy spec (the grammar on Spec). Errors name the
// spec and the token at fault, with what was expected.
func ParseSpec(text string) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("policy %q: %s", text, fmt.Sprintf(format, a...))
	}
	body, placement, hasPlacement := strings.Cut(strings.TrimSpace(text), "/")
	var s Spec
	if hasPlacement {
		if !slices.Contains(PlacementNames(), placement) {
			return bad("unknown placement %q (known: %s)", placement, strings.Join(PlacementNames(), ", "))
		}
		s.Placement = placement
	}
	tokens := strings.Split(body, "+")
	s.Order = tokens[0]
	if Describe(s.Order) == "" {
		if s.Order == "" {
			return bad("no queue order (known: %s)", strings.Join(Names(), ", "))
		}
		return bad("unknown queue order %q (known: %s)%s", s.Order, strings.Join(Names(), ", "), didYouMean(s.Order, Names()))
	}
	seen := map[string]bool{}
	for _, tok := range tokens[1:] {
		name, value, _ := strings.Cut(tok, "=")
		k := slices.IndexFunc(specOptions, func(o specOption) bool { return o.name == name })
		if k < 0 {
			return bad("unknown option %q (known: %s)%s", name, strings.Join(specOptionNames(), ", "), didYouMean(name, specOptionNames()))
		}
		if seen[name] {
			return bad("option %q given twice", name)
		}
		seen[name] = true
		if err := specOptions[k].set(&s, value); err != nil {
			return bad("option %s: %v", name, err)
		}
	}
	return s.Canonical(), nil
}

// MustParseSpec is ParseSpec for specs known to be valid (tests, built-in
// defaults); it panics on an error.
func MustParseSpec(text string) Spec {
	s, err := ParseSpec(text)
	if err != nil {
		panic(err)
	}
	return s
}

func specOptionNames() []string {
	out := make([]string, len(specOptions))
	for i, o := range specOptions {
		out[i] = o.name
	}
	return out
}

// didYouMean suggests the known word closest to got, when one is close.
func didYouMean(got string, known []string) string {
	best, bestD := "", len(got)/2+1
	for _, k := range known {
		if d := hwmodel.EditDistance(got, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// Canonical returns s with every option that does not change its decisions
// reset to its default, so that equal policies compare equal and print the
// same label. The placer configuration is kept.
func (s Spec) Canonical() Spec {
	c := s
	if c.Placement == "" {
		c.Placement = DefaultPlacement
	}
	if !c.Backfill || c.BackfillDepth == 0 {
		c.BackfillDepth = DefaultBackfillDepth
	}
	if c.UseOracle && c.Order != "sjf" && !c.Backfill && (c.Order != "gavel" || c.Objective != GavelFTF) {
		c.UseOracle = false
	}
	canonWeight := func(w float64) float64 {
		if c.Order != "priority" && c.Order != "seed" {
			return 1
		}
		if e := weight(w); e != 0 {
			return e
		}
		return -1
	}
	c.PriorityWeight = canonWeight(c.PriorityWeight)
	c.WaitWeightPerHour = canonWeight(c.WaitWeightPerHour)
	c.DataWeight = canonWeight(c.DataWeight)
	if c.Order != "seed" {
		c.DataWeight = 1
	}
	if !c.Local {
		c.LocalDelay = 0
	}
	if c.Order != "multifactor" {
		c.Multifactor = Multifactor{}
	}
	c.Multifactor = c.Multifactor.canonical()
	if c.MIGConvertWhole {
		c.MIGReconfigure = true
	}
	if c.Order != "priority" {
		c.Preempt = false
	}
	if c.Order != "las" && c.Order != "tiresias" {
		c.Thresholds, c.Promote = [MaxThresholds]Time{}, 0
	}
	if c.Order != "gandiva" || c.Quantum == DefaultQuantum {
		c.Quantum = 0
	}
	if c.Order != "gavel" || c.Objective == GavelMaxMin {
		c.Objective = ""
	}
	if def, ok := roundDefault(c.Order); !ok || c.Round == def {
		c.Round = 0
	}
	if c.Preempt {
		// Eviction orders by priority alone (preemptorders.go).
		c.PriorityWeight, c.WaitWeightPerHour = 1, 1
	}
	return c
}

// String is the spec's canonical label, e.g. "sjf+bf/bestfit".
func (s Spec) String() string {
	c := s.Canonical()
	var b strings.Builder
	b.WriteString(c.Order)
	for _, o := range specOptions {
		if t := o.label(&c); t != "" {
			b.WriteByte('+')
			b.WriteString(t)
		}
	}
	if c.Placement != DefaultPlacement {
		b.WriteByte('/')
		b.WriteString(c.Placement)
	}
	return b.String()
}

// Equal reports whether a and b name the same policy (their placer
// configurations aside).
func (s Spec) Equal(o Spec) bool {
	a, b := s.Canonical(), o.Canonical()
	a.Placer, b.Placer = PlacerConfig{}, PlacerConfig{}
	return a.Order == b.Order && a.Options.sameDecisions(b.Options)
}

func (o Options) sameDecisions(p Options) bool {
	return o.Placement == p.Placement && o.Backfill == p.Backfill && o.BackfillDepth == p.BackfillDepth &&
		o.PriorityWeight == p.PriorityWeight && o.WaitWeightPerHour == p.WaitWeightPerHour &&
		o.UseOracle == p.UseOracle && o.MIGReconfigure == p.MIGReconfigure && o.MIGConvertWhole == p.MIGConvertWhole &&
		o.Fastest == p.Fastest && o.Local == p.Local && o.LocalDelay == p.LocalDelay && o.DataWeight == p.DataWeight &&
		o.Thresholds == p.Thresholds && o.Promote == p.Promote && o.Quantum == p.Quantum && o.Preempt == p.Preempt &&
		o.Multifactor == p.Multifactor && o.Objective == p.Objective && o.Round == p.Round &&
		o.Kueue == p.Kueue
}

// New builds the policy the spec names; its Name() is s.String().
func (s Spec) New() (Policy, error) { return New(s.Order, s.Options) }

// MustNew is New for specs known to build (tests, examples); it panics on
// an error.
func (s Spec) MustNew() Policy {
	p, err := s.New()
	if err != nil {
		panic(err)
	}
	return p
}

// NeedsTarget reports whether the spec's placement needs a target workload
// (PlacerConfig.Target) to be built.
func (s Spec) NeedsTarget() bool { return s.Placement == "fgd" }

// Check reports whether the spec builds, ignoring configuration a caller
// supplies later (fgd's target workload, the kueue order's manifests).
func (s Spec) Check() error {
	c := s
	if c.NeedsTarget() {
		c.Placement = ""
	}
	if c.Order == "kueue" && c.Kueue == nil {
		c.Kueue = &Kueue{Queues: []ClusterQueue{{Name: "check"}}}
	}
	_, err := c.New()
	return err
}

// ParseSpecs reads a list of specs, as a comma-separated --policy flag
// gives them; an error names the spec at fault.
func ParseSpecs(texts []string) ([]Spec, error) {
	out := make([]Spec, 0, len(texts))
	for _, t := range texts {
		s, err := ParseSpec(t)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// AllSpecs enumerates every built-in combination the grammar names with
// default numbers: each order, with and without backfill and the oracle,
// under each placement and MIG mode, plus one non-default backfill depth,
// non-default aging weights and multifactor configurations. Round-trip
// and conformance tests run over it.
func AllSpecs() []Spec {
	var out []Spec
	for _, order := range StandaloneNames() {
		if Preemptive(order, Options{}) {
			for _, placement := range PlacementNames() {
				out = appendNew(out, Spec{Order: order, Options: Options{Placement: placement}}.Canonical())
			}
			continue
		}
		for _, placement := range PlacementNames() {
			for _, bf := range []bool{false, true} {
				for _, oracle := range []bool{false, true} {
					for _, mig := range []string{"static", "dynamic", "convert"} {
						s := Spec{Order: order, Options: Options{Placement: placement, Backfill: bf, UseOracle: oracle}}
						_ = setMIG(&s, mig)
						out = appendNew(out, s.Canonical())
					}
				}
			}
		}
		out = appendNew(out, Spec{Order: order, Options: Options{Backfill: true, BackfillDepth: 50}}.Canonical())
	}
	for _, w := range [][2]float64{{2, 0.5}, {-1, 1}, {1, -1}} {
		out = appendNew(out, Spec{Order: "priority", Options: Options{PriorityWeight: w[0], WaitWeightPerHour: w[1]}}.Canonical())
	}
	for _, placement := range []string{DefaultPlacement, "bestfit"} {
		out = appendNew(out, Spec{Order: "priority", Options: Options{Placement: placement, Preempt: true}}.Canonical())
	}
	out = appendNew(out, Spec{Order: "tiresias", Options: Options{Thresholds: [MaxThresholds]Time{hwmodel.Hour, 10 * hwmodel.Hour}, Promote: 2}}.Canonical())
	out = appendNew(out, Spec{Order: "las", Options: Options{Thresholds: [MaxThresholds]Time{30 * hwmodel.Minute}}}.Canonical())
	out = appendNew(out, Spec{Order: "gandiva", Options: Options{Quantum: 5 * hwmodel.Minute}}.Canonical())
	out = appendNew(out, Spec{Order: "gavel", Options: Options{Objective: GavelFTF}}.Canonical())
	out = appendNew(out, Spec{Order: "gavel", Options: Options{Objective: GavelFTF, UseOracle: true}}.Canonical())
	out = appendNew(out, Spec{Order: "gavel", Options: Options{Round: 2 * hwmodel.Minute}}.Canonical())
	out = appendNew(out, Spec{Order: "optimus", Options: Options{Round: 2 * hwmodel.Minute}}.Canonical())
	for _, m := range []Multifactor{
		{Age: 1000, Fairshare: 10000},
		{Age: 1000, Fairshare: 10000, JobSize: 500, QOS: 2000, FavorSmall: true, MaxAge: hwmodel.Day, HalfLife: hwmodel.Hour, CalcPeriod: -1},
		{Fairshare: 1, HalfLife: -1, CalcPeriod: 90 * hwmodel.Second},
	} {
		out = appendNew(out, Spec{Order: "multifactor", Options: Options{Multifactor: m}}.Canonical())
		out = appendNew(out, Spec{Order: "multifactor", Options: Options{Multifactor: m, Backfill: true}}.Canonical())
	}
	return out
}

// roundDefault is the default round of the orders that take round=
// (gavel, optimus); false for the others, which ignore it.
func roundDefault(order string) (Time, bool) {
	switch order {
	case "gavel":
		return DefaultRound, true
	case "optimus":
		return DefaultOptimusRound, true
	}
	return 0, false
}

func appendNew(list []Spec, s Spec) []Spec {
	if slices.ContainsFunc(list, s.Equal) {
		return list
	}
	return append(list, s)
}
