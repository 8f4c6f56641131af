package scheduler

import (
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkSchedulingCall measures the scheduling call (the policy's
// Schedule and the decisions applied to the books, no API round trip)
// with 1,000 pending pods on 150 nodes of 8 GPUs: the first call, which
// places as many as fit, then 20 calls each after 10 running pods end.
// It reports the calls' p50 and p99.
func BenchmarkSchedulingCall(b *testing.B) {
	var lat []time.Duration
	for range b.N {
		objs := []runtime.Object{}
		for i := range 150 {
			objs = append(objs, gpuNode(fmt.Sprintf("n%03d", i), "NVIDIA-H100-80GB-HBM3", 8))
		}
		for i := range 1000 {
			objs = append(objs, gpuPod(fmt.Sprintf("p%04d", i), []int{1, 2, 4, 8, 1, 2}[i%6], time.Duration(i)*time.Millisecond,
				estimate(fmt.Sprintf("%dm", 10+(i*37)%300))))
		}
		c := newCluster(objs...)
		s := newSched(b, c, "sjf+bf/bestfit")
		s.cfg.Metrics = NewMetrics()
		s.cfg.Metrics.KeepSamples()
		round(b, s)
		for k := range 20 {
			for _, bd := range c.binds[k*10 : k*10+10] {
				name := bd[:5]
				o, _ := c.cs.Tracker().Get(podsGVR, "team-a", name)
				p := o.(interface{ DeepCopyObject() runtime.Object }).DeepCopyObject()
				pp := p.(*corev1.Pod)
				pp.Status.Phase = "Succeeded"
				_ = c.cs.Tracker().Update(podsGVR, pp, "team-a")
			}
			round(b, s)
		}
		calls, _ := s.cfg.Metrics.Samples()
		lat = append(lat, calls...)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/float64(b.N), "calls/op")
}
