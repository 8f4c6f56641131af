package controlplane

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Labels and resource names the GPU nodes carry.
const (
	// KWOKLabel marks a Node as KWOK's to run (Ready, heartbeats, pods).
	KWOKLabel = "type"
	// GPUProductLabel is what NVIDIA's GPU feature discovery sets.
	GPUProductLabel = "nvidia.com/gpu.product"
	// GPUResource is the NVIDIA device plugin's extended resource.
	GPUResource corev1.ResourceName = "nvidia.com/gpu"
	// DurationAnnotation makes KWOK finish a Running pod after this Go
	// duration (stage pod-complete-after-duration).
	DurationAnnotation = "brigade.sim/duration"
)

// NodeSpec describes the GPU nodes AddGPUNodes creates. Zero fields take
// the defaults named on each.
type NodeSpec struct {
	// NamePrefix: nodes are PREFIX000, PREFIX001, ...; default "gpu-node-".
	NamePrefix string
	// GPUs per node (nvidia.com/gpu); default 8. Negative means none.
	GPUs int
	// Product is the nvidia.com/gpu.product label; default NVIDIA-H100-80GB-HBM3.
	Product string
	// CPU, Memory and Pods are capacity quantities; defaults 128, 1Ti, 110.
	CPU, Memory, Pods string
	// MIG adds extended resources such as {"nvidia.com/mig-1g.10gb": 7}.
	MIG map[corev1.ResourceName]int64
	// Labels are added to every node (type=kwok and the product label are
	// always set).
	Labels map[string]string
	// Taints are set on every node.
	Taints []corev1.Taint
}

// nodeConcurrency is how many creates AddGPUNodes keeps in flight.
const nodeConcurrency = 32

// AddGPUNodes creates n Nodes labelled type=kwok, with capacity and
// allocatable as spec says, and returns their names in order (a second
// call needs another NamePrefix: names that exist are errors). Capacity is
// set in the create itself: with no kubelet, nothing overwrites it, and
// KWOK keeps it when it marks the node Ready.
func AddGPUNodes(ctx context.Context, cs kubernetes.Interface, n int, spec NodeSpec) ([]string, error) {
	if n < 0 {
		return nil, fmt.Errorf("controlplane: AddGPUNodes: n = %d, want >= 0", n)
	}
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&spec.NamePrefix, "gpu-node-")
	def(&spec.Product, "NVIDIA-H100-80GB-HBM3")
	def(&spec.CPU, "128")
	def(&spec.Memory, "1Ti")
	def(&spec.Pods, "110")
	if spec.GPUs == 0 {
		spec.GPUs = 8
	}
	res := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: spec.CPU, corev1.ResourceMemory: spec.Memory, corev1.ResourcePods: spec.Pods} {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return nil, fmt.Errorf("controlplane: AddGPUNodes: %s %q: %w", name, q, err)
		}
		res[name] = v
	}
	if spec.GPUs > 0 {
		res[GPUResource] = *resource.NewQuantity(int64(spec.GPUs), resource.DecimalSI)
	}
	for name, v := range spec.MIG {
		res[name] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	labels := map[string]string{}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	labels[KWOKLabel] = "kwok"
	labels[GPUProductLabel] = spec.Product

	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%03d", spec.NamePrefix, i)
	}
	work := make(chan string)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < min(nodeConcurrency, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				l := map[string]string{corev1.LabelHostname: name}
				for k, v := range labels {
					l[k] = v
				}
				node := &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
					Spec:       corev1.NodeSpec{Taints: spec.Taints},
					Status: corev1.NodeStatus{
						Capacity:    res.DeepCopy(),
						Allocatable: res.DeepCopy(),
					},
				}
				if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("node %s: %w", name, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, name := range names {
		select {
		case work <- name:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("controlplane: AddGPUNodes: %d of %d creates failed: %w", len(errs), n, errors.Join(errs[:min(3, len(errs))]...))
	}
	return names, nil
}

// WaitNodesReady waits until every named node reports Ready=True (KWOK's
// node-initialize stage), polling every 100 ms.
func WaitNodesReady(ctx context.Context, cs kubernetes.Interface, names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		ready := 0
		if err == nil {
			for i := range list.Items {
				if want[list.Items[i].Name] && NodeReady(&list.Items[i]) {
					ready++
				}
			}
			if ready == len(want) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: %d of %d nodes Ready: %w", ready, len(want), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
