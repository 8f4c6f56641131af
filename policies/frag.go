package policies

import (
	"github.com/brigadesim/brigade/hwmodel"
)

// Fragmentation, as the FGD paper (Weng et al., ATC'23) measures it.
//
// A node's idle GPU capacity is fragmented for one request class when the
// class cannot use it. For a class that asks for GPUs:
//
//   - the node's GPU model is not one the class accepts, or the node lacks
//     the CPU for it, or it has fewer than GPUs GPUs with at least GPUMilli
//     free each: all of the node's free GPU milli is fragmented;
//   - otherwise the class fits, and only the free milli on GPUs with less
//     than GPUMilli free is fragmented (a whole-GPU class: every partly
//     used GPU's remainder).
//
// For a CPU-only class all of the node's free GPU milli counts as
// fragmented: such a request never uses a GPU, fit or not. (The reference
// simulator counts it so, and its published fragmentation ratios, about
// 14% of idle GPUs on an empty cluster for the default Alibaba trace, are
// exactly the CPU-only classes' share.)
//
// The node's fragmentation for a target workload is the expectation over
// its classes: Σ popularity × fragmented milli. Memory plays no part, as in
// the paper. The cluster's is the sum over nodes.
//
// The sum is taken exactly as the reference does in floating point: each
// class adds popularity × milli to one of six tallies by why it is
// fragmented (lacks both CPU and GPU room, lacks GPU room or fits, lacks
// CPU only, CPU-only class with or without CPU, wrong model), in the
// target's class order, and the tallies are added in that order. FGD
// truncates scores to integers, so a last-bit difference can change a
// decision; summed this way, placements follow the reference's.

// fragTally is the six tallies of a node's fragmentation.
type fragTally struct{ lackBoth, lackGPU, lackCPU, cpuFits, cpuLacks, noAccess float64 }

func (t *fragTally) sum() float64 {
	return t.lackBoth + t.lackGPU + t.lackCPU + t.cpuFits + t.cpuLacks + t.noAccess
}

// add tallies class r (popularity p) on a node whose GPUs have free milli
// free (summing to total), with cpu milli-CPU free and GPU model m.
// fits reports whether the node has r.GPUs GPUs with r.GPUMilli free, and
// small is the free milli on the other GPUs.
func (t *fragTally) add(p float64, r *hwmodel.Request, total, cpu int64, m hwmodel.ModelID, fits bool, small int64) {
	all := p * float64(total)
	switch {
	case r.GPUMilli == 0:
		if cpu >= r.CPUMilli {
			t.cpuFits += all
		} else {
			t.cpuLacks += all
		}
	case !r.Models.Accepts(m):
		t.noAccess += all
	case fits && cpu >= r.CPUMilli:
		t.lackGPU += p * float64(small) // fits: only the too-small GPUs' free milli
	case fits:
		t.lackCPU += all
	case cpu >= r.CPUMilli:
		t.lackGPU += all
	default:
		t.lackBoth += all
	}
}

// NodeFragmentation is the expected fragmented GPU capacity of node i, in
// milli-GPU, for the target workload t.
func NodeFragmentation(c hwmodel.ClusterView, node int, t TargetWorkload) float64 {
	n := struct {
		GPUs  int
		Model hwmodel.ModelID
	}{c.NodeGPUs(node), c.NodeModel(node)} // not c.Node: that copies a MIG node's layouts
	var buf [hwmodel.MaxGPUsPerNode]int32
	free := buf[:n.GPUs]
	var total int64
	for g := range free {
		free[g] = c.FreeMilli(node, g)
		total += int64(free[g])
	}
	if total == 0 {
		return 0
	}
	cpu := c.FreeCPU(node)
	var tally fragTally
	for k := range t.Classes {
		r := &t.Classes[k].Req
		fit, small := 0, int64(0)
		for _, f := range free {
			if f >= r.GPUMilli {
				fit++
			} else {
				small += int64(f)
			}
		}
		tally.add(t.Classes[k].Popularity, r, total, cpu, n.Model, fit >= r.GPUs, small)
	}
	return tally.sum()
}

// ClusterFragmentation is the sum of NodeFragmentation over all nodes, in
// milli-GPU. Divided by the cluster's idle GPU milli it is the paper's
// fragmentation ratio. It costs a pass over every node and every class.
func ClusterFragmentation(c hwmodel.ClusterView, t TargetWorkload) float64 {
	var sum float64
	for i := 0; i < c.NumNodes(); i++ {
		sum += NodeFragmentation(c, i, t)
	}
	return sum
}
