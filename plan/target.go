package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/results"
)

// Target is one requirement on a summary metric.
type Target struct {
	Key   string  // dotted summary.json path, e.g. wait_s.p99
	Op    string  // one of <=, >=, <, >
	Value float64 // the bound
}

func (t Target) String() string {
	return t.Key + t.Op + strconv.FormatFloat(t.Value, 'g', -1, 64)
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

// Worse returns the worse of a and b for this target.
func (t Target) Worse(a, b float64) float64 {
	if t.Upper() {
		return math.Max(a, b)
	}
	return math.Min(a, b)
}

// Miss is by how much v misses the target (0 when it holds), in the
// metric's units, and as a fraction of the bound when the bound is not 0.
func (t Target) Miss(v float64) string {
	if t.Holds(v) {
		return "met"
	}
	d := math.Abs(v - t.Value)
	s := fmt.Sprintf("%s = %s, %s off the bound %s", t.Key, fmtNum(v), fmtNum(d), fmtNum(t.Value))
	if t.Value != 0 {
		s += fmt.Sprintf(" (%.1f%%)", 100*d/math.Abs(t.Value))
	}
	return s
}

// ParseTargets reads a comma-separated list of targets such as
// "wait_s.p99<=1800,gpu_utilisation_arrivals>=0.7". Keys must be numeric
// summary.json fields (KnownKeys).
func ParseTargets(s string) ([]Target, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no target given: want KEY<=N, KEY>=N, KEY<N or KEY>N, comma-separated, e.g. wait_s.p99<=1800")
	}
	known := KnownKeys()
	var out []Target
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("target list %q has an empty item", s)
		}
		i := strings.IndexAny(part, "<>=")
		if i < 0 {
			return nil, fmt.Errorf("target %q has no comparison: want KEY<=N, KEY>=N, KEY<N or KEY>N", part)
		}
		key := strings.TrimSpace(part[:i])
		rest := part[i:]
		var op string
		for _, o := range []string{"<=", ">=", "<", ">"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("target %q: comparison %q is not one of <=, >=, <, >", part, rest[:1])
		}
		if key == "" {
			return nil, fmt.Errorf("target %q has no metric before %s", part, op)
		}
		num := strings.TrimSpace(rest[len(op):])
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("target %q: %q is not a finite number", part, num)
		}
		if !slices.Contains(known, key) {
			return nil, fmt.Errorf("target %q: unknown metric %q (known: %s)", part, key, strings.Join(known, ", "))
		}
		out = append(out, Target{Key: key, Op: op, Value: v})
	}
	return out, nil
}

// Metrics flattens a summary into its numeric summary.json fields, keyed by
// dotted path. Lists (per-tenant rows) and strings are left out.
func Metrics(s results.Summary) (map[string]float64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, c)
			}
		case float64:
			out[prefix] = x
		}
	}
	walk("", tree)
	return out, nil
}

// KnownKeys lists the numeric summary.json fields a target may name,
// sorted.
func KnownKeys() []string {
	m, err := Metrics(results.Summary{})
	if err != nil {
		panic(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k == "seed" {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
