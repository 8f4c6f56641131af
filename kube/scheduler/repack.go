package scheduler

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// repack turns a whole-GPU placement that the job's pods cannot take as
// it is into one they can, with the same GPU model and GPU count: each
// pod's GPUs whole on one node whose taints the pods tolerate. Pods go,
// largest first, to the placement's own nodes first (in its order), then
// to the tightest other node of the model with room (lowest index on a
// tie), room being whole idle GPUs, CPU and memory. ok is false when a
// pod has nowhere to go, or the job is a MIG job, its pods tolerate
// different taints, or the placement spans GPU models.
//
// The policies place GPUs, not pods, and see one cluster for every job:
// a placer may split a gang's 8-GPU pod across two nodes, or choose a
// node whose taints the pods do not tolerate, and would choose the same
// again at every round if the start were only refused. Repacking keeps
// what the policy decided (how many GPUs of which model, on its nodes
// where they can hold the pods) and changes only which equal nodes hold
// the rest.
func (s *Scheduler) repack(j *job, p hwmodel.Placement) (hwmodel.Placement, bool) {
	var first *member
	var pods []*member
	for _, m := range j.members {
		if m.ended {
			continue
		}
		if m.req.mig != "" || first != nil && !slices.Equal(first.tols, m.tols) {
			return nil, false
		}
		if first == nil {
			first = m
		}
		pods = append(pods, m)
	}
	if first == nil || len(p) == 0 {
		return nil, false
	}
	model := s.cluster.NodeModel(p[0].Node)
	var order []int
	inPlacement := map[int]bool{}
	for _, sh := range p {
		if sh.Instance != 0 || sh.Milli != hwmodel.MilliPerGPU || s.cluster.NodeModel(sh.Node) != model {
			return nil, false
		}
		if !inPlacement[sh.Node] {
			inPlacement[sh.Node] = true
			order = append(order, sh.Node)
		}
	}
	var others []int
	for n := range s.nodes {
		if !inPlacement[n] && s.cluster.NodeModel(n) == model && s.cluster.FreeWholeGPUs(n) > 0 {
			others = append(others, n)
		}
	}
	slices.SortStableFunc(others, func(a, b int) int {
		return cmp.Compare(s.cluster.FreeWholeGPUs(a), s.cluster.FreeWholeGPUs(b))
	})
	order = append(order, others...)

	type room struct {
		gpus     int
		cpu, mem int64
	}
	left := map[int]*room{}
	for _, n := range order {
		left[n] = &room{s.cluster.FreeWholeGPUs(n), s.cluster.FreeCPU(n), s.cluster.FreeMemory(n)}
	}
	slices.SortStableFunc(pods, func(a, b *member) int { return b.req.gpus - a.req.gpus })
	shares := map[int]*hwmodel.Share{}
	var used []int
	for _, m := range pods {
		placed := false
		for _, n := range order {
			r := left[n]
			if r.gpus < m.req.gpus || r.cpu < m.req.cpu || r.mem < m.req.mem || !tolerates(first.tols, s.nodes[n].taints) {
				continue
			}
			r.gpus, r.cpu, r.mem = r.gpus-m.req.gpus, r.cpu-m.req.cpu, r.mem-m.req.mem
			sh := shares[n]
			if sh == nil {
				sh = &hwmodel.Share{Node: n, Milli: hwmodel.MilliPerGPU}
				shares[n] = sh
				used = append(used, n)
			}
			sh.CPUMilli += m.req.cpu
			sh.MemoryMiB += m.req.mem
			sh.GPUs = s.takeIdle(n, sh.GPUs, m.req.gpus)
			placed = true
			break
		}
		if !placed {
			return nil, false
		}
	}
	out := make(hwmodel.Placement, 0, len(used))
	for _, n := range used {
		out = append(out, *shares[n])
	}
	return out, true
}

// takeIdle adds k whole idle GPUs of node n, not in have, to have.
func (s *Scheduler) takeIdle(n int, have uint64, k int) uint64 {
	for g := 0; g < s.cluster.NodeGPUs(n) && k > 0; g++ {
		if have&(1<<g) == 0 && s.cluster.FreeMilli(n, g) == hwmodel.MilliPerGPU && !s.cluster.IsMIG(n, g) {
			have |= 1 << g
			k--
		}
	}
	return have
}
