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
//	order     = fcfs | sjf | priority | fair | seed | kueue (Names; kueue takes no option, its
//	                                                    configuration is Options.Kueue)
//	option    = "bf" [ "=" depth ]                      EASY backfill, examining depth queued jobs per call (default 1000)
//	          | "oracle"                                true durations drive SJF's order and backfill's ends
//	          | "wprio=" number                         priority order: weight of a job's priority (default 1, 0 switches it off)
//	          | "wwait=" number                         priority order: score gained per hour waited (default 1, 0 switches it off)
//	          | "mig=" ( "dynamic" | "convert" )        MIG reconfiguration (default static layouts)
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
	{"oracle", "true job durations instead of the users' estimates (changes SJF's order and backfill's reservations)",
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
	if c.UseOracle && c.Order != "sjf" && !c.Backfill {
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
	if c.MIGConvertWhole {
		c.MIGReconfigure = true
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
// under each placement and MIG mode, plus one non-default backfill depth
// and non-default aging weights. Round-trip and conformance tests run
// over it.
func AllSpecs() []Spec {
	var out []Spec
	for _, order := range StandaloneNames() {
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
	return out
}

func appendNew(list []Spec, s Spec) []Spec {
	if slices.ContainsFunc(list, s.Equal) {
		return list
	}
	return append(list, s)
}
