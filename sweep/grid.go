package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

// DefaultMetrics are summarised when a grid names none.
var DefaultMetrics = []string{"wait_s.mean", "wait_s.p99", "jct_s.mean", "gpu_utilisation_arrivals", "starved_jobs", "jain_index_slowdown"}

// Grid is a sweep's grid file (docs/sweeps.md).
type Grid struct {
	Traces    []Trace     `json:"traces,omitempty"`
	Synthetic []Synthetic `json:"synthetic,omitempty"`
	Clusters  []string    `json:"clusters"`
	Policies  []Policy    `json:"policies"`
	// Loads are offered loads the arrivals are rescaled to (as sim --load);
	// empty: traces as recorded, synthetic workloads at their own load.
	Loads   []float64 `json:"loads,omitempty"`
	Seeds   Seeds     `json:"seeds"`
	Metrics []string  `json:"metrics,omitempty"`
	// Bucket is the time-series resolution (default 1h).
	Bucket string `json:"bucket,omitempty"`
	// StarvationThreshold, when set, is the wait above which a job is
	// starved; default as sim's (shared across the policies of a run).
	StarvationThreshold string `json:"starvation_threshold,omitempty"`

	dir string // the grid file's folder: relative paths resolve against it
}

// Trace is one workload trace of a grid.
type Trace struct {
	Path   string `json:"path"`
	Format string `json:"format"` // a workloads format name, or auto
}

// Synthetic is one synthetic generator setting of a grid.
type Synthetic struct {
	Jobs int     `json:"jobs"`
	Load float64 `json:"load,omitempty"` // default 0.9; grid loads override it
}

// Policy is one policy of a grid: a policy spec (policies.ParseSpec),
// written as a plain string or as the name of an object whose other
// fields are shorthand applied on top of the spec and whose label names
// its rows.
type Policy struct {
	Name           string   `json:"name"`
	Label          string   `json:"label,omitempty"`
	Placement      string   `json:"placement,omitempty"`
	Backfill       bool     `json:"backfill,omitempty"`
	BackfillDepth  int      `json:"backfill_depth,omitempty"`
	PriorityWeight *float64 `json:"priority_weight,omitempty"`
	WaitWeight     *float64 `json:"wait_weight,omitempty"`
	Oracle         bool     `json:"oracle,omitempty"`
}

// UnmarshalJSON reads a policy written as a spec string or as an object.
func (p *Policy) UnmarshalJSON(b []byte) error {
	var spec string
	if json.Unmarshal(b, &spec) == nil {
		*p = Policy{Name: spec}
		return nil
	}
	type plain Policy
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode((*plain)(p))
}

// Spec is the policy the entry names: its spec with the shorthand fields
// applied.
func (p Policy) Spec() (policies.Spec, error) {
	s, err := policies.ParseSpec(p.Name)
	if err != nil {
		return s, fmt.Errorf("name: %w", err)
	}
	if p.Placement != "" {
		if !slices.Contains(policies.PlacementNames(), p.Placement) {
			return s, fmt.Errorf("placement: want one of %s, got %q", strings.Join(policies.PlacementNames(), ", "), p.Placement)
		}
		s.Placement = p.Placement
	}
	if p.Backfill {
		s.Backfill = true
	}
	if p.BackfillDepth != 0 {
		if p.BackfillDepth < 0 {
			return s, fmt.Errorf("backfill_depth: want > 0, got %d", p.BackfillDepth)
		}
		s.BackfillDepth = p.BackfillDepth
	}
	for _, w := range []struct {
		v   *float64
		dst *float64
	}{{p.PriorityWeight, &s.PriorityWeight}, {p.WaitWeight, &s.WaitWeightPerHour}} {
		if w.v == nil {
			continue
		}
		switch {
		case *w.v < 0 || math.IsNaN(*w.v) || math.IsInf(*w.v, 0):
			return s, fmt.Errorf("priority_weight, wait_weight: want a finite weight >= 0, got %v", *w.v)
		case *w.v == 0:
			*w.dst = -1 // off
		default:
			*w.dst = *w.v
		}
	}
	if p.Oracle {
		s.UseOracle = true
	}
	return s.Canonical(), nil
}

// Seeds is a list of seeds, written as a YAML list or a range "1-10".
type Seeds []uint64

// UnmarshalJSON reads a list of seeds, one seed, or a string "A-B" or "A".
func (s *Seeds) UnmarshalJSON(b []byte) error {
	var list []uint64
	if err := json.Unmarshal(b, &list); err == nil {
		*s = list
		return nil
	}
	var one uint64
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Seeds{one}
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("seeds: want a list of seeds or a range like \"1-10\", got %s", b)
	}
	out, err := ParseSeeds(str)
	if err != nil {
		return err
	}
	*s = out
	return nil
}

// ParseSeeds reads "A-B" (inclusive), "A" or a comma-separated mix of them.
func ParseSeeds(str string) (Seeds, error) {
	var out Seeds
	for _, part := range strings.Split(str, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
		}
		if err1 != nil || err2 != nil || b < a || b-a >= 1_000_000 {
			return nil, fmt.Errorf("seeds: want a list of seeds or a range like \"1-10\", got %q", str)
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}

// LoadGrid reads and checks a grid file: YAML (or JSON), strict — an
// unknown field is an error naming the file and the field.
func LoadGrid(path string) (*Grid, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := ParseGrid(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	g.dir = filepath.Dir(path)
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// ParseGrid decodes a grid strictly, without checking its values.
func ParseGrid(data []byte) (*Grid, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var g Grid
	if err := dec.Decode(&g); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: want %s, got a %s", te.Field, kind(te.Type), te.Value)
		}
		msg := err.Error()
		if _, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			var generic any
			if json.Unmarshal(js, &generic) == nil {
				if path, known := unknownField(generic, reflect.TypeFor[Grid](), ""); path != "" {
					return nil, fmt.Errorf("%s: unknown field (known there: %s; see docs/sweeps.md)", path, strings.Join(known, ", "))
				}
			}
		}
		return nil, errors.New(strings.TrimPrefix(msg, "json: "))
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one document")
	}
	return &g, nil
}

func (g *Grid) check() error {
	if len(g.Traces)+len(g.Synthetic) == 0 {
		return fmt.Errorf("no workload: give traces (path, format) or synthetic (jobs, load)")
	}
	for i, t := range g.Traces {
		if t.Path == "" {
			return fmt.Errorf("traces[%d].path: missing (want a trace file)", i)
		}
		if err := workloads.CheckFormat(t.Format); err != nil {
			return fmt.Errorf("traces[%d].format: %v", i, err)
		}
		if _, err := os.Stat(g.path(t.Path)); err != nil {
			return fmt.Errorf("traces[%d].path: %v", i, err)
		}
	}
	for i, s := range g.Synthetic {
		if s.Jobs <= 0 {
			return fmt.Errorf("synthetic[%d].jobs: want a positive number of jobs, got %d", i, s.Jobs)
		}
		if s.Load < 0 {
			return fmt.Errorf("synthetic[%d].load: want a positive load, got %g", i, s.Load)
		}
	}
	if len(g.Clusters) == 0 {
		return fmt.Errorf("clusters: want at least one preset name (%s) or spec file", strings.Join(hwmodel.Presets(), ", "))
	}
	for i, c := range g.Clusters {
		if _, err := g.Cluster(i); err != nil {
			return fmt.Errorf("clusters[%d] %q: %v", i, c, err)
		}
	}
	if len(g.Policies) == 0 {
		return fmt.Errorf("policies: want at least one (known: %s)", strings.Join(policies.Names(), ", "))
	}
	labels := map[string]int{}
	for i, p := range g.Policies {
		spec, err := p.Spec()
		if err != nil {
			return fmt.Errorf("policies[%d].%v", i, err)
		}
		if err := spec.Check(); err != nil {
			return fmt.Errorf("policies[%d].name: %v", i, err)
		}
		if j, dup := labels[g.Label(i)]; dup {
			return fmt.Errorf("policies[%d]: label %q is already policies[%d]'s; give each a distinct label", i, g.Label(i), j)
		}
		labels[g.Label(i)] = i
	}
	for i, l := range g.Loads {
		if !(l > 0) {
			return fmt.Errorf("loads[%d]: want a positive offered load, got %g", i, l)
		}
	}
	if len(g.Seeds) == 0 {
		return fmt.Errorf("seeds: want a list of seeds or a range like \"1-10\"")
	}
	seen := map[uint64]bool{}
	for _, s := range g.Seeds {
		if seen[s] {
			return fmt.Errorf("seeds: seed %d is listed twice", s)
		}
		seen[s] = true
	}
	if len(g.Metrics) == 0 {
		g.Metrics = slices.Clone(DefaultMetrics)
	}
	for i, m := range g.Metrics {
		if _, err := Metric(results.Summary{}, m); err != nil {
			return fmt.Errorf("metrics[%d]: %v", i, err)
		}
	}
	if _, err := g.bucket(); err != nil {
		return fmt.Errorf("bucket: %v", err)
	}
	if _, err := g.starvation(); err != nil {
		return fmt.Errorf("starvation_threshold: %v", err)
	}
	return nil
}

func (g *Grid) bucket() (hwmodel.Time, error) {
	if g.Bucket == "" {
		return hwmodel.Hour, nil
	}
	t, err := hwmodel.ParseDuration(g.Bucket)
	if err == nil && t <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return t, err
}

func (g *Grid) starvation() (hwmodel.Time, error) {
	if g.StarvationThreshold == "" {
		return 0, nil
	}
	t, err := hwmodel.ParseDuration(g.StarvationThreshold)
	if err == nil && t <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return t, err
}

// path resolves a file named in the grid against the grid's folder.
func (g *Grid) path(p string) string {
	if filepath.IsAbs(p) || g.dir == "" {
		return p
	}
	return filepath.Join(g.dir, p)
}

// Cluster resolves clusters[i]: a spec file (relative to the grid file's
// folder) or a preset name.
func (g *Grid) Cluster(i int) (*hwmodel.ClusterSpec, error) {
	c := g.Clusters[i]
	if _, err := os.Stat(g.path(c)); err == nil {
		return hwmodel.ResolveCluster(g.path(c))
	}
	return hwmodel.ResolveCluster(c)
}

// Label is policies[i]'s name in the tables: its label, else its spec's
// canonical label.
func (g *Grid) Label(i int) string {
	p := g.Policies[i]
	if p.Label != "" {
		return p.Label
	}
	s, err := p.Spec()
	if err != nil {
		return p.Name
	}
	return s.String()
}

// Fingerprint identifies the grid's content (not its file name): records
// written under another grid are refused.
func (g *Grid) Fingerprint() string {
	b, _ := json.Marshal(g)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Metric reads a metric of a summary by its JSON path, e.g. "wait_s.p99";
// a name not at the top level is looked up one level down, so
// "starved_jobs" is "starvation.starved_jobs".
func Metric(s results.Summary, name string) (float64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return 0, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, err
	}
	v, ok := lookup(m, strings.Split(name, "."))
	if !ok && !strings.Contains(name, ".") {
		var found []string
		for _, k := range slices.Sorted(mapsKeys(m)) {
			if sub, isMap := m[k].(map[string]any); isMap {
				if x, ok2 := sub[name]; ok2 {
					found = append(found, k)
					v, ok = x, true
				}
			}
		}
		if len(found) > 1 {
			return 0, fmt.Errorf("metric %q is ambiguous: %s", name, strings.Join(found, ", "))
		}
	}
	if !ok {
		return 0, fmt.Errorf("unknown metric %q (want a number of summary.json, e.g. %s; see docs/results.md)", name, strings.Join(DefaultMetrics, ", "))
	}
	f, isNum := v.(float64)
	if !isNum {
		return 0, fmt.Errorf("metric %q is not a number of summary.json (want e.g. %s.mean)", name, name)
	}
	return f, nil
}

func kind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "a mapping"
	}
	return "a " + t.String()
}

// unknownField finds the first field of v (decoded JSON) that type t has
// no field for, returning its path (e.g. policies[1].backfil) and the
// fields known there.
func unknownField(v any, t reflect.Type, path string) (string, []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case []any:
		if t.Kind() == reflect.Slice {
			for i, e := range x {
				if p, k := unknownField(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p, k
				}
			}
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", nil
		}
		fields := map[string]reflect.Type{}
		var known []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			known = append(known, name)
		}
		for _, k := range slices.Sorted(mapsKeys(x)) {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				return sub, known
			}
			if p, kn := unknownField(x[k], ft, sub); p != "" {
				return p, kn
			}
		}
	}
	return "", nil
}

func lookup(m map[string]any, path []string) (any, bool) {
	v, ok := m[path[0]]
	if !ok || len(path) == 1 {
		return v, ok
	}
	sub, isMap := v.(map[string]any)
	if !isMap {
		return nil, false
	}
	return lookup(sub, path[1:])
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
