package scheduler

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// BenchLabel marks the pods Bench creates (its value is the run's
// scheduler name), so that they can be watched and deleted as a set.
const BenchLabel = "brigade.sim/bench"

// DefaultAPIQPS and DefaultAPIBurst are the client-side rate limits
// brigade-kube sets by default (--kube-api-qps, --kube-api-burst), as
// kube-scheduler does: client-go's own 5 requests/s (burst 10) would
// make a round's Bindings wait on the client, not on the API server.
const (
	DefaultAPIQPS   = 50
	DefaultAPIBurst = 100
)

// BenchOptions configure Bench. Zero fields take the defaults named.
type BenchOptions struct {
	// Namespace holds the pods; created when missing, never deleted.
	// Required: a benchmark must not pick a namespace by itself.
	Namespace string
	// Pods is how many pods to create (gang members included); default 1000.
	Pods int
	// Policy is the policy spec to run; default fcfs/bestfit.
	Policy string
	// Name is the scheduler name of the pods and of the scheduler under
	// test; default brigade-bench, so that a running brigade-kube leaves
	// them alone.
	Name string
	// Quiet ends the measurement once no pod was bound for this long
	// after the first binding (the pods left over fit nowhere, or the
	// policy keeps them waiting); default 5s, longer than a tick.
	Quiet time.Duration
	// Timeout bounds the whole measurement; default 5m.
	Timeout time.Duration
	// Workers create the pods concurrently; default 16.
	Workers int
	// Run is passed to Run (leader election is always off).
	Run RunOptions
	// Log receives the scheduler's log; nil discards it.
	Log io.Writer
	// Setup creates, watches and deletes the pods; nil: the scheduler's
	// client. A test gives an unthrottled one, so that only the
	// scheduler's client has the limits under test.
	Setup kubernetes.Interface
}

// BenchResult is what Bench measured. Times count from the moment the
// scheduler started (before its informers synced).
type BenchResult struct {
	Policy string
	// Pods were created; Bound of them were bound when the run ended.
	Pods, Bound int
	// Create is how long creating the pods took (before the scheduler
	// started, so it is not in the other times).
	Create time.Duration
	// FirstBind and LastBind are when the first and the last pod were
	// seen bound (a watch on the pods, so the API server's view).
	FirstBind, LastBind time.Duration
	// PodsPerSecond is Bound / LastBind: binding throughput, wall clock,
	// start-up included.
	PodsPerSecond float64
	// Calls and Binds count the scheduling calls that returned decisions
	// and the Bindings sent; the percentiles are exact (nearest rank). A
	// Binding's time is the client's: the API round trip plus any wait in
	// the client's rate limiter (--kube-api-qps), which dominates when
	// the limit binds.
	Calls, Binds       int
	CallP50, CallP99   time.Duration
	BindP50, BindP99   time.Duration
	CallTotal, BindSum time.Duration
	// Assigned is each bound pod's node, by pod name.
	Assigned map[string]string
}

// String is the result on one line, for logs and the bench command.
func (r BenchResult) String() string {
	return fmt.Sprintf("policy %s: %d/%d pods bound, %.0f pods/s; first bind %v, last %v (pods created in %v before the start);"+
		" scheduling call p50 %v p99 %v over %d calls (%v in all); Binding round trip p50 %v p99 %v over %d (%v in all)",
		r.Policy, r.Bound, r.Pods, r.PodsPerSecond, r.FirstBind.Round(time.Millisecond), r.LastBind.Round(time.Millisecond),
		r.Create.Round(time.Millisecond), r.CallP50, r.CallP99, r.Calls, r.CallTotal.Round(time.Millisecond),
		r.BindP50, r.BindP99, r.Binds, r.BindSum.Round(time.Millisecond))
}

// BenchPod is one pod of the benchmark's workload.
type BenchPod struct {
	Name string
	GPUs int
	// Gang names the pod's gang ("" for a pod on its own); GangSize is
	// how many members it has.
	Gang     string
	GangSize int
	// Estimate is the pod's brigade.sim/estimate, so that shortest-job
	// policies have an order to find; every pod runs 48 h, so none ends
	// during a measurement.
	Estimate time.Duration
	Tenant   string
}

// benchSizes is the GPU count of successive pods on their own: mostly
// small, some whole nodes. Every 25th slot is a gang instead.
var benchSizes = []int{1, 1, 2, 1, 4, 2, 1, 8, 1, 2, 4, 1}

// BenchWorkload is the benchmark's n pods, the same for the same n: pods
// of 1, 2, 4 and 8 GPUs and, in every 25th slot, a gang (4 pods of 4
// GPUs, or 2 pods of 8, in turn) that no single node holds.
func BenchWorkload(n int) []BenchPod {
	var out []BenchPod
	tenants := []string{"team-a", "team-b", "team-c"}
	for slot := 0; len(out) < n; slot++ {
		h := fnv.New32a()
		fmt.Fprint(h, slot)
		est := 10*time.Minute + time.Duration(h.Sum32()%(8*60))*time.Minute
		tenant := tenants[slot%len(tenants)]
		if slot%25 == 24 {
			members, gpus := 4, 4
			if slot/25%2 == 1 {
				members, gpus = 2, 8
			}
			if len(out)+members <= n {
				gang := fmt.Sprintf("bench-g%04d", slot)
				for k := range members {
					out = append(out, BenchPod{Name: gang + "-" + strconv.Itoa(k), GPUs: gpus, Gang: gang, GangSize: members,
						Estimate: est, Tenant: tenant})
				}
				continue
			}
		}
		out = append(out, BenchPod{Name: fmt.Sprintf("bench-%04d", slot), GPUs: benchSizes[slot%len(benchSizes)],
			Estimate: est, Tenant: tenant})
	}
	return out
}

// podObject is the Pod for b: a pause container asking for its GPUs,
// with the annotations and labels the scheduler reads.
func (b BenchPod) podObject(ns, scheduler string) *corev1.Pod {
	labels := map[string]string{BenchLabel: scheduler, LabelTenant: b.Tenant}
	if b.Gang != "" {
		labels[LabelGang] = b.Gang
		labels[LabelGangSize] = strconv.Itoa(b.GangSize)
	}
	gpus := resource.MustParse(strconv.Itoa(b.GPUs))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: b.Name, Namespace: ns, Labels: labels,
			Annotations: map[string]string{AnnoEstimate: b.Estimate.String(), AnnoDuration: "48h"}},
		Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{
			Name: "main", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{ResourceGPU: gpus},
				Requests: corev1.ResourceList{ResourceGPU: gpus, corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			},
		}}},
	}
}

// Bench measures the scheduler against a real API server: it creates
// the workload's pods (pending, scheduler name opt.Name) in
// opt.Namespace, starts Run in this process, and watches the pods until
// all are bound or none was bound for opt.Quiet; then it stops the
// scheduler and deletes the pods (grace 0). The nodes are whatever the
// cluster has: run it on test nodes (KWOK), never where the pause pods
// would take real GPUs from real work.
func Bench(ctx context.Context, client kubernetes.Interface, opt BenchOptions) (BenchResult, error) {
	if opt.Namespace == "" {
		return BenchResult{}, errors.New("bench: a namespace is required")
	}
	if opt.Pods == 0 {
		opt.Pods = 1000
	}
	if opt.Pods < 0 {
		return BenchResult{}, fmt.Errorf("bench: pods = %d, want > 0", opt.Pods)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opt.Quiet, 5*time.Second)
	def(&opt.Timeout, 5*time.Minute)
	if opt.Policy == "" {
		opt.Policy = "fcfs/bestfit"
	}
	if opt.Name == "" {
		opt.Name = "brigade-bench"
	}
	if opt.Workers <= 0 {
		opt.Workers = 16
	}
	opt.Run.LeaderElect = false
	setup := opt.Setup
	if setup == nil {
		setup = client
	}
	res := BenchResult{Policy: opt.Policy, Pods: opt.Pods}
	// The policy is checked before anything is created.
	if _, err := New(Config{Name: opt.Name, Policy: opt.Policy}, client, nil, APISource{Client: client, Ctx: ctx}); err != nil {
		return res, err
	}
	if err := ensureNamespace(ctx, setup, opt.Namespace); err != nil {
		return res, err
	}
	selector := BenchLabel + "=" + opt.Name
	left, err := setup.CoreV1().Pods(opt.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return res, err
	}
	if len(left.Items) > 0 {
		return res, fmt.Errorf("bench: namespace %s already has %d pods labelled %s (an earlier run's?); delete them first",
			opt.Namespace, len(left.Items), selector)
	}
	defer deleteBenchPods(context.WithoutCancel(ctx), setup, opt.Namespace, selector)

	t0 := time.Now()
	if err := createBenchPods(ctx, setup, opt); err != nil {
		return res, err
	}
	res.Create = time.Since(t0)

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := newBindWatch(setup, opt.Namespace, selector)
	w.run(watchCtx)

	m := NewMetrics()
	m.KeepSamples()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	runErr := make(chan error, 1)
	start := time.Now()
	w.setStart(start)
	go func() {
		runErr <- Run(runCtx, Config{Name: opt.Name, Policy: opt.Policy, Log: opt.Log, Metrics: m}, client, nil, opt.Run)
	}()
	deadline := time.NewTimer(opt.Timeout)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case err := <-runErr:
			return res, fmt.Errorf("bench: the scheduler stopped early: %v", err)
		case <-deadline.C:
			n, _ := w.progress()
			return res, fmt.Errorf("bench: %d of %d pods bound after %v, and binding had not gone quiet", n, opt.Pods, opt.Timeout)
		case <-poll.C:
			n, last := w.progress()
			if n == opt.Pods || n > 0 && time.Since(start.Add(last)) >= opt.Quiet {
				break wait
			}
		}
	}
	stopRun()
	if err := <-runErr; err != nil {
		return res, err
	}
	res.Assigned, res.FirstBind, res.LastBind = w.result()
	res.Bound = len(res.Assigned)
	if res.LastBind > 0 {
		res.PodsPerSecond = float64(res.Bound) / res.LastBind.Seconds()
	}
	calls, binds := m.Samples()
	res.Calls, res.Binds = len(calls), len(binds)
	res.CallP50, res.CallP99, res.CallTotal = percentiles(calls)
	res.BindP50, res.BindP99, res.BindSum = percentiles(binds)
	return res, nil
}

// percentiles are the nearest-rank p50 and p99 of ds, and their sum.
func percentiles(ds []time.Duration) (p50, p99, sum time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(ds))
	rank := func(p int) time.Duration { return s[max((len(s)*p+99)/100-1, 0)] }
	for _, d := range s {
		sum += d
	}
	return rank(50), rank(99), sum
}

func ensureNamespace(ctx context.Context, client kubernetes.Interface, ns string) error {
	_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("bench: namespace %s: %w", ns, err)
	}
	return nil
}

// createBenchPods creates the workload with opt.Workers creates in
// flight; the first error stops it.
func createBenchPods(ctx context.Context, client kubernetes.Interface, opt BenchOptions) error {
	pods := BenchWorkload(opt.Pods)
	next := make(chan BenchPod)
	errs := make(chan error, opt.Workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Go(func() {
			for p := range next {
				if _, err := client.CoreV1().Pods(opt.Namespace).Create(ctx, p.podObject(opt.Namespace, opt.Name), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("bench: creating pod %s: %w", p.Name, err)
					cancel()
					return
				}
			}
		})
	}
feed:
	for _, p := range pods {
		select {
		case next <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// deleteBenchPods deletes the run's pods at once (grace 0) and waits,
// up to a minute, until the API server has none left; pods a collection
// delete missed are deleted one by one.
func deleteBenchPods(ctx context.Context, client kubernetes.Interface, ns, selector string) {
	zero := int64(0)
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	pods := client.CoreV1().Pods(ns)
	_ = pods.DeleteCollection(ctx, now, metav1.ListOptions{LabelSelector: selector})
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(l.Items) == 0 {
			return
		}
		for _, p := range l.Items {
			_ = pods.Delete(ctx, p.Name, now)
		}
	}
}

// bindWatch records when each pod of the run is first seen bound.
type bindWatch struct {
	factory informers.SharedInformerFactory
	mu      sync.Mutex
	// start is when the scheduler started: binding times count from it.
	start time.Time
	at    map[string]time.Duration
	node  map[string]string
	last  time.Duration
}

func newBindWatch(client kubernetes.Interface, ns, selector string) *bindWatch {
	w := &bindWatch{at: map[string]time.Duration{}, node: map[string]string{}}
	w.factory = informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, done := w.at[p.Name]; !done {
			d := time.Since(w.start)
			w.at[p.Name], w.node[p.Name] = d, p.Spec.NodeName
			w.last = max(w.last, d)
		}
	}
	_, _ = w.factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	})
	return w
}

// run starts the informer and waits for its first list, so that the
// scheduler's bindings are all seen as updates.
func (w *bindWatch) run(ctx context.Context) {
	w.setStart(time.Now())
	w.factory.Start(ctx.Done())
	w.factory.WaitForCacheSync(ctx.Done())
}

func (w *bindWatch) setStart(t time.Time) {
	w.mu.Lock()
	w.start = t
	w.mu.Unlock()
}

// progress is how many pods are bound and when the last was.
func (w *bindWatch) progress() (int, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.at), w.last
}

func (w *bindWatch) result() (map[string]string, time.Duration, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.last
	for _, d := range w.at {
		first = min(first, d)
	}
	return maps.Clone(w.node), first, w.last
}
