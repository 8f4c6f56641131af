package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kube/internal/crashpoint"
	"github.com/brigadesim/brigade/policies"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// admit queues a job, or holds it as unschedulable when no node could
// ever hold it: a policy would otherwise keep it at the head of its
// queue for ever.
func (s *Scheduler) admit(j *job) {
	if why := s.never(j); why != "" {
		j.state = unschedulable
		if j.warned != why {
			j.warned = why
			s.toWarn = append(s.toWarn, j)
		}
		return
	}
	j.state, j.warned = queued, ""
	s.host.Queue(j.id)
}

// never says why no node could ever hold the job ("" if one could), as
// runner.CheckFits refuses such a job in a simulation: each pod must
// have a node it tolerates that holds it alone (its GPUs, or an instance
// of its MIG profile, and its CPU and memory), and a gang's GPUs must fit
// on nodes of one GPU model that all its pods tolerate (hwmodel's gang
// rule).
func (s *Scheduler) never(j *job) string {
	if j.err != "" {
		return j.err
	}
	if len(s.nodes) == 0 {
		return "no schedulable node"
	}
	for _, m := range j.members {
		if j.gang && m.req.mig != "" {
			return fmt.Sprintf("pod %s asks for a MIG instance in a gang; a gang's pods get whole GPUs", m.name)
		}
		if m.ended {
			continue
		}
		tainted, small := 0, 0
		fits := false
		for _, n := range s.nodes {
			if !tolerates(m.tols, n.taints) {
				tainted++
				continue
			}
			if holds(n, m.req) {
				fits = true
				break
			}
			small++
		}
		if !fits {
			return fmt.Sprintf("0/%d nodes can hold pod %s (%s): %d have taints it does not tolerate, %d are too small",
				len(s.nodes), m.name, describe(m.req), tainted, small)
		}
	}
	req := s.host.Job(j.id).Req
	if !j.gang || req.GPUs == 0 {
		return ""
	}
	byModel := map[hwmodel.ModelID]int{}
	most := 0
	for _, n := range s.nodes {
		all := true
		for _, m := range j.members {
			all = all && tolerates(m.tols, n.taints)
		}
		if all {
			byModel[n.hw.Model] += wholeGPUs(n)
			most = max(most, byModel[n.hw.Model])
		}
	}
	if req.GPUs > most {
		return fmt.Sprintf("the gang asks for %d GPUs; a gang runs on one GPU model and the nodes all its pods tolerate hold at most %d of one", req.GPUs, most)
	}
	return ""
}

func describe(r podReq) string {
	g := strconv.Itoa(r.gpus) + " GPUs"
	if r.mig != "" {
		g = "MIG " + r.mig
	}
	return fmt.Sprintf("%s, %d milli-CPU, %d MiB", g, r.cpu, r.mem)
}

func wholeGPUs(n nodeInfo) int {
	c := 0
	for g := range n.hw.GPUs {
		if g >= len(n.hw.MIG) || len(n.hw.MIG[g]) == 0 {
			c++
		}
	}
	return c
}

// holds reports whether node n, empty, could hold a pod of request r.
func holds(n nodeInfo, r podReq) bool {
	if r.cpu > n.hw.CPUMilli || r.mem > n.hw.MemoryMiB {
		return false
	}
	if r.mig == "" {
		return r.gpus <= wholeGPUs(n)
	}
	k, _, ok := hwmodel.LookupMIGProfile(n.hw.Model, r.mig)
	if !ok {
		return false
	}
	for _, l := range n.hw.MIG {
		for _, in := range l {
			if in.Profile == k {
				return true
			}
		}
	}
	return false
}

// warnUnschedulable tells the pods of jobs found unschedulable why, as
// kube-scheduler does: a Warning event and PodScheduled=False with reason
// Unschedulable.
func (s *Scheduler) warnUnschedulable(ctx context.Context) {
	for _, j := range s.toWarn {
		if j.state != unschedulable {
			continue
		}
		for _, m := range j.members {
			if m.ended || m.pod == nil {
				continue
			}
			s.logf("%s/%s is unschedulable: %s", j.ns, m.name, j.warned)
			if err := s.markUnschedulable(ctx, m.pod, j.warned); err != nil {
				s.logf("%s/%s: telling it why it is unschedulable: %v", j.ns, m.name, err)
			}
		}
	}
	s.toWarn = s.toWarn[:0]
}

func (s *Scheduler) markUnschedulable(ctx context.Context, p *corev1.Pod, why string) error {
	now := metav1.NewTime(s.cfg.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, now.UnixNano()), Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Reason:         "FailedScheduling", Message: why, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: s.cfg.Name},
		FirstTimestamp: now, LastTimestamp: now, Count: 1, ReportingController: s.cfg.Name,
	}
	if _, err := s.client.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return err
	}
	q := p.DeepCopy()
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: why, LastTransitionTime: now}
	set := false
	for i := range q.Status.Conditions {
		if q.Status.Conditions[i].Type == corev1.PodScheduled {
			q.Status.Conditions[i], set = cond, true
		}
	}
	if !set {
		q.Status.Conditions = append(q.Status.Conditions, cond)
	}
	_, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, q, metav1.UpdateOptions{})
	return err
}

// apply carries out one decision in the books (the host's Start, or the
// mark of a preemption), or says why not. The API calls come after the
// call: Round binds and evicts what apply accepted.
func (s *Scheduler) apply(d policies.Decision) string {
	if d.Job < 0 || int(d.Job) >= len(s.jobs) {
		return fmt.Sprintf("job %d does not exist", d.Job)
	}
	j := s.jobs[d.Job]
	switch d.Kind {
	case policies.Preempt:
		if j.state != running {
			return fmt.Sprintf("job %s is not running", j.key)
		}
		s.preempt(j)
		if j.state == evicting {
			s.evicts = append(s.evicts, j)
		}
		return ""
	case policies.Start:
	default:
		return "the scheduler applies Start and Preempt decisions; MIG layouts are the device plugin's"
	}
	switch j.state {
	case queued:
	case evicting, evicted:
		return fmt.Sprintf("job %s was preempted and its pods are not back yet (its controller creates them again)", j.key)
	default:
		return fmt.Sprintf("job %s is not queued", j.key)
	}
	var reason string
	var assign map[string]string
	if s.host.Job(d.Job).Req.WantsMIG() {
		reason = s.checkMIG(d.Job, d.Placement)
	} else {
		reason = s.host.CheckPlacement(d.Job, d.Placement)
	}
	place := d.Placement
	if reason == "" {
		assign, reason = s.assignPods(j, place)
		if reason != "" && !s.host.Job(d.Job).Req.WantsMIG() {
			if p, ok := s.repack(j, place); ok {
				if why := s.host.CheckPlacement(d.Job, p); why == "" {
					place = p
					assign, reason = s.assignPods(j, place)
				}
			}
		}
	}
	if reason == "" {
		if err := s.host.Start(d.Job, place); err != nil {
			reason = err.Error()
		}
	}
	if reason != "" {
		s.logf("rejected the start of %s: %s", j.key, reason)
		return reason
	}
	j.state, j.place, j.assign = running, place, assign
	s.host.Job(d.Job).Start = s.host.Now()
	j.boundAt = s.roundNow
	s.binds = append(s.binds, j)
	return ""
}

// checkMIG says why p is not a MIG job's placement: one share naming an
// instance of its profile.
func (s *Scheduler) checkMIG(id policies.JobID, p hwmodel.Placement) string {
	if len(p) != 1 || p[0].Instance == 0 || p[0].GPUCount() != 1 || p[0].Node < 0 || p[0].Node >= s.cluster.NumNodes() {
		return "a MIG pod's placement is one instance on one node"
	}
	sh := p[0]
	g := 0
	for sh.GPUs>>g&1 == 0 {
		g++
	}
	k := sh.Instance - 1
	if k >= s.cluster.MIGInstanceCount(sh.Node, g) {
		return fmt.Sprintf("GPU %d of node %s has no MIG instance %d", g, s.nodes[sh.Node].name, k)
	}
	in := s.cluster.MIGInstanceAt(sh.Node, g, k)
	if !s.host.Job(id).Req.MIG.Matches(s.cluster.NodeModel(sh.Node), in.Profile) {
		return fmt.Sprintf("instance %d of GPU %d does not match %s", k, g, s.host.Job(id).Req.MIG)
	}
	return ""
}

// assignPods gives each pod of a job its node in placement p: a pod's
// GPUs stay on one node, so each share's GPUs must be taken whole by
// pods (larger pods first, each to the first share with room whose node
// it tolerates), and every pod must tolerate its node's taints.
func (s *Scheduler) assignPods(j *job, p hwmodel.Placement) (map[string]string, string) {
	room := make([]int, len(p))
	for i, sh := range p {
		room[i] = sh.GPUCount()
	}
	ms := slices.Clone(j.members)
	slices.SortStableFunc(ms, func(a, b *member) int { return b.req.placed() - a.req.placed() })
	assign := map[string]string{}
	for _, m := range ms {
		if m.ended {
			continue
		}
		found := false
		for i, sh := range p {
			n := s.nodes[sh.Node]
			if room[i] >= m.req.placed() && tolerates(m.tols, n.taints) {
				room[i] -= m.req.placed()
				assign[m.name] = n.name
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Sprintf("no node of the placement can take pod %s (%d GPUs) whole among nodes whose taints it tolerates", m.name, m.req.placed())
		}
	}
	for i, r := range room {
		if r != 0 {
			return nil, fmt.Sprintf("the placement gives node %s %d GPUs that no pod of the job takes whole", s.nodes[p[i].Node].name, r)
		}
	}
	return assign, ""
}

// bindJob binds an accepted start's pods. A gang's placement is first
// committed (doc.go): written on every member, then bound. It makes API
// calls only; the books hear its outcome through settle.
func (s *Scheduler) bindJob(ctx context.Context, j *job) bindOutcome {
	if j.gang {
		if err := s.commit(ctx, j); err != nil {
			s.logf("%s: committing its placement: %v; it goes back to the queue", j.key, err)
			return bindUnstart
		}
	}
	return s.bindMembers(ctx, j)
}

// placementValue is the annotation that commits a gang's placement: each
// member's node, as JSON (keys sorted, so every member carries the same
// bytes).
func placementValue(assign map[string]string) string {
	b, _ := json.Marshal(assign)
	return string(b)
}

// committedPlacement is a gang's committed placement: the annotation
// every live member carries with the same value, naming a node for each;
// nil when there is none (never written, or written on some members only:
// not committed, so nothing was bound).
func committedPlacement(j *job) map[string]string {
	if !j.gang {
		return nil
	}
	val := ""
	for _, m := range j.members {
		if m.ended {
			continue
		}
		v := m.pod.Annotations[AnnoPlacement]
		if v == "" || (val != "" && v != val) {
			return nil
		}
		val = v
	}
	var assign map[string]string
	if val == "" || json.Unmarshal([]byte(val), &assign) != nil {
		return nil
	}
	for _, m := range j.members {
		if !m.ended && assign[m.name] == "" {
			return nil
		}
	}
	return assign
}

// commit writes the placement annotation on every member, each an update
// that fails on a conflict; on failure it takes back what it wrote.
func (s *Scheduler) commit(ctx context.Context, j *job) error {
	val := placementValue(j.assign)
	live := 0
	for _, m := range j.members {
		if !m.ended && m.pod != nil {
			live++
		}
	}
	var wrote []*member
	for _, m := range j.members {
		if m.ended || m.pod == nil {
			continue
		}
		q := m.pod.DeepCopy()
		if q.Annotations == nil {
			q.Annotations = map[string]string{}
		}
		q.Annotations[AnnoPlacement] = val
		got, err := s.client.CoreV1().Pods(j.ns).Update(ctx, q, metav1.UpdateOptions{})
		if err != nil {
			s.uncommit(ctx, j, wrote)
			return fmt.Errorf("pod %s: %w", m.name, err)
		}
		m.pod = got
		wrote = append(wrote, m)
		if len(wrote) < live {
			crashpoint.At(crashpoint.GangAnnotatedPartly)
		}
	}
	crashpoint.At(crashpoint.GangCommitted)
	return nil
}

// uncommit removes the annotation from members (best effort): a
// placement on some members only is not committed anyway.
func (s *Scheduler) uncommit(ctx context.Context, j *job, ms []*member) {
	for _, m := range ms {
		q := m.pod.DeepCopy()
		delete(q.Annotations, AnnoPlacement)
		if got, err := s.client.CoreV1().Pods(j.ns).Update(ctx, q, metav1.UpdateOptions{}); err == nil {
			m.pod = got
		}
	}
}

// bindMembers binds each member not yet bound to its node. A single pod
// whose bind fails is unstarted (the next round reads what became of
// it); a gang member's failure has the books rebuilt from the API
// server's truth, since its other members may be bound already, and
// the rest of its committed placement bound at the next round.
func (s *Scheduler) bindMembers(ctx context.Context, j *job) bindOutcome {
	out := bindDone
	sent := false
	for _, m := range j.members {
		if m.ended || m.node != "" {
			continue
		}
		if sent && j.gang {
			crashpoint.At(crashpoint.GangBetweenBinds)
		}
		sent = true
		node := j.assign[m.name]
		if err := s.bind(ctx, j, m, node); err != nil {
			s.logf("%s: binding pod %s to %s: %v", j.key, m.name, node, err)
			if !j.gang {
				return bindUnstart
			}
			// Its placement is committed: the next round binds the
			// members still unbound to it, as a restart would.
			out, j.complete = bindRebuild, true
		}
	}
	return out
}

// bind binds one pod; on failure it reads the pod back, so a pod already
// bound where it should be (an earlier bind went through) counts as
// bound and a pod gone as ended, never bound again blindly.
func (s *Scheduler) bind(ctx context.Context, j *job, m *member, node string) error {
	ns := j.ns
	// The round that decided the start, which a deferred Binding follows.
	anno := map[string]string{AnnoBoundAt: j.boundAt.UTC().Format(time.RFC3339Nano),
		AnnoQueuedAt: j.queuedAt.UTC().Format(time.RFC3339Nano)}
	if len(j.preempted) > 0 {
		note, _ := json.Marshal(attemptsNote{Submitted: j.submitted.UTC(), Preempted: j.preempted})
		anno[AnnoAttempts] = string(note)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: ns, UID: m.uid, Annotations: anno},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	t0 := time.Now()
	err := s.client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{})
	d := time.Since(t0)
	s.cfg.Metrics.bindDone(d, err == nil)
	if err == nil {
		crashpoint.At(crashpoint.BoundUnbooked)
		m.node = node
		return nil
	}
	cur, gerr := s.client.CoreV1().Pods(ns).Get(ctx, m.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(gerr) || gerr == nil && cur.UID != m.uid:
		m.ended = true
		return fmt.Errorf("the pod is gone (%w)", err)
	case gerr != nil:
		return err
	case cur.Spec.NodeName == node:
		m.node = node
		return nil
	case cur.Spec.NodeName != "":
		m.node = cur.Spec.NodeName
		return fmt.Errorf("already bound to %s", cur.Spec.NodeName)
	}
	return err
}

// unstart takes back an accepted start whose pods were not bound: the
// policy hears the end, and the next round reads what became of the pods
// (bound elsewhere: booked there; gone: dropped; else queued again).
func (s *Scheduler) unstart(j *job) {
	if j.place != nil {
		s.host.Stop(j.id, j.place)
	}
	j.place, j.state = nil, limbo
}

// completeGangs binds the members of committed placements found at a
// restart or left unbound by a failed Binding.
func (s *Scheduler) completeGangs(ctx context.Context) {
	for _, j := range s.jobs {
		if !j.complete || j.state != running {
			continue
		}
		j.complete = false
		missing, bound := "", false
		var live []*member
		for _, m := range j.members {
			if m.ended {
				continue
			}
			live = append(live, m)
			bound = bound || m.node != ""
			if _, ok := s.nodeIdx[j.assign[m.name]]; !ok {
				missing = j.assign[m.name]
			}
		}
		if missing != "" && !bound {
			// Its node left before any member was bound: the placement
			// is taken back and the gang queued again.
			s.logf("%s: its committed placement names node %s, which is no longer schedulable; it goes back to the queue", j.key, missing)
			s.uncommit(ctx, j, live)
			s.unstart(j)
			continue
		}
		s.settle(j, s.bindMembers(ctx, j))
	}
}
