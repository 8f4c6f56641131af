package hwmodel

import (
	"errors"
	"fmt"
	"math/bits"
)

// MilliPerGPU is one whole GPU in the fractional unit Brigade allocates in.
const MilliPerGPU = 1000

// MaxGPUsPerNode bounds a node's GPU count so that a node's GPU selection
// fits one uint64 bitmask.
const MaxGPUsPerNode = 64

// Node is the static description of one machine.
type Node struct {
	Name string
	// Rack names the rack the node stands in (its switch); "" for none.
	// Nodes with the same Rack share it.
	Rack string
	// CacheMB is the node's cache for datasets read from storage, in MB.
	CacheMB   int64
	Model     ModelID // every GPU in a node is of one model
	GPUs      int
	CPUMilli  int64
	MemoryMiB int64
	// MIG holds, per GPU, its initial MIG layout; a nil slice or a nil
	// entry means the GPU is not MIG-enabled. When not nil it has one entry
	// per GPU. NewCluster validates every layout against the node's model.
	// Node returns this initial description; Cluster.MIGLayoutOf gives a
	// GPU's current layout after Reconfigure.
	MIG []MIGLayout
}

// Request is what a job asks for. A whole-GPU job asks for GPUs >= 1 with
// GPUMilli == 1000; a GPU-sharing job asks for GPUs == 1 and 0 < GPUMilli <
// 1000; a CPU-only job asks for GPUs == 0. CPU and memory are totals for the
// job; a gang placement splits them across nodes in proportion to GPUs.
type Request struct {
	GPUs      int
	GPUMilli  int32
	CPUMilli  int64
	MemoryMiB int64
	Models    ModelSet
	// MIG, when not zero, asks for one MIG instance (then GPUs is 1 and
	// GPUMilli is 0: the share of the GPU depends on the instance).
	MIG MIGRequest
}

// TotalMilli is the GPU capacity the request occupies, in milli-GPUs. It
// is 0 for a MIG request, whose share depends on the instance it gets
// (MIGMilli).
func (r Request) TotalMilli() int64 { return int64(r.GPUs) * int64(r.GPUMilli) }

// Fractional reports whether the request shares one GPU with others
// through GPUMilli (a MIG request is not fractional: see WantsMIG).
func (r Request) Fractional() bool {
	return r.GPUs == 1 && r.GPUMilli < MilliPerGPU && r.MIG.IsZero()
}

// WantsMIG reports whether the request asks for a MIG instance.
func (r Request) WantsMIG() bool { return !r.MIG.IsZero() }

// Validate checks the request's own consistency.
func (r Request) Validate() error {
	if r.WantsMIG() {
		switch {
		case r.GPUs != 1 || r.GPUMilli != 0:
			return fmt.Errorf("a MIG request (%s) asks for gpus 1 and gpu_milli 0, got %d and %d", r.MIG, r.GPUs, r.GPUMilli)
		case r.CPUMilli < 0:
			return fmt.Errorf("cpu_milli must be >= 0, got %d", r.CPUMilli)
		case r.MemoryMiB < 0:
			return fmt.Errorf("memory_mib must be >= 0, got %d", r.MemoryMiB)
		}
		return r.MIG.Validate()
	}
	switch {
	case r.GPUs < 0:
		return fmt.Errorf("gpus must be >= 0, got %d", r.GPUs)
	case r.GPUs == 0 && r.GPUMilli != 0:
		return fmt.Errorf("gpu_milli must be 0 when gpus is 0, got %d", r.GPUMilli)
	case r.GPUs > 0 && (r.GPUMilli <= 0 || r.GPUMilli > MilliPerGPU):
		return fmt.Errorf("gpu_milli must be in 1..1000, got %d", r.GPUMilli)
	case r.GPUs > 1 && r.GPUMilli != MilliPerGPU:
		return fmt.Errorf("a job with %d GPUs must ask for whole GPUs (gpu_milli 1000), got %d", r.GPUs, r.GPUMilli)
	case r.CPUMilli < 0:
		return fmt.Errorf("cpu_milli must be >= 0, got %d", r.CPUMilli)
	case r.MemoryMiB < 0:
		return fmt.Errorf("memory_mib must be >= 0, got %d", r.MemoryMiB)
	}
	return nil
}

// Share is the part of a placement on one node: which of the node's GPUs
// (bit i = the node's GPU i), how much of each, and the CPU and memory taken.
type Share struct {
	Node      int
	GPUs      uint64
	Milli     int32 // per selected GPU
	CPUMilli  int64
	MemoryMiB int64
	// Instance, when > 0, places a MIG job on instance Instance−1 of the
	// one GPU the share selects; Milli is then that instance's share of the
	// GPU (MIGMilli of the instance's profile).
	Instance int
}

// GPUCount is the number of GPUs the share selects.
func (s Share) GPUCount() int { return bits.OnesCount64(s.GPUs) }

// Placement is where a job runs: one share per node, nodes distinct.
type Placement []Share

// GPUCount sums the GPUs over all shares.
func (p Placement) GPUCount() int {
	n := 0
	for _, s := range p {
		n += s.GPUCount()
	}
	return n
}

// Milli is the GPU milli the placement holds: GPUs × Milli per share (a
// MIG share's Milli is its instance's share), what a job's tenant is
// charged.
func (p Placement) Milli() int64 {
	var n int64
	for _, s := range p {
		n += int64(s.GPUCount()) * int64(s.Milli)
	}
	return n
}

// ErrCapacity is wrapped by every error that reports a placement that does
// not fit the cluster's free capacity.
var ErrCapacity = errors.New("over capacity")

// Cluster holds nodes and their free capacity. It is the single source of
// truth for capacity in a run: every allocation goes through Allocate, which
// refuses anything that would exceed a node's CPU, memory or any GPU's 1000
// milli, so the resource red line holds by construction.
type Cluster struct {
	nodes     []Node
	gpuBase   []int   // index of node i's first GPU in gpuFree
	gpuFree   []int32 // free milli per GPU, flat over all nodes
	wholeFree []int   // per node: GPUs with all 1000 milli free
	freeCPU   []int64
	freeMem   []int64

	totalGPUs      int
	allocatedMilli int64
	byModel        [64]int // GPU count per model
	wholeByModel   [64]int // idle GPU count per model
	// idleHistogram[m][k] counts nodes of model m with exactly k idle
	// GPUs, so "is there a node with k idle GPUs" needs no node scan.
	idleHistogram [][MaxGPUsPerNode + 1]int32
	maxNodeGPUs   [64]int // largest node's GPU count per model
	// present holds the model of every node: the per-model books of
	// every other model are zero, so the queries by ModelSet skip them.
	present ModelSet

	// Per node, for placements that score nodes (package policies): a
	// generation that every Allocate or Release touching the node bumps,
	// the free GPU milli summed over its GPUs, and how many shares of each
	// kind it holds (see SharesOfKind) in GPUs+1 slots from gpuBase[i]+i.
	gen       []uint64
	nodeFree  []int64
	kindCount []int32
	kinds     []int32 // per node: kinds with a nonzero count
	journal   journal // which nodes changed, in order (journal.go)

	// Racks: each node's rack index (-1 for none) and the racks' names in
	// order of first appearance.
	rackOf []int32
	racks  []string
	// data is the datasets, their replicas and the nodes' caches; nil
	// when the cluster declares none (data.go).
	data *dataBooks

	// MIG books, by flat GPU index; nil until some GPU is MIG-enabled. A
	// MIG-enabled GPU has gpuFree 0, so whole and shared placement never
	// sees it; its use is in busy bits instead.
	mig            []migGPU
	migGPUs        int // MIG-enabled GPUs
	migSlicesTotal int // compute slices of MIG-enabled GPUs
	migSlicesBusy  int // compute slices of busy instances
}

// migGPU is one GPU's MIG state: its layout (empty when not MIG-enabled),
// which instances are in use, and which are being created (blocked).
type migGPU struct {
	layout  MIGLayout
	busy    uint64
	blocked uint64
}

// NewCluster builds a cluster with all capacity free. Nodes must have
// distinct names and 0..64 GPUs.
func NewCluster(nodes []Node) (*Cluster, error) {
	c := &Cluster{nodes: append([]Node(nil), nodes...)}
	c.idleHistogram = make([][MaxGPUsPerNode + 1]int32, NumModels())
	c.rackOf = make([]int32, len(c.nodes))
	rackIndex := map[string]int32{}
	for i, n := range c.nodes {
		c.rackOf[i] = -1
		if n.Rack == "" {
			continue
		}
		r, ok := rackIndex[n.Rack]
		if !ok {
			r = int32(len(c.racks))
			rackIndex[n.Rack] = r
			c.racks = append(c.racks, n.Rack)
		}
		c.rackOf[i] = r
	}
	seen := make(map[string]int, len(nodes))
	for i, n := range c.nodes {
		if n.Name == "" {
			return nil, fmt.Errorf("node %d: name is empty", i)
		}
		if j, dup := seen[n.Name]; dup {
			return nil, fmt.Errorf("node %d: name %q repeats node %d", i, n.Name, j)
		}
		seen[n.Name] = i
		if n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
			return nil, fmt.Errorf("node %q: gpus must be in 0..%d, got %d", n.Name, MaxGPUsPerNode, n.GPUs)
		}
		if n.CPUMilli < 0 || n.MemoryMiB < 0 {
			return nil, fmt.Errorf("node %q: cpu_milli and memory_mib must be >= 0", n.Name)
		}
		if int(n.Model) >= NumModels() {
			return nil, fmt.Errorf("node %q: unknown GPU model id %d", n.Name, n.Model)
		}
		if n.MIG != nil && len(n.MIG) != n.GPUs {
			return nil, fmt.Errorf("node %q: mig lists %d layouts for %d GPUs", n.Name, len(n.MIG), n.GPUs)
		}
		for g, l := range n.MIG {
			if err := ValidateMIGLayout(n.Model, l); err != nil {
				return nil, fmt.Errorf("node %q GPU %d: MIG layout %q: %w", n.Name, g, l.String(n.Model), err)
			}
		}
		c.gpuBase = append(c.gpuBase, len(c.gpuFree))
		for g := 0; g < n.GPUs; g++ {
			c.gpuFree = append(c.gpuFree, MilliPerGPU)
		}
		c.wholeFree = append(c.wholeFree, n.GPUs)
		c.nodeFree = append(c.nodeFree, int64(n.GPUs)*MilliPerGPU)
		for k := 0; k <= n.GPUs; k++ {
			c.kindCount = append(c.kindCount, 0)
		}
		c.freeCPU = append(c.freeCPU, n.CPUMilli)
		c.freeMem = append(c.freeMem, n.MemoryMiB)
		c.totalGPUs += n.GPUs
		c.byModel[n.Model] += n.GPUs
		c.wholeByModel[n.Model] += n.GPUs
		c.maxNodeGPUs[n.Model] = max(c.maxNodeGPUs[n.Model], n.GPUs)
		c.present |= 1 << n.Model
		c.idleHistogram[n.Model][n.GPUs]++
	}
	c.gen = make([]uint64, len(c.nodes))
	c.kinds = make([]int32, len(c.nodes))
	// Copy the caller's layouts so that the caller's slices stay the
	// caller's: one copy for the node description that Node returns, one
	// for the books, which no caller can reach. Neither is written into
	// once made (Reconfigure installs a fresh copy), so GPUs given the
	// very same slice (a spec's group layout) share them.
	var src, copied, books MIGLayout
	for i := range c.nodes {
		n := &c.nodes[i]
		if n.MIG == nil {
			continue
		}
		layouts := make([]MIGLayout, len(n.MIG))
		for g, l := range n.MIG {
			if len(l) == 0 {
				continue
			}
			if len(src) != len(l) || &src[0] != &l[0] {
				src, copied, books = l, l.Clone(), l.Clone()
			}
			layouts[g] = copied
			c.enableMIG(i, g, books, 0)
		}
		n.MIG = layouts
	}
	c.gen = make([]uint64, len(c.nodes)) // a fresh cluster starts at generation 0
	c.journal = newJournal(len(c.nodes)) // and with nothing changed
	return c, nil
}

// NumNodes is the number of nodes.
func (c *Cluster) NumNodes() int { return len(c.nodes) }

// Node returns node i's static description, with its initial MIG layouts
// (see MIGLayoutOf for the current ones). Placement calls it in inner
// loops, so it does not copy: the MIG slice is the cluster's own and
// callers must not modify it.
func (c *Cluster) Node(i int) Node { return c.nodes[i] }

// TotalGPUs is the number of GPUs in the cluster.
func (c *Cluster) TotalGPUs() int { return c.totalGPUs }

// GPUsOfModel is the number of GPUs of one model.
func (c *Cluster) GPUsOfModel(id ModelID) int { return c.byModel[id] }

// NodeRack is node i's rack index, or -1 when it has none.
func (c *Cluster) NodeRack(i int) int { return int(c.rackOf[i]) }

// SpreadOf is how placement p is spread: on one node, over several nodes
// of one rack (nodes without a rack count as one rack's), or over nodes
// of several racks.
func (c *Cluster) SpreadOf(p Placement) Spread {
	if len(p) < 2 {
		return OneNode
	}
	rack := int32(-1)
	for _, s := range p {
		r := c.rackOf[s.Node]
		switch {
		case r < 0:
		case rack < 0:
			rack = r
		case r != rack:
			return AcrossRacks
		}
	}
	return AcrossNodes
}

// NumRacks is how many racks the cluster's nodes name.
func (c *Cluster) NumRacks() int { return len(c.racks) }

// RackName is rack r's name.
func (c *Cluster) RackName(r int) string { return c.racks[r] }

// ModelsPresent is the set of GPU models the cluster's nodes have.
func (c *Cluster) ModelsPresent() ModelSet {
	var s ModelSet
	for m, n := range c.byModel {
		if n > 0 {
			s |= 1 << m
		}
	}
	return s
}

// GPUsAccepted is the number of GPUs whose model the set accepts.
func (c *Cluster) GPUsAccepted(s ModelSet) int {
	if s == AnyModel {
		return c.totalGPUs
	}
	n := 0
	for m := c.models(s); m != 0; m &= m - 1 {
		n += c.byModel[bits.TrailingZeros64(m)]
	}
	return n
}

// models is the set of the cluster's models that s accepts, as bits.
func (c *Cluster) models(s ModelSet) uint64 {
	if s == AnyModel {
		return uint64(c.present)
	}
	return uint64(s & c.present)
}

// FreeWholeGPUsAccepted is the number of idle GPUs, cluster-wide, whose
// model the set accepts; placement uses it to give up early without a scan.
// MIG-enabled GPUs are never idle in this sense.
func (c *Cluster) FreeWholeGPUsAccepted(s ModelSet) int {
	n := 0
	for m := c.models(s); m != 0; m &= m - 1 {
		n += c.wholeByModel[bits.TrailingZeros64(m)]
	}
	return n
}

// HasNodeWithIdleGPUs reports whether some node whose model the set
// accepts has at least n idle GPUs, without scanning nodes: placement uses it
// to give up at once on a single-node request that cannot fit.
func (c *Cluster) HasNodeWithIdleGPUs(s ModelSet, n int) bool {
	n = max(n, 0)
	for ms := c.models(s); ms != 0; ms &= ms - 1 {
		m := bits.TrailingZeros64(ms)
		for k := n; k <= c.maxNodeGPUs[m]; k++ {
			if c.idleHistogram[m][k] > 0 {
				return true
			}
		}
	}
	return false
}

// MaxNodeGPUs is the GPU count of the largest node whose model the set
// accepts: a request for more GPUs than that must be placed as a gang.
func (c *Cluster) MaxNodeGPUs(s ModelSet) int {
	n := 0
	for m := c.models(s); m != 0; m &= m - 1 {
		n = max(n, c.maxNodeGPUs[bits.TrailingZeros64(m)])
	}
	return n
}

// Satisfiable reports why r could never be placed, even on an idle
// cluster; nil means it could. It follows the placement rules: a request
// for at most as many GPUs as the largest accepted node holds goes on one
// node; a larger one is a gang across nodes of a single GPU model. Drivers fail such jobs at submission rather
// than let them wait forever.
//
// A MIG request is satisfiable when some node of an accepted model, with
// enough CPU and memory, has a GPU whose model's profile table has a
// profile the request matches, whatever that GPU's layout is today:
// reconfiguration may create the instance (whether a run allows
// reconfiguration is the driver's business, not this check's).
func (c *Cluster) Satisfiable(r Request) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.WantsMIG() {
		for _, n := range c.nodes {
			if n.GPUs == 0 || !r.Models.Accepts(n.Model) || n.CPUMilli < r.CPUMilli || n.MemoryMiB < r.MemoryMiB {
				continue
			}
			for p := range migOf(n.Model).profilesOrNil() {
				if r.MIG.Matches(n.Model, p) {
					return nil
				}
			}
		}
		return fmt.Errorf("no node of model %s with %d milli-CPU and %d MiB has a MIG-capable GPU with a profile matching %s", r.Models, r.CPUMilli, r.MemoryMiB, r.MIG)
	}
	if r.GPUs > c.GPUsAccepted(r.Models) {
		return fmt.Errorf("asks for %s of model %s, the cluster has %d", Plural(r.GPUs, "GPU", "GPUs"), r.Models, c.GPUsAccepted(r.Models))
	}
	if r.GPUs > 0 && r.GPUs > c.MaxNodeGPUs(r.Models) {
		// A gang: it spans nodes of one GPU model (synchronous training on
		// mixed models is not modelled), so one accepted model must have
		// enough GPUs. CPU and memory are split across its nodes.
		most := 0
		for m := range NumModels() {
			if r.Models.Accepts(ModelID(m)) {
				most = max(most, c.byModel[m])
			}
		}
		if r.GPUs > most {
			return fmt.Errorf("asks for a gang of %s of model %s; a gang runs on one GPU model and the cluster has at most %s of any one of them", Plural(r.GPUs, "GPU", "GPUs"), r.Models, Plural(most, "GPU", "GPUs"))
		}
		return nil
	}
	for _, n := range c.nodes {
		if (r.GPUs == 0 || r.Models.Accepts(n.Model)) && n.GPUs >= r.GPUs && n.CPUMilli >= r.CPUMilli && n.MemoryMiB >= r.MemoryMiB {
			return nil
		}
	}
	return fmt.Errorf("no node has %s of model %s, %d milli-CPU and %d MiB", Plural(r.GPUs, "GPU", "GPUs"), r.Models, r.CPUMilli, r.MemoryMiB)
}

// AllocatedMilli is the GPU capacity in use, in milli-GPUs; a busy MIG
// instance counts its MIGMilli.
func (c *Cluster) AllocatedMilli() int64 { return c.allocatedMilli }

// FreeWholeGPUs is the number of completely idle GPUs on node i, not
// counting MIG-enabled GPUs (which are never handed out whole).
func (c *Cluster) FreeWholeGPUs(i int) int { return c.wholeFree[i] }

// FreeMilli is the free share of GPU g on node i; 0 for a MIG-enabled GPU,
// which is never handed out whole or shared.
func (c *Cluster) FreeMilli(i, g int) int32 { return c.gpuFree[c.gpuBase[i]+g] }

// FreeCPU is node i's free CPU in milli-cores.
func (c *Cluster) FreeCPU(i int) int64 { return c.freeCPU[i] }

// FreeMemory is node i's free memory in MiB.
func (c *Cluster) FreeMemory(i int) int64 { return c.freeMem[i] }

// Generation is node i's change counter: every Allocate or Release that
// touches node i, and every Reconfigure or UnblockMIG of one of its GPUs,
// increases it, and nothing else changes it. A node whose
// generation is unchanged has the same free capacity (and share kinds) as
// before, so placements may cache per-node results keyed by it. Each
// increase is also an entry of the change journal (Changes, ChangedNode),
// which says which nodes to look at again.
func (c *Cluster) Generation(i int) uint64 { return c.gen[i] }

// NodeFreeMilli is the free GPU milli of node i, summed over its GPUs
// (MIG-enabled GPUs add 0).
func (c *Cluster) NodeFreeMilli(i int) int64 { return c.nodeFree[i] }

// SharesOfKind counts the allocated shares on node i of kind k: k == 0
// counts GPU-sharing shares (less than 1000 milli per GPU), k >= 1 counts
// shares of exactly k whole GPUs. Shares without GPUs, and MIG shares
// (Instance > 0), are not counted. The
// FGD paper's GPU-clustering placement groups jobs by this kind.
func (c *Cluster) SharesOfKind(i, k int) int {
	if k < 0 || k > c.nodes[i].GPUs {
		return 0
	}
	return int(c.kindCount[c.gpuBase[i]+i+k])
}

// ShareKinds is the number of distinct kinds (see SharesOfKind) with at
// least one share on node i.
func (c *Cluster) ShareKinds(i int) int { return int(c.kinds[i]) }

// shareKind is the SharesOfKind slot of a share, or -1 for none.
func shareKind(s Share) int {
	switch {
	case s.GPUs == 0 || s.Instance > 0:
		return -1
	case s.Milli < MilliPerGPU:
		return 0
	}
	return s.GPUCount()
}

// Fits reports, as an error wrapping ErrCapacity, why p cannot be allocated
// now; nil means it can.
func (c *Cluster) Fits(p Placement) error {
	var seen uint64 // nodes < 64 checked cheaply; others by scan below
	for k, s := range p {
		if s.Node < 0 || s.Node >= len(c.nodes) {
			return fmt.Errorf("share %d: node %d does not exist: %w", k, s.Node, ErrCapacity)
		}
		if s.Node < 64 {
			if seen&(1<<s.Node) != 0 {
				return fmt.Errorf("share %d: node %q appears twice: %w", k, c.nodes[s.Node].Name, ErrCapacity)
			}
			seen |= 1 << s.Node
		} else {
			for _, o := range p[:k] {
				if o.Node == s.Node {
					return fmt.Errorf("share %d: node %q appears twice: %w", k, c.nodes[s.Node].Name, ErrCapacity)
				}
			}
		}
		n := c.nodes[s.Node]
		if n.GPUs < 64 && s.GPUs>>uint(n.GPUs) != 0 {
			return fmt.Errorf("node %q has %d GPUs, share selects GPU mask %#x: %w", n.Name, n.GPUs, s.GPUs, ErrCapacity)
		}
		if s.GPUs != 0 && (s.Milli <= 0 || s.Milli > MilliPerGPU) {
			return fmt.Errorf("node %q: share of %d milli per GPU is outside 1..1000: %w", n.Name, s.Milli, ErrCapacity)
		}
		if s.CPUMilli < 0 || s.MemoryMiB < 0 {
			return fmt.Errorf("node %q: negative CPU or memory: %w", n.Name, ErrCapacity)
		}
		if s.CPUMilli > c.freeCPU[s.Node] {
			return fmt.Errorf("node %q: needs %d milli-CPU, %d free: %w", n.Name, s.CPUMilli, c.freeCPU[s.Node], ErrCapacity)
		}
		if s.MemoryMiB > c.freeMem[s.Node] {
			return fmt.Errorf("node %q: needs %d MiB, %d free: %w", n.Name, s.MemoryMiB, c.freeMem[s.Node], ErrCapacity)
		}
		base := c.gpuBase[s.Node]
		if s.Instance != 0 {
			if err := c.fitsMIG(s); err != nil {
				return err
			}
			continue
		}
		for m := s.GPUs; m != 0; m &= m - 1 {
			g := bits.TrailingZeros64(m)
			if c.isMIG(base + g) {
				return fmt.Errorf("node %q GPU %d is MIG-enabled: a share on it must name an instance: %w", n.Name, g, ErrCapacity)
			}
			if c.gpuFree[base+g] < s.Milli {
				return fmt.Errorf("node %q GPU %d: needs %d milli, %d free: %w", n.Name, g, s.Milli, c.gpuFree[base+g], ErrCapacity)
			}
		}
	}
	return nil
}

// Allocate takes p's capacity, or changes nothing and returns why not.
func (c *Cluster) Allocate(p Placement) error {
	if err := c.Fits(p); err != nil {
		return err
	}
	for _, s := range p {
		c.apply(s, -1)
	}
	return nil
}

// Release returns p's capacity. p must have been allocated; releasing more
// than was taken is a programming error and panics, because it would mean
// the engine's books are wrong.
func (c *Cluster) Release(p Placement) {
	for _, s := range p {
		c.apply(s, +1)
	}
}

func (c *Cluster) apply(s Share, sign int) {
	i := s.Node
	c.freeCPU[i] += int64(sign) * s.CPUMilli
	c.freeMem[i] += int64(sign) * s.MemoryMiB
	base := c.gpuBase[i]
	model := c.nodes[i].Model
	c.bump(i)
	if s.Instance > 0 {
		c.applyMIG(s, sign)
		if c.freeCPU[i] > c.nodes[i].CPUMilli || c.freeMem[i] > c.nodes[i].MemoryMiB {
			panic(fmt.Sprintf("hwmodel: release of node %q returned more CPU or memory than it has", c.nodes[i].Name))
		}
		return
	}
	if k := shareKind(s); k >= 0 && k <= c.nodes[i].GPUs {
		slot := base + i + k
		before := c.kindCount[slot]
		c.kindCount[slot] -= int32(sign) // sign is -1 on Allocate
		switch {
		case before == 0 && c.kindCount[slot] > 0:
			c.kinds[i]++
		case before > 0 && c.kindCount[slot] == 0:
			c.kinds[i]--
		case c.kindCount[slot] < 0:
			panic(fmt.Sprintf("hwmodel: release of node %q returned a share of a kind it does not hold", c.nodes[i].Name))
		}
	}
	hist := &c.idleHistogram[model]
	hist[c.wholeFree[i]]--
	whole := c.wholeFree[i]
	delta := int32(sign) * s.Milli
	for m := s.GPUs; m != 0; m &= m - 1 {
		g := base + bits.TrailingZeros64(m)
		f := c.gpuFree[g]
		if f == MilliPerGPU {
			whole--
		}
		f += delta
		if f == MilliPerGPU {
			whole++
		}
		// Only the GPUs it touches can leave 0..1000.
		if f > MilliPerGPU || f < 0 {
			panic(fmt.Sprintf("hwmodel: node %q GPU %d free share %d outside 0..1000", c.nodes[i].Name, g-base, f))
		}
		c.gpuFree[g] = f
	}
	if n := int64(bits.OnesCount64(s.GPUs)) * int64(delta); n != 0 {
		c.allocatedMilli -= n
		c.nodeFree[i] += n
	}
	c.wholeByModel[model] += whole - c.wholeFree[i]
	c.wholeFree[i] = whole
	hist[whole]++
	if c.freeCPU[i] > c.nodes[i].CPUMilli || c.freeMem[i] > c.nodes[i].MemoryMiB {
		panic(fmt.Sprintf("hwmodel: release of node %q returned more CPU or memory than it has", c.nodes[i].Name))
	}
}

// CheckInvariants recomputes the derived counters from the per-GPU state and
// reports the first disagreement or out-of-range value. Tests call it after
// every event.
func (c *Cluster) CheckInvariants() error {
	var alloc int64
	var wholeByModel [64]int
	histogram := make([][MaxGPUsPerNode + 1]int32, NumModels())
	for i, n := range c.nodes {
		if c.freeCPU[i] < 0 || c.freeCPU[i] > n.CPUMilli {
			return fmt.Errorf("node %q: free CPU %d outside 0..%d", n.Name, c.freeCPU[i], n.CPUMilli)
		}
		if c.freeMem[i] < 0 || c.freeMem[i] > n.MemoryMiB {
			return fmt.Errorf("node %q: free memory %d outside 0..%d", n.Name, c.freeMem[i], n.MemoryMiB)
		}
		whole := 0
		for g := 0; g < n.GPUs; g++ {
			f := c.gpuFree[c.gpuBase[i]+g]
			if f < 0 || f > MilliPerGPU {
				return fmt.Errorf("node %q GPU %d: free share %d outside 0..1000", n.Name, g, f)
			}
			if c.isMIG(c.gpuBase[i] + g) {
				used, err := c.checkMIG(i, g)
				if err != nil {
					return err
				}
				alloc += used
				continue
			}
			if c.mig != nil {
				if mg := &c.mig[c.gpuBase[i]+g]; mg.busy != 0 || mg.blocked != 0 {
					return fmt.Errorf("node %q GPU %d: not MIG-enabled, yet busy %#x blocked %#x", n.Name, g, mg.busy, mg.blocked)
				}
			}
			if f == MilliPerGPU {
				whole++
			}
			alloc += int64(MilliPerGPU - f)
		}
		wholeByModel[n.Model] += whole
		histogram[n.Model][whole]++
		var free int64
		for g := 0; g < n.GPUs; g++ {
			free += int64(c.gpuFree[c.gpuBase[i]+g])
		}
		if free != c.nodeFree[i] {
			return fmt.Errorf("node %q: counted %d free GPU milli, books say %d", n.Name, free, c.nodeFree[i])
		}
		kinds := int32(0)
		for k := 0; k <= n.GPUs; k++ {
			switch cnt := c.kindCount[c.gpuBase[i]+i+k]; {
			case cnt < 0:
				return fmt.Errorf("node %q: %d shares of kind %d", n.Name, cnt, k)
			case cnt > 0:
				kinds++
			}
		}
		if kinds != c.kinds[i] {
			return fmt.Errorf("node %q: counted %d share kinds, books say %d", n.Name, kinds, c.kinds[i])
		}
		if whole != c.wholeFree[i] {
			return fmt.Errorf("node %q: counted %d idle GPUs, books say %d", n.Name, whole, c.wholeFree[i])
		}
	}
	for m := range histogram {
		if histogram[m] != c.idleHistogram[m] {
			return fmt.Errorf("nodes of %s by idle GPUs %v, books say %v", Model(ModelID(m)).Name, histogram[m][:c.maxNodeGPUs[m]+1], c.idleHistogram[m][:c.maxNodeGPUs[m]+1])
		}
	}
	if wholeByModel != c.wholeByModel {
		return fmt.Errorf("idle GPUs per model %v, books say %v", wholeByModel[:NumModels()], c.wholeByModel[:NumModels()])
	}
	if alloc != c.allocatedMilli {
		return fmt.Errorf("allocated %d milli-GPU by GPU, books say %d", alloc, c.allocatedMilli)
	}
	var changes uint64
	for _, g := range c.gen {
		changes += g
	}
	if int64(changes) != c.journal.count {
		return fmt.Errorf("generations sum to %d, the journal counts %d changes", changes, c.journal.count)
	}
	return c.checkMIGTotals()
}
