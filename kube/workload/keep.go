package workload

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/brigadesim/brigade/kube/scheduler"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Evicted says what Keep does with a pod deleted before it ended: what
// its scheduler's Eviction does to the job a policy preempts.
type Evicted int

const (
	// Leave: the pod stays gone, as a bare pod does.
	Leave Evicted = iota
	// Restart: the pod is created again and runs its whole duration, as
	// a Job controller's new pod does for a job without checkpoints.
	Restart
	// Resume: the pod is created again and runs only what its job had
	// left (its brigade.sim/duration less what it ran from its
	// brigade.sim/bound-at until it was gone), as a job that saved its
	// progress when it was told to stop.
	Resume
)

// ParseEvicted reads leave, restart or resume.
func ParseEvicted(s string) (Evicted, error) {
	switch s {
	case "leave":
		return Leave, nil
	case "restart":
		return Restart, nil
	case "resume":
		return Resume, nil
	}
	return 0, fmt.Errorf("want leave, restart or resume, found %q", s)
}

// KeepOptions configure Keep.
type KeepOptions struct {
	Evicted Evicted
	// Poll is how often Keep looks whether every pod has ended; 0 is
	// 100 ms.
	Poll time.Duration
	// Log hears of each pod created again; nil discards.
	Log io.Writer
}

// Keep acts as the jobs' controller until every pod of jobs has ended
// and its scheduler has booked the end (WaitEnded's rule), and returns
// then, or with ctx's error. Started before Submit (or beside it), it
// watches the jobs' pods: a pod it has seen that is deleted before it
// ended is created again at once, as opt.Evicted says, with the labels
// and annotations it was built with (its job's name, brigade.sim/job or
// its gang, which is what makes the scheduler take it for the same job)
// under a new name, NAME-rN for its N-th recreation. A pod not yet seen
// is one still to be submitted: it has not ended. Recreations is how
// many pods it created again.
func Keep(ctx context.Context, cs kubernetes.Interface, jobs []Job, opt KeepOptions) (recreations int, err error) {
	if opt.Poll <= 0 {
		opt.Poll = 100 * time.Millisecond
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	k := &keeper{cs: cs, opt: opt, want: map[string]*corev1.Pod{}, left: map[string]time.Duration{}, state: map[string]podState{},
		current: map[string]string{}, tries: map[string]int{}}
	var namespaces []string
	for _, j := range jobs {
		for _, p := range j.Pods {
			key := p.Namespace + "/" + p.Name
			k.want[key] = p
			k.current[key] = key
			k.left[key], _ = time.ParseDuration(p.Annotations[scheduler.AnnoDuration])
			if !slices.Contains(namespaces, p.Namespace) {
				namespaces = append(namespaces, p.Namespace)
			}
		}
	}
	kctx, stop := context.WithCancel(ctx)
	var factories []informers.SharedInformerFactory
	defer func() {
		stop() // first: Shutdown waits for the informers to stop
		for _, f := range factories {
			f.Shutdown()
		}
		k.wg.Wait()
	}()
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
		inf := f.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { k.seen(o) },
			UpdateFunc: func(_, o any) { k.seen(o) },
			DeleteFunc: func(o any) { k.deleted(kctx, o) },
		}); err != nil {
			return 0, err
		}
		f.Start(kctx.Done())
		factories = append(factories, f)
		for typ, ok := range f.WaitForCacheSync(kctx.Done()) {
			if !ok {
				return 0, fmt.Errorf("watching the pods of %s (%v): %w", ns, typ, kctx.Err())
			}
		}
	}
	t := time.NewTicker(opt.Poll)
	defer t.Stop()
	for {
		left, failed := k.pending()
		if failed != nil {
			return k.recreated(), failed
		}
		if left == 0 {
			return k.recreated(), nil
		}
		select {
		case <-ctx.Done():
			return k.recreated(), fmt.Errorf("waiting for the pods to end: %d not ended: %w", left, ctx.Err())
		case <-t.C:
		}
	}
}

type podState uint8

const (
	unseen podState = iota
	alive
	over
)

type keeper struct {
	cs  kubernetes.Interface
	opt KeepOptions
	// want are the pods as built, by namespace/name; left is what each
	// still has to run (Resume).
	want map[string]*corev1.Pod
	wg   sync.WaitGroup

	mu    sync.Mutex
	left  map[string]time.Duration
	state map[string]podState // by the pod as built
	// current maps the name of each pod of the jobs now (namespace/name)
	// to the pod as built; tries counts each one's recreations.
	current map[string]string
	tries   map[string]int
	n       int
	err     error
}

func podOf(o any) *corev1.Pod {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	p, _ := o.(*corev1.Pod)
	return p
}

// seen records a pod of the jobs as it is now.
func (k *keeper) seen(o any) {
	p := podOf(o)
	if p == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.current[p.Namespace+"/"+p.Name]
	if !ok {
		return
	}
	st := alive
	if ended(p) {
		st = over
	}
	k.state[key] = st
}

// deleted creates a pod of the jobs again when it was deleted before it
// ended.
func (k *keeper) deleted(ctx context.Context, o any) {
	p := podOf(o)
	if p == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	name := p.Namespace + "/" + p.Name
	key, ok := k.current[name]
	if !ok {
		return
	}
	tmpl := k.want[key]
	// Over only once its scheduler booked its end: a pod that finished its
	// work while its Eviction was under way was preempted all the same
	// (its scheduler's books said so), and its job needs a pod again.
	if k.state[key] == over || ended(p) {
		k.state[key] = over
		return
	}
	if k.opt.Evicted == Leave {
		k.state[key] = over
		return
	}
	// A new name, as a Job controller gives its new pods: what still
	// acts on the old pod by name (a kubelet, KWOK finishing its
	// deletion) must not reach the new one.
	q := tmpl.DeepCopy()
	k.tries[key]++
	q.Name = recreatedName(tmpl.Name, k.tries[key])
	delete(k.current, name)
	k.current[q.Namespace+"/"+q.Name] = key
	if k.opt.Evicted == Resume {
		ran := time.Duration(0)
		if t, err := time.Parse(time.RFC3339Nano, p.Annotations[scheduler.AnnoBoundAt]); err == nil && p.Spec.NodeName != "" {
			ran = max(time.Since(t), 0)
		}
		k.left[key] = max(k.left[key]-ran, time.Millisecond)
		q.Annotations[scheduler.AnnoDuration] = k.left[key].String()
		if c := &q.Spec.Containers[0]; len(c.Command) == 2 && c.Command[0] == "sleep" {
			c.Command[1] = strconv.FormatFloat(k.left[key].Seconds(), 'f', -1, 64)
		}
	}
	k.state[key] = unseen
	k.n++
	fmt.Fprintf(k.opt.Log, "workload: pod %s was deleted before it ended; created again as %s (%s to run)\n", name, q.Name, q.Annotations[scheduler.AnnoDuration])
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		_, err := k.cs.CoreV1().Pods(q.Namespace).Create(ctx, q, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			k.mu.Lock()
			k.err = fmt.Errorf("creating pod %s again: %w", key, err)
			k.mu.Unlock()
		}
	}()
}

// recreatedName is the name of the pod built as base, created again for
// the n-th time: base-rN, base cut to keep it a DNS label.
func recreatedName(base string, n int) string {
	suffix := "-r" + strconv.Itoa(n)
	return base[:min(len(base), 63-len(suffix))] + suffix
}

// pending counts the pods not ended, and says the first recreation that
// failed.
func (k *keeper) pending() (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for key := range k.want {
		if k.state[key] != over {
			n++
		}
	}
	return n, k.err
}

func (k *keeper) recreated() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}
