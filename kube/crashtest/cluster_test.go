//go:build linux

package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brigadesim/brigade/kube/controlplane"
	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// ns is where the test's pods live.
const ns = "default"

// nodeGPUs is every node's nvidia.com/gpu.
const nodeGPUs = 8

// auditPolicy records every Binding with its body (the target node):
// the API server's own account of who bound what, when, and whether it
// took, which no killed process can lose.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: None
`

// cluster is a control plane with GPU nodes and its audit log.
type cluster struct {
	cp    *controlplane.ControlPlane
	dir   string // the test's folder: audit log, children's logs
	audit string
	nodes []string
}

// startCluster starts a control plane that audits Bindings, with n GPU
// nodes Ready.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	ctx := t.Context()
	bin, ok, err := controlplane.Cached(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("crashtest: kube-apiserver, etcd and kwok are not built on this machine (%s); build them once with scripts/k8s-control-plane.sh build", bin)
	}
	c := &cluster{dir: t.TempDir()}
	c.audit = filepath.Join(c.dir, "audit.log")
	policyPath := filepath.Join(c.dir, "audit-policy.yaml")
	if err := os.WriteFile(policyPath, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c.cp, err = controlplane.Start(ctx, controlplane.Options{BinDir: bin,
		APIServerArgs: []string{"--audit-policy-file=" + policyPath, "--audit-log-path=" + c.audit}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	if c.nodes, err = controlplane.AddGPUNodes(ctx, c.cp.Clientset, n, controlplane.NodeSpec{GPUs: nodeGPUs}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := controlplane.WaitNodesReady(wctx, c.cp.Clientset, c.nodes); err != nil {
		t.Fatal(err)
	}
	return c
}

// workload draws the campaign's pods, batch by batch, from one seed.
type workload struct {
	rng   *rand.Rand
	pods  int
	gangs int
	// seq is each pod's place in creation order; gangOf its gang.
	seq    map[string]int
	gangOf map[string]string
}

func newWorkload(seed uint64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, 2)), seq: map[string]int{}, gangOf: map[string]string{}}
}

// batch is the next batch of pods: single pods of 2, 4 or 8 GPUs and
// gangs of 2 to 4 members of 8 GPUs (a node each), each pod running 5
// to 12 s: batches every few lives keep the nodes about full, so gangs
// wait for whole nodes while smaller pods pass them.
func (w *workload) batch(singles, gangs int) []*corev1.Pod {
	var out []*corev1.Pod
	for range singles {
		g := []int{2, 4, 8, 8}[w.rng.IntN(4)]
		name := fmt.Sprintf("p%04d", w.pods)
		out = append(out, gpuPod(name, g, w.duration(), nil))
		w.seq[name] = w.pods
		w.pods++
	}
	for range gangs {
		size := 2 + w.rng.IntN(3)
		d := w.duration()
		name := fmt.Sprintf("g%03d", w.gangs)
		w.gangs++
		for m := range size {
			pod := fmt.Sprintf("%s-%d", name, m)
			out = append(out, gpuPod(pod, nodeGPUs, d,
				map[string]string{scheduler.LabelGang: name, scheduler.LabelGangSize: strconv.Itoa(size)}))
			w.seq[pod], w.gangOf[pod] = w.pods, name
			w.pods++
		}
	}
	return out
}

func (w *workload) duration() time.Duration {
	return time.Duration(5000+w.rng.IntN(7000)) * time.Millisecond
}

func gpuPod(name string, gpus int, d time.Duration, labels map[string]string) *corev1.Pod {
	q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			Annotations: map[string]string{scheduler.AnnoDuration: d.String()}},
		Spec: corev1.PodSpec{SchedulerName: scheduler.DefaultName,
			Containers: []corev1.Container{{Name: "train", Image: "train:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{scheduler.ResourceGPU: q, corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{scheduler.ResourceGPU: q}}}}},
	}
}

func createPods(t *testing.T, cs kubernetes.Interface, pods []*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", p.Name, err)
		}
	}
}

// podRecord is what the observer saw of one pod.
type podRecord struct {
	name, gang string
	size, gpus int
	node       string   // spec.nodeName now
	nodes      []string // every node it was bound to, in order
	phase      corev1.PodPhase
	placement  string // brigade.sim/placement now
	active     bool   // bound and not finished: holds its GPUs
	gone       bool
}

// observer watches the pods from the test, in the API server's order,
// and records every nodeName transition, phase and placement, checking
// at each event what must hold at every moment: no pod bound twice or
// moved, a gang member bound only under a placement every member
// carries and to the node it names, that placement never changed once
// a member is bound, and no node's GPUs over-committed.
type observer struct {
	mu         sync.Mutex
	pods       map[string]*podRecord
	gangs      map[string][]*podRecord
	used       map[string]int
	peak       int // most GPUs in use on one node at one moment
	events     int
	violations []string
	stopped    chan struct{}
}

// watchPods starts an observer from the pods' state now.
func watchPods(t *testing.T, cs kubernetes.Interface) *observer {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := &observer{pods: map[string]*podRecord{}, gangs: map[string][]*podRecord{}, used: map[string]int{}, stopped: make(chan struct{})}
	for i := range list.Items {
		o.see(watch.Added, &list.Items[i])
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, opt metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, opt)
		}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(o.stopped)
		for ev := range rw.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				o.see(ev.Type, p)
			}
		}
	}()
	t.Cleanup(func() { cancel(); rw.Stop(); <-o.stopped })
	return o
}

func (o *observer) violate(format string, args ...any) {
	o.violations = append(o.violations, fmt.Sprintf(format, args...))
}

func (o *observer) see(typ watch.EventType, p *corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events++
	r := o.pods[p.Name]
	if r == nil {
		r = &podRecord{name: p.Name, gang: p.Labels[scheduler.LabelGang], gpus: int(p.Spec.Containers[0].Resources.Limits.Name(scheduler.ResourceGPU, resource.DecimalSI).Value())}
		r.size, _ = strconv.Atoi(p.Labels[scheduler.LabelGangSize])
		o.pods[p.Name] = r
		if r.gang != "" {
			o.gangs[r.gang] = append(o.gangs[r.gang], r)
		}
	}
	if v := p.Annotations[scheduler.AnnoPlacement]; v != r.placement {
		if b := o.boundMembers(r.gang); b > 0 {
			o.violate("gang %s: placement of %s changed from %s to %s with %d members bound", r.gang, r.name, r.placement, v, b)
		}
		r.placement = v
	}
	if n := p.Spec.NodeName; n != r.node {
		if r.node != "" {
			o.violate("pod %s moved from node %s to %q", r.name, r.node, n)
		}
		r.node = n
		r.nodes = append(r.nodes, n)
		if len(r.nodes) > 1 {
			o.violate("pod %s bound %d times: %v", r.name, len(r.nodes), r.nodes)
		}
		if r.gang != "" {
			o.checkGangBind(r)
		}
	}
	r.phase, r.gone = p.Status.Phase, typ == watch.Deleted
	active := r.node != "" && !r.gone && r.phase != corev1.PodSucceeded && r.phase != corev1.PodFailed
	if active != r.active {
		r.active = active
		if active {
			o.used[r.node] += r.gpus
			o.peak = max(o.peak, o.used[r.node])
			if o.used[r.node] > nodeGPUs {
				o.violate("node %s over-committed: %d GPUs in use of %d when %s (%d GPUs) was bound", r.node, o.used[r.node], nodeGPUs, r.name, r.gpus)
			}
		} else {
			o.used[r.node] -= r.gpus
		}
	}
}

// checkGangBind checks member r's bind: its placement names its node
// and every member of its gang carries the same placement.
func (o *observer) checkGangBind(r *podRecord) {
	var assign map[string]string
	if err := json.Unmarshal([]byte(r.placement), &assign); err != nil || assign[r.name] != r.node {
		o.violate("gang %s: member %s bound to %s under placement %q", r.gang, r.name, r.node, r.placement)
		return
	}
	ms := o.gangs[r.gang]
	if len(ms) != r.size {
		o.violate("gang %s: member %s bound when %d of %d members were seen", r.gang, r.name, len(ms), r.size)
	}
	for _, m := range ms {
		if m.placement != r.placement {
			o.violate("gang %s: member %s bound under %s while %s carries %q (not committed)", r.gang, r.name, r.placement, m.name, m.placement)
		}
	}
}

func (o *observer) boundMembers(gang string) int {
	n := 0
	for _, m := range o.gangs[gang] {
		if m.node != "" {
			n++
		}
	}
	return n
}

// progress counts the pods seen, bound and succeeded.
func (o *observer) progress() (pods, bound, succeeded int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.pods {
		pods++
		if r.node != "" {
			bound++
		}
		if r.phase == corev1.PodSucceeded {
			succeeded++
		}
	}
	return pods, bound, succeeded
}

// waitAll waits until want pods have succeeded, or d has passed.
func (o *observer) waitAll(want int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, _, s := o.progress(); s >= want {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// finalChecks are the checks at the end: every pod seen, bound once and
// succeeded; every gang whole on the nodes its placement names; and what
// the observer found along the way.
func (o *observer) finalChecks(want int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.violations)
	if len(o.pods) != want {
		out = append(out, fmt.Sprintf("%d pods seen, %d created", len(o.pods), want))
	}
	for _, r := range o.pods {
		if r.phase != corev1.PodSucceeded || r.gone || len(r.nodes) != 1 {
			out = append(out, fmt.Sprintf("pod %s ended %s (gone %v) after binds %v", r.name, r.phase, r.gone, r.nodes))
		}
	}
	for g, ms := range o.gangs {
		var assign map[string]string
		if err := json.Unmarshal([]byte(ms[0].placement), &assign); err != nil {
			out = append(out, fmt.Sprintf("gang %s: no placement at the end (%q)", g, ms[0].placement))
			continue
		}
		for _, m := range ms {
			if m.placement != ms[0].placement || assign[m.name] != m.node {
				out = append(out, fmt.Sprintf("gang %s: member %s on %s, placement %s", g, m.name, m.node, m.placement))
			}
		}
	}
	slices.Sort(out)
	return out
}

// bindRecord is one Binding as the audit log has it.
type bindRecord struct {
	agent, pod, node string
	code             int
	received, done   time.Time
}

// readAudit reads the Bindings the API server audited, in order.
func readAudit(t *testing.T, path string) []bindRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []bindRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Stage     string `json:"stage"`
			UserAgent string `json:"userAgent"`
			ObjectRef struct {
				Name        string `json:"name"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			RequestObject struct {
				Target struct {
					Name string `json:"name"`
				} `json:"target"`
			} `json:"requestObject"`
			Received time.Time `json:"requestReceivedTimestamp"`
			Done     time.Time `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log %s: %v", path, err)
		}
		if ev.Stage != "ResponseComplete" || ev.ObjectRef.Subresource != "binding" {
			continue
		}
		out = append(out, bindRecord{agent: strings.TrimPrefix(ev.UserAgent, agentPrefix), pod: ev.ObjectRef.Name,
			node: ev.RequestObject.Target.Name, code: ev.ResponseStatus.Code, received: ev.Received, done: ev.Done})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(out, func(a, b bindRecord) int { return a.received.Compare(b.received) })
	return out
}

// endChecks reports a run that did not finish (last, the process that
// should have, with its log's tail), the final state's violations and the
// audited Bindings' (bindChecks), and returns the Bindings and their
// counts for the summary.
func endChecks(t *testing.T, c *cluster, o *observer, created int, finished bool, last string, tail func(int) string) (binds []bindRecord, accepted, unanswered, refused int) {
	t.Helper()
	if !finished {
		pods, bound, done := o.progress()
		t.Errorf("%s did not finish: %d pods seen of %d, %d bound, %d succeeded; its log:\n%s", last, pods, created, bound, done, tail(30))
	}
	for _, v := range o.finalChecks(created) {
		t.Error(v)
	}
	binds = readAudit(t, c.audit)
	bad, accepted, unanswered, refused := bindChecks(o, binds)
	for _, v := range bad {
		t.Error(v)
	}
	return binds, accepted, unanswered, refused
}

// bindChecks checks the audited Bindings: each pod bound by exactly one
// Binding that took, to the node the observer saw it on, from a
// scheduler process of this test; and no pod on its own bound by a life
// while a gang that an earlier life (or the other replica) left partly
// bound is still open: a life that finds a committed placement partly
// bound completes it before it schedules anything. Within one life a
// round's Bindings go out several jobs at a time, so its gangs and pods
// may interleave: their placements are committed and booked.
//
// A Binding whose sender was killed while the API server worked on it
// is audited as 504 (the client went away) though it may have taken: it
// took when the pod is on its target and no other Binding of the pod
// took. It returns the violations and the number of Bindings accepted
// (201), taken unanswered (such 504s) and refused (the rest).
func bindChecks(o *observer, binds []bindRecord) (violations []string, accepted, unanswered, refused int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	answered := map[string]bool{}
	for _, b := range binds {
		if b.code/100 == 2 {
			answered[b.pod] = true
		}
	}
	took := map[string]int{}
	var taken []bindRecord
	for _, b := range binds {
		if !strings.HasPrefix(b.agent, "life-") && !strings.HasPrefix(b.agent, "replica-") {
			violations = append(violations, fmt.Sprintf("Binding of %s sent by %q, not a scheduler of this test", b.pod, b.agent))
		}
		r := o.pods[b.pod]
		switch {
		case b.code/100 == 2:
			accepted++
		case b.code == http.StatusGatewayTimeout && !answered[b.pod] && r != nil && r.node == b.node:
			unanswered++
		default:
			refused++
			continue
		}
		took[b.pod]++
		taken = append(taken, b)
		if r == nil || r.node != b.node {
			violations = append(violations, fmt.Sprintf("pod %s: Binding to %s took, observer saw it on %v", b.pod, b.node, r))
		}
	}
	for name, n := range took {
		if n != 1 {
			violations = append(violations, fmt.Sprintf("pod %s: %d Bindings took", name, n))
		}
	}
	// Only one process binds at a time, so the Bindings that took, in
	// order of their answer, show which life left a gang partly bound
	// and what the next one bound before completing it.
	slices.SortStableFunc(taken, func(a, b bindRecord) int { return a.done.Compare(b.done) })
	open := map[string]int{}      // gang: members bound so far, while partly bound
	openBy := map[string]string{} // gang: the life that bound its last member
	reported := map[string]bool{}
	for i, b := range taken {
		r := o.pods[b.pod]
		if r == nil {
			continue
		}
		if r.gang == "" {
			for g, n := range open {
				if openBy[g] != b.agent && !reported[g] {
					reported[g] = true
					violations = append(violations, fmt.Sprintf("gang %s left partly bound (%d of %d) by %s when %s bound %s (Binding %d that took)",
						g, n, len(o.gangs[g]), openBy[g], b.agent, b.pod, i))
				}
			}
			continue
		}
		open[r.gang]++
		openBy[r.gang] = b.agent
		if open[r.gang] == len(o.gangs[r.gang]) {
			delete(open, r.gang)
		}
	}
	slices.Sort(violations)
	return violations, accepted, unanswered, refused
}
