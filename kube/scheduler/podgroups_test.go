package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func inGroup(name string) podOpt {
	return func(p *corev1.Pod) { p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name} }
}

func workloadGroup(name string, minCount int32) *schedv1beta1.PodGroup {
	return &schedv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
}

// The Workload API's PodGroup (spec.schedulingGroup) makes a gang whose
// size is the group's minCount: no member is bound until that many
// exist, then all are, on nodes that hold each whole. Without a PodGroup
// object the gang is the members seen at first, and a member that comes
// later is not placed with them.
func TestWorkloadPodGroupGang(t *testing.T) {
	for _, tc := range []struct {
		name       string
		group      *schedv1beta1.PodGroup
		firstBinds int // after the first round, with two members
		finalBinds int // after the third member arrives
	}{
		{"minCount 3", workloadGroup("train", 3), 0, 3},
		{"no PodGroup object", nil, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 4),
				gpuPod("w-0", 2, 0, inGroup("train")), gpuPod("w-1", 2, 0, inGroup("train")))
			if tc.group != nil {
				c.add(t, tc.group)
			}
			s := newSched(t, c, "fcfs/bestfit")
			round(t, s)
			if len(c.binds) != tc.firstBinds {
				t.Fatalf("binds %v with two members, want %d", c.binds, tc.firstBinds)
			}
			c.add(t, gpuPod("w-2", 2, 0, inGroup("train")))
			round(t, s)
			bound := 0
			for _, n := range []string{"w-0", "w-1", "w-2"} {
				if c.pod(t, "team-a", n).Spec.NodeName != "" {
					bound++
				}
			}
			// Without a size, the gang was the first two: the late member
			// is not part of it and stays pending (docs/kubernetes.md).
			want := tc.finalBinds
			if bound != want {
				t.Fatalf("%d of 3 members bound (binds %v), want %d", bound, c.binds, want)
			}
			if tc.group != nil {
				val := c.pod(t, "team-a", "w-0").Annotations[AnnoPlacement]
				if val == "" || c.pod(t, "team-a", "w-2").Annotations[AnnoPlacement] != val {
					t.Errorf("placement annotations differ or are missing: %q", val)
				}
			}
		})
	}
}

// A gang may be named by annotations as well as labels: the two pods
// are bound together, and not before both exist.
func TestGangByAnnotation(t *testing.T) {
	byAnnotation := func(p *corev1.Pod) {
		p.Annotations[LabelGang], p.Annotations[LabelGangSize] = "g", "2"
	}
	c := newCluster(gpuNode("n0", "NVIDIA-H100-80GB-HBM3", 4), gpuNode("n1", "NVIDIA-H100-80GB-HBM3", 4),
		gpuPod("a-0", 4, 0, byAnnotation))
	s := newSched(t, c, "fcfs/bestfit")
	round(t, s)
	if len(c.binds) != 0 {
		t.Fatalf("bound %v with one of two members", c.binds)
	}
	c.add(t, gpuPod("a-1", 4, 0, byAnnotation))
	round(t, s)
	if len(c.binds) != 2 || c.pod(t, "team-a", "a-0").Annotations[AnnoPlacement] == "" {
		t.Errorf("binds %v, placement %q: want both members bound under one committed placement", c.binds, c.pod(t, "team-a", "a-0").Annotations[AnnoPlacement])
	}
}
