package serving

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/workloads"
)

// Experiment is an experiment file (docs/serving.md): a cluster, an
// optional batch workload, the services that run beside it, and the
// variants to compare, each a copy of the services with a few switches
// flipped. ParseExperiment reads one; VariantSpec gives a variant's Spec.
type Experiment struct {
	// File names the source in errors ("" when built in Go).
	File string
	// Cluster is shared by the batch jobs and the replicas.
	Cluster ClusterRef
	// Batch is the batch workload (nil: no batch jobs).
	Batch *Batch
	// Seed is the root seed: the request streams, and the synthetic batch
	// workload unless it names its own seed.
	Seed uint64
	// Spec holds the horizon, the bucket and the services as the file
	// declares them; variants are copies of it.
	Spec Spec
	// Variants to run; an experiment without variants runs one, named
	// "default", of the services as declared.
	Variants []Variant
	// Faults is the hardware fault injection (nil: none); variants with
	// faults on (the default) and the batch-only baseline face the same
	// failures (FaultsOn, RunnerFaults).
	Faults *Faults

	// lines maps field paths to the line they were read from, so that
	// Validate can name it.
	lines map[string]int
}

// ClusterRef is an experiment's cluster: a preset name, a spec file, or a
// spec written inline; exactly one is set.
type ClusterRef struct {
	// Preset is a built-in cluster name (hwmodel.Presets).
	Preset string
	// Path is a cluster spec file (docs/cluster.md), resolved against the
	// experiment file's folder.
	Path string
	// Inline is a cluster spec written in the experiment file itself.
	Inline *hwmodel.ClusterSpec
}

// Spec returns the cluster spec the reference names.
func (c ClusterRef) Spec() (*hwmodel.ClusterSpec, error) {
	switch {
	case c.Inline != nil:
		s := *c.Inline
		return &s, nil
	case c.Path != "":
		return hwmodel.ResolveCluster(c.Path)
	case c.Preset != "":
		s, ok := hwmodel.Preset(c.Preset)
		if !ok {
			return nil, fmt.Errorf("cluster: unknown preset %q (known: %s)", c.Preset, strings.Join(hwmodel.Presets(), ", "))
		}
		return s, nil
	}
	return nil, fmt.Errorf("cluster: none named")
}

// String names the cluster for tables and logs.
func (c ClusterRef) String() string {
	switch {
	case c.Inline != nil:
		return c.Inline.Name
	case c.Path != "":
		return c.Path
	}
	return c.Preset
}

// Batch is an experiment's batch workload: synthetic jobs or a trace,
// scheduled by a policy as brigade sim names it.
type Batch struct {
	// Synthetic, or Trace and Format (philly, openb, brigade); one is set.
	Synthetic *Synthetic
	Trace     string
	Format    string
	// Policy is a policy spec as brigade sim takes it (default fcfs);
	// Backfill is shorthand for its +bf.
	Policy   string
	Backfill bool
}

// Synthetic is a seeded synthetic batch workload (workloads.Generate with
// its Philly-like defaults) whose arrivals are spaced so that its GPU
// demand is Load × the cluster's GPUs over the arrival window.
type Synthetic struct {
	Jobs int
	Load float64
	// Seed of the workload (0: the experiment's seed).
	Seed uint64
	// MaxDuration caps each job's duration (default 2 days).
	MaxDuration hwmodel.Time
}

// Switch is a variant's override of a service setting: "" keeps what the
// services declare, SwitchOn and SwitchOff force it.
type Switch string

// The values of a Switch.
const (
	SwitchKeep Switch = ""
	SwitchOn   Switch = "on"
	SwitchOff  Switch = "off"
)

// Variant is one run of an experiment: the services as declared, with
// these overrides applied to every service.
type Variant struct {
	Name string
	// Routing, when set, replaces every service's routing.
	Routing Routing
	// Health on enables outlier ejection (with the service's settings, or
	// the defaults); off disables it.
	Health Switch
	// Autoscale on keeps the autoscaler of services that declare one (at
	// least one must); off removes it (static replicas).
	Autoscale Switch
	// Incidents off drops the services' incidents.
	Incidents Switch
	// OnNoGPUs, when set, replaces the autoscalers' choice.
	OnNoGPUs NoGPUs
	// Faults off runs the variant without the experiment's faults; on
	// (or kept) injects them when the experiment has a faults section.
	Faults Switch
}

// Defaults filled by ParseExperiment (docs/serving.md); health and
// autoscaling take the engine's own (Health's and Autoscale's comments).
const (
	DefaultBucket           = 60 * hwmodel.Second
	DefaultRouting          = LeastOutstanding
	DefaultBatchPolicy      = "fcfs"
	DefaultBatchLoad        = 0.8
	DefaultMaxBatchDuration = 2 * hwmodel.Day
)

// Limits that keep a mistyped number from exhausting memory.
const (
	maxExperimentBytes = 8 << 20
	maxServices        = 64
	maxClasses         = 64
	maxVariants        = 32
	maxSteps           = 100_000
	maxIncidents       = 10_000
	maxReplicas        = 100_000
	maxRate            = 1e7
	maxHorizon         = 366 * hwmodel.Day
	maxBatchJobs       = 10_000_000
	maxYAMLNodes       = 1_000_000
)

// ExperimentError is one problem with an experiment file: the file, the
// line (0: unknown), the field path such as "services[0].classes[1].name"
// (empty for the whole file) and what was expected.
type ExperimentError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *ExperimentError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// expProblems collects ExperimentErrors.
type expProblems struct {
	file  string
	lines map[string]int
	errs  []error
	more  int
}

const maxExpReported = 10

func (p *expProblems) at(line int, field, format string, args ...any) {
	if len(p.errs) >= maxExpReported {
		p.more++
		return
	}
	p.errs = append(p.errs, &ExperimentError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// add reports a problem with field, at the line it was read from, or else
// the line of the nearest enclosing field, if known.
func (p *expProblems) add(field, format string, args ...any) {
	line := 0
	for f := field; p.lines != nil && f != ""; f = parentField(f) {
		if l, ok := p.lines[f]; ok {
			line = l
			break
		}
	}
	p.at(line, field, format, args...)
}

// parentField strips a field path's last element: "a.b[2].c" -> "a.b[2]"
// -> "a.b" -> "a" -> "".
func parentField(f string) string {
	i := strings.LastIndexAny(f, ".[")
	if i < 0 {
		return ""
	}
	return f[:i]
}

func (p *expProblems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	errs := p.errs
	if p.more > 0 {
		errs = append(errs[:len(errs):len(errs)], &ExperimentError{File: p.file, Msg: fmt.Sprintf("and %d more problems", p.more)})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// LoadExperiment reads an experiment file (YAML or JSON). Relative paths
// in it (a cluster spec, a batch trace, request traces) are resolved
// against the file's folder, and the files they name must exist.
func LoadExperiment(path string) (*Experiment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxExperimentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	e, err := ParseExperiment(data, path)
	if err != nil {
		return nil, err
	}
	if err := e.checkFiles(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkFiles makes sure the files the experiment names can be read: the
// cluster spec (parsed) and the traces (opened; request traces' headers
// read).
func (e *Experiment) checkFiles() error {
	p := &expProblems{file: e.File, lines: e.lines}
	if e.Cluster.Path != "" {
		s, err := e.Cluster.Spec()
		if err != nil {
			return err
		}
		if e.Faults != nil && len(e.Faults.Fail) > 0 {
			// Named failures name the file's nodes: resolved now that
			// it is read.
			c, err := s.Build()
			if err != nil {
				return err
			}
			e.checkNamedFaults(c, p)
		}
	}
	if e.Batch != nil && e.Batch.Trace != "" {
		if fi, err := os.Stat(e.Batch.Trace); err != nil || fi.IsDir() {
			p.add("batch.trace", "cannot read %s: %v", e.Batch.Trace, orIsDir(err))
		}
	}
	for i, s := range e.Spec.Services {
		if s.Arrivals.Trace == "" {
			continue
		}
		t, err := OpenTrace(s.Arrivals.Trace)
		if err != nil {
			p.add(fmt.Sprintf("services[%d].arrivals.trace", i), "%v", err)
			continue
		}
		t.Close()
	}
	return p.err()
}

// CheckCluster reports services whose replicas no node of c can hold (a
// replica takes GPUsPerReplica GPUs of its model on one node) and named
// failures (faults.fail) that do not name a node or GPU of c.
func (e *Experiment) CheckCluster(c *hwmodel.Cluster) error {
	p := &expProblems{file: e.File, lines: e.lines}
	e.checkNamedFaults(c, p)
	for i, s := range e.Spec.Services {
		set := hwmodel.AnyModel
		if s.GPUModel != "" {
			m, ok := hwmodel.LookupModel(s.GPUModel)
			if !ok {
				continue // Validate reports it
			}
			set = hwmodel.Of(m.ID)
		}
		if most := c.MaxNodeGPUs(set); most < s.GPUsPerReplica {
			model := "GPUs"
			if s.GPUModel != "" {
				model = s.GPUModel + " GPUs"
			}
			p.add(fmt.Sprintf("services[%d].gpus_per_replica", i), "a replica needs %d %s on one node; the cluster's largest such node has %d", s.GPUsPerReplica, model, most)
		}
	}
	return p.err()
}

func orIsDir(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("is a directory")
}

// ParseExperiment reads an experiment from YAML or JSON; file names the
// source in errors and is the base of relative paths (nothing is read
// from disk: LoadExperiment also checks the files it names). Unknown
// fields, duplicate keys, wrong types and invalid values are errors that
// name the file, the line and the field path. Defaults are filled in.
func ParseExperiment(data []byte, file string) (*Experiment, error) {
	p := &expProblems{file: file}
	if len(data) > maxExperimentBytes {
		p.at(0, "", "file is larger than %d MiB; is it an experiment file?", maxExperimentBytes>>20)
		return nil, p.err()
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.at(0, "", "the file is empty; want a mapping with fields %s", strings.Join(experimentFields, ", "))
		} else {
			line, msg := yamlErrorLine(err)
			p.at(line, "", "%s", msg)
		}
		return nil, p.err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.at(extra.Line, "", "a second YAML document; want one")
		return nil, p.err()
	} else if !errors.Is(err, io.EOF) {
		line, msg := yamlErrorLine(err)
		p.at(line, "", "%s", msg)
		return nil, p.err()
	}
	d := &expDecoder{p: p, lines: map[string]int{}, dir: filepath.Dir(file)}
	if file == "" {
		d.dir = ""
	}
	e := &Experiment{File: file}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d.experiment(root, e)
	if err := p.err(); err != nil {
		return nil, err
	}
	e.lines = d.lines
	e.fillDefaults()
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// yamlErrorLine pulls "line N: " out of a YAML library error.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				return n, "YAML: " + rest[i+2:]
			}
		}
	}
	return 0, "YAML: " + strings.ReplaceAll(msg, "\n", "; ")
}

// --- decoding the YAML tree, with line numbers and field paths ---

type expDecoder struct {
	p     *expProblems
	lines map[string]int
	dir   string
	nodes int // visited, a bound against alias expansion
}

var experimentFields = []string{"cluster", "batch", "seed", "horizon", "bucket", "services", "variants", "faults"}

// resolve follows aliases, counting nodes against maxYAMLNodes.
func (d *expDecoder) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	d.nodes++
	return n
}

func (d *expDecoder) over() bool {
	if d.nodes > maxYAMLNodes {
		d.p.at(0, "", "the file expands to more than %d YAML nodes (aliases?)", maxYAMLNodes)
		return true
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describeNode(n *yaml.Node) string {
	switch {
	case n == nil || isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("%q", n.Value)
	case "!!bool":
		return "boolean " + n.Value
	case "!!int", "!!float":
		return "number " + n.Value
	}
	return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
}

func joinField(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// fields checks that n is a mapping of known keys without duplicates and
// returns the values by key (null values left out). It records each
// field's line.
func (d *expDecoder) fields(n *yaml.Node, path string, known []string) map[string]*yaml.Node {
	n = d.resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.p.at(lineOf(n), path, "want a mapping with fields %s, got %s", strings.Join(known, ", "), describeNode(n))
		return nil
	}
	if _, ok := d.lines[path]; !ok && path != "" {
		d.lines[path] = n.Line // a list item's line
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.p.at(lineOf(k), path, "want field names, got %s as a key", describeNode(k))
			continue
		}
		key := k.Value
		fp := joinField(path, key)
		if l, dup := seen[key]; dup {
			d.p.at(k.Line, fp, "appears twice (also on line %d)", l)
			continue
		}
		seen[key] = k.Line
		if !slices.Contains(known, key) {
			hint := ""
			if s := suggestField(key, known); s != "" {
				hint = fmt.Sprintf("; did you mean %q?", s)
			}
			d.p.at(k.Line, fp, "unknown field (known fields: %s)%s", strings.Join(known, ", "), hint)
			continue
		}
		d.lines[fp] = k.Line
		if v = d.resolve(v); !isNull(v) {
			out[key] = v
		}
	}
	return out
}

func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// suggestField returns the known field an unknown key most likely
// misspells, or "".
func suggestField(key string, known []string) string {
	k := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	best, bestDist := "", 3
	for _, f := range known {
		if k == f {
			return f
		}
		if dist := hwmodel.EditDistance(k, f); dist < bestDist {
			best, bestDist = f, dist
		}
	}
	return best
}

func (d *expDecoder) list(n *yaml.Node, path string, most int) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.p.at(n.Line, path, "want a list, got %s", describeNode(n))
		return nil
	}
	if len(n.Content) > most {
		d.p.at(n.Line, path, "lists %d entries; at most %d are allowed", len(n.Content), most)
		return nil
	}
	return n.Content
}

func (d *expDecoder) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.p.at(n.Line, path, "want a string, got %s; put it in quotes", describeNode(n))
		return ""
	}
	return n.Value
}

func (d *expDecoder) number(n *yaml.Node, path string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.p.at(n.Line, path, "want a number, got %s", describeNode(n))
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if n.Tag == "!!int" && err != nil {
		var i int64
		if i, err = strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			f = float64(i)
		}
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.p.at(n.Line, path, "want a finite number, got %s", n.Value)
		return 0, false
	}
	return f, true
}

func (d *expDecoder) float(n *yaml.Node, path string) float64 {
	f, _ := d.number(n, path)
	return f
}

func (d *expDecoder) int(n *yaml.Node, path string) int {
	f, ok := d.number(n, path)
	if !ok {
		return 0
	}
	if f != math.Trunc(f) {
		d.p.at(n.Line, path, "want a whole number, got %s", n.Value)
		return 0
	}
	if math.Abs(f) > 1<<40 {
		d.p.at(n.Line, path, "number %s is out of range", n.Value)
		return 0
	}
	return int(f)
}

func (d *expDecoder) uint64(n *yaml.Node, path string) uint64 {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if u, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return u
		}
	}
	d.p.at(n.Line, path, "want a whole number >= 0, got %s", describeNode(n))
	return 0
}

func (d *expDecoder) bool(n *yaml.Node, path string) bool {
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!bool":
			return n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
		case n.Tag == "!!str" && (n.Value == "on" || n.Value == "yes"):
			return true
		case n.Tag == "!!str" && (n.Value == "off" || n.Value == "no"):
			return false
		}
	}
	d.p.at(n.Line, path, "want true or false, got %s", describeNode(n))
	return false
}

func (d *expDecoder) onOff(n *yaml.Node, path string) Switch {
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!bool" && strings.EqualFold(n.Value, "true"), n.Tag == "!!str" && n.Value == "on":
			return SwitchOn
		case n.Tag == "!!bool" && strings.EqualFold(n.Value, "false"), n.Tag == "!!str" && n.Value == "off":
			return SwitchOff
		}
	}
	d.p.at(n.Line, path, "want on or off, got %s", describeNode(n))
	return SwitchKeep
}

// duration reads a duration string such as "90s", "20m", "1h30m" or "2d".
func (d *expDecoder) duration(n *yaml.Node, path string) hwmodel.Time {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.p.at(n.Line, path, "want a duration like \"90s\", \"20m\" or \"1h30m\", got %s", describeNode(n))
		return 0
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil {
		d.p.at(n.Line, path, "want a duration with a unit like \"%ss\", got %q", strings.TrimSpace(n.Value), n.Value)
		return 0
	}
	t, err := hwmodel.ParseDuration(n.Value)
	if err != nil {
		d.p.at(n.Line, path, "want a duration like \"500ms\", \"90s\" or \"1h30m\", got %q", n.Value)
		return 0
	}
	if t < 0 {
		d.p.at(n.Line, path, "want a duration >= 0, got %q", n.Value)
		return 0
	}
	return t
}

func (d *expDecoder) path(p string) string {
	if p == "" || filepath.IsAbs(p) || d.dir == "" {
		return p
	}
	return filepath.Join(d.dir, p)
}

func (d *expDecoder) experiment(n *yaml.Node, e *Experiment) {
	f := d.fields(n, "", experimentFields)
	if f == nil {
		return
	}
	if v, ok := f["cluster"]; ok {
		d.cluster(v, &e.Cluster)
	} else {
		d.p.at(0, "cluster", "required field is missing; want a preset name (%s), a cluster spec file or an inline spec", strings.Join(hwmodel.Presets(), ", "))
	}
	if v, ok := f["batch"]; ok {
		e.Batch = d.batch(v)
	}
	if v, ok := f["seed"]; ok {
		e.Seed = d.uint64(v, "seed")
	} else {
		e.Seed = 1
	}
	if v, ok := f["horizon"]; ok {
		e.Spec.Horizon = d.duration(v, "horizon")
	} else {
		d.p.at(0, "horizon", "required field is missing; want how long traffic is simulated, like \"1h30m\"")
	}
	if v, ok := f["bucket"]; ok {
		e.Spec.Bucket = d.duration(v, "bucket")
	}
	if v, ok := f["services"]; ok {
		for i, s := range d.list(v, "services", maxServices) {
			if d.over() {
				return
			}
			e.Spec.Services = append(e.Spec.Services, d.service(s, fmt.Sprintf("services[%d]", i)))
		}
	} else {
		d.p.at(0, "services", "required field is missing; want a list of services")
	}
	if v, ok := f["variants"]; ok {
		for i, x := range d.list(v, "variants", maxVariants) {
			e.Variants = append(e.Variants, d.variant(x, fmt.Sprintf("variants[%d]", i)))
		}
	}
	if v, ok := f["faults"]; ok {
		e.Faults = d.faults(v)
	}
}

func (d *expDecoder) cluster(n *yaml.Node, c *ClusterRef) {
	switch {
	case n.Kind == yaml.MappingNode:
		// Through JSON, so that the cluster spec reader sees exactly the
		// values this YAML reader saw.
		var v any
		if err := n.Decode(&v); err != nil {
			d.p.at(n.Line, "cluster", "%v", err)
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			d.p.at(n.Line, "cluster", "%v", err)
			return
		}
		s, err := hwmodel.ParseClusterSpec(b, "")
		if err != nil {
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			} else {
				errs = []error{err}
			}
			for _, e := range errs {
				var se *hwmodel.SpecError
				if errors.As(e, &se) {
					d.p.at(n.Line, joinField("cluster", se.Field), "%s", se.Msg)
				} else {
					d.p.at(n.Line, "cluster", "%v", e)
				}
			}
			return
		}
		c.Inline = s
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value != "":
		if _, ok := hwmodel.Preset(n.Value); ok {
			c.Preset = n.Value
			return
		}
		if !strings.ContainsAny(n.Value, "/\\") && !strings.Contains(n.Value, ".") {
			d.p.at(n.Line, "cluster", "unknown preset %q (known: %s); a cluster spec file's name has an extension", n.Value, strings.Join(hwmodel.Presets(), ", "))
			return
		}
		c.Path = d.path(n.Value)
	default:
		d.p.at(n.Line, "cluster", "want a preset name (%s), a cluster spec file or an inline spec, got %s", strings.Join(hwmodel.Presets(), ", "), describeNode(n))
	}
}

var (
	batchFields     = []string{"synthetic", "trace", "format", "policy", "backfill"}
	syntheticFields = []string{"jobs", "load", "seed", "max_duration"}
)

func (d *expDecoder) batch(n *yaml.Node) *Batch {
	f := d.fields(n, "batch", batchFields)
	if f == nil {
		return nil
	}
	b := &Batch{}
	if v, ok := f["synthetic"]; ok {
		sf := d.fields(v, "batch.synthetic", syntheticFields)
		s := &Synthetic{}
		if x, ok := sf["jobs"]; ok {
			s.Jobs = d.int(x, "batch.synthetic.jobs")
		} else if sf != nil {
			d.p.at(v.Line, "batch.synthetic.jobs", "required field is missing")
		}
		if x, ok := sf["load"]; ok {
			s.Load = d.float(x, "batch.synthetic.load")
		}
		if x, ok := sf["seed"]; ok {
			s.Seed = d.uint64(x, "batch.synthetic.seed")
		}
		if x, ok := sf["max_duration"]; ok {
			s.MaxDuration = d.duration(x, "batch.synthetic.max_duration")
		}
		b.Synthetic = s
	}
	if v, ok := f["trace"]; ok {
		b.Trace = d.path(d.str(v, "batch.trace"))
	}
	if v, ok := f["format"]; ok {
		b.Format = d.str(v, "batch.format")
	}
	if v, ok := f["policy"]; ok {
		b.Policy = d.str(v, "batch.policy")
	}
	if v, ok := f["backfill"]; ok {
		b.Backfill = d.bool(v, "batch.backfill")
	}
	return b
}

var (
	serviceFields = []string{"name", "gpu_model", "gpus_per_replica", "priority", "replica", "replicas", "routing",
		"health", "autoscale", "arrivals", "classes", "incidents"}
	replicaFields  = []string{"prefill_tokens_per_s", "decode_tokens_per_s", "batch_slowdown", "jitter", "continuous_batching", "max_concurrent", "load_time", "service_time"}
	distFields     = []string{"dist", "mean", "sigma", "min", "max"}
	boundsFields   = []string{"initial", "min", "max"}
	healthFields   = []string{"enabled", "latency_ratio", "ewma_weight", "min_requests", "consecutive_errors", "eject_for", "probe_requests", "max_ejected_pct", "lane_headroom"}
	autoFields     = []string{"metric", "target", "interval", "scale_up_cooldown", "scale_down_cooldown", "on_no_gpus"}
	arrivalFields  = []string{"rate", "steps", "trace"}
	stepFields     = []string{"at", "for", "rate"}
	classFields    = []string{"name", "weight", "priority", "input_tokens", "output_tokens", "ttft_target", "e2e_target", "timeout"}
	incidentFields = []string{"at", "replica", "kind", "factor", "restart_after"}
	variantFields  = []string{"name", "routing", "health", "autoscale", "incidents", "on_no_gpus", "faults"}
)

func (d *expDecoder) service(n *yaml.Node, path string) Service {
	var s Service
	f := d.fields(n, path, serviceFields)
	if f == nil {
		return s
	}
	fp := func(k string) string { return path + "." + k }
	if v, ok := f["name"]; ok {
		s.Name = d.str(v, fp("name"))
	}
	if v, ok := f["gpu_model"]; ok {
		s.GPUModel = d.str(v, fp("gpu_model"))
	}
	if v, ok := f["gpus_per_replica"]; ok {
		s.GPUsPerReplica = d.int(v, fp("gpus_per_replica"))
	} else {
		s.GPUsPerReplica = 1
	}
	if v, ok := f["priority"]; ok {
		s.Priority = d.int(v, fp("priority"))
	}
	if v, ok := f["replica"]; ok {
		rf := d.fields(v, fp("replica"), replicaFields)
		rp := func(k string) string { return fp("replica." + k) }
		r := &s.Replica
		if x, ok := rf["prefill_tokens_per_s"]; ok {
			r.PrefillTokensPerS = d.float(x, rp("prefill_tokens_per_s"))
		}
		if x, ok := rf["decode_tokens_per_s"]; ok {
			r.DecodeTokensPerS = d.float(x, rp("decode_tokens_per_s"))
		}
		if x, ok := rf["batch_slowdown"]; ok {
			r.BatchSlowdown = d.float(x, rp("batch_slowdown"))
		}
		if x, ok := rf["jitter"]; ok {
			r.Jitter = d.float(x, rp("jitter"))
		}
		if x, ok := rf["continuous_batching"]; ok {
			r.ContinuousBatching = d.bool(x, rp("continuous_batching"))
		}
		if x, ok := rf["max_concurrent"]; ok {
			r.MaxConcurrent = d.int(x, rp("max_concurrent"))
		}
		if x, ok := rf["load_time"]; ok {
			r.LoadTime = d.duration(x, rp("load_time"))
		}
		if x, ok := rf["service_time"]; ok {
			dist := d.dist(x, rp("service_time"))
			r.ServiceTime = &dist
		}
	} else {
		d.p.at(n.Line, fp("replica"), "required field is missing; want the replica's service model (prefill_tokens_per_s, decode_tokens_per_s, max_concurrent, ...)")
	}
	if v, ok := f["replicas"]; ok {
		bf := d.fields(v, fp("replicas"), boundsFields)
		s.Replicas.Min, s.Replicas.Max = -1, -1
		if x, ok := bf["initial"]; ok {
			s.Replicas.Initial = d.int(x, fp("replicas.initial"))
		} else if bf != nil {
			d.p.at(v.Line, fp("replicas.initial"), "required field is missing")
		}
		if x, ok := bf["min"]; ok {
			s.Replicas.Min = d.int(x, fp("replicas.min"))
		}
		if x, ok := bf["max"]; ok {
			s.Replicas.Max = d.int(x, fp("replicas.max"))
		}
	} else {
		d.p.at(n.Line, fp("replicas"), "required field is missing; want {initial, min, max}")
	}
	if v, ok := f["routing"]; ok {
		s.Routing = Routing(d.str(v, fp("routing")))
	}
	if v, ok := f["health"]; ok {
		hf := d.fields(v, fp("health"), healthFields)
		hp := func(k string) string { return fp("health." + k) }
		h := &s.Health
		h.Enabled = true // a health section turns it on unless it says enabled: false
		if x, ok := hf["enabled"]; ok {
			h.Enabled = d.bool(x, hp("enabled"))
		}
		if x, ok := hf["latency_ratio"]; ok {
			h.LatencyRatio = d.float(x, hp("latency_ratio"))
		}
		if x, ok := hf["ewma_weight"]; ok {
			h.EWMAWeight = d.float(x, hp("ewma_weight"))
		}
		if x, ok := hf["min_requests"]; ok {
			h.MinRequests = d.int(x, hp("min_requests"))
		}
		if x, ok := hf["consecutive_errors"]; ok {
			h.ConsecutiveErrors = d.int(x, hp("consecutive_errors"))
		}
		if x, ok := hf["eject_for"]; ok {
			h.EjectFor = d.duration(x, hp("eject_for"))
		}
		if x, ok := hf["probe_requests"]; ok {
			h.ProbeRequests = d.int(x, hp("probe_requests"))
		}
		if x, ok := hf["max_ejected_pct"]; ok {
			h.MaxEjectedPct = d.int(x, hp("max_ejected_pct"))
		}
		if x, ok := hf["lane_headroom"]; ok {
			h.LaneHeadroom = d.int(x, hp("lane_headroom"))
		}
	}
	if v, ok := f["autoscale"]; ok {
		af := d.fields(v, fp("autoscale"), autoFields)
		ap := func(k string) string { return fp("autoscale." + k) }
		a := &Autoscale{ScaleDownCooldown: -1}
		if x, ok := af["metric"]; ok {
			a.Metric = Metric(d.str(x, ap("metric")))
		}
		if x, ok := af["target"]; ok {
			a.Target = d.float(x, ap("target"))
		} else if af != nil {
			d.p.at(v.Line, ap("target"), "required field is missing")
		}
		if x, ok := af["interval"]; ok {
			a.Interval = d.duration(x, ap("interval"))
		}
		if x, ok := af["scale_up_cooldown"]; ok {
			a.ScaleUpCooldown = d.duration(x, ap("scale_up_cooldown"))
		}
		if x, ok := af["scale_down_cooldown"]; ok {
			a.ScaleDownCooldown = d.duration(x, ap("scale_down_cooldown"))
		}
		if x, ok := af["on_no_gpus"]; ok {
			a.OnNoGPUs = NoGPUs(d.str(x, ap("on_no_gpus")))
		}
		s.Autoscale = a
	}
	if v, ok := f["arrivals"]; ok {
		af := d.fields(v, fp("arrivals"), arrivalFields)
		if x, ok := af["rate"]; ok {
			s.Arrivals.Rate = d.float(x, fp("arrivals.rate"))
		}
		if x, ok := af["steps"]; ok {
			for i, st := range d.list(x, fp("arrivals.steps"), maxSteps) {
				sp := fmt.Sprintf("%s.arrivals.steps[%d]", path, i)
				sf := d.fields(st, sp, stepFields)
				var r RateStep
				if y, ok := sf["at"]; ok {
					r.At = d.duration(y, sp+".at")
				} else if sf != nil {
					d.p.at(st.Line, sp+".at", "required field is missing")
				}
				if y, ok := sf["for"]; ok {
					r.For = d.duration(y, sp+".for")
				}
				if y, ok := sf["rate"]; ok {
					r.Rate = d.float(y, sp+".rate")
				} else if sf != nil {
					d.p.at(st.Line, sp+".rate", "required field is missing")
				}
				s.Arrivals.Steps = append(s.Arrivals.Steps, r)
			}
		}
		if x, ok := af["trace"]; ok {
			s.Arrivals.Trace = d.path(d.str(x, fp("arrivals.trace")))
		}
	} else {
		d.p.at(n.Line, fp("arrivals"), "required field is missing; want {rate, steps} or {trace}")
	}
	if v, ok := f["classes"]; ok {
		for i, c := range d.list(v, fp("classes"), maxClasses) {
			s.Classes = append(s.Classes, d.class(c, fmt.Sprintf("%s.classes[%d]", path, i)))
		}
	} else {
		d.p.at(n.Line, fp("classes"), "required field is missing; want a list of request classes")
	}
	if v, ok := f["incidents"]; ok {
		for i, x := range d.list(v, fp("incidents"), maxIncidents) {
			ip := fmt.Sprintf("%s.incidents[%d]", path, i)
			xf := d.fields(x, ip, incidentFields)
			var in Incident
			if y, ok := xf["at"]; ok {
				in.At = d.duration(y, ip+".at")
			} else if xf != nil {
				d.p.at(x.Line, ip+".at", "required field is missing")
			}
			if y, ok := xf["replica"]; ok {
				in.Replica = d.int(y, ip+".replica")
			}
			if y, ok := xf["kind"]; ok {
				in.Kind = d.str(y, ip+".kind")
			} else if xf != nil {
				d.p.at(x.Line, ip+".kind", "required field is missing; want slow or fail")
			}
			if y, ok := xf["factor"]; ok {
				in.Factor = d.float(y, ip+".factor")
			}
			if y, ok := xf["restart_after"]; ok {
				in.RestartAfter = d.duration(y, ip+".restart_after")
			}
			s.Incidents = append(s.Incidents, in)
		}
	}
	return s
}

func (d *expDecoder) dist(n *yaml.Node, path string) Dist {
	var x Dist
	f := d.fields(n, path, distFields)
	if f == nil {
		return x
	}
	if v, ok := f["dist"]; ok {
		x.Kind = d.str(v, path+".dist")
	} else {
		d.p.at(n.Line, path+".dist", "required field is missing; want one of %s", strings.Join(expDistKinds, ", "))
	}
	if v, ok := f["mean"]; ok {
		x.Mean = d.float(v, path+".mean")
	}
	if v, ok := f["sigma"]; ok {
		x.Sigma = d.float(v, path+".sigma")
	}
	if v, ok := f["min"]; ok {
		x.Min = d.float(v, path+".min")
	}
	if v, ok := f["max"]; ok {
		x.Max = d.float(v, path+".max")
	}
	return x
}

func (d *expDecoder) class(n *yaml.Node, path string) Class {
	c := Class{Weight: 1}
	f := d.fields(n, path, classFields)
	if f == nil {
		return c
	}
	if v, ok := f["name"]; ok {
		c.Name = d.str(v, path+".name")
	}
	if v, ok := f["weight"]; ok {
		c.Weight = d.float(v, path+".weight")
	}
	if v, ok := f["priority"]; ok {
		c.Priority = d.int(v, path+".priority")
	}
	if v, ok := f["input_tokens"]; ok {
		c.InputTokens = d.dist(v, path+".input_tokens")
	}
	if v, ok := f["output_tokens"]; ok {
		c.OutputTokens = d.dist(v, path+".output_tokens")
	}
	if v, ok := f["ttft_target"]; ok {
		c.TTFTTarget = d.duration(v, path+".ttft_target")
	}
	if v, ok := f["e2e_target"]; ok {
		c.E2ETarget = d.duration(v, path+".e2e_target")
	}
	if v, ok := f["timeout"]; ok {
		c.Timeout = d.duration(v, path+".timeout")
	}
	return c
}

func (d *expDecoder) variant(n *yaml.Node, path string) Variant {
	var v Variant
	f := d.fields(n, path, variantFields)
	if f == nil {
		return v
	}
	if x, ok := f["name"]; ok {
		v.Name = d.str(x, path+".name")
	} else {
		d.p.at(n.Line, path+".name", "required field is missing")
	}
	if x, ok := f["routing"]; ok {
		v.Routing = Routing(d.str(x, path+".routing"))
	}
	if x, ok := f["health"]; ok {
		v.Health = d.onOff(x, path+".health")
	}
	if x, ok := f["autoscale"]; ok {
		v.Autoscale = d.onOff(x, path+".autoscale")
	}
	if x, ok := f["incidents"]; ok {
		v.Incidents = d.onOff(x, path+".incidents")
	}
	if x, ok := f["on_no_gpus"]; ok {
		v.OnNoGPUs = NoGPUs(d.str(x, path+".on_no_gpus"))
	}
	if x, ok := f["faults"]; ok {
		v.Faults = d.onOff(x, path+".faults")
	}
	return v
}

// --- defaults and validation ---

// fillDefaults fills what the file left out (docs/serving.md).
func (e *Experiment) fillDefaults() {
	if e.Spec.Bucket == 0 {
		e.Spec.Bucket = DefaultBucket
	}
	if e.Faults != nil {
		e.Faults.fillDefaults()
	}
	if e.Batch != nil {
		if e.Batch.Policy == "" {
			e.Batch.Policy = DefaultBatchPolicy
		}
		if s := e.Batch.Synthetic; s != nil {
			if s.Load == 0 {
				s.Load = DefaultBatchLoad
			}
			if s.MaxDuration == 0 {
				s.MaxDuration = DefaultMaxBatchDuration
			}
		}
		if e.Batch.Trace != "" && e.Batch.Format == "" {
			e.Batch.Format = "brigade"
		}
	}
	for i := range e.Spec.Services {
		s := &e.Spec.Services[i]
		if s.Routing == "" {
			s.Routing = DefaultRouting
		}
		if s.Replicas.Min < 0 {
			s.Replicas.Min = s.Replicas.Initial
		}
		if s.Replicas.Max < 0 {
			s.Replicas.Max = s.Replicas.Initial
		}
		fillHealthDefaults(&s.Health)
		if a := s.Autoscale; a != nil {
			if a.ScaleDownCooldown < 0 {
				a.ScaleDownCooldown = 0 // not given
			}
			*a = a.withDefaults() // the engine's defaults, one source
		}
		for j := range s.Classes {
			c := &s.Classes[j]
			if c.Name == "" && len(s.Classes) == 1 {
				c.Name = "default"
			}
		}
	}
}

// fillHealthDefaults fills the zero fields of h with the engine's
// defaults (Health's comments).
func fillHealthDefaults(h *Health) { *h = h.withDefaults() }

// The distribution kinds of Dist.Kind.
const (
	DistConstant    = "constant"
	DistExponential = "exponential"
	DistLognormal   = "lognormal"
	DistUniform     = "uniform"
)

var (
	expDistKinds     = []string{DistConstant, DistExponential, DistLognormal, DistUniform}
	expRoutings      = []Routing{RoundRobin, LeastOutstanding, LatencyAware, PriorityLanes}
	expMetrics       = []Metric{MetricConcurrency, MetricQueue, MetricLatency, MetricUtilisation}
	expNoGPUs        = []NoGPUs{Wait, Preempt}
	expIncidentKinds = []string{"slow", "fail"}
)

func joinNames[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// Names lists the variants' names in order ("default" when there are
// none).
func (e *Experiment) Names() []string {
	if len(e.Variants) == 0 {
		return []string{"default"}
	}
	out := make([]string, len(e.Variants))
	for i, v := range e.Variants {
		out[i] = v.Name
	}
	return out
}

// VariantSpec returns variant i's Spec: a deep copy of the experiment's
// services with the variant's overrides applied. With no variants, i = 0
// is the services as declared.
func (e *Experiment) VariantSpec(i int) *Spec {
	s := cloneSpec(&e.Spec)
	if len(e.Variants) == 0 {
		return s
	}
	v := e.Variants[i]
	for k := range s.Services {
		svc := &s.Services[k]
		if v.Routing != "" {
			svc.Routing = v.Routing
		}
		switch v.Health {
		case SwitchOn:
			svc.Health.Enabled = true
			fillHealthDefaults(&svc.Health)
		case SwitchOff:
			svc.Health.Enabled = false
		}
		if v.Autoscale == SwitchOff {
			svc.Autoscale = nil
		}
		if v.Incidents == SwitchOff {
			svc.Incidents = nil
		}
		if v.OnNoGPUs != "" && svc.Autoscale != nil {
			svc.Autoscale.OnNoGPUs = v.OnNoGPUs
		}
	}
	return s
}

func cloneSpec(in *Spec) *Spec {
	s := *in
	s.Services = slices.Clone(in.Services)
	for k := range s.Services {
		svc := &s.Services[k]
		if svc.Replica.ServiceTime != nil {
			d := *svc.Replica.ServiceTime
			svc.Replica.ServiceTime = &d
		}
		if svc.Autoscale != nil {
			a := *svc.Autoscale
			svc.Autoscale = &a
		}
		svc.Arrivals.Steps = slices.Clone(svc.Arrivals.Steps)
		svc.Classes = slices.Clone(svc.Classes)
		svc.Incidents = slices.Clone(svc.Incidents)
	}
	return &s
}

// Validate checks every value of the experiment; errors name the file,
// the line when the experiment was parsed, and the field path. It fills
// no defaults: an Experiment built in Go must set every field that
// ParseExperiment would fill.
func (e *Experiment) Validate() error {
	p := &expProblems{file: e.File, lines: e.lines}
	set := 0
	if e.Cluster.Preset != "" {
		set++
		if _, ok := hwmodel.Preset(e.Cluster.Preset); !ok {
			p.add("cluster", "unknown preset %q (known: %s)", e.Cluster.Preset, strings.Join(hwmodel.Presets(), ", "))
		}
	}
	if e.Cluster.Path != "" {
		set++
	}
	if e.Cluster.Inline != nil {
		set++
	}
	if set != 1 {
		p.add("cluster", "want exactly one of a preset, a spec file or an inline spec")
	}
	if b := e.Batch; b != nil {
		validateBatch(b, p)
	}
	validateSpec(&e.Spec, p)
	if e.Faults != nil {
		e.validateFaults(p)
	}
	seen := map[string]int{}
	for i, v := range e.Variants {
		vp := fmt.Sprintf("variants[%d]", i)
		switch {
		case v.Name == "":
			p.add(vp+".name", "want a name")
		case !validName(v.Name):
			p.add(vp+".name", "want letters, digits and . _ - + only (it names rows and files), got %q", v.Name)
		}
		if k, dup := seen[v.Name]; dup && v.Name != "" {
			p.add(vp+".name", "%q is already the name of variants[%d]", v.Name, k)
		}
		seen[v.Name] = i
		if v.Routing != "" && !slices.Contains(expRoutings, v.Routing) {
			p.add(vp+".routing", "unknown routing %q (known: %s)", v.Routing, joinNames(expRoutings))
		}
		for _, sw := range []struct {
			f string
			v Switch
		}{{"health", v.Health}, {"autoscale", v.Autoscale}, {"incidents", v.Incidents}, {"faults", v.Faults}} {
			if sw.v != SwitchKeep && sw.v != SwitchOn && sw.v != SwitchOff {
				p.add(vp+"."+sw.f, "want on or off, got %q", sw.v)
			}
		}
		if v.OnNoGPUs != "" && !slices.Contains(expNoGPUs, v.OnNoGPUs) {
			p.add(vp+".on_no_gpus", "want %s, got %q", joinNames(expNoGPUs), v.OnNoGPUs)
		}
		if v.Autoscale == SwitchOn || v.OnNoGPUs != "" {
			if !slices.ContainsFunc(e.Spec.Services, func(s Service) bool { return s.Autoscale != nil }) {
				p.add(vp+".autoscale", "no service declares an autoscale section for the variant to use")
			}
		}
		if v.Incidents == SwitchOn && !slices.ContainsFunc(e.Spec.Services, func(s Service) bool { return len(s.Incidents) > 0 }) {
			p.add(vp+".incidents", "no service declares incidents")
		}
		if v.Faults == SwitchOn && e.Faults == nil {
			p.add(vp+".faults", "the experiment has no faults section")
		}
	}
	if len(p.errs) == 0 {
		// The engine's own checks, as a backstop: what passes here must
		// pass Run's.
		for i, name := range e.Names() {
			if err := e.VariantSpec(i).Validate(); err != nil {
				p.add("", "variant %s: %v", name, err)
			}
		}
	}
	return p.err()
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+", r)) {
			return false
		}
	}
	return true
}

func validateBatch(b *Batch, p *expProblems) {
	switch {
	case b.Synthetic != nil && b.Trace != "":
		p.add("batch", "synthetic and trace are alternatives; give one")
	case b.Synthetic == nil && b.Trace == "":
		p.add("batch", "want synthetic: {jobs, load, ...} or trace: FILE")
	}
	if s := b.Synthetic; s != nil {
		if s.Jobs < 1 || s.Jobs > maxBatchJobs {
			p.add("batch.synthetic.jobs", "want 1 to %d jobs, got %d", maxBatchJobs, s.Jobs)
		}
		if !(s.Load > 0) || s.Load > 100 {
			p.add("batch.synthetic.load", "want a load > 0 (GPU demand over capacity), got %g", s.Load)
		}
		if s.MaxDuration < hwmodel.Second {
			p.add("batch.synthetic.max_duration", "want at least 1s, got %s", fmtDur(s.MaxDuration))
		}
	}
	if b.Trace != "" && !slices.Contains(workloads.Formats, b.Format) {
		p.add("batch.format", "unknown trace format %q (known: %s)", b.Format, strings.Join(workloads.Formats, ", "))
	}
	if b.Trace == "" && b.Format != "" {
		p.add("batch.format", "a format is for a trace; there is none")
	}
	if s, err := policies.ParseSpec(b.Policy); err != nil {
		p.add("batch.policy", "%v", err)
	} else if err := s.Check(); err != nil {
		p.add("batch.policy", "%v", err)
	}
}

func fmtDur(t hwmodel.Time) string {
	return (time.Duration(t) * time.Microsecond).String()
}

// Workload builds the batch workload for a cluster of gpus GPUs; seed is
// the experiment's (a synthetic workload's own seed wins). It returns the
// workload and a line describing it.
func (b *Batch) Workload(gpus int, seed uint64) (*workloads.Workload, string, error) {
	if s := b.Synthetic; s != nil {
		if s.Seed != 0 {
			seed = s.Seed
		}
		cfg := workloads.DefaultSyntheticConfig()
		cfg.Jobs = s.Jobs
		cfg.Duration.Max = s.MaxDuration
		w, err := workloads.Generate(cfg, seed)
		if err != nil {
			return nil, "", err
		}
		if err := w.ScaleToLoad(gpus, s.Load); err != nil {
			return nil, "", fmt.Errorf("batch.synthetic.load: %w", err)
		}
		w.FillEstimates()
		last := w.Jobs[len(w.Jobs)-1].Submit
		return w, fmt.Sprintf("synthetic: %d jobs at load %g arriving over %s, seed %d", s.Jobs, s.Load, results.HumanDuration(last.Seconds()), seed), nil
	}
	w, err := workloads.ReadFile(b.Trace, b.Format)
	if err != nil {
		return nil, "", err
	}
	w.FillEstimates()
	return w, fmt.Sprintf("%s (%d jobs)", filepath.Base(b.Trace), len(w.Jobs)), nil
}

// PolicySpec is the batch policy: its spec, with backfill when the
// backfill shorthand asks for it. Call it only on a validated experiment.
func (b *Batch) PolicySpec() policies.Spec {
	s := policies.MustParseSpec(b.Policy)
	if b.Backfill {
		s.Backfill = true
	}
	return s.Canonical()
}

func validateSpec(s *Spec, p *expProblems) {
	if s.Horizon <= 0 || s.Horizon > maxHorizon {
		p.add("horizon", "want a duration > 0 and at most 366 days, got %s", fmtDur(s.Horizon))
	}
	if s.Bucket <= 0 {
		p.add("bucket", "want a duration > 0, got %s", fmtDur(s.Bucket))
	} else if s.Horizon > 0 && s.Horizon/s.Bucket > 1_000_000 {
		p.add("bucket", "%s buckets over a %s horizon make over a million rows; want a wider bucket", fmtDur(s.Bucket), fmtDur(s.Horizon))
	}
	if len(s.Services) == 0 {
		p.add("services", "want at least one service")
	}
	names := map[string]int{}
	for i := range s.Services {
		validateService(&s.Services[i], fmt.Sprintf("services[%d]", i), s.Horizon, names, i, p)
	}
}

func validateService(s *Service, path string, horizon hwmodel.Time, names map[string]int, i int, p *expProblems) {
	fp := func(k string) string { return path + "." + k }
	switch {
	case s.Name == "":
		p.add(fp("name"), "want a name")
	case !validName(s.Name):
		p.add(fp("name"), "want letters, digits and . _ - + only (it names rows), got %q", s.Name)
	}
	if k, dup := names[s.Name]; dup && s.Name != "" {
		p.add(fp("name"), "%q is already the name of services[%d]", s.Name, k)
	}
	names[s.Name] = i
	if s.GPUModel != "" {
		if _, ok := hwmodel.LookupModel(s.GPUModel); !ok {
			p.add(fp("gpu_model"), "unknown GPU model %q (known: %s)", s.GPUModel, hwmodel.ModelNames())
		}
	}
	if s.GPUsPerReplica < 1 || s.GPUsPerReplica > hwmodel.MaxGPUsPerNode {
		p.add(fp("gpus_per_replica"), "want 1 to %d GPUs (one node's), got %d", hwmodel.MaxGPUsPerNode, s.GPUsPerReplica)
	}
	r := &s.Replica
	if r.ServiceTime != nil {
		validateDist(r.ServiceTime, fp("replica.service_time"), p)
	} else {
		if !(r.PrefillTokensPerS > 0) {
			p.add(fp("replica.prefill_tokens_per_s"), "want a rate > 0 (or a service_time), got %g", r.PrefillTokensPerS)
		}
		if !(r.DecodeTokensPerS > 0) {
			p.add(fp("replica.decode_tokens_per_s"), "want a rate > 0 (or a service_time), got %g", r.DecodeTokensPerS)
		}
	}
	if r.BatchSlowdown < 0 || r.BatchSlowdown > 100 {
		p.add(fp("replica.batch_slowdown"), "want 0 to 100, got %g", r.BatchSlowdown)
	}
	if r.MaxConcurrent < 1 || r.MaxConcurrent > 1_000_000 {
		p.add(fp("replica.max_concurrent"), "want 1 to 1000000 requests, got %d", r.MaxConcurrent)
	}
	if r.LoadTime < 0 {
		p.add(fp("replica.load_time"), "want a duration >= 0")
	}
	b := s.Replicas
	if b.Initial < 0 || b.Initial > maxReplicas {
		p.add(fp("replicas.initial"), "want 0 to %d replicas, got %d", maxReplicas, b.Initial)
	}
	if b.Max < 1 || b.Max > maxReplicas {
		p.add(fp("replicas.max"), "want 1 to %d replicas, got %d", maxReplicas, b.Max)
	}
	if b.Min < 0 || b.Min > b.Max {
		p.add(fp("replicas.min"), "want 0 <= min <= max (%d), got %d", b.Max, b.Min)
	}
	if b.Initial < b.Min || b.Initial > b.Max {
		p.add(fp("replicas.initial"), "want min (%d) <= initial <= max (%d), got %d", b.Min, b.Max, b.Initial)
	}
	if !slices.Contains(expRoutings, s.Routing) {
		p.add(fp("routing"), "unknown routing %q (known: %s)", s.Routing, joinNames(expRoutings))
	}
	validateHealth(&s.Health, fp("health"), p)
	if a := s.Autoscale; a != nil {
		ap := func(k string) string { return fp("autoscale." + k) }
		if !slices.Contains(expMetrics, a.Metric) {
			p.add(ap("metric"), "unknown metric %q (known: %s)", a.Metric, joinNames(expMetrics))
		}
		if !(a.Target > 0) || (a.Metric == MetricUtilisation && a.Target > 1) {
			want := "> 0"
			if a.Metric == MetricUtilisation {
				want = "in (0, 1]"
			}
			p.add(ap("target"), "want a target %s, got %g", want, a.Target)
		}
		if a.Interval <= 0 {
			p.add(ap("interval"), "want a duration > 0")
		}
		if a.ScaleUpCooldown < 0 {
			p.add(ap("scale_up_cooldown"), "want a duration >= 0")
		}
		if a.ScaleDownCooldown < 0 {
			p.add(ap("scale_down_cooldown"), "want a duration >= 0")
		}
		if !slices.Contains(expNoGPUs, a.OnNoGPUs) {
			p.add(ap("on_no_gpus"), "want %s, got %q", joinNames(expNoGPUs), a.OnNoGPUs)
		}
	}
	ar := &s.Arrivals
	if ar.Trace != "" {
		if ar.Rate != 0 || len(ar.Steps) > 0 {
			p.add(fp("arrivals"), "a trace replaces rate and steps; give one or the other")
		}
	} else {
		if !(ar.Rate >= 0) || ar.Rate > maxRate {
			p.add(fp("arrivals.rate"), "want 0 to %g requests per second, got %g", maxRate, ar.Rate)
		}
		var last hwmodel.Time
		for k, st := range ar.Steps {
			sp := fmt.Sprintf("%s.arrivals.steps[%d]", path, k)
			if st.At < last {
				p.add(sp+".at", "steps must be in time order: %s is before the previous step's %s", fmtDur(st.At), fmtDur(last))
			}
			if st.At > horizon && horizon > 0 {
				p.add(sp+".at", "%s is after the horizon (%s)", fmtDur(st.At), fmtDur(horizon))
			}
			if st.For < 0 {
				p.add(sp+".for", "want a duration >= 0")
			}
			if !(st.Rate >= 0) || st.Rate > maxRate {
				p.add(sp+".rate", "want 0 to %g requests per second, got %g", maxRate, st.Rate)
			}
			last = st.At
		}
	}
	if len(s.Classes) == 0 {
		p.add(fp("classes"), "want at least one request class")
	}
	cnames := map[string]int{}
	for k := range s.Classes {
		c := &s.Classes[k]
		cp := fmt.Sprintf("%s.classes[%d]", path, k)
		switch {
		case c.Name == "":
			p.add(cp+".name", "want a name")
		case !validName(c.Name):
			p.add(cp+".name", "want letters, digits and . _ - + only, got %q", c.Name)
		}
		if j, dup := cnames[c.Name]; dup && c.Name != "" {
			p.add(cp+".name", "%q is already the name of classes[%d]", c.Name, j)
		}
		cnames[c.Name] = k
		if !(c.Weight >= 0) || c.Weight > 1e9 {
			p.add(cp+".weight", "want a weight >= 0, got %g", c.Weight)
		}
		if s.Replica.ServiceTime == nil && s.Arrivals.Trace == "" {
			if c.InputTokens.Kind == "" {
				p.add(cp+".input_tokens", "required with the token model; want {dist, mean, ...}")
			} else {
				validateDist(&c.InputTokens, cp+".input_tokens", p)
			}
			if c.OutputTokens.Kind == "" {
				p.add(cp+".output_tokens", "required with the token model; want {dist, mean, ...}")
			} else {
				validateDist(&c.OutputTokens, cp+".output_tokens", p)
			}
		} else {
			for _, t := range []struct {
				f string
				d *Dist
			}{{"input_tokens", &c.InputTokens}, {"output_tokens", &c.OutputTokens}} {
				if t.d.Kind != "" {
					validateDist(t.d, cp+"."+t.f, p)
				}
			}
		}
		for _, t := range []struct {
			f string
			v hwmodel.Time
		}{{"ttft_target", c.TTFTTarget}, {"e2e_target", c.E2ETarget}, {"timeout", c.Timeout}} {
			if t.v < 0 {
				p.add(cp+"."+t.f, "want a duration >= 0")
			}
		}
		if c.TTFTTarget > 0 && c.E2ETarget > 0 && c.TTFTTarget > c.E2ETarget {
			p.add(cp+".ttft_target", "%s is longer than e2e_target %s; the first token cannot come after the last", fmtDur(c.TTFTTarget), fmtDur(c.E2ETarget))
		}
	}
	if len(s.Classes) > 0 && !slices.ContainsFunc(s.Classes, func(c Class) bool { return c.Weight > 0 }) {
		p.add(fp("classes"), "every class weighs 0; want at least one weight > 0")
	}
	for k, in := range s.Incidents {
		ip := fmt.Sprintf("%s.incidents[%d]", path, k)
		if in.At < 0 || (horizon > 0 && in.At > horizon) {
			p.add(ip+".at", "want a time within the horizon (%s), got %s", fmtDur(horizon), fmtDur(in.At))
		}
		if in.Replica < 0 || in.Replica >= maxReplicas {
			p.add(ip+".replica", "want a replica id >= 0, got %d", in.Replica)
		}
		switch in.Kind {
		case "slow":
			if !(in.Factor > 0) || in.Factor > 1e6 {
				p.add(ip+".factor", "a slow replica takes factor times as long; want a factor > 0, got %g", in.Factor)
			}
			if in.RestartAfter != 0 {
				p.add(ip+".restart_after", "is for kind fail")
			}
		case "fail":
			if in.Factor != 0 {
				p.add(ip+".factor", "is for kind slow")
			}
			if in.RestartAfter < 0 {
				p.add(ip+".restart_after", "want a duration >= 0")
			}
		default:
			p.add(ip+".kind", "unknown incident kind %q (known: %s)", in.Kind, strings.Join(expIncidentKinds, ", "))
		}
	}
}

func validateHealth(h *Health, path string, p *expProblems) {
	hp := func(k string) string { return path + "." + k }
	if !(h.LatencyRatio > 1) || h.LatencyRatio > 1e6 {
		p.add(hp("latency_ratio"), "want a ratio > 1 (observed over expected latency), got %g", h.LatencyRatio)
	}
	if !(h.EWMAWeight > 0 && h.EWMAWeight <= 1) {
		p.add(hp("ewma_weight"), "want a weight in (0, 1], got %g", h.EWMAWeight)
	}
	if h.MinRequests < 1 {
		p.add(hp("min_requests"), "want >= 1, got %d", h.MinRequests)
	}
	if h.ConsecutiveErrors < 1 {
		p.add(hp("consecutive_errors"), "want >= 1, got %d", h.ConsecutiveErrors)
	}
	if h.EjectFor <= 0 {
		p.add(hp("eject_for"), "want a duration > 0")
	}
	if h.ProbeRequests < 1 {
		p.add(hp("probe_requests"), "want >= 1, got %d", h.ProbeRequests)
	}
	if h.MaxEjectedPct < 1 || h.MaxEjectedPct > 100 {
		p.add(hp("max_ejected_pct"), "want 1 to 100, got %d", h.MaxEjectedPct)
	}
	if h.LaneHeadroom < 0 {
		p.add(hp("lane_headroom"), "want >= 0, got %d", h.LaneHeadroom)
	}
}

func validateDist(x *Dist, path string, p *expProblems) {
	big := func(v float64) bool { return !(v >= 0) || v > 1e12 }
	switch x.Kind {
	case DistConstant, DistExponential:
		if !(x.Mean > 0) || big(x.Mean) {
			p.add(path+".mean", "want a mean > 0, got %g", x.Mean)
		}
		if x.Sigma != 0 {
			p.add(path+".sigma", "is for lognormal")
		}
	case DistLognormal:
		if !(x.Mean > 0) || big(x.Mean) {
			p.add(path+".mean", "want a mean > 0, got %g", x.Mean)
		}
		if !(x.Sigma > 0) || x.Sigma > 10 {
			p.add(path+".sigma", "want the underlying normal's standard deviation in (0, 10], got %g", x.Sigma)
		}
	case DistUniform:
		if big(x.Min) || big(x.Max) || !(x.Max > x.Min) || x.Min < 0 {
			p.add(path+".max", "uniform wants 0 <= min < max, got min %g, max %g", x.Min, x.Max)
		}
		if x.Mean != 0 || x.Sigma != 0 {
			p.add(path, "uniform takes min and max only")
		}
		return
	default:
		p.add(path+".dist", "unknown distribution %q (known: %s)", x.Kind, strings.Join(expDistKinds, ", "))
		return
	}
	if big(x.Min) {
		p.add(path+".min", "want a clamp >= 0, got %g", x.Min)
	}
	if big(x.Max) {
		p.add(path+".max", "want a clamp >= 0 (0: none), got %g", x.Max)
	}
	if x.Max > 0 && x.Max < x.Min {
		p.add(path+".max", "clamp max %g is below min %g", x.Max, x.Min)
	}
}
