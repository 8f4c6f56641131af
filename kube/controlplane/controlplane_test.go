package controlplane

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestControlPlaneGPUNodesAndPods runs the real control plane: 150 GPU
// nodes made Ready by KWOK, a pod bound through the Binding subresource
// that KWOK runs and, thanks to its duration annotation, completes.
func TestControlPlaneGPUNodesAndPods(t *testing.T) {
	t0 := time.Now()
	cp := ForTest(t)
	t.Logf("control plane up in %s", time.Since(t0).Round(time.Millisecond))

	// The binaries came from the cache, and asking again builds nothing.
	var blog strings.Builder
	bin, err := Binaries(context.Background(), &blog)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(bin, APIServerBinary))
	if err != nil || blog.Len() != 0 || !fi.ModTime().Before(t0) {
		t.Fatalf("Binaries again: %v, log %q, kube-apiserver mtime %v (test began %v): want the cached build", err, blog.String(), fi.ModTime(), t0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := cp.Clientset

	// The kubeconfig file reaches the same server (what kubectl would use).
	kc, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	viaFile, err := kubernetes.NewForConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := viaFile.Discovery().ServerVersion()
	if err != nil || v.GitVersion != k8sVersion {
		t.Fatalf("server version via kubeconfig: %v, %v; want %s", v, err, k8sVersion)
	}

	t1 := time.Now()
	names, err := AddGPUNodes(ctx, cs, 120, NodeSpec{})
	if err != nil {
		t.Fatal(err)
	}
	mig, err := AddGPUNodes(ctx, cs, 30, NodeSpec{
		NamePrefix: "mig-node-", GPUs: -1, Product: "NVIDIA-A100-SXM4-80GB",
		MIG:    map[corev1.ResourceName]int64{"nvidia.com/mig-1g.10gb": 7},
		Taints: []corev1.Taint{{Key: "nvidia.com/mig", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
	})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Since(t1)
	all := append(append([]string{}, names...), mig...)
	if err := WaitNodesReady(ctx, cs, all); err != nil {
		t.Fatal(err)
	}
	t.Logf("150 nodes created in %s, all Ready after %s", created.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))

	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: KWOKLabel + "=kwok"})
	if err != nil || len(list.Items) != 150 {
		t.Fatalf("nodes labelled type=kwok: %d, %v; want 150", len(list.Items), err)
	}
	// Capacity survives KWOK's status updates.
	n7, err := cs.CoreV1().Nodes().Get(ctx, "gpu-node-007", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := n7.Status.Allocatable[GPUResource]; q.Value() != 8 || n7.Labels[GPUProductLabel] != "NVIDIA-H100-80GB-HBM3" || !NodeReady(n7) {
		t.Fatalf("gpu-node-007: allocatable gpu %s, product %q, ready %v", q.String(), n7.Labels[GPUProductLabel], NodeReady(n7))
	}
	m0, err := cs.CoreV1().Nodes().Get(ctx, "mig-node-000", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q, gpu := m0.Status.Capacity["nvidia.com/mig-1g.10gb"], m0.Status.Capacity[GPUResource]; q.Value() != 7 || !gpu.IsZero() ||
		len(m0.Spec.Taints) != 1 || m0.Spec.Taints[0].Key != "nvidia.com/mig" {
		t.Fatalf("mig-node-000: mig capacity %s, gpu %s, taints %v", q.String(), gpu.String(), m0.Spec.Taints)
	}

	// Two pods: one with a duration, which must finish; one without, which
	// must stay Running (the stage keys on the annotation).
	mk := func(name string, ann map[string]string) *corev1.Pod {
		gpus := resource.MustParse("4")
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
			Spec: corev1.PodSpec{
				SchedulerName: "brigade",
				Containers: []corev1.Container{{Name: "train", Image: "train:1",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{GPUResource: gpus},
						Limits:   corev1.ResourceList{GPUResource: gpus},
					}}},
			},
		}
	}
	for _, p := range []*corev1.Pod{mk("short", map[string]string{DurationAnnotation: "1s"}), mk("forever", nil)} {
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod, _ := cs.CoreV1().Pods("default").Get(ctx, "short", metav1.GetOptions{})
	if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
		t.Fatalf("unbound pod: node %q, phase %s; want Pending on no node", pod.Spec.NodeName, pod.Status.Phase)
	}
	bound := time.Now()
	for _, name := range []string{"short", "forever"} {
		err := cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "gpu-node-007"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A second binding of a bound pod is refused by the real API server.
	err = cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "short"},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "gpu-node-008"},
	}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("rebinding a bound pod: %v, want a conflict", err)
	}

	sawRunning := false
	var running time.Time
	for {
		pod, err = cs.CoreV1().Pods("default").Get(ctx, "short", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Status.Phase == corev1.PodRunning && !sawRunning {
			sawRunning, running = true, time.Now()
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod short still %s after bind", pod.Status.Phase)
		case <-time.After(20 * time.Millisecond):
		}
	}
	done := time.Since(bound)
	if pod.Status.Phase != corev1.PodSucceeded || pod.Spec.NodeName != "gpu-node-007" {
		t.Fatalf("pod short: phase %s on %q, want Succeeded on gpu-node-007", pod.Status.Phase, pod.Spec.NodeName)
	}
	if !sawRunning || done < time.Second {
		t.Fatalf("pod short: Succeeded %s after bind (seen Running: %v); want Running first and at least 1s", done, sawRunning)
	}
	scheduled := false
	for _, c := range pod.Status.Conditions {
		scheduled = scheduled || (c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue)
	}
	if !scheduled {
		t.Fatalf("pod short: no PodScheduled=True condition: %v", pod.Status.Conditions)
	}
	t.Logf("pod bound, Running after %s, Succeeded after %s", running.Sub(bound).Round(time.Millisecond), done.Round(time.Millisecond))
	forever, err := cs.CoreV1().Pods("default").Get(ctx, "forever", metav1.GetOptions{})
	if err != nil || forever.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod forever: %v, %v; want Running (no duration, no end)", forever.Status.Phase, err)
	}

	// Stop leaves nothing: no process, no folder, no listener.
	t2 := time.Now()
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %s", time.Since(t2).Round(time.Millisecond))
	for _, p := range cp.procs {
		if alive(p.cmd.Process.Pid) {
			t.Errorf("%s (pid %d) still runs after Stop", p.name, p.cmd.Process.Pid)
		}
	}
	if _, err := os.Stat(cp.Dir); !os.IsNotExist(err) {
		t.Errorf("state folder %s survives Stop: %v", cp.Dir, err)
	}
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(cp.APIServerURL, "https://"), time.Second); err == nil {
		c.Close()
		t.Errorf("apiserver port still open after Stop")
	}
}
