package hwmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// UnlimitedCapacity is the CPU (milli-cores) or memory (MiB) capacity a node
// gets when its cluster spec leaves cpu_milli or memory_mib out: the spec
// does not model that resource, so every request fits. Traces such as Philly
// carry no CPU or memory requests at all (they ask for 0, which fits any
// node), and a spec for them should not have to invent capacities.
//
// It is 2^40 rather than math.MaxInt64 so that sums over every node of the
// largest cluster a spec may describe (MaxSpecNodes) cannot overflow int64,
// and so that it is exact in float64. Code that reports CPU or memory
// utilisation should treat a capacity >= UnlimitedCapacity as "not modelled".
const UnlimitedCapacity int64 = 1 << 40

// Limits on what one cluster spec may describe. They are far above any real
// trace's cluster (Philly has ~550 nodes, Alibaba's ~6,500) and keep a
// mistyped count from exhausting memory.
const (
	MaxSpecNodes = 100_000
	MaxSpecGPUs  = 1 << 20
	maxSpecBytes = 32 << 20
	maxNameLen   = 253
)

// ClusterSpec is a cluster described as data: groups of identical nodes plus
// individually listed nodes. It reads from YAML or JSON with the same schema
// (docs/cluster.md); Build turns it into a Cluster.
//
// Node order in the built cluster is: every node of node_groups[0], then of
// node_groups[1], ..., then nodes[0], nodes[1], ... Placement policies that
// scan nodes in index order (first fit) see them in that order.
type ClusterSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	NodeGroups  []NodeGroupSpec `json:"node_groups,omitempty"`
	Nodes       []NodeSpec      `json:"nodes,omitempty"`

	// Source says where the spec came from (a file path, or `preset "name"`);
	// errors start with it. It is not part of the schema.
	Source string `json:"-"`
}

// NodeGroupSpec is Count identical nodes named NamePrefix-000,
// NamePrefix-001, ... (three digits, more when Count exceeds 1000).
type NodeGroupSpec struct {
	NamePrefix  string `json:"name_prefix"`
	Count       int    `json:"count"`
	GPUModel    string `json:"gpu_model,omitempty"`  // catalogue name or alias; may be empty only when GPUsPerNode is 0
	GPUsPerNode int    `json:"gpus_per_node"`        // 0..MaxGPUsPerNode
	CPUMilli    *int64 `json:"cpu_milli,omitempty"`  // nil: UnlimitedCapacity
	MemoryMiB   *int64 `json:"memory_mib,omitempty"` // nil: UnlimitedCapacity
	// MIG gives every node's GPUs their MIG layouts; nil: no MIG.
	MIG *MIGSpec `json:"mig,omitempty"`
}

// NodeSpec is one individually named node.
type NodeSpec struct {
	Name      string `json:"name"`
	GPUModel  string `json:"gpu_model,omitempty"`  // may be empty only when GPUs is 0
	GPUs      int    `json:"gpus"`                 // 0..MaxGPUsPerNode
	CPUMilli  *int64 `json:"cpu_milli,omitempty"`  // nil: UnlimitedCapacity
	MemoryMiB *int64 `json:"memory_mib,omitempty"` // nil: UnlimitedCapacity
	// MIG gives the node's GPUs their MIG layouts; nil: no MIG.
	MIG *MIGSpec `json:"mig,omitempty"`
}

// MIGSpec is the mig field of a node group or node: either one layout for
// every GPU (All: a layout string such as "3g.71gb,2g.35gb,1g.18gb,1g.18gb"
// or a named layout such as "balanced", see ParseMIGLayout), written as a
// string, or one layout per GPU (PerGPU, "" for a GPU used whole), written
// as a list of strings with one entry per GPU. Layout strings are kept as
// written, so a spec renders back to the same text.
type MIGSpec struct {
	All    string
	PerGPU []string // when not nil, one entry per GPU and All is unused
}

// UnmarshalJSON reads a string or a list of strings.
func (m *MIGSpec) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*m = MIGSpec{All: one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("mig: want a layout string or a list of layout strings, one per GPU")
	}
	if list == nil {
		list = []string{}
	}
	*m = MIGSpec{PerGPU: list}
	return nil
}

// MarshalJSON writes All as a string, or PerGPU as a list.
func (m MIGSpec) MarshalJSON() ([]byte, error) {
	if m.PerGPU != nil {
		return json.Marshal(m.PerGPU)
	}
	return json.Marshal(m.All)
}

// layouts parses the spec for gpus GPUs of model, reporting problems under
// field; nil when no GPU is MIG-enabled.
func (m *MIGSpec) layouts(model ModelID, gpus int, field string, p *problems) []MIGLayout {
	if m == nil {
		return nil
	}
	if m.PerGPU == nil {
		l, err := ParseMIGLayout(model, m.All)
		if err != nil {
			p.add(field, "MIG layout %q: %v", m.All, err)
			return nil
		}
		if len(l) == 0 || gpus == 0 {
			return nil
		}
		out := make([]MIGLayout, gpus)
		for g := range out {
			out[g] = l // NewCluster copies
		}
		return out
	}
	if len(m.PerGPU) != gpus {
		p.add(field, "lists %d layouts for %d GPUs; want one per GPU (\"\" for a GPU used whole), or one string for all", len(m.PerGPU), gpus)
		return nil
	}
	out := make([]MIGLayout, gpus)
	any := false
	for g, s := range m.PerGPU {
		l, err := ParseMIGLayout(model, s)
		if err != nil {
			p.add(fmt.Sprintf("%s[%d]", field, g), "MIG layout %q for GPU %d: %v", s, g, err)
			continue
		}
		out[g] = l
		any = any || len(l) > 0
	}
	if !any {
		return nil
	}
	return out
}

// SpecError is one problem with a cluster spec: the file (or preset) it is
// in, the field path such as "node_groups[1].gpu_model" (empty for problems
// with the whole file, such as YAML syntax), and what was expected.
type SpecError struct {
	File  string
	Field string
	Msg   string
}

func (e *SpecError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxReported bounds how many problems one error lists.
const maxReported = 10

// problems collects SpecErrors for one source.
type problems struct {
	file string
	errs []error
	more int
}

func (p *problems) add(field, format string, args ...any) {
	if len(p.errs) >= maxReported {
		p.more++
		return
	}
	p.errs = append(p.errs, &SpecError{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	errs := p.errs
	if p.more > 0 {
		errs = append(errs[:len(errs):len(errs)], &SpecError{File: p.file, Msg: fmt.Sprintf("and %d more problems", p.more)})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// LoadClusterSpec reads a cluster spec from a YAML or JSON file.
func LoadClusterSpec(path string) (*ClusterSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cluster spec: %w", err)
	}
	if len(data) > maxSpecBytes {
		return nil, &SpecError{File: path, Msg: fmt.Sprintf("file is larger than %d MiB; is it a cluster spec?", maxSpecBytes>>20)}
	}
	return ParseClusterSpec(data, path)
}

// ParseClusterSpec reads a cluster spec from YAML or JSON. file names the
// source in errors. Unknown fields, duplicate keys, wrong types and invalid
// values are errors; each names the file and the field path. A YAML syntax
// error keeps the YAML library's line number.
func ParseClusterSpec(data []byte, file string) (*ClusterSpec, error) {
	p := &problems{file: file}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		p.add("", "%s", oneLine(err.Error()))
		return nil, p.err()
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil { // cannot happen: j came from json.Marshal
		p.add("", "%v", err)
		return nil, p.err()
	}
	checkTree(tree, p)
	if err := p.err(); err != nil {
		return nil, err
	}
	s := &ClusterSpec{}
	if err := yaml.UnmarshalStrict(data, s); err != nil { // backstop; checkTree catches these first
		p.add("", "%v", err)
		return nil, p.err()
	}
	s.Source = file
	if len(s.NodeGroups) == 0 {
		s.NodeGroups = nil // "node_groups: []" and no node_groups read the same
	}
	if len(s.Nodes) == 0 {
		s.Nodes = nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// oneLine joins the YAML library's multi-line "unmarshal errors:" list
// into one line: "yaml: unmarshal errors: line 2: ...; line 5: ...".
func oneLine(msg string) string {
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	if len(lines) > 1 && strings.HasSuffix(lines[0], ":") {
		return lines[0] + " " + strings.Join(lines[1:], "; ")
	}
	return strings.Join(lines, "; ")
}

// --- structural check of the decoded tree, for errors with field paths ---

type fieldKind uint8

const (
	kindString fieldKind = iota
	kindInt
	kindList
	kindStringOrList // a string, or a list of strings
)

type fieldDef struct {
	name     string
	kind     fieldKind
	required bool
	item     []fieldDef // for lists: the fields of each item
}

var (
	groupFields = []fieldDef{
		{name: "name_prefix", kind: kindString, required: true},
		{name: "count", kind: kindInt, required: true},
		{name: "gpu_model", kind: kindString},
		{name: "gpus_per_node", kind: kindInt, required: true},
		{name: "cpu_milli", kind: kindInt},
		{name: "memory_mib", kind: kindInt},
		{name: "mig", kind: kindStringOrList},
	}
	nodeFields = []fieldDef{
		{name: "name", kind: kindString, required: true},
		{name: "gpu_model", kind: kindString},
		{name: "gpus", kind: kindInt, required: true},
		{name: "cpu_milli", kind: kindInt},
		{name: "memory_mib", kind: kindInt},
		{name: "mig", kind: kindStringOrList},
	}
	specFields = []fieldDef{
		{name: "name", kind: kindString, required: true},
		{name: "description", kind: kindString},
		{name: "node_groups", kind: kindList, item: groupFields},
		{name: "nodes", kind: kindList, item: nodeFields},
	}
)

func fieldNames(defs []fieldDef) string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.name
	}
	return strings.Join(names, ", ")
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func checkTree(tree any, p *problems) {
	if tree == nil {
		p.add("", "the spec is empty; want a mapping with fields %s", fieldNames(specFields))
		return
	}
	checkObject(tree, "", specFields, p)
}

func checkObject(v any, path string, defs []fieldDef, p *problems) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.add(path, "want a mapping with fields %s, got %s", fieldNames(defs), describe(v))
		return
	}
	known := make(map[string]bool, len(defs))
	for _, d := range defs {
		known[d.name] = true
		val, present := obj[d.name]
		fp := joinPath(path, d.name)
		if !present || val == nil {
			if d.required {
				p.add(fp, "required field is missing")
			}
			continue
		}
		switch d.kind {
		case kindString:
			if _, ok := val.(string); !ok {
				p.add(fp, "want a string, got %s; put it in quotes", describe(val))
			}
		case kindInt:
			checkInt(val, fp, p)
		case kindStringOrList:
			switch val := val.(type) {
			case string:
			case []any:
				for i, it := range val {
					if _, ok := it.(string); !ok {
						p.add(fmt.Sprintf("%s[%d]", fp, i), "want a layout string (\"\" for a GPU used whole), got %s; put it in quotes", describe(it))
					}
				}
			default:
				p.add(fp, "want a MIG layout string, a named layout (%s), or a list of layout strings, one per GPU; got %s", strings.Join(MIGLayoutNames(), ", "), describe(val))
			}
		case kindList:
			items, ok := val.([]any)
			if !ok {
				p.add(fp, "want a list, got %s", describe(val))
				continue
			}
			for i, it := range items {
				checkObject(it, fmt.Sprintf("%s[%d]", fp, i), d.item, p)
			}
		}
	}
	// Unknown fields, in a fixed order so that errors are deterministic.
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		hint := ""
		if m := suggest(k, defs); m != "" {
			hint = fmt.Sprintf("; did you mean %q?", m)
		}
		p.add(joinPath(path, k), "unknown field (known fields: %s)%s", fieldNames(defs), hint)
	}
}

// suggest returns the known field an unknown key most likely misspells, or
// "": the field it equals ignoring case and "-" for "_"; else the one it
// shares the longest prefix with (3 bytes at least); else one within two
// edits of a key of 6 bytes or more.
func suggest(key string, defs []fieldDef) string {
	k := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	best, bestPrefix, bestDist := "", 2, 0
	for _, d := range defs {
		if k == d.name {
			return d.name
		}
		n := 0
		for n < len(k) && n < len(d.name) && k[n] == d.name[n] {
			n++
		}
		dist := EditDistance(k, d.name)
		if n > bestPrefix || (n == bestPrefix && best != "" && dist < bestDist) {
			best, bestPrefix, bestDist = d.name, n, dist
		}
	}
	if best != "" {
		return best
	}
	if len(k) >= 6 {
		for _, d := range defs {
			if EditDistance(k, d.name) <= 2 {
				return d.name
			}
		}
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, capped at 64
// (longer strings count as 64 apart): the did-you-mean hints of every
// strict decoder and of the policy grammar.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func checkInt(v any, path string, p *problems) {
	n, ok := v.(json.Number)
	if !ok {
		p.add(path, "want a whole number, got %s", describe(v))
		return
	}
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return
	}
	f, err := strconv.ParseFloat(string(n), 64)
	switch {
	case err == nil && f == float64(int64(f)) && f > -9e18 && f < 9e18:
		return // e.g. 4.0 or 1e3; the decoder reads it as an integer
	case err == nil && (f > 9e18 || f < -9e18):
		p.add(path, "number %s is out of range", n)
	default:
		p.add(path, "want a whole number, got %s", n)
	}
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + string(v)
	case bool:
		return fmt.Sprintf("boolean %v (YAML reads unquoted y/n, yes/no, on/off as booleans)", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// --- validation of values ---

func (s *ClusterSpec) where() string {
	if s.Source != "" {
		return s.Source
	}
	if s.Name != "" {
		return fmt.Sprintf("cluster %q", s.Name)
	}
	return "cluster spec"
}

// checkName reports what is wrong with a node name or prefix, or "".
func checkName(name string, maxLen int) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > maxLen:
		return fmt.Sprintf("is %d bytes long, at most %d allowed", len(name), maxLen)
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Sprintf("%q contains a space or unprintable character", name)
		}
	}
	return ""
}

func checkCapacity(v *int64, field string, p *problems) int64 {
	if v == nil {
		return UnlimitedCapacity
	}
	if *v < 0 || *v > UnlimitedCapacity {
		p.add(field, "must be in 0..%d (leave it out for unlimited), got %d", UnlimitedCapacity, *v)
		return 0
	}
	return *v
}

// checkMIGSpec reports problems with a mig field; model is the checked
// model (meaningful only when name is a known model).
func checkMIGSpec(m *MIGSpec, name string, model ModelID, gpus int, field string, p *problems) {
	if m == nil {
		return
	}
	if _, ok := LookupModel(name); !ok {
		if name == "" && (m.PerGPU != nil || strings.TrimSpace(m.All) != "") {
			p.add(field, "needs gpu_model: MIG layouts are per GPU model")
		}
		return // an unknown model is reported under gpu_model
	}
	if !MIGCapable(model) {
		empty := strings.TrimSpace(m.All) == ""
		for _, s := range m.PerGPU {
			empty = empty && strings.TrimSpace(s) == ""
		}
		if !empty {
			p.add(field, "%s does not support MIG (MIG models: A100-40GB, A100-80GB, H100-80GB, H200-141GB)", Model(model).Name)
		}
		return
	}
	m.layouts(model, gpus, field, p)
}

func checkModel(model string, gpus int, field string, p *problems) ModelID {
	if model == "" {
		if gpus > 0 {
			p.add(field, "required when a node has GPUs; want one of: %s (or an alias, see docs/cluster.md)", ModelNames())
		}
		return 0
	}
	m, ok := LookupModel(model)
	if !ok {
		p.add(field, "unknown GPU model %q; want one of: %s (or an alias, see docs/cluster.md)", model, ModelNames())
		return 0
	}
	return m.ID
}

// groupNodeName is the name of node i of a group whose indexes are written
// with width digits.
func groupNodeName(prefix string, i, width int) string {
	digits := strconv.Itoa(i)
	return prefix + "-" + strings.Repeat("0", max(width-len(digits), 0)) + digits
}

// nodeOrigin says which spec entry a node came from, for error messages:
// node index of node_groups[group], or nodes[index] when group is -1.
type nodeOrigin struct{ group, index int }

func (o nodeOrigin) String() string {
	if o.group < 0 {
		return fmt.Sprintf("nodes[%d]", o.index)
	}
	return fmt.Sprintf("node_groups[%d] node %d", o.group, o.index)
}

// Validate reports every problem with the spec (up to ten), each as a
// *SpecError joined with errors.Join; nil means Build will succeed.
func (s *ClusterSpec) Validate() error {
	_, err := s.expand()
	return err
}

// NodeList validates the spec and returns its nodes in cluster order.
func (s *ClusterSpec) NodeList() ([]Node, error) { return s.expand() }

func (s *ClusterSpec) expand() ([]Node, error) {
	p := &problems{file: s.where()}
	if msg := checkName(s.Name, maxNameLen); msg != "" {
		p.add("name", "%s", msg)
	}
	if !utf8.ValidString(s.Description) {
		p.add("description", "is not valid UTF-8")
	}
	if len(s.NodeGroups) == 0 && len(s.Nodes) == 0 {
		p.add("", "the cluster has no nodes: node_groups and nodes are both empty")
	}
	totalNodes, totalGPUs := 0, 0
	sizeOK := true
	for i, g := range s.NodeGroups {
		path := fmt.Sprintf("node_groups[%d]", i)
		if msg := checkName(g.NamePrefix, maxNameLen-8); msg != "" {
			p.add(path+".name_prefix", "%s", msg)
		}
		if g.Count <= 0 || g.Count > MaxSpecNodes {
			p.add(path+".count", "must be in 1..%d, got %d", MaxSpecNodes, g.Count)
			sizeOK = false
		}
		if g.GPUsPerNode < 0 || g.GPUsPerNode > MaxGPUsPerNode {
			p.add(path+".gpus_per_node", "must be in 0..%d, got %d", MaxGPUsPerNode, g.GPUsPerNode)
			sizeOK = false
		}
		gm := checkModel(g.GPUModel, g.GPUsPerNode, path+".gpu_model", p)
		checkCapacity(g.CPUMilli, path+".cpu_milli", p)
		checkCapacity(g.MemoryMiB, path+".memory_mib", p)
		if g.GPUsPerNode >= 0 && g.GPUsPerNode <= MaxGPUsPerNode {
			checkMIGSpec(g.MIG, g.GPUModel, gm, g.GPUsPerNode, path+".mig", p)
		}
		if sizeOK {
			totalNodes += g.Count
			totalGPUs += g.Count * g.GPUsPerNode
		}
	}
	for i, n := range s.Nodes {
		path := fmt.Sprintf("nodes[%d]", i)
		if msg := checkName(n.Name, maxNameLen); msg != "" {
			p.add(path+".name", "%s", msg)
		}
		if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			p.add(path+".gpus", "must be in 0..%d, got %d", MaxGPUsPerNode, n.GPUs)
			sizeOK = false
		}
		nm := checkModel(n.GPUModel, n.GPUs, path+".gpu_model", p)
		checkCapacity(n.CPUMilli, path+".cpu_milli", p)
		checkCapacity(n.MemoryMiB, path+".memory_mib", p)
		if n.GPUs >= 0 && n.GPUs <= MaxGPUsPerNode {
			checkMIGSpec(n.MIG, n.GPUModel, nm, n.GPUs, path+".mig", p)
		}
		if sizeOK {
			totalNodes++
			totalGPUs += max(n.GPUs, 0)
		}
	}
	if sizeOK && totalNodes > MaxSpecNodes {
		p.add("", "the cluster has %d nodes, at most %d allowed", totalNodes, MaxSpecNodes)
		sizeOK = false
	}
	if sizeOK && totalGPUs > MaxSpecGPUs {
		p.add("", "the cluster has %d GPUs, at most %d allowed", totalGPUs, MaxSpecGPUs)
		sizeOK = false
	}
	if err := p.err(); err != nil || !sizeOK {
		return nil, err
	}

	// Every value is in range: name the nodes and look for repeats.
	nodes := make([]Node, 0, totalNodes)
	origin := make(map[string]nodeOrigin, totalNodes)
	for i, g := range s.NodeGroups {
		model := checkModel(g.GPUModel, g.GPUsPerNode, "", p)
		cpu := checkCapacity(g.CPUMilli, "", p)
		mem := checkCapacity(g.MemoryMiB, "", p)
		mig := g.MIG.layouts(model, g.GPUsPerNode, "", p)
		width := max(3, len(strconv.Itoa(g.Count-1)))
		for k := 0; k < g.Count; k++ {
			name := groupNodeName(g.NamePrefix, k, width)
			here := nodeOrigin{group: i, index: k}
			if prev, dup := origin[name]; dup {
				p.add(fmt.Sprintf("node_groups[%d].name_prefix", i), "node name %q (%s) repeats %s", name, here, prev)
				break // one report per group is enough
			}
			origin[name] = here
			nodes = append(nodes, Node{Name: name, Model: model, GPUs: g.GPUsPerNode, CPUMilli: cpu, MemoryMiB: mem, MIG: mig})
		}
	}
	for i, n := range s.Nodes {
		if prev, dup := origin[n.Name]; dup {
			p.add(fmt.Sprintf("nodes[%d].name", i), "node name %q repeats %s", n.Name, prev)
			continue
		}
		origin[n.Name] = nodeOrigin{group: -1, index: i}
		model := checkModel(n.GPUModel, n.GPUs, "", p)
		nodes = append(nodes, Node{
			Name:      n.Name,
			Model:     model,
			GPUs:      n.GPUs,
			CPUMilli:  checkCapacity(n.CPUMilli, "", p),
			MemoryMiB: checkCapacity(n.MemoryMiB, "", p),
			MIG:       n.MIG.layouts(model, n.GPUs, "", p),
		})
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return nodes, nil
}

// Build validates the spec and returns a Cluster with all capacity free.
func (s *ClusterSpec) Build() (*Cluster, error) {
	nodes, err := s.expand()
	if err != nil {
		return nil, err
	}
	c, err := NewCluster(nodes)
	if err != nil { // cannot happen after expand; kept so a gap shows clearly
		return nil, &SpecError{File: s.where(), Msg: err.Error()}
	}
	return c, nil
}

// NumNodes is the number of nodes the spec describes (groups with a
// negative count count as empty).
func (s *ClusterSpec) NumNodes() int {
	n := len(s.Nodes)
	for _, g := range s.NodeGroups {
		n += max(g.Count, 0)
	}
	return n
}

// NumGPUs is the number of GPUs the spec describes.
func (s *ClusterSpec) NumGPUs() int {
	n := 0
	for _, g := range s.NodeGroups {
		n += max(g.Count, 0) * max(g.GPUsPerNode, 0)
	}
	for _, nd := range s.Nodes {
		n += max(nd.GPUs, 0)
	}
	return n
}

// ResolveCluster reads arg as a cluster spec file if such a file exists,
// and otherwise as a preset name. A file whose first line is an Alibaba
// openb node list header (sn,cpu_milli,memory_mib,gpu,model) is read with
// LoadOpenBNodeList, any other file with LoadClusterSpec. An arg that is
// neither a file nor a preset is an error that lists the presets.
func ResolveCluster(arg string) (*ClusterSpec, error) {
	if arg == "" {
		return nil, fmt.Errorf("cluster: want a preset name (%s) or a spec file path", strings.Join(Presets(), ", "))
	}
	fi, err := os.Stat(arg)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("cluster %q: is a directory; want a preset name (%s) or a spec file", arg, strings.Join(Presets(), ", "))
	case err == nil && sniffOpenBNodeList(arg):
		return LoadOpenBNodeList(arg)
	case err == nil:
		return LoadClusterSpec(arg)
	}
	if spec, ok := Preset(arg); ok {
		return spec, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cluster %q: no such file, and not a preset (presets: %s)", arg, strings.Join(Presets(), ", "))
	}
	return nil, fmt.Errorf("cluster %q: not a preset (presets: %s), and the file cannot be read: %w", arg, strings.Join(Presets(), ", "), err)
}

// --- rendering ---

var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._/-]*$`)

// yamlString writes s as a YAML scalar: plain when that reads back as the
// same string, otherwise double-quoted (JSON's escapes are YAML's too).
func yamlString(s string) string {
	if plainYAML.MatchString(s) {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		default:
			return s
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// YAML renders a valid spec as YAML that ParseClusterSpec reads back to the
// same spec, with fields in schema order and a comment giving its size.
func (s *ClusterSpec) YAML() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Brigade cluster spec: %d nodes, %d GPUs.\n", s.NumNodes(), s.NumGPUs())
	fmt.Fprintf(&b, "name: %s\n", yamlString(s.Name))
	if s.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", yamlString(s.Description))
	}
	capacity := func(key string, v *int64) {
		if v != nil {
			fmt.Fprintf(&b, "    %s: %d\n", key, *v)
		}
	}
	if len(s.NodeGroups) > 0 {
		b.WriteString("node_groups:\n")
		for _, g := range s.NodeGroups {
			fmt.Fprintf(&b, "  - name_prefix: %s\n", yamlString(g.NamePrefix))
			fmt.Fprintf(&b, "    count: %d\n", g.Count)
			if g.GPUModel != "" {
				fmt.Fprintf(&b, "    gpu_model: %s\n", yamlString(g.GPUModel))
			}
			fmt.Fprintf(&b, "    gpus_per_node: %d\n", g.GPUsPerNode)
			capacity("cpu_milli", g.CPUMilli)
			capacity("memory_mib", g.MemoryMiB)
			migYAML(&b, g.MIG)
		}
	}
	if len(s.Nodes) > 0 {
		b.WriteString("nodes:\n")
		for _, n := range s.Nodes {
			fmt.Fprintf(&b, "  - name: %s\n", yamlString(n.Name))
			if n.GPUModel != "" {
				fmt.Fprintf(&b, "    gpu_model: %s\n", yamlString(n.GPUModel))
			}
			fmt.Fprintf(&b, "    gpus: %d\n", n.GPUs)
			capacity("cpu_milli", n.CPUMilli)
			capacity("memory_mib", n.MemoryMiB)
			migYAML(&b, n.MIG)
		}
	}
	return b.Bytes(), nil
}

// migYAML writes a mig field at node-group indentation.
func migYAML(b *bytes.Buffer, m *MIGSpec) {
	switch {
	case m == nil:
	case m.PerGPU == nil:
		fmt.Fprintf(b, "    mig: %s\n", yamlString(m.All))
	case len(m.PerGPU) == 0:
		b.WriteString("    mig: []\n")
	default:
		b.WriteString("    mig:\n")
		for _, l := range m.PerGPU {
			fmt.Fprintf(b, "      - %s\n", yamlString(l))
		}
	}
}
