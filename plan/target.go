package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Unit says how a metric's bound is written and its value printed.
type Unit int

const (
	// Number is any finite number.
	Number Unit = iota
	// Seconds is a duration (500ms, 1s, 2m) or plain seconds, >= 0;
	// tables print it in ms below a second.
	Seconds
	// Fraction is a number in [0, 1] or a percentage (99%).
	Fraction
	// Rate is a count per second, >= 0.
	Rate
)

// Trend is how a metric moves as the size grows.
type Trend int

const (
	// TrendUnknown: the metric may move either way; a plan with such a
	// target simulates the largest size first to see which targets
	// growing meets.
	TrendUnknown Trend = iota
	// Falls: a bigger size lowers the metric (a latency, an error rate).
	Falls
	// Rises: a bigger size raises the metric (SLO attainment, throughput).
	Rises
)

// Metric is one metric a target may name.
type Metric struct {
	Name  string
	Unit  Unit
	Trend Trend
	// WholeOnly marks a metric of the whole (a service's saturation) that
	// no class has.
	WholeOnly bool
}

// Catalogue is the vocabulary of one kind of plan: the metrics its
// targets may name, with their units, and whether a target may name a
// class.
type Catalogue struct {
	// Metrics in the order the known list is printed.
	Metrics []Metric
	// Classes allows CLASS.METRIC; the class names are checked against
	// the run, not here.
	Classes bool
	// Whole names what a class is part of ("service"), for messages.
	Whole string
	// Example is a valid target list, shown when the syntax is wrong.
	Example string
}

func (c Catalogue) lookup(name string) (Metric, bool) {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

func (c Catalogue) names() string {
	s := make([]string, len(c.Metrics))
	for i, m := range c.Metrics {
		s[i] = m.Name
	}
	return strings.Join(s, ", ")
}

// Target is one requirement on a metric: [CLASS.]METRIC OP BOUND.
type Target struct {
	// Class is the request class ("" for the whole).
	Class  string
	Metric string
	Op     string // one of <=, >=, <, >
	Value  float64
	// Text is the target as written, spaces removed ("" for a target
	// built in code).
	Text  string
	Unit  Unit
	Trend Trend
}

// Key is the metric with its class, e.g. interactive.ttft_p99: the key
// of a Sample's metrics and the column a table shows it in.
func (t Target) Key() string {
	if t.Class == "" {
		return t.Metric
	}
	return t.Class + "." + t.Metric
}

func (t Target) String() string {
	if t.Text != "" {
		return t.Text
	}
	return t.Key() + t.Op + strconv.FormatFloat(t.Value, 'g', -1, 64)
}

// Holds reports whether v meets the target.
func (t Target) Holds(v float64) bool {
	switch t.Op {
	case "<=":
		return v <= t.Value
	case ">=":
		return v >= t.Value
	case "<":
		return v < t.Value
	case ">":
		return v > t.Value
	}
	return false
}

// Upper reports whether the target bounds its metric from above (smaller
// is better).
func (t Target) Upper() bool { return t.Op == "<=" || t.Op == "<" }

// Worse returns the worse of a and b for this target: the value a size
// is judged by across seeds.
func (t Target) Worse(a, b float64) float64 {
	if t.Upper() {
		return math.Max(a, b)
	}
	return math.Min(a, b)
}

// Improving reports whether a bigger size moves the metric towards the
// bound (a ceiling on a falling metric, a floor on a rising one); false
// when the trend is unknown or the size works against the target (a
// saturation floor against over-provisioning).
func (t Target) Improving() bool {
	return t.Trend != TrendUnknown && t.Upper() == (t.Trend == Falls)
}

// Format prints a value of the target's metric with its unit.
func (t Target) Format(v float64) string {
	if t.Unit == Seconds {
		return fmtNum(v) + " s"
	}
	return fmtNum(v)
}

// Miss says by how much v misses the target ("met" when it holds), in
// the metric's units and, when the bound is not 0, as a share of it.
func (t Target) Miss(v float64) string {
	if t.Holds(v) {
		return "met"
	}
	d := math.Abs(v - t.Value)
	s := fmt.Sprintf("%s = %s, %s off the bound %s", t.Key(), t.Format(v), t.Format(d), t.Format(t.Value))
	if t.Value != 0 {
		s += fmt.Sprintf(" (%.1f%%)", 100*d/math.Abs(t.Value))
	}
	return s
}

// ParseTargets reads a comma-separated list of targets such as
// "wait_s.p99<=1800,gpu_utilisation_arrivals>=0.7" or
// "interactive.ttft_p99<=1s,errors<=0.1%" in cat's vocabulary: each a
// metric of cat (with a class when cat allows them), one of <=, >=, <, >,
// and a bound in the metric's unit. Spaces are ignored.
func ParseTargets(s string, cat Catalogue) ([]Target, error) {
	form := "METRIC"
	if cat.Classes {
		form = "[CLASS.]METRIC"
	}
	want := "want " + form + "<=VALUE (or >=, <, >), comma-separated, e.g. " + cat.Example
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no target given: %s", want)
	}
	var out []Target
	for _, part := range strings.Split(s, ",") {
		part = strings.Join(strings.Fields(part), "")
		if part == "" {
			return nil, fmt.Errorf("target list %q has an empty item: %s", s, want)
		}
		i := strings.IndexAny(part, "<>=!")
		if i < 0 {
			return nil, fmt.Errorf("target %q has no comparison: %s", part, want)
		}
		key, rest := part[:i], part[i:]
		var op string
		for _, o := range []string{"<=", ">=", "<", ">"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			cmp := rest[:len(rest)-len(strings.TrimLeft(rest, "<>=!"))]
			return nil, fmt.Errorf("target %q: comparison %q is not one of <=, >=, <, >", part, cmp)
		}
		if key == "" {
			return nil, fmt.Errorf("target %q has no metric before %s: %s", part, op, want)
		}
		t := Target{Metric: key, Op: op, Text: part}
		m, ok := cat.lookup(key)
		if !ok && cat.Classes {
			if c, name, cut := strings.Cut(key, "."); cut {
				if c == "" || name == "" || strings.Contains(name, ".") {
					return nil, fmt.Errorf("target %q: metric %q is not CLASS.METRIC or METRIC", part, key)
				}
				t.Class, t.Metric = c, name
				m, ok = cat.lookup(name)
			}
		}
		if !ok {
			return nil, fmt.Errorf("target %q: unknown metric %q (known: %s)", part, t.Metric, cat.names())
		}
		if m.WholeOnly && t.Class != "" {
			return nil, fmt.Errorf("target %q: %s is the %s's, not a class's: write %s%s", part, m.Name, cat.Whole, m.Name, rest)
		}
		t.Unit, t.Trend = m.Unit, m.Trend
		var err error
		if t.Value, err = parseBound(m.Unit, rest[len(op):]); err != nil {
			return nil, fmt.Errorf("target %q: %v", part, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func parseBound(u Unit, s string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("no bound after the comparison")
	}
	switch u {
	case Seconds:
		d, err := hwmodel.ParseDuration(s)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("bound %q is not a duration >= 0 (e.g. 500ms, 1s, 2m or plain seconds)", s)
		}
		return d.Seconds(), nil
	case Rate:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("bound %q is not a rate >= 0 per second", s)
		}
		return v, nil
	case Fraction:
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if strings.HasSuffix(s, "%") {
			v /= 100
		}
		if err != nil || !(v >= 0 && v <= 1) {
			return 0, fmt.Errorf("bound %q is not a fraction in [0, 1] (e.g. 0.99 or 99%%)", s)
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bound %q is not a finite number", s)
	}
	return v, nil
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtSeconds prints a latency for a table: ms below a second.
func fmtSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1:
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + "ms"
	case s < 100:
		return strconv.FormatFloat(s, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + "s"
}
