package scheduler

import (
	corev1 "k8s.io/api/core/v1"
)

// foreignUse sums, per node, what bound, unfinished pods of other
// schedulers (the default scheduler's, DaemonSets') hold there: whole
// GPUs, CPU and memory. Their MIG instances are not counted.
func foreignUse(name string, pods []*corev1.Pod) map[string]podReq {
	use := map[string]podReq{}
	for _, p := range pods {
		if p.Spec.SchedulerName == name || p.Spec.NodeName == "" || finished(p) {
			continue
		}
		r, err := podRequest(p)
		if err != nil {
			continue
		}
		u := use[p.Spec.NodeName]
		u.gpus, u.cpu, u.mem = u.gpus+r.gpus, u.cpu+r.cpu, u.mem+r.mem
		use[p.Spec.NodeName] = u
	}
	return use
}

// withoutForeign takes what other schedulers' pods hold out of a node's
// capacity: the policy books only what is left, so it never places a pod
// on GPUs another scheduler gave away. The node's whole GPUs come first
// in its MIG list (nil layouts), so the ones taken go from its front.
func withoutForeign(info *nodeInfo, u podReq) {
	whole := info.hw.GPUs
	if len(info.hw.MIG) > 0 {
		whole = 0
		for _, l := range info.hw.MIG {
			if len(l) == 0 {
				whole++
			}
		}
	}
	take := min(u.gpus, whole)
	info.hw.GPUs -= take
	if len(info.hw.MIG) > 0 {
		info.hw.MIG = info.hw.MIG[take:]
	}
	info.hw.CPUMilli = max(0, info.hw.CPUMilli-u.cpu)
	info.hw.MemoryMiB = max(0, info.hw.MemoryMiB-u.mem)
}
