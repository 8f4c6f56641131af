package hwmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brigadesim/brigade/config"
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
	Name        string `json:"name" config:"required"`
	Description string `json:"description,omitempty"`
	// GPUModels declares custom GPU models (spec_models.go) that the
	// node groups and nodes may then name.
	GPUModels  []GPUModelSpec  `json:"gpu_models,omitempty"`
	NodeGroups []NodeGroupSpec `json:"node_groups,omitempty"`
	// Storage and Datasets describe the data jobs read (data.go): the
	// storage tier every dataset lives on, and the datasets with their
	// replicas on nodes.
	Storage  *StorageSpec  `json:"storage,omitempty"`
	Datasets []DatasetSpec `json:"datasets,omitempty"`
	Nodes    []NodeSpec    `json:"nodes,omitempty"`

	// Source says where the spec came from (a file path, or `preset "name"`);
	// errors start with it. It is not part of the schema.
	Source string `json:"-"`
	// data is the datasets as the last expand found them.
	data *dataLayout
}

// NodeGroupSpec is Count identical nodes named NamePrefix-000,
// NamePrefix-001, ... (three digits, more when Count exceeds 1000).
type NodeGroupSpec struct {
	NamePrefix  string `json:"name_prefix" config:"required"`
	Count       int    `json:"count" config:"required"`
	GPUModel    string `json:"gpu_model,omitempty"`             // catalogue name or alias; may be empty only when GPUsPerNode is 0
	GPUsPerNode int    `json:"gpus_per_node" config:"required"` // 0..MaxGPUsPerNode
	// Rack puts every node of the group in one rack; NodesPerRack instead
	// splits them, in order, into racks of that many nodes named
	// NamePrefix-rack-0, -rack-1, ... (at most one of the two).
	Rack         string `json:"rack,omitempty"`
	NodesPerRack int    `json:"nodes_per_rack,omitempty"`
	CPUMilli     *int64 `json:"cpu_milli,omitempty"`  // nil: UnlimitedCapacity
	MemoryMiB    *int64 `json:"memory_mib,omitempty"` // nil: UnlimitedCapacity
	// CacheGB is each node's cache for datasets read from storage, in GB.
	CacheGB float64 `json:"cache_gb,omitempty"`
	// MIG gives every node's GPUs their MIG layouts; nil: no MIG.
	MIG *MIGSpec `json:"mig,omitempty"`
}

// NodeSpec is one individually named node.
type NodeSpec struct {
	Name      string  `json:"name" config:"required"`
	GPUModel  string  `json:"gpu_model,omitempty"`    // may be empty only when GPUs is 0
	GPUs      int     `json:"gpus" config:"required"` // 0..MaxGPUsPerNode
	Rack      string  `json:"rack,omitempty"`         // the node's rack; "" for none
	CPUMilli  *int64  `json:"cpu_milli,omitempty"`    // nil: UnlimitedCapacity
	MemoryMiB *int64  `json:"memory_mib,omitempty"`   // nil: UnlimitedCapacity
	CacheGB   float64 `json:"cache_gb,omitempty"`     // the node's dataset cache, in GB
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

// UnmarshalConfig reads a layout string, or a list of them, one per GPU.
func (m *MIGSpec) UnmarshalConfig(v config.Value) {
	if one, ok := v.String(); ok {
		*m = MIGSpec{All: one}
		return
	}
	if !v.IsList() {
		v.Fail("want a MIG layout string, a named layout (%s), or a list of layout strings, one per GPU; got %s", strings.Join(MIGLayoutNames(), ", "), v.Describe())
		return
	}
	list := []string{}
	for _, item := range v.Items() {
		l, ok := item.String()
		if !ok && !item.IsNull() {
			item.Fail("want a layout string (\"\" for a GPU used whole), got %s; put it in quotes", item.Describe())
		}
		list = append(list, l)
	}
	*m = MIGSpec{PerGPU: list}
}

// layouts parses the spec for gpus GPUs of model, reporting problems under
// field; nil when no GPU is MIG-enabled.
func (m *MIGSpec) layouts(model ModelID, gpus int, field string, p *config.Errors) []MIGLayout {
	if m == nil {
		return nil
	}
	if m.PerGPU == nil {
		l, err := ParseMIGLayout(model, m.All)
		if err != nil {
			p.Add(field, "MIG layout %q: %v", m.All, err)
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
		p.Add(field, "lists %d layouts for %d GPUs; want one per GPU (\"\" for a GPU used whole), or one string for all", len(m.PerGPU), gpus)
		return nil
	}
	out := make([]MIGLayout, gpus)
	any := false
	for g, s := range m.PerGPU {
		l, err := ParseMIGLayout(model, s)
		if err != nil {
			p.Add(fmt.Sprintf("%s[%d]", field, g), "MIG layout %q for GPU %d: %v", s, g, err)
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

// EditDistance is config.EditDistance, the one distance behind the
// did-you-mean hints, here for the model's callers (the policy grammar).
func EditDistance(a, b string) int { return config.EditDistance(a, b) }

// SpecError is one problem with a cluster spec: the file (or preset) it
// is in, the line (0 for a spec built in Go), the field path such as
// "node_groups[1].gpu_model" (empty for problems with the whole file, such
// as YAML syntax), and what was expected. Every config file Brigade reads
// reports its problems this way.
type SpecError = config.Error

// LoadClusterSpec reads a cluster spec from a YAML or JSON file.
func LoadClusterSpec(path string) (*ClusterSpec, error) {
	data, err := config.ReadFile(path, "cluster spec", maxSpecBytes)
	if err != nil {
		return nil, err
	}
	return ParseClusterSpec(data, path)
}

// ParseClusterSpec reads a cluster spec from YAML or JSON with the strict
// decoder (package config). file names the source in errors. Every
// problem is reported at once, up to ten: unknown fields, duplicate keys,
// wrong types and invalid values, each with the file, the line and the
// field path.
func ParseClusterSpec(data []byte, file string) (*ClusterSpec, error) {
	s := &ClusterSpec{Source: file}
	if err := config.Decode(data, file, s); err != nil {
		return nil, err
	}
	if len(s.NodeGroups) == 0 {
		s.NodeGroups = nil // "node_groups: []" and no node_groups read the same
	}
	if len(s.Nodes) == 0 {
		s.Nodes = nil
	}
	return s, nil
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

func checkCapacity(v *int64, field string, p *config.Errors) int64 {
	if v == nil {
		return UnlimitedCapacity
	}
	if *v < 0 || *v > UnlimitedCapacity {
		p.Add(field, "must be in 0..%d (leave it out for unlimited), got %d", UnlimitedCapacity, *v)
		return 0
	}
	return *v
}

// checkMIGSpec reports problems with a mig field; model is the checked
// model (meaningful only when name is a known model).
func checkMIGSpec(m *MIGSpec, name string, model ModelID, gpus int, field string, p *config.Errors) {
	if m == nil {
		return
	}
	if _, ok := LookupModel(name); !ok {
		if name == "" && (m.PerGPU != nil || strings.TrimSpace(m.All) != "") {
			p.Add(field, "needs gpu_model: MIG layouts are per GPU model")
		}
		return // an unknown model is reported under gpu_model
	}
	if !MIGCapable(model) {
		empty := strings.TrimSpace(m.All) == ""
		for _, s := range m.PerGPU {
			empty = empty && strings.TrimSpace(s) == ""
		}
		if !empty {
			p.Add(field, "%s does not support MIG (MIG models: A100-40GB, A100-80GB, H100-80GB, H200-141GB)", Model(model).Name)
		}
		return
	}
	m.layouts(model, gpus, field, p)
}

func checkModel(model string, gpus int, field string, p *config.Errors) ModelID {
	if model == "" {
		if gpus > 0 {
			p.Add(field, "required when a node has GPUs; want one of: %s (or an alias, see docs/cluster.md)", ModelNames())
		}
		return 0
	}
	m, ok := LookupModel(model)
	if !ok {
		p.Add(field, "unknown GPU model %q; want one of: %s (or an alias, see docs/cluster.md)", model, ModelNames())
		return 0
	}
	return m.ID
}

// rackNames tells where each rack got its name: a rack that a group's
// nodes_per_rack names belongs to that group alone, while a rack named
// with rack may hold nodes of several groups and nodes.
type rackNames map[string]struct {
	by        string
	generated bool
}

// claim records that by names rack (generated: by nodes_per_rack); it
// reports a rack named twice (a generated rack that anything else names
// too) and returns false then.
func (r rackNames) claim(rack, by string, generated bool, p *config.Errors) bool {
	prev, seen := r[rack]
	if seen && prev.by != by && (generated || prev.generated) {
		p.Add(by, "rack %q is named twice: %s names it too (nodes_per_rack names a group's racks for that group alone)", rack, prev.by)
		return false
	}
	if !seen {
		r[rack] = struct {
			by        string
			generated bool
		}{by, generated}
	}
	return true
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
// *SpecError joined with errors.Join; nil means Build will succeed. It is
// Check, for a spec built in Go.
func (s *ClusterSpec) Validate() error {
	return config.Validate(s.where(), s)
}

// NodeList validates the spec and returns its nodes in cluster order.
func (s *ClusterSpec) NodeList() ([]Node, error) {
	e := config.NewErrors(s.where())
	nodes := s.expand(e)
	if err := e.Err(); err != nil {
		return nil, err
	}
	return nodes, nil
}

// Check reports every problem with the spec: each node group's and node's
// own (NodeGroupSpec.Check, NodeSpec.Check), a spec without nodes, sizes
// over MaxSpecNodes and MaxSpecGPUs, and node names given twice.
func (s *ClusterSpec) Check(e *config.Errors) { s.expand(e) }

// Check reports what is wrong with one node group.
func (g *NodeGroupSpec) Check(e *config.Errors) {
	if msg := checkName(g.NamePrefix, maxNameLen-8); msg != "" {
		e.Add("name_prefix", "%s", msg)
	}
	if g.Count <= 0 || g.Count > MaxSpecNodes {
		e.Add("count", "must be in 1..%d, got %d", MaxSpecNodes, g.Count)
	}
	if g.GPUsPerNode < 0 || g.GPUsPerNode > MaxGPUsPerNode {
		e.Add("gpus_per_node", "must be in 0..%d, got %d", MaxGPUsPerNode, g.GPUsPerNode)
	}
	gm := checkModel(g.GPUModel, g.GPUsPerNode, "gpu_model", e)
	checkCache(g.CacheGB, e)
	if g.Rack != "" {
		if msg := checkName(g.Rack, maxNameLen); msg != "" {
			e.Add("rack", "%s", msg)
		}
	}
	switch {
	case g.NodesPerRack < 0 || g.NodesPerRack > MaxSpecNodes:
		e.Add("nodes_per_rack", "must be in 1..%d, got %d", MaxSpecNodes, g.NodesPerRack)
	case g.NodesPerRack > 0 && g.Rack != "":
		e.Add("nodes_per_rack", "gives the group's racks their own names; rack puts the whole group in one: give one of them")
	}
	checkCapacity(g.CPUMilli, "cpu_milli", e)
	checkCapacity(g.MemoryMiB, "memory_mib", e)
	if g.GPUsPerNode >= 0 && g.GPUsPerNode <= MaxGPUsPerNode {
		checkMIGSpec(g.MIG, g.GPUModel, gm, g.GPUsPerNode, "mig", e)
	}
}

// Check reports what is wrong with one node.
func (n *NodeSpec) Check(e *config.Errors) {
	if msg := checkName(n.Name, maxNameLen); msg != "" {
		e.Add("name", "%s", msg)
	}
	if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
		e.Add("gpus", "must be in 0..%d, got %d", MaxGPUsPerNode, n.GPUs)
	}
	nm := checkModel(n.GPUModel, n.GPUs, "gpu_model", e)
	checkCache(n.CacheGB, e)
	if n.Rack != "" {
		if msg := checkName(n.Rack, maxNameLen); msg != "" {
			e.Add("rack", "%s", msg)
		}
	}
	checkCapacity(n.CPUMilli, "cpu_milli", e)
	checkCapacity(n.MemoryMiB, "memory_mib", e)
	if n.GPUs >= 0 && n.GPUs <= MaxGPUsPerNode {
		checkMIGSpec(n.MIG, n.GPUModel, nm, n.GPUs, "mig", e)
	}
}

// expand checks the spec and, when it is valid, returns its nodes.
func (s *ClusterSpec) expand(p *config.Errors) []Node {
	before := p.Count()
	if msg := checkName(s.Name, maxNameLen); msg != "" {
		p.Add("name", "%s", msg)
	}
	if !utf8.ValidString(s.Description) {
		p.Add("description", "is not valid UTF-8")
	}
	registered := s.registerModels(p)
	defer func() {
		if p.Count() > 0 {
			// A refused spec leaves the catalogue as it found it.
			unregisterModels(registered)
		}
	}()
	if len(s.NodeGroups) == 0 && len(s.Nodes) == 0 {
		p.Add("", "the cluster has no nodes: node_groups and nodes are both empty")
	}
	totalNodes, totalGPUs := 0, 0
	sizeOK := true
	for i := range s.NodeGroups {
		g := &s.NodeGroups[i]
		g.Check(p.Index("node_groups", i))
		if g.Count <= 0 || g.Count > MaxSpecNodes || g.GPUsPerNode < 0 || g.GPUsPerNode > MaxGPUsPerNode {
			sizeOK = false
		}
		if sizeOK {
			totalNodes += g.Count
			totalGPUs += g.Count * g.GPUsPerNode
		}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.Check(p.Index("nodes", i))
		if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			sizeOK = false
		}
		if sizeOK {
			totalNodes++
			totalGPUs += n.GPUs
		}
	}
	if sizeOK && totalNodes > MaxSpecNodes {
		p.Add("", "the cluster has %d nodes, at most %d allowed", totalNodes, MaxSpecNodes)
		sizeOK = false
	}
	if sizeOK && totalGPUs > MaxSpecGPUs {
		p.Add("", "the cluster has %d GPUs, at most %d allowed", totalGPUs, MaxSpecGPUs)
		sizeOK = false
	}
	if p.Count() != before || !sizeOK {
		return nil
	}

	// Every value is in range: name the nodes and look for repeats.
	nodes := make([]Node, 0, totalNodes)
	racks := rackNames{}
	origin := make(map[string]nodeOrigin, totalNodes)
	for i, g := range s.NodeGroups {
		model := checkModel(g.GPUModel, g.GPUsPerNode, "", p)
		cpu := checkCapacity(g.CPUMilli, "", p)
		mem := checkCapacity(g.MemoryMiB, "", p)
		mig := g.MIG.layouts(model, g.GPUsPerNode, "", p)
		width := max(3, len(strconv.Itoa(g.Count-1)))
		for k := 0; k < g.Count; k++ {
			name := groupNodeName(g.NamePrefix, k, width)
			rack := g.Rack
			if g.NodesPerRack > 0 {
				rack = fmt.Sprintf("%s-rack-%d", g.NamePrefix, k/g.NodesPerRack)
				if k%g.NodesPerRack == 0 && !racks.claim(rack, fmt.Sprintf("node_groups[%d]", i), true, p) {
					break
				}
			} else if rack != "" && k == 0 && !racks.claim(rack, fmt.Sprintf("node_groups[%d]", i), false, p) {
				break
			}
			here := nodeOrigin{group: i, index: k}
			if prev, dup := origin[name]; dup {
				p.Add(fmt.Sprintf("node_groups[%d].name_prefix", i), "node name %q (%s) repeats %s", name, here, prev)
				break // one report per group is enough
			}
			origin[name] = here
			nodes = append(nodes, Node{Name: name, Rack: rack, Model: model, GPUs: g.GPUsPerNode, CPUMilli: cpu, MemoryMiB: mem, MIG: mig, CacheMB: int64(math.Round(g.CacheGB * 1000))})
		}
	}
	for i, n := range s.Nodes {
		if prev, dup := origin[n.Name]; dup {
			p.Add(fmt.Sprintf("nodes[%d].name", i), "node name %q repeats %s", n.Name, prev)
			continue
		}
		origin[n.Name] = nodeOrigin{group: -1, index: i}
		model := checkModel(n.GPUModel, n.GPUs, "", p)
		if n.Rack != "" && !racks.claim(n.Rack, fmt.Sprintf("nodes[%d]", i), false, p) {
			continue
		}
		nodes = append(nodes, Node{
			Name:      n.Name,
			Rack:      n.Rack,
			CacheMB:   int64(math.Round(n.CacheGB * 1000)),
			Model:     model,
			GPUs:      n.GPUs,
			CPUMilli:  checkCapacity(n.CPUMilli, "", p),
			MemoryMiB: checkCapacity(n.MemoryMiB, "", p),
			MIG:       n.MIG.layouts(model, n.GPUs, "", p),
		})
	}
	if p.Count() != before {
		return nil
	}
	s.data = s.checkData(nodeIndexOf(nodes), p)
	if p.Count() != before {
		return nil
	}
	return nodes
}

// nodeIndexOf maps node names to their indexes.
func nodeIndexOf(nodes []Node) map[string]int {
	m := make(map[string]int, len(nodes))
	for i, n := range nodes {
		m[n.Name] = i
	}
	return m
}

// Build validates the spec and returns a Cluster with all capacity free.
func (s *ClusterSpec) Build() (*Cluster, error) {
	nodes, err := s.NodeList()
	if err != nil {
		return nil, err
	}
	c, err := NewCluster(nodes)
	if err != nil { // cannot happen after expand; kept so a gap shows clearly
		return nil, &SpecError{File: s.where(), Msg: err.Error()}
	}
	if s.data != nil {
		c.setData(s.data)
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
	gpuModelsYAML(&b, s.GPUModels)
	datasetsYAML(&b, s)
	if len(s.NodeGroups) > 0 {
		b.WriteString("node_groups:\n")
		for _, g := range s.NodeGroups {
			fmt.Fprintf(&b, "  - name_prefix: %s\n", yamlString(g.NamePrefix))
			fmt.Fprintf(&b, "    count: %d\n", g.Count)
			if g.GPUModel != "" {
				fmt.Fprintf(&b, "    gpu_model: %s\n", yamlString(g.GPUModel))
			}
			fmt.Fprintf(&b, "    gpus_per_node: %d\n", g.GPUsPerNode)
			if g.Rack != "" {
				fmt.Fprintf(&b, "    rack: %s\n", yamlString(g.Rack))
			}
			if g.NodesPerRack > 0 {
				fmt.Fprintf(&b, "    nodes_per_rack: %d\n", g.NodesPerRack)
			}
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
			if n.Rack != "" {
				fmt.Fprintf(&b, "    rack: %s\n", yamlString(n.Rack))
			}
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
