package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
	corev1 "k8s.io/api/core/v1"
)

// A job's arrival in the export is the queued-at its Binding carried,
// when it lies between its submission and its start; anything else
// falls back to the submission.
func TestExportArrival(t *testing.T) {
	submitted := t0
	stamp := func(queued, bound time.Time) *corev1.Pod {
		p := gpuPod("p", 1, 0)
		p.Spec.NodeName = "n0"
		p.Annotations[AnnoQueuedAt] = queued.Format(time.RFC3339Nano)
		p.Annotations[AnnoBoundAt] = bound.Format(time.RFC3339Nano)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want time.Time
	}{
		{"seen after submission", stamp(t0.Add(700*time.Millisecond), t0.Add(2*time.Second)), t0.Add(700 * time.Millisecond)},
		{"before submission", stamp(t0.Add(-time.Second), t0.Add(2*time.Second)), submitted},
		{"after its start", stamp(t0.Add(3*time.Second), t0.Add(2*time.Second)), submitted},
		{"unreadable", func() *corev1.Pod {
			p := stamp(t0, t0)
			p.Annotations[AnnoQueuedAt] = "soon"
			return p
		}(), submitted},
	} {
		if got := arrival([]*corev1.Pod{tc.pod}, submitted); !got.Equal(tc.want) {
			t.Errorf("%s: arrival %v, want %v", tc.name, got.Sub(t0), tc.want.Sub(t0))
		}
	}
}

// The export's timeline gives the utilisation by hand: 2 GPUs for 10 s
// and 4 GPUs for 10 s of 4 GPUs over 20 s is 60/80; a job cut by the
// export's end holds its GPUs to the end.
func TestExportTimelineUtilisation(t *testing.T) {
	s := hwmodel.Time(time.Second.Microseconds())
	job := func(gpus int, submit, start, end hwmodel.Time, state results.JobState) results.JobRecord {
		return results.JobRecord{GPUs: gpus, GPUMilli: hwmodel.MilliPerGPU, Submit: submit, Start: start, End: end, Attempts: 1, State: state}
	}
	for _, tc := range []struct {
		name string
		jobs []results.JobRecord
		want float64
	}{
		{"ended", []results.JobRecord{job(2, 0, 0, 10*s, results.Succeeded), job(4, 0, 10*s, 20*s, results.Succeeded)}, 60.0 / 80},
		{"one cut at the end", []results.JobRecord{job(2, 0, 0, 20*s, "running"), job(2, 0, 10*s, 20*s, results.Succeeded)}, 60.0 / 80},
	} {
		sum := results.Summarize(results.RunInput{Policy: "p", TotalGPUs: 4, Jobs: tc.jobs, Timeline: exportTimeline(tc.jobs, 4, 20*s)})
		if math.Abs(sum.GPUUtilisation-tc.want) > 1e-9 {
			t.Errorf("%s: gpu_utilisation %v, want %v", tc.name, sum.GPUUtilisation, tc.want)
		}
	}
}
