package scheduler

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pluginPodGroups is scheduler-plugins' PodGroup resource (a CRD).
var pluginPodGroups = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}

// podGroupSize is the size of the group a pod names when no
// brigade.sim/gang-size says it: scheduler-plugins' PodGroup minMember
// for the pod-group label, the Workload API PodGroup's (scheduling.k8s.io
// v1beta1) gang minCount for spec.schedulingGroup. 0 when the group is
// absent, its API is not served, or it says nothing, and then the gang is
// the members seen at first. Each group is read once, when its job is
// made: a size changed later applies to the next job of that name.
func (s *Scheduler) podGroupSize(ctx context.Context, p *corev1.Pod) int {
	if labelOrAnnotation(p, LabelGang) != "" {
		return 0
	}
	if name := p.Labels[LabelPodGroup]; name != "" {
		if s.dyn == nil {
			return 0
		}
		u, err := s.dyn.Resource(pluginPodGroups).Namespace(p.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "minMember")
		return int(max(n, 0))
	}
	if sg := p.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil {
		g, err := s.client.SchedulingV1beta1().PodGroups(p.Namespace).Get(ctx, *sg.PodGroupName, metav1.GetOptions{})
		if err != nil || g.Spec.SchedulingPolicy.Gang == nil {
			return 0
		}
		return int(max(g.Spec.SchedulingPolicy.Gang.MinCount, 0))
	}
	return 0
}
