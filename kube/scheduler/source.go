package scheduler

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// APISource lists straight from the API server: for export, and for
// tests that need no informers.
type APISource struct {
	Client kubernetes.Interface
	Ctx    context.Context
}

// Nodes implements Source.
func (a APISource) Nodes() ([]*corev1.Node, error) {
	l, err := a.Client.CoreV1().Nodes().List(a.Ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// Pods implements Source.
func (a APISource) Pods() ([]*corev1.Pod, error) {
	l, err := a.Client.CoreV1().Pods("").List(a.Ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// informerSource lists from shared informers' caches: the scheduler's
// own pods, and the bound, unfinished pods of other schedulers, whose
// resources it must not give away again.
type informerSource struct {
	nodes   listersv1.NodeLister
	pods    listersv1.PodLister
	foreign listersv1.PodLister
	name    string // the scheduler's
}

func (s informerSource) Nodes() ([]*corev1.Node, error) { return s.nodes.List(labels.Everything()) }

func (s informerSource) Pods() ([]*corev1.Pod, error) {
	own, err := s.pods.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	other, err := s.foreign.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	// The field selector keeps the scheduler's own pods out of this cache
	// on an API server; a fake one ignores it, and a pod listed twice
	// would be two jobs.
	for _, p := range other {
		if p.Spec.SchedulerName != s.name {
			own = append(own, p)
		}
	}
	return own, nil
}

// newInformerSource watches the Nodes that nodeSelector selects (a label
// selector, so other partitions' nodes never reach the cache) and the
// Pods whose schedulerName is name and the bound, unfinished Pods of
// other schedulers (field selectors, likewise); onChange is called after each informer event but a node's heartbeat.
// It returns the factories to start.
func newInformerSource(client kubernetes.Interface, name string, nodeSelector map[string]string, onChange func()) ([]informers.SharedInformerFactory, informerSource) {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.SelectorFromSet(nodeSelector).String()
	}))
	pf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.schedulerName=" + name
	}))
	ff := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.schedulerName!=" + name + ",spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
	}))
	ni := f.Core().V1().Nodes()
	pi := pf.Core().V1().Pods()
	fi := ff.Core().V1().Pods()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { onChange() },
		UpdateFunc: func(any, any) { onChange() },
		DeleteFunc: func(any) { onChange() },
	}
	nh := h
	nh.UpdateFunc = func(old, cur any) {
		if nodeChanged(old, cur) {
			onChange()
		}
	}
	_, _ = ni.Informer().AddEventHandler(nh)
	_, _ = pi.Informer().AddEventHandler(h)
	_, _ = fi.Informer().AddEventHandler(h)
	return []informers.SharedInformerFactory{f, pf, ff}, informerSource{nodes: ni.Lister(), pods: pi.Lister(), foreign: fi.Lister(), name: name}
}

// nodeChanged reports whether a node update can change the books: its
// labels, spec (taints, cordon) or allocatable. A heartbeat (conditions'
// times), which the node's kubelet sends every few seconds on every node,
// cannot, and a round for each would keep the scheduler busy for nothing.
func nodeChanged(old, cur any) bool {
	a, ok1 := old.(*corev1.Node)
	b, ok2 := cur.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(a.Labels, b.Labels) || !equality.Semantic.DeepEqual(a.Spec, b.Spec) ||
		!equality.Semantic.DeepEqual(a.Status.Allocatable, b.Status.Allocatable)
}
