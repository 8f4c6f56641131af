package deploytest

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/controlplane"
	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const (
	manifests = "../../deploy/kubernetes/scheduler"
	account   = "system:serviceaccount:brigade-system:brigade-scheduler"
)

// forbidden records every request the API server refused with 403.
type forbidden struct {
	mu   sync.Mutex
	reqs []string
}

func (f *forbidden) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.reqs = append(f.reqs, r.Method+" "+r.URL.Path)
			f.mu.Unlock()
		}
		return resp, err
	})
}

func (f *forbidden) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// apply creates the Namespace, ServiceAccount, ClusterRole and its
// binding of the shipped manifests (the Deployment and ConfigMap are
// what a cluster runs; here the scheduler runs in the test).
func apply(t *testing.T, ctx context.Context, cs kubernetes.Interface) {
	t.Helper()
	for _, file := range []string{"namespace.yaml", "rbac.yaml"} {
		data, err := os.ReadFile(filepath.Join(manifests, file))
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			switch o := obj.(type) {
			case *corev1.Namespace:
				_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
			case *corev1.ServiceAccount:
				_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRole:
				_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			case *rbacv1.ClusterRoleBinding:
				_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			default:
				t.Fatalf("%s: unexpected %T", file, obj)
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
	}
}

type podOpt func(*corev1.Pod)

func pod(name string, gpus int, duration string, opts ...podOpt) *corev1.Pod {
	grace := int64(1)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Labels: map[string]string{},
		Annotations: map[string]string{scheduler.AnnoDuration: duration}},
		Spec: corev1.PodSpec{SchedulerName: scheduler.DefaultName, TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "main", Image: "train",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{scheduler.ResourceGPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// TestSchedulerUnderShippedRBAC: the scheduler, as the manifests' account
// on an API server authorizing by RBAC, binds a labelled gang (two pods
// of 8 GPUs, written a placement annotation first), a Workload API gang
// (PodGroup minCount 2, spec.schedulingGroup), tells a 16-GPU pod that no
// node holds it (event and condition), takes the urgent pod's priority
// from its PriorityClass and evicts a running job for it, all under its
// Lease, and the API server forbids none of its requests. It leaves the
// GPUs another scheduler's pod holds alone.
func TestSchedulerUnderShippedRBAC(t *testing.T) {
	cp := controlplane.ForTestWith(t, controlplane.Options{Authorization: "RBAC", APIServerArgs: []string{
		"--feature-gates=GenericWorkload=true",
		"--runtime-config=scheduling.k8s.io/v1beta1=true",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := cp.Clientset
	apply(t, ctx, admin)
	nodes, err := controlplane.AddGPUNodes(ctx, admin, 4, controlplane.NodeSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.WaitNodesReady(ctx, admin, nodes); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SchedulingV1beta1().PodGroups("team-a").Create(ctx, &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "wl"},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: 2}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Another scheduler's pod holds the last node's 8 GPUs: the scheduler
	// must see it (its informer of other schedulers' bound pods) and leave
	// them alone.
	other := pod("other", 8, "1h", func(p *corev1.Pod) { p.Spec.SchedulerName = "default-scheduler" })
	if _, err := admin.CoreV1().Pods("team-a").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Pods("team-a").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Target: corev1.ObjectReference{Kind: "Node", Name: nodes[3]}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var denied forbidden
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: account,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:brigade-system", "system:authenticated"}}
	cfg.Wrap(denied.wrap)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- scheduler.Run(runCtx, scheduler.Config{Policy: "priority+preempt/bestfit", Log: testLog{t}}, client, dyn,
			scheduler.RunOptions{Tick: 200 * time.Millisecond, LeaderElect: true,
				LeaseNamespace: "brigade-system", LeaseName: "brigade-scheduler", Identity: "replica-a"})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	gang := func(name string) podOpt {
		return func(p *corev1.Pod) {
			p.Labels[scheduler.LabelGang], p.Labels[scheduler.LabelGangSize] = name, "2"
		}
	}
	inGroup := func(name string) podOpt {
		return func(p *corev1.Pod) { p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name} }
	}
	create := func(ps ...*corev1.Pod) {
		for _, p := range ps {
			if _, err := admin.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(pod("train-0", 8, "5m", gang("train")), pod("train-1", 8, "5m", gang("train")),
		pod("wl-0", 4, "5m", inGroup("wl")), pod("wl-1", 4, "5m", inGroup("wl")),
		pod("huge", 16, "1m"))
	bound := func(names ...string) bool {
		for _, n := range names {
			p, err := admin.CoreV1().Pods("team-a").Get(ctx, n, metav1.GetOptions{})
			if err != nil || p.Spec.NodeName == "" {
				return false
			}
		}
		return true
	}
	waitFor(t, ctx, "both gangs bound", func() bool { return bound("train-0", "train-1", "wl-0", "wl-1") })
	for _, g := range [][2]string{{"train-0", "train-1"}, {"wl-0", "wl-1"}} {
		a, _ := admin.CoreV1().Pods("team-a").Get(ctx, g[0], metav1.GetOptions{})
		b, _ := admin.CoreV1().Pods("team-a").Get(ctx, g[1], metav1.GetOptions{})
		if v := a.Annotations[scheduler.AnnoPlacement]; v == "" || v != b.Annotations[scheduler.AnnoPlacement] {
			t.Errorf("%s and %s: placements %q and %q, want one committed value", g[0], g[1], v, b.Annotations[scheduler.AnnoPlacement])
		}
	}
	waitFor(t, ctx, "huge told it is unschedulable", func() bool {
		p, err := admin.CoreV1().Pods("team-a").Get(ctx, "huge", metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	evs, err := admin.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=huge"})
	if err != nil || len(evs.Items) == 0 || evs.Items[0].Type != corev1.EventTypeWarning {
		t.Errorf("huge's events: %v %+v", err, evs)
	}

	// The cluster is full (16 + 8 of 24 GPUs, and the other scheduler's
	// 8): the urgent pod's priority,
	// from its PriorityClass, preempts a running job.
	create(pod("urgent", 8, "1s", func(p *corev1.Pod) { p.Spec.PriorityClassName = "urgent" }))
	waitFor(t, ctx, "urgent bound after an eviction", func() bool { return bound("urgent") })
	left := 0
	for _, n := range []string{"train-0", "train-1", "wl-0", "wl-1"} {
		if _, err := admin.CoreV1().Pods("team-a").Get(ctx, n, metav1.GetOptions{}); err == nil {
			left++
		}
	}
	if left > 2 {
		t.Errorf("%d of the 4 running pods are left: the urgent pod was bound without an eviction", left)
	}
	for _, n := range []string{"train-0", "train-1", "wl-0", "wl-1", "urgent"} {
		if p, err := admin.CoreV1().Pods("team-a").Get(ctx, n, metav1.GetOptions{}); err == nil && p.Spec.NodeName == nodes[3] {
			t.Errorf("%s bound to %s, whose GPUs the other scheduler's pod holds", n, nodes[3])
		}
	}
	// urgent runs 1 s: its end is booked on it (brigade.sim/released-at,
	// a patch), as the export reads it.
	waitFor(t, ctx, "urgent's end booked", func() bool {
		p, err := admin.CoreV1().Pods("team-a").Get(ctx, "urgent", metav1.GetOptions{})
		return err == nil && p.Annotations[scheduler.AnnoReleasedAt] != ""
	})
	lease, err := admin.CoordinationV1().Leases("brigade-system").Get(ctx, "brigade-scheduler", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "replica-a" {
		t.Errorf("lease: %v %+v", err, lease)
	}
	if d := denied.list(); len(d) > 0 {
		t.Errorf("the API server forbade %d requests of the scheduler's account:\n%s", len(d), strings.Join(d, "\n"))
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// testLog sends the scheduler's lines to the test's log, shown when it
// fails or with -v.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
