package scheduler

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"github.com/brigadesim/brigade/policies"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// DefaultName is the scheduler's default spec.schedulerName.
const DefaultName = "brigade"

// Config configures a Scheduler.
type Config struct {
	// Name is the spec.schedulerName of the pods it schedules.
	Name string
	// Policy is a policy spec as brigade sim takes it (policies.ParseSpec).
	Policy string
	// TenantWeights weigh tenants in fair share; a tenant not listed
	// weighs 1.
	TenantWeights map[string]float64
	// NodeSelector, when set, is the partition of nodes this scheduler
	// owns: only nodes carrying all these labels are seen and booked, so
	// several schedulers (each with its own Name) can share one control
	// plane, one per partition.
	NodeSelector map[string]string
	Log          io.Writer // nil discards
	Metrics      *Metrics  // nil records nothing
	// Now is the wall clock; nil is time.Now.
	Now func() time.Time
}

// Source lists what the scheduler works from: the informers' caches in
// a running scheduler, the API server itself for export and tests.
type Source interface {
	Nodes() ([]*corev1.Node, error)
	Pods() ([]*corev1.Pod, error)
}

type jobState uint8

const (
	waiting       jobState = iota // a gang with members still to come
	unschedulable                 // no node could ever hold it (as the nodes are)
	queued
	running
	limbo // a bind failed: the next round reads what happened
	// evicting: the policy preempted it (the books no longer hold it)
	// and its pods are being evicted.
	evicting
	// evicted: its pods are gone; the policy has it queued (a job whose
	// key outlives its pods: job.stable), and it may start once a
	// controller has created them again.
	evicted
	done
)

// member is one pod of a job.
type member struct {
	name string
	uid  types.UID
	req  podReq
	tols []corev1.Toleration
	node string // spec.nodeName as last seen
	pod  *corev1.Pod
	// ended: finished or deleted.
	ended bool
}

// job is one policy job: a pod, or a gang of pods placed all or none.
type job struct {
	id      policies.JobID
	key     string
	ns      string
	size    int // members a gang needs before it is queued
	members []*member
	state   jobState
	place   hwmodel.Placement
	// assign is each member's node: the policy's placement as bound, or a
	// committed gang placement read back from brigade.sim/placement.
	assign map[string]string
	// deferred: started in the books, its Bindings waiting for pods
	// being evicted to leave its nodes (deferBlocked).
	deferred bool
	// complete: a committed gang placement whose binds are still to make.
	complete bool
	err      string // the pods' spec cannot be a request
	warned   string
	gang     bool
	// queuedAt is when the policy first saw the job pending (its submit
	// time is the pods' submission, which orders it; this is when it
	// could be chosen). Its Bindings carry it (brigade.sim/queued-at), and
	// the export makes it the job's arrival.
	queuedAt time.Time
	// stable: the key outlives the pods (a gang, or brigade.sim/job), so
	// an evicted job waits for its recreated pods rather than ending.
	stable bool
	// submitted is the job's first submission; boundAt the round that
	// started its current attempt; preempted its attempts before that.
	// Each later attempt's Bindings carry them (AnnoAttempts).
	submitted time.Time
	boundAt   time.Time
	preempted []attemptSpan
}

// Scheduler is Brigade's Kubernetes scheduler: it holds a policies.Host
// over the nodes it may use, as live mode does over one machine, turns
// pods into the host's jobs, and carries decisions out as Bindings and
// Evictions.
type Scheduler struct {
	cfg    Config
	client kubernetes.Interface
	// dyn reads scheduler-plugins PodGroups (minMember); nil: none.
	dyn     dynamic.Interface
	src     Source
	spec    policies.Spec
	policy  policies.Policy
	host    policies.Host
	cluster *hwmodel.Cluster

	nodes    []nodeInfo
	nodeIdx  map[string]int
	nodesKey string
	warned   map[string]bool

	jobs       []*job
	byKey      map[string]*job
	tenantIdx  map[string]int
	epoch      time.Time
	needsBuild bool
	// roundNow is the wall clock the round's decisions are made at: the
	// bound-at of every pod they bind, so jobs started together share it.
	roundNow time.Time
	// released are the jobs this round found ended, whose pods are told
	// so (brigade.sim/released-at) after its binds.
	released []*job

	binds []*job
	// toWarn are jobs found unschedulable, told so after the books.
	toWarn []*job
	evicts []*job
	// deferred are the starts whose Bindings wait (deferBlocked).
	deferred []*job
}

// New builds a scheduler over client, listing from src. The policy spec
// is checked here: MIG reconfiguration and fgd placement cannot run (the
// device plugin owns MIG layouts; fgd needs a target workload).
func New(cfg Config, client kubernetes.Interface, dyn dynamic.Interface, src Source) (*Scheduler, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	cfg.Log = &lockedWriter{w: cfg.Log}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	for t, w := range cfg.TenantWeights {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("tenant %q: weight must be > 0 and finite, got %v", t, w)
		}
	}
	spec, err := policies.ParseSpec(cfg.Policy)
	if err != nil {
		return nil, err
	}
	switch {
	case spec.MIGReconfigure:
		return nil, fmt.Errorf("policy %q: the scheduler never repartitions MIG GPUs (the device plugin's configuration owns them)", cfg.Policy)
	case spec.NeedsTarget():
		return nil, fmt.Errorf("policy %q: fgd placement needs a target workload, which a cluster's pods do not give in advance", cfg.Policy)
	}
	if _, err := spec.New(); err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, client: client, dyn: dyn, src: src, spec: spec, byKey: map[string]*job{},
		tenantIdx: map[string]int{}, warned: map[string]bool{}, nodeIdx: map[string]int{}, needsBuild: true}, nil
}

func (s *Scheduler) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, "brigade-kube: "+format+"\n", args...)
}

// at is wall time t as the host's time: µs since the epoch, never
// negative.
func (s *Scheduler) at(t time.Time) hwmodel.Time {
	return hwmodel.Time(max(t.Sub(s.epoch).Microseconds(), 0))
}

// Round is one scheduling round: read the nodes and pods, bring the
// books up to date, call the policy if it has news, then carry its
// decisions out against the API server.
func (s *Scheduler) Round(ctx context.Context) error {
	s.roundNow = s.cfg.Now()
	nodes, err := s.src.Nodes()
	if err != nil {
		return err
	}
	pods, err := s.src.Pods()
	if err != nil {
		return err
	}
	s.binds, s.evicts = s.binds[:0], s.evicts[:0]
	s.sync(ctx, nodes, pods)
	if s.needsBuild {
		if err := s.rebuild(); err != nil {
			return err
		}
	}
	s.warnUnschedulable(ctx)
	s.completeGangs(ctx)
	s.finishEvictions(ctx)
	s.host.SetNow(s.at(s.roundNow))
	s.cfg.Metrics.setPending(s.pending())
	// A call that preempted is followed by another at the same instant,
	// as in the simulator, so that the policy places at once what it
	// freed; a few at most.
	for range maxCallsPerRound {
		if !s.host.HasNews() {
			break
		}
		n := len(s.evicts)
		t0 := time.Now()
		decs := s.host.Schedule(s.policy, s.apply)
		if len(decs) > 0 {
			s.cfg.Metrics.scheduled(time.Since(t0))
		}
		if len(s.evicts) == n {
			break
		}
	}
	s.evictAll(ctx, s.evicts)
	s.bindAll(ctx, s.deferBlocked(append(s.readyDeferred(), s.binds...)))
	s.markReleased(ctx)
	s.cfg.Metrics.setPending(s.pending())
	return nil
}

// maxCallsPerRound bounds the scheduling calls of one round: the first,
// and one more after each that preempted (the simulator's bound).
const maxCallsPerRound = 4

// NextWake is the moment the policy asked to be called again at (a
// service threshold, a quantum's end, its next round), if it asked.
func (s *Scheduler) NextWake() (time.Time, bool) {
	t, ok := s.host.NextWake()
	if !ok || s.epoch.IsZero() {
		return time.Time{}, false
	}
	return s.epoch.Add(time.Duration(t) * time.Microsecond), true
}

func (s *Scheduler) pending() int {
	n := 0
	for _, j := range s.byKey {
		if j.state == waiting || j.state == queued || j.state == unschedulable || j.state == limbo || (j.state == evicting || j.state == evicted) && j.stable {
			n++
		}
	}
	return n
}

// sync brings the books up to date with the nodes and pods listed.
func (s *Scheduler) sync(ctx context.Context, nodes []*corev1.Node, pods []*corev1.Pod) {
	s.syncNodes(nodes, foreignUse(s.cfg.Name, pods))
	type group struct {
		key     string
		name    string // as the export names the job, for ties
		pods    []*corev1.Pod
		created time.Time
		size    int
		gang    bool
		stable  bool
	}
	groups := map[string]*group{}
	var order []*group
	first := time.Time{}
	for _, p := range pods {
		if p.Spec.SchedulerName != s.cfg.Name {
			continue
		}
		key, size, gang, stable := jobKey(p)
		g := groups[key]
		if g == nil {
			g = &group{key: key, name: exportName(p), created: submittedAt(p), gang: gang, stable: stable}
			groups[key] = g
			order = append(order, g)
		}
		g.pods = append(g.pods, p)
		g.size = max(g.size, size)
		if submittedAt(p).Before(g.created) {
			g.created = submittedAt(p)
		}
		if first.IsZero() || submittedAt(p).Before(first) {
			first = submittedAt(p)
		}
	}
	for _, g := range order {
		// A job new to the books whose pods were recreated after a
		// preemption was submitted when its history says (known jobs keep
		// theirs; their annotations are not read again at every round).
		if s.byKey[g.key] == nil {
			if n, ok := readAttempts(g.pods); ok && n.Submitted.Before(g.created) {
				g.created = n.Submitted
			}
		}
	}
	if s.epoch.IsZero() {
		s.epoch = s.cfg.Now()
		if !first.IsZero() && first.Before(s.epoch) {
			s.epoch = first
		}
	}
	slices.SortFunc(order, func(a, b *group) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		// Jobs created in the same second (the API's resolution) are
		// numbered by the name the export gives them, as the export
		// numbers them, so that a replay breaks ties between them alike.
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	for _, g := range order {
		slices.SortFunc(g.pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if j := s.byKey[g.key]; j != nil {
			s.update(j, g.pods)
			continue
		}
		live := false
		for _, p := range g.pods {
			live = live || !finished(p) && p.DeletionTimestamp == nil
		}
		if live {
			s.newJob(ctx, g.key, g.gang, g.stable, g.size, g.created, g.pods)
		}
	}
	for _, j := range s.jobs {
		if j.state != done && groups[j.key] == nil {
			s.update(j, nil)
		}
	}
}

// syncNodes brings the nodes' books up to date, less what other
// schedulers' pods hold (foreign); a change of any node rebuilds them.
func (s *Scheduler) syncNodes(nodes []*corev1.Node, foreign map[string]podReq) {
	var infos []nodeInfo
	for _, n := range nodes {
		if !selects(s.cfg.NodeSelector, n) {
			continue
		}
		info, ok := buildNode(n, func(msg string) {
			if !s.warned[msg] {
				s.warned[msg] = true
				s.logf("%s", msg)
			}
		})
		if ok {
			if u, held := foreign[info.name]; held {
				withoutForeign(&info, u)
			}
			infos = append(infos, info)
		}
	}
	slices.SortFunc(infos, func(a, b nodeInfo) int { return strings.Compare(a.name, b.name) })
	var key strings.Builder
	for _, in := range infos {
		key.WriteString(nodeKey(in))
		key.WriteByte('\n')
	}
	if key.String() != s.nodesKey || len(s.nodes) != len(infos) {
		s.nodes, s.nodesKey, s.needsBuild = infos, key.String(), true
	}
}

func (s *Scheduler) tenant(name string) int {
	if t, ok := s.tenantIdx[name]; ok {
		return t
	}
	w, ok := s.cfg.TenantWeights[name]
	if !ok {
		w = 1
	}
	t := s.host.AddTenant(name, w)
	s.tenantIdx[name] = t
	return t
}

// newJob adds a job for a group of pods seen for the first time.
func (s *Scheduler) newJob(ctx context.Context, key string, gang, stable bool, size int, created time.Time, pods []*corev1.Pod) {
	p0 := pods[0]
	// A pending job reaches the policy at this round: a burst of pods
	// created over a second reaches the scheduler over that second, and a
	// replay that let them all arrive at the burst's instant would let its
	// policy choose among jobs this one had not seen.
	queued := created
	if bound := slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" }); !bound && s.roundNow.After(created) {
		queued = s.roundNow
	}
	j := &job{key: key, ns: p0.Namespace, gang: gang, stable: stable, size: size, queuedAt: queued, submitted: created}
	if n, ok := readAttempts(pods); ok {
		// A recreated job's history, as its last Bindings wrote it: a
		// restarted scheduler keeps counting its preemptions.
		j.preempted = n.Preempted
	}
	if gang && size == 0 {
		j.size = s.podGroupSize(ctx, p0)
	}
	for _, p := range pods {
		m := &member{name: p.Name}
		j.members = append(j.members, m)
		if err := s.refresh(j, m, p); err != "" && j.err == "" {
			j.err = err
		}
	}
	est, oracle := estimates(p0)
	prio := 0
	if p0.Spec.Priority != nil {
		prio = int(*p0.Spec.Priority)
	}
	name := p0.Namespace + "/" + p0.Name
	if gang {
		name = key
	}
	submit := s.at(created)
	j.id = s.host.AddJob(policies.Job{Name: name, Tenant: s.tenant(tenantOf(p0)), Priority: prio, Submit: submit, Queued: submit,
		Estimate: est, Oracle: oracle, Req: membersRequest(j)})
	s.jobs = append(s.jobs, j)
	s.byKey[key] = j
	if assign := committedPlacement(j); assign != nil {
		// A placement this scheduler committed before it stopped: finish
		// it rather than choose again (doc.go).
		j.assign, j.complete, j.state = assign, true, running
		s.needsBuild = true
		if slices.ContainsFunc(j.members, func(m *member) bool { return !m.ended && m.node == "" }) {
			s.logf("%s: completing the placement committed before a restart", key)
		}
		return
	}
	for _, m := range j.members {
		if m.node != "" {
			j.state = running
			s.needsBuild = true
			return
		}
	}
	if gang && len(j.members) < j.size {
		j.state = waiting
		return
	}
	s.admit(j)
}

// refresh records what pod p says of member m; it returns why p cannot
// be a request ("" when it can).
func (s *Scheduler) refresh(j *job, m *member, p *corev1.Pod) string {
	m.pod, m.uid, m.node, m.tols = p, p.UID, p.Spec.NodeName, p.Spec.Tolerations
	m.ended = finished(p)
	r, err := podRequest(p)
	m.req = r
	if err != nil {
		return fmt.Sprintf("pod %s/%s %v", p.Namespace, p.Name, err)
	}
	return ""
}

// update applies what the API server says now of a known job's pods
// (nil: all gone).
func (s *Scheduler) update(j *job, pods []*corev1.Pod) {
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	for _, m := range j.members {
		if p := byName[m.name]; p != nil && p.UID == m.uid {
			s.refresh(j, m, p)
			delete(byName, m.name)
		} else {
			m.ended, m.pod = true, nil
		}
	}
	if j.state == evicting && !slices.ContainsFunc(j.members, func(m *member) bool { return m.pod != nil }) {
		s.evictionDone(j)
	}
	if j.state == waiting || j.state == evicted {
		for _, p := range pods {
			if byName[p.Name] != nil && !finished(p) && p.DeletionTimestamp == nil {
				m := &member{name: p.Name}
				j.members = append(j.members, m)
				if err := s.refresh(j, m, p); err != "" && j.err == "" {
					j.err = err
				}
			}
		}
		slices.SortFunc(j.members, func(a, b *member) int { return strings.Compare(a.name, b.name) })
	}
	allEnded, anyBound := true, false
	for _, m := range j.members {
		allEnded = allEnded && m.ended
		anyBound = anyBound || (m.node != "" && !m.ended)
	}
	switch j.state {
	case waiting:
		if allEnded {
			s.drop(j)
		} else if len(j.members) >= j.size {
			// The policy sees the gang from now on, when its last
			// member came: that is its arrival for a replay.
			if s.roundNow.After(j.queuedAt) {
				j.queuedAt = s.roundNow
			}
			s.host.Job(j.id).Req = membersRequest(j)
			s.admit(j)
		}
	case evicted:
		if liveMembers(j) >= j.size {
			// Its pods are back: the policy, which has had the job in
			// its queue since the preemption's end, may start it.
			s.host.Job(j.id).Req = membersRequest(j)
			j.state = queued
		}
	case unschedulable:
		if allEnded {
			s.drop(j)
		}
	case queued:
		switch {
		case allEnded:
			// The policy's queue still holds it, and the contract has no
			// event that takes a queued job back: the books are rebuilt.
			s.drop(j)
			s.needsBuild = true
		case anyBound:
			// Bound by someone else: rebuilt, running where it is.
			j.state, s.needsBuild = running, true
		}
	case running:
		if allEnded {
			s.end(j)
		}
	case limbo:
		switch {
		case allEnded:
			s.drop(j)
		case anyBound:
			j.state = running
			s.adopt(j)
		default:
			j.state = queued
			s.host.Job(j.id).Queued = s.at(s.cfg.Now())
			s.host.Queue(j.id)
		}
	}
}

func (s *Scheduler) drop(j *job) {
	j.state = done
	delete(s.byKey, j.key)
}

// end releases a running job whose pods have all ended.
func (s *Scheduler) end(j *job) {
	if j.place != nil {
		s.host.Stop(j.id, j.place)
		j.place = nil
		s.released = append(s.released, j)
	}
	s.drop(j)
}

// membersRequest is the policy's request of job j: its members' pods
// together.
func membersRequest(j *job) hwmodel.Request {
	reqs := make([]podReq, len(j.members))
	for i, m := range j.members {
		reqs[i] = m.req
	}
	return request(reqs)
}

// liveMembers counts a job's members that have not ended.
func liveMembers(j *job) int {
	n := 0
	for _, m := range j.members {
		if !m.ended {
			n++
		}
	}
	return n
}

// markReleased writes brigade.sim/released-at, the round's clock, on the
// pods of the jobs whose end the round booked: when the policy saw their
// resources free, which is the end a replay must give them (the API's
// finishedAt keeps whole seconds, and comes before the scheduler hears of
// it). A pod gone or a failed patch leaves the export finishedAt.
func (s *Scheduler) markReleased(ctx context.Context) {
	if len(s.released) == 0 {
		return
	}
	patch := []byte(`{"metadata":{"annotations":{"` + AnnoReleasedAt + `":"` + s.roundNow.UTC().Format(time.RFC3339Nano) + `"}}}`)
	for _, j := range s.released {
		for _, m := range j.members {
			if m.pod == nil {
				continue
			}
			if _, err := s.client.CoreV1().Pods(j.ns).Patch(ctx, m.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				s.logf("%s: recording its release on pod %s: %v", j.key, m.name, err)
			}
		}
	}
	s.released = s.released[:0]
}

// rebuild builds the cluster, the policy and the host's books afresh
// from the nodes and the jobs: what a restart does, and what a change of
// the nodes (or a queued job's deletion, which no policy event can say)
// needs. Running jobs are booked where their pods are, in job order;
// queued jobs are queued again.
func (s *Scheduler) rebuild() error {
	s.needsBuild = false
	hw := make([]hwmodel.Node, len(s.nodes))
	clear(s.nodeIdx)
	for i, n := range s.nodes {
		hw[i] = n.hw
		s.nodeIdx[n.name] = i
	}
	cl, err := hwmodel.NewCluster(hw)
	if err != nil {
		return fmt.Errorf("building the cluster from the nodes: %w", err)
	}
	pol, err := s.spec.New()
	if err != nil {
		return err
	}
	jobs := make([]policies.Job, s.host.NumJobs())
	for i := range jobs {
		jobs[i] = *s.host.Job(policies.JobID(i))
	}
	tenants := slices.Clone(s.host.Tenants())
	for i := range tenants {
		tenants[i] = policies.Tenant{Name: tenants[i].Name, Weight: tenants[i].Weight}
	}
	if err := s.host.Init(cl, tenants, jobs); err != nil {
		return err
	}
	s.cluster, s.policy = cl, pol
	for _, j := range s.jobs {
		switch j.state {
		case running:
			s.adopt(j)
			crashpoint.At(crashpoint.Rebuilding)
		case queued, unschedulable:
			s.admit(j)
		case evicting, evicted:
			if j.stable {
				s.host.Queue(j.id) // preempted: queued until it starts again
			}
		}
	}
	return nil
}

// adopt books a running job where its pods are (bound, or assigned by a
// committed placement): on each node the GPUs it needs, the lowest free
// first (the device plugin chose the real ones), a free instance of its
// MIG profile, and its CPU and memory. Pods on nodes outside the cluster
// (cordoned, gone) are not booked; nor is a job that no longer fits (the
// node was overcommitted by another scheduler), which is logged.
func (s *Scheduler) adopt(j *job) {
	j.place = nil
	per := map[int]*hwmodel.Share{}
	var order []int
	for _, m := range j.members {
		node := m.node
		if node == "" {
			node = j.assign[m.name]
		}
		i, ok := s.nodeIdx[node]
		if m.ended || !ok {
			continue
		}
		if m.req.mig != "" {
			g, k := s.findMIG(i, m.req.mig)
			if g < 0 {
				s.logf("%s: pod %s on %s: no free MIG instance %s to book", j.key, m.name, node, m.req.mig)
				continue
			}
			sh := s.cluster.MIGShare(i, g, k, m.req.cpu, m.req.mem)
			order = append(order, -1-len(order))
			per[order[len(order)-1]] = &sh
			continue
		}
		sh := per[i]
		if sh == nil {
			sh = &hwmodel.Share{Node: i}
			per[i] = sh
			order = append(order, i)
		}
		sh.CPUMilli += m.req.cpu
		sh.MemoryMiB += m.req.mem
		for n, g := m.req.gpus, 0; n > 0 && g < s.cluster.NodeGPUs(i); g++ {
			if sh.GPUs&(1<<g) == 0 && !s.cluster.IsMIG(i, g) && s.cluster.FreeMilli(i, g) == hwmodel.MilliPerGPU {
				sh.GPUs |= 1 << g
				sh.Milli = hwmodel.MilliPerGPU
				n--
			}
		}
	}
	var p hwmodel.Placement
	for _, k := range order {
		p = append(p, *per[k])
	}
	if len(p) == 0 {
		return
	}
	// When it started, so that backfill's estimate of its end counts from
	// there (a pod's start time, else its binding's moment: now).
	start := s.at(s.cfg.Now())
	j.boundAt = s.cfg.Now()
	for _, m := range j.members {
		if m.pod != nil && m.pod.Status.StartTime != nil {
			start = min(start, s.at(m.pod.Status.StartTime.Time))
		}
		if m.pod != nil {
			if t := scheduledAt(m.pod); !t.IsZero() && t.Before(j.boundAt) {
				j.boundAt = t
			}
		}
	}
	s.host.Job(j.id).Start = start
	if err := s.host.Start(j.id, p); err != nil {
		s.logf("%s: runs where the books have no room (%v); it is not booked", j.key, err)
		return
	}
	j.place = p
}

// findMIG is a free instance of the profile on node i: (GPU, instance),
// or (-1, -1).
func (s *Scheduler) findMIG(i int, profile string) (int, int) {
	r := hwmodel.MIGRequest{Profile: profile}
	for g := range s.cluster.NodeGPUs(i) {
		if k := s.cluster.FindMIGInstance(i, g, r); k >= 0 {
			return g, k
		}
	}
	return -1, -1
}
