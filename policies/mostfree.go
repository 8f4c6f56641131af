package policies

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// MostFree is the placement of the Pollux artifact's Tiresias: a
// whole-GPU request repeatedly takes min(idle, still needed) GPUs from
// the node with the most idle GPUs, ties going to the lowest node index
// (Python's Counter.most_common), until it has them all. So a request
// lands on one node when some node has room for it, and is otherwise
// spread over the emptiest nodes, however many: unlike the other
// placements it never waits for room on fewer nodes (the artifact counts
// GPUs only). Its shares are in the order taken, which an application
// model reads (hwmodel.PlacementID). The nodes are of one GPU model: the
// first the request accepts (by ID) whose idle GPUs suffice. CPU and
// memory are split as for a gang (placement.go), and a node without the
// CPU or memory its share needs is passed over. Fractional, MIG and
// CPU-only requests are placed as FirstFit places them.
//
// A placement costs O(nodes × shares): it scans the nodes once per share.
type MostFree struct {
	ff FirstFit
}

var _ Placer = (*MostFree)(nil)

// Place implements Placer.
func (m *MostFree) Place(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if !validRequest(r) {
		return dst, false
	}
	if r.WantsMIG() || r.GPUs == 0 || r.Fractional() {
		return m.ff.Place(dst, c, r)
	}
	for id := range numModels() {
		model := hwmodel.ModelID(id)
		if !r.Models.Accepts(model) || c.GPUsOfModel(model) == 0 || c.FreeWholeGPUsAccepted(hwmodel.Of(model)) < r.GPUs {
			continue
		}
		if out, ok := m.placeOn(dst, c, r, model); ok {
			return out, true
		}
	}
	return dst, false
}

// placeOn places r on nodes of model, or reports false, appending nothing.
func (m *MostFree) placeOn(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request, model hwmodel.ModelID) (hwmodel.Placement, bool) {
	start := len(dst)
	left := r.GPUs
	for left > 0 {
		best, bestIdle := -1, 0
		for i := range c.NumNodes() {
			if c.NodeModel(i) != model {
				continue
			}
			idle := c.FreeWholeGPUs(i)
			if idle <= bestIdle || m.taken(dst[start:], i) {
				continue
			}
			take := min(idle, left)
			cpu, mem := r.CPUMilli*int64(take)/int64(r.GPUs), r.MemoryMiB*int64(take)/int64(r.GPUs)
			if c.FreeCPU(i) < cpu || c.FreeMemory(i) < mem {
				continue
			}
			best, bestIdle = i, idle
		}
		if best < 0 {
			return dst[:start], false
		}
		take := min(bestIdle, left)
		dst = append(dst, hwmodel.Share{
			Node: best, GPUs: idleMask(c, best, take), Milli: hwmodel.MilliPerGPU,
			CPUMilli: r.CPUMilli * int64(take) / int64(r.GPUs), MemoryMiB: r.MemoryMiB * int64(take) / int64(r.GPUs),
		})
		left -= take
	}
	// The rounding remainder of CPU and memory goes to the first share.
	var cpu, mem int64
	for _, s := range dst[start:] {
		cpu, mem = cpu+s.CPUMilli, mem+s.MemoryMiB
	}
	dst[start].CPUMilli += r.CPUMilli - cpu
	dst[start].MemoryMiB += r.MemoryMiB - mem
	if c.FreeCPU(dst[start].Node) < dst[start].CPUMilli || c.FreeMemory(dst[start].Node) < dst[start].MemoryMiB {
		return dst[:start], false
	}
	return dst, true
}

// taken reports whether node i already has a share in shares: a node
// taken from is left with no idle GPU or the request is complete, but
// the view does not change while a placement is built.
func (m *MostFree) taken(shares hwmodel.Placement, i int) bool {
	for _, s := range shares {
		if s.Node == i {
			return true
		}
	}
	return false
}
