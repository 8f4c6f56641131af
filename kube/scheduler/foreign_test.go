package scheduler

import (
	"testing"

	"github.com/brigadesim/brigade/hwmodel"

	corev1 "k8s.io/api/core/v1"
)

// GPUs that another scheduler's bound pod holds are not given away: the
// 4-GPU pod goes to the node with room, not to the one whose 8 GPUs
// bestfit would otherwise see as the tightest fit; once the foreign pod
// finishes, its node is the policy's again.
func TestForeignPodsHoldTheirGPUs(t *testing.T) {
	foreign := func(name, node string, gpus int) *corev1.Pod {
		return gpuPod(name, gpus, 0, func(p *corev1.Pod) {
			p.Spec.SchedulerName, p.Spec.NodeName, p.Status.Phase = "default-scheduler", node, corev1.PodRunning
		})
	}
	const h100 = "NVIDIA-H100-80GB-HBM3"
	c := newCluster(gpuNode("a-shared", h100, 8), gpuNode("b-free", h100, 16),
		foreign("other", "a-shared", 6), foreign("done", "b-free", 16),
		gpuPod("p", 4, 0))
	// The pod that finished holds nothing.
	c.finish(t, "team-a", "done")
	s := newSched(t, c, "fcfs/bestfit")
	round(t, s)
	if got := c.pod(t, "team-a", "p").Spec.NodeName; got != "b-free" {
		t.Fatalf("p on %q, want b-free: a-shared has 2 GPUs left by the other scheduler's pod", got)
	}
	c.finish(t, "team-a", "other")
	c.add(t, gpuPod("q", 8, 1e9))
	round(t, s)
	if got := c.pod(t, "team-a", "q").Spec.NodeName; got != "a-shared" {
		t.Errorf("q on %q, want a-shared (free again, the tightest fit)", got)
	}
}

// withoutForeign takes whole GPUs off the front of a MIG node's list, and
// never more than it has.
func TestWithoutForeign(t *testing.T) {
	for _, tc := range []struct {
		name             string
		gpus, migGPUs    int
		take             int
		wantGPUs, wantMI int
	}{
		{"plain", 8, 0, 3, 5, 0},
		{"more than it has", 4, 0, 9, 0, 0},
		{"MIG node keeps its MIG GPUs", 2, 2, 1, 3, 3},
		{"MIG node, all whole GPUs taken", 2, 2, 5, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := nodeInfo{name: "n"}
			info.hw.GPUs = tc.gpus + tc.migGPUs
			info.hw.CPUMilli, info.hw.MemoryMiB = 1000, 1000
			if tc.migGPUs > 0 {
				info.hw.MIG = make([]hwmodel.MIGLayout, tc.gpus, tc.gpus+tc.migGPUs)
				for range tc.migGPUs {
					info.hw.MIG = append(info.hw.MIG, hwmodel.MIGLayout{{}})
				}
			}
			withoutForeign(&info, podReq{gpus: tc.take, cpu: 400, mem: 2000})
			if info.hw.GPUs != tc.wantGPUs || len(info.hw.MIG) != tc.wantMI {
				t.Errorf("GPUs %d, MIG list %d; want %d, %d", info.hw.GPUs, len(info.hw.MIG), tc.wantGPUs, tc.wantMI)
			}
			for i := range len(info.hw.MIG) - tc.migGPUs {
				if len(info.hw.MIG[i]) != 0 {
					t.Errorf("entry %d is a MIG GPU; the whole GPUs come first", i)
				}
			}
			if info.hw.CPUMilli != 600 || info.hw.MemoryMiB != 0 {
				t.Errorf("CPU %d, memory %d; want 600, 0", info.hw.CPUMilli, info.hw.MemoryMiB)
			}
		})
	}
}
