package workload

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kube/scheduler"
	"github.com/brigadesim/brigade/workloads"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of Options.
const (
	DefaultNamespace = "default"
	DefaultImage     = "busybox:1.36"
	DefaultNodeGPUs  = 8
)

// Options say what the trace does not.
type Options struct {
	// SchedulerName is the pods' spec.schedulerName; "" is
	// scheduler.DefaultName.
	SchedulerName string
	// Namespace of the pods; "" is DefaultNamespace.
	Namespace string
	// Image runs the pods' one container (sleep SECONDS); "" is
	// DefaultImage.
	Image string
	// NodeGPUs is the GPUs of a node: a job asking for more is a gang of
	// members of NodeGPUs each; 0 is DefaultNodeGPUs.
	NodeGPUs int
}

func (o Options) withDefaults() Options {
	if o.SchedulerName == "" {
		o.SchedulerName = scheduler.DefaultName
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.NodeGPUs <= 0 {
		o.NodeGPUs = DefaultNodeGPUs
	}
	return o
}

// Job is one trace job as pods: created together At after the first
// job's submit time.
type Job struct {
	Name     string
	At       time.Duration
	Priority int // its pods' PriorityClass value
	Pods     []*corev1.Pod
}

// PriorityClassName is the PriorityClass a pod of priority p names.
func PriorityClassName(p int) string {
	if p < 0 {
		return "brigade-priority-minus-" + strconv.Itoa(-p)
	}
	return "brigade-priority-" + strconv.Itoa(p)
}

// maxUserPriority is the highest value the API server allows a
// PriorityClass that is not a system one.
const maxUserPriority = 1_000_000_000

// Build turns a workload read from a Brigade CSV trace into jobs of pods,
// in the trace's order. Its errors are *workloads.ParseError values
// naming the job's file, line and column.
func Build(w *workloads.Workload, opt Options) ([]Job, error) {
	opt = opt.withDefaults()
	if len(w.Jobs) == 0 {
		return nil, fmt.Errorf("the workload has no jobs")
	}
	first := w.Jobs[0].Submit
	byName := map[string]string{}
	out := make([]Job, 0, len(w.Jobs))
	for i := range w.Jobs {
		j := &w.Jobs[i]
		if err := supported(j); err != nil {
			return nil, err
		}
		name := podName(j.Name)
		if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 || name == "" {
			return nil, parseError(j, "name", "want a name that makes a pod name (letters, digits and '-', at most 63), found %q", j.Name)
		}
		if other, ok := byName[name]; ok {
			return nil, parseError(j, "name", "%q and %q both make the pod name %q", other, j.Name, name)
		}
		byName[name] = j.Name
		if msgs := validation.IsValidLabelValue(j.Tenant); len(msgs) > 0 {
			return nil, parseError(j, "tenant", "want a label value (letters, digits, '-', '_' and '.', at most 63), found %q", j.Tenant)
		}
		if j.Priority > maxUserPriority || j.Priority < -maxUserPriority {
			return nil, parseError(j, "priority", "want a PriorityClass value in -%d..%d, found %d", maxUserPriority, maxUserPriority, j.Priority)
		}
		members, per := 1, j.Req.GPUs
		if j.Req.GPUs > opt.NodeGPUs && !j.Req.WantsMIG() {
			if j.Req.GPUs%opt.NodeGPUs != 0 {
				return nil, parseError(j, "gpus", "want at most %d (a node) or a multiple of %d (a gang of node-sized pods), found %d", opt.NodeGPUs, opt.NodeGPUs, j.Req.GPUs)
			}
			members, per = j.Req.GPUs/opt.NodeGPUs, opt.NodeGPUs
		}
		job := Job{Name: j.Name, Priority: j.Priority, At: time.Duration(j.Submit-first) * time.Microsecond}
		for m := range members {
			p := basePod(j, opt, name)
			cpu, mem := j.Req.CPUMilli/int64(members), j.Req.MemoryMiB/int64(members)
			if m == 0 {
				cpu += j.Req.CPUMilli % int64(members)
				mem += j.Req.MemoryMiB % int64(members)
			}
			c := &p.Spec.Containers[0]
			if cpu > 0 {
				c.Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
			}
			if mem > 0 {
				c.Resources.Requests[corev1.ResourceMemory] = *resource.NewQuantity(mem<<20, resource.BinarySI)
			}
			switch {
			case j.Req.WantsMIG():
				c.Resources.Limits[corev1.ResourceName("nvidia.com/mig-"+j.Req.MIG.Profile)] = *resource.NewQuantity(1, resource.DecimalSI)
			case per > 0:
				c.Resources.Limits[scheduler.ResourceGPU] = *resource.NewQuantity(int64(per), resource.DecimalSI)
			}
			if members > 1 {
				p.Name = fmt.Sprintf("%s-%d", name, m)
				p.Labels[scheduler.LabelGang] = name
				p.Labels[scheduler.LabelGangSize] = strconv.Itoa(members)
			} else {
				p.Labels[scheduler.LabelJob] = name
			}
			job.Pods = append(job.Pods, p)
		}
		out = append(out, job)
	}
	return out, nil
}

// basePod is a job's pod with everything but its resources.
func basePod(j *workloads.Job, opt Options, name string) *corev1.Pod {
	d := time.Duration(j.Duration) * time.Microsecond
	ann := map[string]string{scheduler.AnnoDuration: d.String()}
	if j.Estimate > 0 {
		ann[scheduler.AnnoEstimate] = (time.Duration(j.Estimate) * time.Microsecond).String()
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: opt.Namespace, Annotations: ann,
			Labels: map[string]string{scheduler.LabelTenant: j.Tenant}},
		Spec: corev1.PodSpec{
			SchedulerName:     opt.SchedulerName,
			RestartPolicy:     corev1.RestartPolicyNever,
			PriorityClassName: PriorityClassName(j.Priority),
			Containers: []corev1.Container{{Name: "main", Image: opt.Image,
				Command:   []string{"sleep", strconv.FormatFloat(d.Seconds(), 'f', -1, 64)},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}},
		},
	}
}

// supported says which of a trace job's columns a pod cannot carry.
func supported(j *workloads.Job) error {
	switch {
	case j.Duration <= 0:
		return parseError(j, "duration_s", "want a duration (a pod sleeps that long); application-model jobs cannot be pods")
	case j.Req.GPUMilli > 0 && j.Req.GPUMilli < hwmodel.MilliPerGPU:
		return parseError(j, "gpu_milli", "the scheduler places whole GPUs or MIG instances, found a share of %d", j.Req.GPUMilli)
	case j.Req.WantsMIG() && j.Req.MIG.Profile == "":
		return parseError(j, "mig_min_slices", "a pod asks for one MIG profile by name (mig_profile), not by size")
	case len(j.Deps) > 0 || j.DAG != "":
		return parseError(j, "deps", "pods have no dependencies; submit a DAG's tasks as separate traces")
	case j.MaxRetries > 0 || j.FailedAttempts > 0:
		return parseError(j, "retries", "a bare pod is never retried; want 0 retries and failed_attempts")
	case j.Deadline > 0:
		return parseError(j, "deadline_s", "the scheduler reads no deadline from a pod")
	case j.Checkpoint.Every > 0:
		return parseError(j, "checkpoint_every_s", "a pod does not checkpoint")
	case j.Req.Models != 0:
		return parseError(j, "gpu_models", "the scheduler reads no GPU model constraint from a pod")
	case j.Class != 0 || j.MeasuredOn != 0:
		return parseError(j, "class", "speed classes are the simulator's; a pod runs as long as its duration")
	case j.Dataset != 0:
		return parseError(j, "dataset", "datasets are the simulator's")
	case j.DemandMilli != 0:
		return parseError(j, "gpu_demand_milli", "processor sharing is the simulator's")
	}
	return nil
}

// parseError locates a problem at the job's line (Job.Source is
// "file:line").
func parseError(j *workloads.Job, field, format string, args ...any) error {
	e := &workloads.ParseError{File: j.Source, Field: field, Msg: fmt.Sprintf(format, args...)}
	if i := strings.LastIndexByte(j.Source, ':'); i > 0 {
		if n, err := strconv.Atoi(j.Source[i+1:]); err == nil {
			e.File, e.Line = j.Source[:i], n
		}
	}
	return e
}

// podName makes a trace name DNS-safe: lower case, each run of other
// characters than letters and digits a '-', no '-' at either end.
func podName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
