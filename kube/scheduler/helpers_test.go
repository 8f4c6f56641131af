package scheduler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var t0 = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)

// cluster is a fake API server whose Bindings set spec.nodeName (the
// fake clientset accepts a Binding and changes nothing) and whose
// Evictions delete the pod, recording both in order.
type cluster struct {
	cs       *fake.Clientset
	mu       sync.Mutex
	binds    []string // "pod->node"
	evicts   []string // "pod grace=N"
	bindFail func(pod string) error
	// evictFail, when set, refuses a pod's Eviction with its error.
	evictFail func(pod string) error
	// graceful: an Eviction marks the pod terminating (deletionTimestamp)
	// instead of deleting it, as a node does until the pod has stopped;
	// the test deletes it.
	graceful bool
	// bindingAnnotations: a Binding's annotations are copied onto its
	// pod, as the API server does (off: the export reads the fake's
	// PodScheduled times instead of the scheduler's clock).
	bindingAnnotations bool
}

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func newCluster(objs ...runtime.Object) *cluster {
	c := &cluster{cs: fake.NewClientset(objs...)}
	c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateAction)
		switch a.GetSubresource() {
		case "binding":
			b := ca.GetObject().(*corev1.Binding)
			if c.bindFail != nil {
				if err := c.bindFail(b.Name); err != nil {
					return true, nil, err
				}
			}
			o, err := c.cs.Tracker().Get(podsGVR, a.GetNamespace(), b.Name)
			if err != nil {
				return true, nil, err
			}
			p := o.(*corev1.Pod).DeepCopy()
			if p.Spec.NodeName != "" {
				return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), b.Name, fmt.Errorf("pod %s is already assigned to node %q", b.Name, p.Spec.NodeName))
			}
			p.Spec.NodeName = b.Target.Name
			p.Status.Phase = corev1.PodRunning
			if c.bindingAnnotations {
				for k, v := range b.Annotations {
					p.Annotations[k] = v
				}
			}
			// Bound one second apart, in order, as the export reads it.
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
				Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Duration(10+len(c.binds)) * time.Second))})
			if err := c.cs.Tracker().Update(podsGVR, p, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			c.mu.Lock()
			c.binds = append(c.binds, b.Name+"->"+b.Target.Name)
			c.mu.Unlock()
			return true, b, nil
		case "eviction":
			ev := ca.GetObject().(*policyv1.Eviction)
			if c.evictFail != nil {
				if err := c.evictFail(ev.Name); err != nil {
					return true, nil, err
				}
			}
			g := "nil"
			if ev.DeleteOptions != nil && ev.DeleteOptions.GracePeriodSeconds != nil {
				g = fmt.Sprint(*ev.DeleteOptions.GracePeriodSeconds)
			}
			c.mu.Lock()
			c.evicts = append(c.evicts, ev.Name+" grace="+g)
			graceful := c.graceful
			c.mu.Unlock()
			if graceful {
				o, err := c.cs.Tracker().Get(podsGVR, a.GetNamespace(), ev.Name)
				if err != nil {
					return true, nil, err
				}
				p := o.(*corev1.Pod).DeepCopy()
				now := metav1.NewTime(t0)
				p.DeletionTimestamp = &now
				return true, ev, c.cs.Tracker().Update(podsGVR, p, a.GetNamespace())
			}
			return true, ev, c.cs.Tracker().Delete(podsGVR, a.GetNamespace(), ev.Name)
		}
		return false, nil, nil
	})
	return c
}

func (c *cluster) pod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p, err := c.cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (c *cluster) add(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.cs.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
}

// finish marks a pod Succeeded.
func (c *cluster) finish(t *testing.T, ns, name string) {
	t.Helper()
	p := c.pod(t, ns, name)
	p.Status.Phase = corev1.PodSucceeded
	if err := c.cs.Tracker().Update(podsGVR, p, ns); err != nil {
		t.Fatal(err)
	}
}

type nodeOpt func(*corev1.Node)

func gpuNode(name, product string, gpus int, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("512Gi"),
		}}}
	if product != "" {
		n.Labels[LabelGPUProduct] = product
	}
	if gpus > 0 {
		n.Status.Allocatable[ResourceGPU] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func taint(key, value string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func alloc(name string, q string) nodeOpt {
	return func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourceName(name)] = resource.MustParse(q) }
}

type podOpt func(*corev1.Pod)

func gpuPod(name string, gpus int, created time.Duration, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(t0.Add(created)), Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: DefaultName, Containers: []corev1.Container{{Name: "main",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits: corev1.ResourceList{}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if gpus > 0 {
		p.Spec.Containers[0].Resources.Limits[ResourceGPU] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func estimate(s string) podOpt { return func(p *corev1.Pod) { p.Annotations[AnnoEstimate] = s } }

func gang(name string, size int) podOpt {
	return func(p *corev1.Pod) {
		p.Labels[LabelGang] = name
		p.Labels[LabelGangSize] = fmt.Sprint(size)
	}
}

func tolerate(key string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	}
}

func newSched(t testing.TB, c *cluster, policy string) *Scheduler {
	t.Helper()
	s, err := New(Config{Policy: policy, Now: func() time.Time { return t0.Add(time.Minute) }}, c.cs, nil,
		APISource{Client: c.cs, Ctx: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func round(t testing.TB, s *Scheduler) {
	t.Helper()
	if err := s.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var errTimeout = apierrors.NewTimeoutError("the answer was lost", 1)
