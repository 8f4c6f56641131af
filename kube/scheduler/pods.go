package scheduler

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	corev1 "k8s.io/api/core/v1"
)

// Labels and annotations the scheduler reads and writes on pods.
const (
	LabelTenant   = "brigade.sim/tenant"
	LabelGang     = "brigade.sim/gang"
	LabelGangSize = "brigade.sim/gang-size"
	LabelPodGroup = "scheduling.x-k8s.io/pod-group"
	AnnoEstimate  = "brigade.sim/estimate"
	AnnoDuration  = "brigade.sim/duration"
	AnnoPlacement = "brigade.sim/placement"
	// AnnoBoundAt is the scheduler's clock at the round that started the
	// pod's job (RFC 3339 with nanoseconds), set through the Binding: the
	// API's own times (conditions, startTime) keep whole seconds only, and
	// jobs one round starts share it, as they share a start in a replay.
	AnnoBoundAt = "brigade.sim/bound-at"
	// AnnoReleasedAt is the scheduler's clock at the round that saw the
	// pod's job end and freed its resources in the policy's books.
	AnnoReleasedAt = "brigade.sim/released-at"
	// AnnoQueuedAt is when the scheduler first saw the pod's job pending
	// (the round's clock), set through the Binding: when its policy could
	// first choose the job, the arrival a replay must give it.
	AnnoQueuedAt = "brigade.sim/queued-at"
	// AnnoSubmittedAt is when the pod's job was submitted (RFC 3339 with
	// nanoseconds), as a submitter that creates a burst of pods for one
	// instant says it: the creation timestamp keeps whole seconds, and a
	// burst may straddle a second's edge.
	AnnoSubmittedAt = "brigade.sim/submitted-at"
	AnnoEvicting    = "brigade.sim/evicting"
	// LabelJob names a pod's job in its namespace (a label or an
	// annotation): a pod a controller recreates under the same job name,
	// after an eviction, is the same policy job, with its submission, its
	// attained service and its place in the queue, as a gang's members
	// are by their gang's name.
	LabelJob = "brigade.sim/job"
	// AnnoAttempts holds what a job did before its pods were recreated:
	// its first submission and its preempted attempts (attemptsNote, as
	// JSON), written through the Binding of each later attempt, so that
	// the export, and a restarted scheduler, read the job's whole history
	// from its current pods.
	AnnoAttempts   = "brigade.sim/attempts"
	defaultEstimat = hwmodel.Hour
)

// podReq is what one pod asks for: whole GPUs from its nvidia.com/gpu
// limit (or request), or one MIG instance of a profile, and the CPU and
// memory requests of its containers (init containers count by their
// largest, as Kubernetes does).
type podReq struct {
	gpus int
	mig  string
	cpu  int64
	mem  int64
}

// placed is how many GPUs of a placement's share the pod takes: a MIG
// instance's share names its one GPU.
func (r podReq) placed() int {
	if r.mig != "" {
		return 1
	}
	return r.gpus
}

func podRequest(p *corev1.Pod) (podReq, error) {
	var r podReq
	add := func(c *corev1.Container, init bool) error {
		res := c.Resources
		g := quantity(res.Limits, ResourceGPU)
		if g == 0 {
			g = quantity(res.Requests, ResourceGPU)
		}
		cpu := res.Requests.Cpu().MilliValue()
		mem := mebibytes(*res.Requests.Memory())
		mig := ""
		for _, l := range []corev1.ResourceList{res.Limits, res.Requests} {
			for name, q := range l {
				if prof, ok := strings.CutPrefix(string(name), migResourcePre); ok && q.Value() > 0 {
					if q.Value() > 1 || (mig != "" && mig != prof) {
						return fmt.Errorf("container %s asks for more than one MIG instance; a pod gets one", c.Name)
					}
					mig = prof
				}
			}
		}
		if init {
			r.gpus, r.cpu, r.mem = max(r.gpus, int(g)), max(r.cpu, cpu), max(r.mem, mem)
		} else {
			r.gpus, r.cpu, r.mem = r.gpus+int(g), r.cpu+cpu, r.mem+mem
		}
		if mig != "" {
			if r.mig != "" && r.mig != mig {
				return fmt.Errorf("containers ask for MIG instances of two profiles (%s, %s); a pod gets one", r.mig, mig)
			}
			r.mig = mig
		}
		return nil
	}
	for i := range p.Spec.InitContainers {
		if err := add(&p.Spec.InitContainers[i], true); err != nil {
			return r, err
		}
	}
	for i := range p.Spec.Containers {
		if err := add(&p.Spec.Containers[i], false); err != nil {
			return r, err
		}
	}
	if r.mig != "" && r.gpus > 0 {
		return r, fmt.Errorf("asks for %d whole GPUs and a MIG instance (%s); the scheduler places one or the other", r.gpus, r.mig)
	}
	return r, nil
}

// request is the policy's request of a job of these pods: the GPUs, CPU
// and memory summed over them (a gang's shares split them across nodes).
func request(reqs []podReq) hwmodel.Request {
	var r hwmodel.Request
	for _, p := range reqs {
		r.GPUs += p.gpus
		r.CPUMilli += p.cpu
		r.MemoryMiB += p.mem
	}
	if len(reqs) == 1 && reqs[0].mig != "" {
		r.GPUs, r.MIG = 1, hwmodel.MIGRequest{Profile: reqs[0].mig}
		return r
	}
	if r.GPUs > 0 {
		r.GPUMilli = hwmodel.MilliPerGPU
	}
	return r
}

// gangKey names the gang a pod belongs to (namespace/name) and the size
// its label declares (0: not said); "" for a pod on its own. The group is
// brigade.sim/gang, else scheduler-plugins' pod-group label, else the
// Workload API's spec.schedulingGroup.podGroupName.
func gangKey(p *corev1.Pod) (string, int) {
	if g := labelOrAnnotation(p, LabelGang); g != "" {
		n, _ := strconv.Atoi(labelOrAnnotation(p, LabelGangSize))
		return p.Namespace + "/" + g, max(n, 0)
	}
	if g := p.Labels[LabelPodGroup]; g != "" {
		return p.Namespace + "/" + g, 0
	}
	if sg := p.Spec.SchedulingGroup; sg != nil && sg.PodGroupName != nil && *sg.PodGroupName != "" {
		return p.Namespace + "/" + *sg.PodGroupName, 0
	}
	return "", 0
}

// jobKey is the scheduler's key of pod p's job, and whether that key
// outlives the pod (a gang's name or brigade.sim/job, which a controller
// gives the pod it recreates) rather than naming this pod alone (its
// UID).
func jobKey(p *corev1.Pod) (key string, size int, gang, stable bool) {
	if key, size = gangKey(p); key != "" {
		return key, size, true, true
	}
	if name := labelOrAnnotation(p, LabelJob); name != "" {
		return "job/" + p.Namespace + "/" + name, 0, false, true
	}
	return "pod/" + p.Namespace + "/" + p.Name + "/" + string(p.UID), 0, false, false
}

// attemptsNote is AnnoAttempts: when the job was first submitted, and
// the start and end of each attempt its scheduler preempted, in order
// (the scheduler's round clock).
type attemptsNote struct {
	Submitted time.Time     `json:"submitted"`
	Preempted []attemptSpan `json:"preempted"`
}

type attemptSpan struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// readAttempts is the AnnoAttempts of pods' first member that carries a
// readable one; ok is false when none does. Spans that run backwards or
// out of order end the list there: the note is the scheduler's own
// writing, but it travels on pods anyone may edit.
func readAttempts(pods []*corev1.Pod) (attemptsNote, bool) {
	for _, p := range pods {
		v := p.Annotations[AnnoAttempts]
		if v == "" || len(v) > maxAttemptsNote {
			continue
		}
		var n attemptsNote
		if json.Unmarshal([]byte(v), &n) != nil || n.Submitted.IsZero() {
			continue
		}
		last := n.Submitted
		for i, a := range n.Preempted {
			if a.Start.Before(last) || a.End.Before(a.Start) {
				n.Preempted = n.Preempted[:i]
				break
			}
			last = a.End
		}
		return n, true
	}
	return attemptsNote{}, false
}

// maxAttemptsNote bounds what readAttempts parses (an annotation may hold
// 256 KiB): about 1,500 attempts.
const maxAttemptsNote = 128 << 10

// labelOrAnnotation is the pod's label key, else its annotation key: a
// gang may be named either way (an annotation has no 63-character limit).
func labelOrAnnotation(p *corev1.Pod, key string) string {
	if v := p.Labels[key]; v != "" {
		return v
	}
	return p.Annotations[key]
}

// submitSlack is how long before its creation second a pod may say it
// was submitted: a submitter that fell behind its schedule by as much
// still gives its jobs their submit times, and no pod can move itself
// further ahead in a first-come order.
const submitSlack = 10 * time.Second

// submittedAt is when the pod's job was submitted: brigade.sim/submitted-at
// when it lies between submitSlack before the creation second and that
// second's end, else the creation timestamp.
func submittedAt(p *corev1.Pod) time.Time {
	c := p.CreationTimestamp.Time
	t, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnoSubmittedAt])
	if err != nil || t.Before(c.Add(-submitSlack)) || !t.Before(c.Add(time.Second)) {
		return c
	}
	return t
}

// exportName is the name the export gives the job of pod p:
// namespace/gang for a gang's member, namespace/job for a pod with
// brigade.sim/job, namespace/name for a pod alone.
func exportName(p *corev1.Pod) string {
	if key, _ := gangKey(p); key != "" {
		return key
	}
	if name := labelOrAnnotation(p, LabelJob); name != "" {
		return p.Namespace + "/" + name
	}
	return p.Namespace + "/" + p.Name
}

// tenantOf is the pod's tenant: its brigade.sim/tenant label, else its
// namespace.
func tenantOf(p *corev1.Pod) string {
	if t := p.Labels[LabelTenant]; t != "" {
		return t
	}
	return p.Namespace
}

// parseSeconds reads a duration annotation: a Go duration (90m, 2h) or
// seconds (5400, 5400.5). ok is false for a missing, unreadable or
// non-positive value.
func parseSeconds(s string) (hwmodel.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(s); err == nil {
		return hwmodel.Time(d.Microseconds()), d > 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || f > 1e12 {
		return 0, false
	}
	return hwmodel.Time(f * 1e6), true
}

// estimates reads a pod's runtime estimate and true duration: the
// estimate is brigade.sim/estimate, else brigade.sim/duration (the
// simulator's trace knows its jobs' durations), else one hour, live
// mode's default; oracle is brigade.sim/duration (0: not given).
func estimates(p *corev1.Pod) (estimate, oracle hwmodel.Time) {
	oracle, _ = parseSeconds(p.Annotations[AnnoDuration])
	if e, ok := parseSeconds(p.Annotations[AnnoEstimate]); ok {
		return e, oracle
	}
	if oracle > 0 {
		return oracle, oracle
	}
	return defaultEstimat, 0
}

// finished reports whether a pod has ended: its resources are free.
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
