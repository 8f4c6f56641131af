package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/config"
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

// UnmarshalConfig reads a policy written as a spec string or as an object.
func (p *Policy) UnmarshalConfig(v config.Value) {
	if spec, ok := v.String(); ok {
		*p = Policy{Name: spec}
		return
	}
	if !v.IsMapping() {
		v.Fail("want a policy spec such as \"sjf+bf/bestfit\", or a mapping with fields %s; got %s", strings.Join(config.Names[Policy](), ", "), v.Describe())
		return
	}
	type plain Policy
	v.Decode((*plain)(p))
}

// Check reports what is wrong with the entry: its spec, and each
// shorthand field.
func (p *Policy) Check(e *config.Errors) {
	before := e.Count()
	if p.Name == "" {
		e.Add("name", "want a policy spec (known orders: %s)", strings.Join(policies.Names(), ", "))
	} else if _, err := policies.ParseSpec(p.Name); err != nil {
		e.Add("name", "%v", err)
	}
	if p.Placement != "" && !slices.Contains(policies.PlacementNames(), p.Placement) {
		e.Add("placement", "want one of %s, got %q", strings.Join(policies.PlacementNames(), ", "), p.Placement)
	}
	if p.BackfillDepth < 0 {
		e.Add("backfill_depth", "want > 0, got %d", p.BackfillDepth)
	}
	for _, w := range []struct {
		field string
		v     *float64
	}{{"priority_weight", p.PriorityWeight}, {"wait_weight", p.WaitWeight}} {
		if w.v != nil && (*w.v < 0 || math.IsNaN(*w.v) || math.IsInf(*w.v, 0)) {
			e.Add(w.field, "want a finite weight >= 0, got %v", *w.v)
		}
	}
	if e.Count() == before {
		if err := p.spec().Check(); err != nil {
			e.Add("name", "%v", err)
		}
	}
}

// Spec is the policy the entry names: its spec with the shorthand fields
// applied.
func (p Policy) Spec() (policies.Spec, error) {
	if err := config.Validate("", &p); err != nil {
		return policies.Spec{}, err
	}
	return p.spec(), nil
}

// spec applies the shorthand to the parsed spec; p's name must parse.
func (p Policy) spec() policies.Spec {
	s, err := policies.ParseSpec(p.Name)
	if err != nil {
		return s
	}
	if p.Placement != "" {
		s.Placement = p.Placement
	}
	if p.Backfill {
		s.Backfill = true
	}
	if p.BackfillDepth > 0 {
		s.BackfillDepth = p.BackfillDepth
	}
	for _, w := range []struct {
		v   *float64
		dst *float64
	}{{p.PriorityWeight, &s.PriorityWeight}, {p.WaitWeight, &s.WaitWeightPerHour}} {
		switch {
		case w.v == nil:
		case *w.v == 0:
			*w.dst = -1 // off
		default:
			*w.dst = *w.v
		}
	}
	if p.Oracle {
		s.UseOracle = true
	}
	return s.Canonical()
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

// UnmarshalConfig reads a list of seeds, one seed, or a string of ranges
// as ParseSeeds takes it.
func (s *Seeds) UnmarshalConfig(v config.Value) {
	want := "want a list of seeds or a range like \"1-10\", got %s"
	switch {
	case v.IsList():
		var list []uint64
		v.Decode(&list)
		*s = list
	case v.IsScalar():
		if str, ok := v.String(); ok {
			out, err := ParseSeeds(str)
			if err != nil {
				v.Fail(want, v.Describe())
				return
			}
			*s = out
			return
		}
		var one uint64
		v.Decode(&one)
		*s = Seeds{one}
	default:
		v.Fail(want, v.Describe())
	}
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

// LoadGrid reads and checks a grid file: YAML (or JSON), strict (package
// config): every problem at once, each naming the file, the line and the
// field. Relative paths in it resolve against its folder.
func LoadGrid(path string) (*Grid, error) {
	data, err := config.ReadFile(path, "grid", 0)
	if err != nil {
		return nil, err
	}
	return ParseGrid(data, path)
}

// ParseGrid reads and checks a grid; file names it in errors, and its
// folder is where the grid's relative paths resolve (nothing else is read
// from it). Metrics default to DefaultMetrics.
func ParseGrid(data []byte, file string) (*Grid, error) {
	g := &Grid{dir: filepath.Dir(file)}
	if err := config.Decode(data, file, g); err != nil {
		return nil, err
	}
	if len(g.Metrics) == 0 {
		g.Metrics = slices.Clone(DefaultMetrics)
	}
	return g, nil
}

// Check reports every problem of the grid: a workload, clusters, policies
// (each as Policy.Check says, with distinct labels), loads, seeds, metrics
// and durations; the trace files and cluster spec files it names must be
// readable.
func (g *Grid) Check(e *config.Errors) {
	if len(g.Traces)+len(g.Synthetic) == 0 {
		e.Add("", "no workload: give traces (path, format) or synthetic (jobs, load)")
	}
	for i, t := range g.Traces {
		te := e.Index("traces", i)
		if t.Path == "" {
			te.Add("path", "missing (want a trace file)")
		} else if _, err := os.Stat(g.path(t.Path)); err != nil {
			te.Add("path", "%v", err)
		}
		if err := workloads.CheckFormat(t.Format); err != nil {
			te.Add("format", "%v", err)
		}
	}
	for i, s := range g.Synthetic {
		if s.Jobs <= 0 {
			e.Add(fmt.Sprintf("synthetic[%d].jobs", i), "want a positive number of jobs, got %d", s.Jobs)
		}
		if s.Load < 0 {
			e.Add(fmt.Sprintf("synthetic[%d].load", i), "want a positive load, got %g", s.Load)
		}
	}
	if len(g.Clusters) == 0 {
		e.Add("clusters", "want at least one preset name (%s) or spec file", strings.Join(hwmodel.Presets(), ", "))
	}
	for i := range g.Clusters {
		if _, err := g.Cluster(i); err != nil {
			e.Add(fmt.Sprintf("clusters[%d]", i), "%v", err)
		}
	}
	if len(g.Policies) == 0 {
		e.Add("policies", "want at least one (known: %s)", strings.Join(policies.Names(), ", "))
	}
	labels := map[string]int{}
	for i := range g.Policies {
		pe := e.Index("policies", i)
		before := pe.Count()
		g.Policies[i].Check(pe)
		if pe.Count() != before {
			continue
		}
		if j, dup := labels[g.Label(i)]; dup {
			pe.Add("", "label %q is already policies[%d]'s; give each a distinct label", g.Label(i), j)
		}
		labels[g.Label(i)] = i
	}
	for i, l := range g.Loads {
		if !(l > 0) {
			e.Add(fmt.Sprintf("loads[%d]", i), "want a positive offered load, got %g", l)
		}
	}
	if len(g.Seeds) == 0 {
		e.Add("seeds", "want a list of seeds or a range like \"1-10\"")
	}
	seen := map[uint64]bool{}
	for _, s := range g.Seeds {
		if seen[s] {
			e.Add("seeds", "seed %d is listed twice", s)
		}
		seen[s] = true
	}
	for i, m := range g.Metrics {
		if _, err := Metric(results.Summary{}, m); err != nil {
			e.Add(fmt.Sprintf("metrics[%d]", i), "%v", err)
		}
	}
	if _, err := g.bucket(); err != nil {
		e.Add("bucket", "%v", err)
	}
	if _, err := g.starvation(); err != nil {
		e.Add("starvation_threshold", "%v", err)
	}
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
