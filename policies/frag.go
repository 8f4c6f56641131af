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

// NodeFragmentation is the expected fragmented GPU capacity of node i, in
// milli-GPU, for the target workload t.
func NodeFragmentation(c *hwmodel.Cluster, node int, t TargetWorkload) float64 {
	n := c.Node(node)
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
	var frag float64
	for _, k := range t.Classes {
		frag += k.Popularity * float64(classFragment(free, total, cpu, n.Model, k.Req))
	}
	return frag
}

// ClusterFragmentation is the sum of NodeFragmentation over all nodes, in
// milli-GPU. Divided by the cluster's idle GPU milli it is the paper's
// fragmentation ratio. It costs a pass over every node and every class.
func ClusterFragmentation(c *hwmodel.Cluster, t TargetWorkload) float64 {
	var sum float64
	for i := 0; i < c.NumNodes(); i++ {
		sum += NodeFragmentation(c, i, t)
	}
	return sum
}

// classFragment is the free milli that class r cannot use on a node whose
// GPUs have free milli free (summing to total), cpu milli-CPU free and
// GPU model m.
func classFragment(free []int32, total, cpu int64, m hwmodel.ModelID, r hwmodel.Request) int64 {
	if r.GPUs == 0 || !r.Models.Accepts(m) || cpu < r.CPUMilli {
		return total
	}
	fit, small := 0, int64(0)
	for _, f := range free {
		if f >= r.GPUMilli {
			fit++
		} else {
			small += int64(f)
		}
	}
	if fit < r.GPUs {
		return total
	}
	return small
}
