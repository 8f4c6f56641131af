package scheduler

import (
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// retarget moves the shares of a whole-GPU placement that sit on nodes
// whose taints the job's pods do not tolerate to nodes they do tolerate:
// of the same GPU model, not in the placement already, with the share's
// GPUs whole and its CPU and memory free; the tightest such node, the
// lowest index on a tie. ok is false when some share has nowhere to go,
// or the job is a MIG job, or its pods tolerate different taints.
//
// The policies see one cluster for every job, so a placer that prefers a
// tainted node (bestfit's exact fit) would choose it at every round, and
// a refusal alone would keep the pod waiting while an equal node it may
// use stands idle. Moving a share to a node of the same model keeps what
// the policy decided (how many GPUs of which model, split how) and
// changes only which of the equal nodes holds it.
func (s *Scheduler) retarget(j *job, p hwmodel.Placement) (hwmodel.Placement, bool) {
	var tols *member
	for _, m := range j.members {
		if m.ended {
			continue
		}
		if m.req.mig != "" {
			return nil, false
		}
		if tols == nil {
			tols = m
		} else if !slices.Equal(tols.tols, m.tols) {
			return nil, false
		}
	}
	if tols == nil {
		return nil, false
	}
	used := map[int]bool{}
	for _, sh := range p {
		used[sh.Node] = true
	}
	out := slices.Clone(p)
	moved := false
	for i, sh := range p {
		if sh.Instance != 0 || sh.Milli != hwmodel.MilliPerGPU {
			return nil, false
		}
		if tolerates(tols.tols, s.nodes[sh.Node].taints) {
			continue
		}
		need := sh.GPUCount()
		model := s.cluster.NodeModel(sh.Node)
		best, bestFree := -1, 0
		for n := range s.nodes {
			free := s.cluster.FreeWholeGPUs(n)
			if used[n] || free < need || s.cluster.NodeModel(n) != model ||
				s.cluster.FreeCPU(n) < sh.CPUMilli || s.cluster.FreeMemory(n) < sh.MemoryMiB ||
				!tolerates(tols.tols, s.nodes[n].taints) {
				continue
			}
			if best < 0 || free < bestFree {
				best, bestFree = n, free
			}
		}
		if best < 0 {
			return nil, false
		}
		var gpus uint64
		for g, k := 0, 0; g < s.cluster.NodeGPUs(best) && k < need; g++ {
			if s.cluster.FreeMilli(best, g) == hwmodel.MilliPerGPU && !s.cluster.IsMIG(best, g) {
				gpus |= 1 << g
				k++
			}
		}
		used[best] = true
		out[i].Node, out[i].GPUs = best, gpus
		moved = true
	}
	return out, moved
}
