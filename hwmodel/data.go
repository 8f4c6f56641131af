package hwmodel

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/brigadesim/brigade/config"
)

// StorageSpec is the cluster's storage tier: where every dataset lives
// whatever its replicas, read by a node at ReadGBPerS.
type StorageSpec struct {
	// ReadGBPerS is how fast one node reads from the storage tier, in GB
	// (10^9 bytes) per second.
	ReadGBPerS float64 `json:"read_gb_per_s" config:"required"`
}

// DatasetSpec is one dataset: its size, and the nodes that hold a replica
// of it (beside the storage tier, which holds every dataset).
type DatasetSpec struct {
	Name     string   `json:"name" config:"required"`
	SizeGB   float64  `json:"size_gb" config:"required"`
	Replicas []string `json:"replicas,omitempty"` // node names
}

// Check reports what is wrong with the storage tier.
func (s *StorageSpec) Check(e *config.Errors) {
	if !(s.ReadGBPerS > 0) || math.IsInf(s.ReadGBPerS, 0) {
		e.Add("read_gb_per_s", "want a finite bandwidth > 0 in GB per second, got %v", s.ReadGBPerS)
	}
}

// Check reports what is wrong with one dataset, short of its replicas'
// nodes (ClusterSpec.Check looks those up).
func (d *DatasetSpec) Check(e *config.Errors) {
	if msg := checkName(d.Name, 64); msg != "" {
		e.Add("name", "%s", msg)
	}
	if !(d.SizeGB > 0) || d.SizeGB > maxDataGB {
		e.Add("size_gb", "want a size in GB > 0 and at most %g, got %v", float64(maxDataGB), d.SizeGB)
	}
}

// maxDataGB bounds a dataset's and a cache's size (an exabyte), so that
// sizes in MB stay exact integers.
const maxDataGB = 1e9

// checkCache checks a node group's or node's cache_gb.
func checkCache(v float64, e *config.Errors) {
	if v < 0 || v > maxDataGB || math.IsNaN(v) {
		e.Add("cache_gb", "want a size in GB in 0..%g, got %v", float64(maxDataGB), v)
	}
}

// checkData checks the datasets against the node names and returns them
// in the cluster's form; nil when the spec declares none.
func (s *ClusterSpec) checkData(nodeIndex map[string]int, p *config.Errors) *dataLayout {
	if s.Storage != nil {
		s.Storage.Check(p.In("storage"))
	}
	if len(s.Datasets) == 0 {
		return nil
	}
	if s.Storage == nil {
		p.Add("storage", "datasets need a storage tier to read them from: storage: {read_gb_per_s: ...}")
	}
	d := &dataLayout{index: map[string]int{}}
	if s.Storage != nil {
		d.readMBPerS = s.Storage.ReadGBPerS * 1000
	}
	for i := range s.Datasets {
		ds := &s.Datasets[i]
		e := p.Index("datasets", i)
		ds.Check(e)
		if k, dup := d.index[ds.Name]; dup {
			e.Add("name", "dataset %q is named twice (first at datasets[%d])", ds.Name, k)
		}
		d.index[ds.Name] = i
		d.names = append(d.names, ds.Name)
		d.sizeMB = append(d.sizeMB, int64(math.Round(ds.SizeGB*1000)))
		var nodes []int32
		for k, name := range ds.Replicas {
			n, ok := nodeIndex[name]
			switch {
			case !ok:
				e.Add(fmt.Sprintf("replicas[%d]", k), "node %q does not exist in this cluster", name)
			case slices.Contains(nodes, int32(n)):
				e.Add(fmt.Sprintf("replicas[%d]", k), "node %q is given twice", name)
			default:
				nodes = append(nodes, int32(n))
			}
		}
		d.replicas = append(d.replicas, nodes)
	}
	return d
}

// dataLayout is the cluster's datasets as its spec declares them.
type dataLayout struct {
	names      []string
	index      map[string]int
	sizeMB     []int64
	replicas   [][]int32 // per dataset, its replica nodes
	readMBPerS float64
}

// dataBooks is a cluster's data: the layout, each node's replicas, and
// each node's cache (least recently used first).
type dataBooks struct {
	dataLayout
	replicaOn [][]int32 // per node: datasets it holds a replica of
	cacheMB   []int64   // per node: cache capacity
	cached    [][]cacheEntry
	usedMB    []int64
}

// cacheEntry is one dataset in a node's cache, usable from ready on (the
// read that brings it may still be under way).
type cacheEntry struct {
	dataset int32
	ready   Time
}

// setData installs the layout and the nodes' cache sizes.
func (c *Cluster) setData(d *dataLayout) {
	b := &dataBooks{dataLayout: *d}
	n := len(c.nodes)
	b.replicaOn = make([][]int32, n)
	b.cacheMB = make([]int64, n)
	b.cached = make([][]cacheEntry, n)
	b.usedMB = make([]int64, n)
	for ds, nodes := range d.replicas {
		for _, i := range nodes {
			b.replicaOn[i] = append(b.replicaOn[i], int32(ds))
		}
	}
	for i := range c.nodes {
		b.cacheMB[i] = c.nodes[i].CacheMB
	}
	c.data = b
}

// NumDatasets is how many datasets the cluster declares.
func (c *Cluster) NumDatasets() int {
	if c.data == nil {
		return 0
	}
	return len(c.data.names)
}

// DatasetIndex is the index of the dataset called name.
func (c *Cluster) DatasetIndex(name string) (int, bool) {
	if c.data == nil {
		return 0, false
	}
	k, ok := c.data.index[name]
	return k, ok
}

// DatasetName is dataset d's name.
func (c *Cluster) DatasetName(d int) string { return c.data.names[d] }

// DatasetMB is dataset d's size in MB (10^6 bytes).
func (c *Cluster) DatasetMB(d int) int64 { return c.data.sizeMB[d] }

// ReadMBPerS is how fast a node reads from the storage tier, in MB per
// second; 0 without one.
func (c *Cluster) ReadMBPerS() float64 {
	if c.data == nil {
		return 0
	}
	return c.data.readMBPerS
}

// DataLocal reports whether node i holds dataset d at time now: a replica,
// or a cached copy whose read has finished.
func (c *Cluster) DataLocal(i, d int, now Time) bool {
	b := c.data
	if b == nil || d < 0 || d >= len(b.names) {
		return false
	}
	if slices.Contains(b.replicaOn[i], int32(d)) {
		return true
	}
	for _, e := range b.cached[i] {
		if int(e.dataset) == d {
			return e.ready <= now
		}
	}
	return false
}

// CacheData puts dataset d in node i's cache, usable from ready on (the
// end of the read that brings it): it becomes the most recently used, and
// the least recently used datasets leave until it fits. A dataset the node
// holds a replica of, or one larger than the cache, is not cached. Only
// the driver calls it (it is not on ClusterView).
func (c *Cluster) CacheData(i, d int, ready Time) {
	b := c.data
	if b == nil || slices.Contains(b.replicaOn[i], int32(d)) {
		return
	}
	size := b.sizeMB[d]
	list := b.cached[i]
	for k, e := range list {
		if int(e.dataset) == d {
			e.ready = min(e.ready, ready)
			list = append(append(list[:k:k], list[k+1:]...), e)
			b.cached[i] = list
			return
		}
	}
	if size > b.cacheMB[i] {
		return
	}
	for b.usedMB[i]+size > b.cacheMB[i] {
		b.usedMB[i] -= b.sizeMB[list[0].dataset]
		list = list[1:]
	}
	b.cached[i] = append(list, cacheEntry{dataset: int32(d), ready: ready})
	b.usedMB[i] += size
}

// CachedMB is what node i's cache holds, in MB.
func (c *Cluster) CachedMB(i int) int64 {
	if c.data == nil {
		return 0
	}
	return c.data.usedMB[i]
}

// datasetsYAML writes the storage and datasets fields.
func datasetsYAML(b *bytes.Buffer, s *ClusterSpec) {
	if s.Storage != nil {
		fmt.Fprintf(b, "storage:\n  read_gb_per_s: %s\n", strconv.FormatFloat(s.Storage.ReadGBPerS, 'g', -1, 64))
	}
	if len(s.Datasets) == 0 {
		return
	}
	b.WriteString("datasets:\n")
	for _, d := range s.Datasets {
		fmt.Fprintf(b, "  - name: %s\n    size_gb: %s\n", yamlString(d.Name), strconv.FormatFloat(d.SizeGB, 'g', -1, 64))
		if len(d.Replicas) > 0 {
			b.WriteString("    replicas:\n")
			for _, r := range d.Replicas {
				fmt.Fprintf(b, "      - %s\n", yamlString(r))
			}
		}
	}
}
