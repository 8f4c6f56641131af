package policies

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// Placer chooses where a request runs on a cluster's free capacity, or
// reports that it cannot run now. It sees the cluster through a
// hwmodel.ClusterView, so it cannot change it; a caller that owns the
// *hwmodel.Cluster passes c.View() and allocates the placement itself.
//
// Place appends the placement's shares to dst and returns the extended
// slice (the strconv.Append style), so the caller decides where the result
// lives: the live driver passes nil and gets a fresh slice; the schedulers
// here pass room in a slab that they never reuse, so a placement handed to a
// driver stays valid for as long as the driver keeps it. On failure Place
// returns dst unchanged (it may have scribbled in dst's spare capacity).
//
// A Placer must find a placement whenever its rules allow one: it may
// prefer some nodes over others, but never refuse a request that fits. The
// schedulers rely on this to skip, within one call, a request that needs at
// least as much as one that already failed.
//
// A Placer keeps scratch space between calls and is therefore not safe for
// concurrent use; give each goroutine (or each Policy) its own.
type Placer interface {
	Place(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool)
}

// Placement rules shared by every placer:
//
//   - A request for GPUs <= the GPU count of the largest node whose model it
//     accepts goes on ONE node; it waits rather than being split.
//   - A request for more GPUs than that is a gang: whole GPUs on several
//     nodes, all of ONE GPU model, all or nothing, on as few nodes as
//     possible (nodes with the most idle GPUs first). CPU and memory are
//     split across the gang's shares in proportion to their GPUs, rounded
//     down, and the rounding remainder goes to the first share (the one with
//     the most GPUs).
//   - A CPU-only request (GPUs == 0) ignores the accepted models, as
//     hwmodel.Cluster.Satisfiable does.
//
// FirstFit takes the lowest-numbered feasible node and, within it, the
// lowest-numbered suitable GPUs (fractional requests: the lowest-numbered
// GPU with enough free share). For a gang, nodes with equal idle counts are
// taken in index order, and when several GPU models could host the gang,
// the one needing the fewest nodes wins, then the one whose chosen nodes
// include the lowest node index.
//
// The FGD paper's placements (bestfit, dotprod, packing, clustering,
// random, fgd; see scored.go and fgd.go) score single-node requests and
// place gangs by the "best" gang rule: the last node is the smallest one
// (fewest idle GPUs) that completes it; between GPU models, the fewest
// nodes win, then the fewest idle GPUs left on the chosen nodes, then the
// lowest node index.
//
// Cheap early exits: a whole-GPU request gives up at once when no node of
// an accepted model has enough idle GPUs (Cluster.HasNodeWithIdleGPUs), a
// fractional one when the cluster's total free GPU share is too small, a
// gang per model when the model's idle GPUs are too few. Otherwise a
// single-node request is placed through the placer's node index (see the
// package documentation, "Speed"), and a gang by one pass over the nodes.

// FirstFit places on the lowest-numbered node that fits. The zero value is
// ready to use; use it through a pointer.
//
// It finds that node through per-model trees of free capacity in node
// order (nodetree.go): O(log n) per single-node request.
type FirstFit struct {
	s   placeScratch
	idx modelTrees
}

// Place implements Placer.
func (f *FirstFit) Place(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if !validRequest(r) {
		return dst, false
	}
	switch {
	case r.WantsMIG():
		return placeMIG(dst, c, r)
	case r.GPUs == 0:
		f.refresh(c)
		q := plainNeed(0, 0, r.CPUMilli, r.MemoryMiB)
		if i, _ := f.idx.first(&q, r.Models, true); i >= 0 {
			return append(dst, hwmodel.Share{Node: i, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}), true
		}
		return dst, false
	case r.Fractional():
		need := r.GPUMilli
		if int64(c.TotalGPUs())*hwmodel.MilliPerGPU-c.AllocatedMilli() < int64(need) {
			return dst, false
		}
		f.refresh(c)
		q := plainNeed(0, int(need), r.CPUMilli, r.MemoryMiB)
		i, _ := f.idx.first(&q, r.Models, r.Models == hwmodel.AnyModel)
		if i < 0 {
			return dst, false
		}
		g := 0
		for c.FreeMilli(i, g) < need {
			g++
		}
		return append(dst, hwmodel.Share{
			Node: i, GPUs: 1 << uint(g), Milli: need,
			CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB,
		}), true
	}
	maxNode := c.MaxNodeGPUs(r.Models)
	if maxNode == 0 {
		return dst, false
	}
	if r.GPUs > maxNode {
		return f.s.placeGang(dst, c, r, false)
	}
	if !c.HasNodeWithIdleGPUs(r.Models, r.GPUs) {
		return dst, false
	}
	f.refresh(c)
	q := plainNeed(r.GPUs, 0, r.CPUMilli, r.MemoryMiB)
	i, _ := f.idx.first(&q, r.Models, r.Models == hwmodel.AnyModel)
	if i < 0 {
		return dst, false
	}
	return append(dst, hwmodel.Share{
		Node: i, GPUs: idleMask(c, i, r.GPUs), Milli: hwmodel.MilliPerGPU,
		CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB,
	}), true
}

// refresh brings the index up to date with c.
func (f *FirstFit) refresh(c hwmodel.ClusterView) {
	f.idx.refresh(c, func() []int32 {
		order := make([]int32, c.NumNodes())
		for i := range order {
			order[i] = int32(i)
		}
		return order
	})
}

// placerEntry is one named placement in the registry.
type placerEntry struct {
	name string
	desc string
	make func(cfg PlacerConfig) (Placer, error)
}

// placers lists the placements by name; the first is the default.
var placers = []placerEntry{
	{"firstfit", "lowest-numbered node that fits", func(PlacerConfig) (Placer, error) { return new(FirstFit), nil }},
	{"bestfit", "node left with the least free CPU and GPU, equally weighted (FGD paper's BestFit)",
		func(c PlacerConfig) (Placer, error) { return &BestFit{p: *newScored(kindBestFit, c)}, nil }},
	{"dotprod", "node whose free CPU and GPU align least with the request (FGD paper's DotProd)",
		func(c PlacerConfig) (Placer, error) { return newScored(kindDotProd, c), nil }},
	{"packing", "shared GPUs first, then idle GPUs of used nodes, then the smallest idle node (FGD paper's GpuPacking)",
		func(c PlacerConfig) (Placer, error) { return newScored(kindPacking, c), nil }},
	{"clustering", "nodes already running jobs of the same GPU kind (FGD paper's GpuClustering)",
		func(c PlacerConfig) (Placer, error) { return newScored(kindClustering, c), nil }},
	{"random", "a feasible node and GPU drawn uniformly from the run seed's placement stream (FGD paper's Random)",
		func(c PlacerConfig) (Placer, error) { return newScored(kindRandom, c), nil }},
	{"fgd", "least growth of the target workload's expected GPU fragmentation (FGD paper); the target is the trace's requests",
		newFGD},
	{"mostfree", "whole GPUs from the node with the most idle ones, then the next, until the request is met (the Pollux artifact's Tiresias); never waits for room on fewer nodes",
		func(PlacerConfig) (Placer, error) { return new(MostFree), nil }},
	{"consolidate", "best fit, and a gang on the fewest nodes, then the fewest racks (a gang spread wider runs slower with a speed table's spread factors)",
		func(c PlacerConfig) (Placer, error) {
			b := &BestFit{p: *newScored(kindBestFit, c)}
			b.p.s.racks = true
			return b, nil
		}},
}

// DescribePlacement returns a one-line description of a placement name,
// or "" for an unknown name.
func DescribePlacement(name string) string {
	for _, p := range placers {
		if p.name == name {
			return p.desc
		}
	}
	return ""
}

// DefaultPlacement is the placement used when Options.Placement is empty.
const DefaultPlacement = "firstfit"

// PlacementNames lists the known placement names, sorted.
func PlacementNames() []string {
	out := make([]string, len(placers))
	for i, p := range placers {
		out[i] = p.name
	}
	slices.Sort(out)
	return out
}

// NewPlacer returns a fresh Placer by name ("" means DefaultPlacement),
// with a zero PlacerConfig; a placement that needs a target workload
// ("fgd") must be built with NewPlacerWith. The live driver uses it to
// place exactly as the simulated policy does.
func NewPlacer(name string) (Placer, error) {
	return NewPlacerWith(name, PlacerConfig{})
}

// NewPlacerWith returns a fresh Placer by name ("" means
// DefaultPlacement), configured by cfg.
func NewPlacerWith(name string, cfg PlacerConfig) (Placer, error) {
	if name == "" {
		name = DefaultPlacement
	}
	for _, p := range placers {
		if p.name == name {
			return p.make(cfg)
		}
	}
	return nil, fmt.Errorf("unknown placement %q (known: %s)", name, strings.Join(PlacementNames(), ", "))
}

// numModels is the size of the GPU catalogue now: it grows when a cluster
// spec declares a custom model, so it is read where it is used, never kept;
// tables indexed by model are sized hwmodel.MaxModels.
func numModels() int { return hwmodel.NumModels() }

// gangNode is one candidate node of a gang and the GPUs taken from it.
type gangNode struct {
	node int32
	idle int32
	take int32
}

// placeScratch is the reusable working memory of gang placement.
type placeScratch struct {
	cand  []gangNode // nodes of one model with idle GPUs, in index order
	order []gangNode // cand by idle count, most first, then index
	cur   []gangNode // the selection being built
	best  []gangNode // the best selection so far
	// racks makes a gang prefer fewer racks among selections of the
	// fewest nodes (the consolidate placement); byRack and alt are its
	// working memory.
	racks  bool
	byRack [][]gangNode
	alt    []gangNode
	whole  []gangNode
}

// validRequest is Request.Validate without building errors, so a bad job
// at the head of a queue costs nothing per call; such a job never places.
func validRequest(r hwmodel.Request) bool {
	if r.WantsMIG() {
		return validMIGRequest(&r)
	}
	switch {
	case r.GPUs < 0 || r.CPUMilli < 0 || r.MemoryMiB < 0:
		return false
	case r.GPUs == 0:
		return r.GPUMilli == 0
	case r.GPUMilli <= 0 || r.GPUMilli > hwmodel.MilliPerGPU:
		return false
	case r.GPUs > 1 && r.GPUMilli != hwmodel.MilliPerGPU:
		return false
	}
	return true
}

// nodeFits reports whether node i has the CPU and memory for r.
func nodeFits(c hwmodel.ClusterView, i int, cpu, mem int64) bool {
	return c.FreeCPU(i) >= cpu && c.FreeMemory(i) >= mem
}

// idleMask selects the k lowest-numbered idle GPUs of node i; the caller
// has checked that the node has k idle GPUs.
func idleMask(c hwmodel.ClusterView, i, k int) uint64 {
	var m uint64
	n := c.NodeGPUs(i)
	for g := 0; g < n && k > 0; g++ {
		if c.FreeMilli(i, g) == hwmodel.MilliPerGPU {
			m |= 1 << uint(g)
			k--
		}
	}
	return m
}

// placeGang places a whole-GPU request too big for any accepted node.
func (s *placeScratch) placeGang(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request, best bool) (hwmodel.Placement, bool) {
	g := r.GPUs
	found := false
	var bCount, bWaste, bFirst, bRacks int
	for m := 0; m < numModels(); m++ {
		id := hwmodel.ModelID(m)
		if !r.Models.Accepts(id) || c.GPUsOfModel(id) < g || c.FreeWholeGPUsAccepted(hwmodel.Of(id)) < g {
			continue
		}
		s.collect(c, id)
		waste, first, ok := s.selectGang(c, r, best)
		if !ok {
			continue
		}
		count, racks := len(s.cur), 0
		if s.racks {
			racks = rackCount(c, s.cur)
			if racks > 1 {
				if w, f, ok := s.oneRack(c, r, best, count); ok {
					waste, first, racks = w, f, 1
				}
			}
		}
		better := !found || count < bCount
		if found && count == bCount {
			switch {
			case racks != bRacks:
				better = racks < bRacks
			case best && waste != bWaste:
				better = waste < bWaste
			default:
				better = first < bFirst
			}
		}
		if better {
			found, bCount, bWaste, bFirst, bRacks = true, count, waste, first, racks
			s.cur, s.best = s.best, s.cur
		}
	}
	if !found {
		return dst, false
	}
	var cpu, mem int64
	base := len(dst)
	for _, n := range s.best {
		sh := hwmodel.Share{
			Node: int(n.node), GPUs: idleMask(c, int(n.node), int(n.take)), Milli: hwmodel.MilliPerGPU,
			CPUMilli: r.CPUMilli * int64(n.take) / int64(g), MemoryMiB: r.MemoryMiB * int64(n.take) / int64(g),
		}
		cpu += sh.CPUMilli
		mem += sh.MemoryMiB
		dst = append(dst, sh)
	}
	dst[base].CPUMilli += r.CPUMilli - cpu
	dst[base].MemoryMiB += r.MemoryMiB - mem
	return dst, true
}

// rackCount is how many racks a selection spans; nodes without a rack
// add none.
func rackCount(c hwmodel.ClusterView, sel []gangNode) int {
	n := 0
	for i, x := range sel {
		r := c.NodeRack(int(x.node))
		if r < 0 {
			continue
		}
		seen := false
		for _, y := range sel[:i] {
			if c.NodeRack(int(y.node)) == r {
				seen = true
				break
			}
		}
		if !seen {
			n++
		}
	}
	return n
}

// oneRack looks for a selection of count nodes (the fewest, found over
// all of s.order) within one rack: s.order's nodes bucketed by rack in
// one pass, then each rack's tried in rack order. On success s.cur holds
// the selection with the least waste (the lowest rack on a tie);
// otherwise it holds again the selection it held on entry.
func (s *placeScratch) oneRack(c hwmodel.ClusterView, r hwmodel.Request, best bool, count int) (waste, first int, ok bool) {
	nr := c.NumRacks()
	for len(s.byRack) < nr {
		s.byRack = append(s.byRack, nil)
	}
	for k := range nr {
		s.byRack[k] = s.byRack[k][:0]
	}
	for _, n := range s.order {
		if k := c.NodeRack(int(n.node)); k >= 0 {
			s.byRack[k] = append(s.byRack[k], n) // keeps the order
		}
	}
	all := s.order
	s.whole = append(s.whole[:0], s.cur...) // the selection over every rack
	defer func() { s.order = all }()
	for k := range nr {
		if len(s.byRack[k]) == 0 {
			continue
		}
		s.order = s.byRack[k]
		w, f, good := s.selectGang(c, r, best)
		if !good || len(s.cur) != count || (ok && (!best || w >= waste)) {
			continue
		}
		waste, first, ok = w, f, true
		s.alt = append(s.alt[:0], s.cur...)
	}
	if ok {
		s.cur = append(s.cur[:0], s.alt...)
	} else {
		s.cur = append(s.cur[:0], s.whole...)
	}
	return waste, first, ok
}

// collect fills s.order with the nodes of model id that have idle GPUs,
// most idle first, ties by node index (a stable counting sort: idle counts
// are at most MaxGPUsPerNode).
func (s *placeScratch) collect(c hwmodel.ClusterView, id hwmodel.ModelID) {
	s.cand = s.cand[:0]
	var cnt [hwmodel.MaxGPUsPerNode + 2]int
	for i := 0; i < c.NumNodes(); i++ {
		if f := c.FreeWholeGPUs(i); f > 0 && c.NodeModel(i) == id {
			s.cand = append(s.cand, gangNode{node: int32(i), idle: int32(f)})
			cnt[f]++
		}
	}
	pos := 0
	for k := hwmodel.MaxGPUsPerNode; k >= 1; k-- {
		n := cnt[k]
		cnt[k] = pos
		pos += n
	}
	s.order = slices.Grow(s.order[:0], len(s.cand))[:len(s.cand)]
	for _, n := range s.cand {
		s.order[cnt[n.idle]] = n
		cnt[n.idle]++
	}
}

// selectGang chooses nodes from s.order into s.cur. It reports the idle
// GPUs the gang leaves on its nodes, the lowest node index it uses, and
// whether it succeeded.
func (s *placeScratch) selectGang(c hwmodel.ClusterView, r hwmodel.Request, best bool) (waste, first int, ok bool) {
	g := int64(r.GPUs)
	fits := func(n gangNode, t int32) bool {
		return nodeFits(c, int(n.node), r.CPUMilli*int64(t)/g, r.MemoryMiB*int64(t)/g)
	}
	s.cur = s.cur[:0]
	rem := int32(r.GPUs)
	for k := 0; k < len(s.order) && rem > 0; k++ {
		n := s.order[k]
		if best && n.idle >= rem {
			// The order is by idle count, descending: nodes that can
			// complete the gang are a prefix from k; the last group of
			// that prefix holds the smallest ones.
			pick, q := -1, k
			for ; q < len(s.order) && s.order[q].idle >= rem; q++ {
				if (pick < 0 || s.order[q].idle < s.order[pick].idle) && fits(s.order[q], rem) {
					pick = q
				}
			}
			if pick >= 0 {
				p := s.order[pick]
				p.take = rem
				s.cur = append(s.cur, p)
				rem = 0
				break
			}
			k = q - 1 // none of them fits rem GPUs' share; go on with smaller nodes
			continue
		}
		t := min(n.idle, rem)
		if !fits(n, t) {
			continue
		}
		n.take = t
		s.cur = append(s.cur, n)
		rem -= t
	}
	if rem > 0 || len(s.cur) == 0 {
		return 0, 0, false
	}
	// The first share also takes the rounding remainders; check it has room.
	var cpu, mem int64
	first = math.MaxInt
	for _, n := range s.cur {
		cpu += r.CPUMilli * int64(n.take) / g
		mem += r.MemoryMiB * int64(n.take) / g
		waste += int(n.idle - n.take)
		first = min(first, int(n.node))
	}
	h := s.cur[0]
	if !nodeFits(c, int(h.node), r.CPUMilli*int64(h.take)/g+r.CPUMilli-cpu, r.MemoryMiB*int64(h.take)/g+r.MemoryMiB-mem) {
		return 0, 0, false
	}
	return waste, first, true
}
