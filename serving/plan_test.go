package serving

import (
	"strings"
	"testing"
)

// NewFixed runs the service alone: warm, without autoscaling, incidents or
// batch jobs, at exactly the count asked for, on a cluster just big
// enough, and leaves the spec it was given as it was.
func TestFixed(t *testing.T) {
	e, err := LoadExperiment("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFixed(&e.Spec, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Service != "chat" || f.GPUModel != "H100-80GB" || f.GPUsPerReplica != 2 || strings.Join(f.Classes, ",") != "interactive,batch-api" {
		t.Errorf("fixed %+v", f)
	}
	for _, n := range []int{1, 5} {
		r, err := f.Run(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Services[0]
		if len(r.Services) != 1 || len(s.Replicas) != n || s.ScaleOuts != 0 || s.ScaleIns != 0 || r.Batch == nil || len(r.Batch.Jobs) != 0 {
			t.Fatalf("%d replicas: %d services, %d replicas, scale-outs %d, batch %+v", n, len(r.Services), len(s.Replicas), s.ScaleOuts, r.Batch)
		}
		for _, rep := range s.Replicas {
			if rep.Ready != 0 {
				t.Errorf("%d replicas: replica %d ready at %v, want warm at 0", n, rep.ID, rep.Ready)
			}
		}
		// 4 replicas of 2 GPUs fill an 8-GPU node.
		if nodes := (n + 3) / 4; s.Replicas[n-1].Node >= nodes {
			t.Errorf("%d replicas: a replica on node %d of a %d-node cluster", n, s.Replicas[n-1].Node, nodes)
		}
	}
	if e.Spec.Services[0].Autoscale == nil || len(e.Spec.Services[0].Incidents) == 0 || e.Spec.Services[0].Replica.LoadTime == 0 {
		t.Error("NewFixed changed the spec it was given")
	}
	// A constant rate replaces the schedule.
	f5, err := NewFixed(&e.Spec, "chat", 5)
	if err != nil {
		t.Fatal(err)
	}
	if a := f5.spec.Services[0].Arrivals; a.Rate != 5 || len(a.Steps) != 0 {
		t.Errorf("arrivals at 5 rps: %+v", a)
	}
	two := e.Spec
	two.Services = append([]Service{}, e.Spec.Services...)
	two.Services = append(two.Services, e.Spec.Services[0])
	two.Services[1].Name = "chat2"
	for _, tc := range []struct {
		spec    *Spec
		service string
		rate    float64
		want    string
	}{
		{nil, "", 0, "needs a Spec"},
		{&e.Spec, "x", 0, `no service "x" (services: chat)`},
		{&two, "", 0, "the spec has 2 services (chat, chat2): name the one to plan"},
		{&e.Spec, "", -1, "the arrival rate must be a finite number >= 0, got -1"},
	} {
		if _, err := NewFixed(tc.spec, tc.service, tc.rate); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewFixed(%q, %g): %v, want %q", tc.service, tc.rate, err, tc.want)
		}
	}
	if _, err := NewFixed(&two, "chat2", 0); err != nil {
		t.Errorf("naming one of two services: %v", err)
	}
}

func TestServiceResultMetric(t *testing.T) {
	cls := ClassResult{Name: "interactive", Requests: 200, Unfinished: 20, SLOAttained: 0.9, Throughput: 3, ErrorRate: 0.01,
		TTFT: Latency{Mean: 0.1, P50: 0.2, P95: 0.3, P99: 0.4, Max: 0.5}, E2E: Latency{P99: 7}, QueueWait: Latency{Mean: 0.05}}
	s := ServiceResult{Name: "chat", All: ClassResult{Requests: 0, SLOAttained: 0.8}, Classes: []ClassResult{cls}, Saturation: 0.7}
	for _, tc := range []struct {
		class, name string
		want        float64
		err         string
	}{
		{"interactive", "ttft_mean", 0.1, ""},
		{"interactive", "ttft_p50", 0.2, ""},
		{"interactive", "ttft_p95", 0.3, ""},
		{"interactive", "ttft_p99", 0.4, ""},
		{"interactive", "ttft_max", 0.5, ""},
		{"interactive", "e2e_p99", 7, ""},
		{"interactive", "wait_mean", 0.05, ""},
		{"interactive", "slo", 0.9, ""},
		{"interactive", "errors", 0.01, ""},
		{"interactive", "unfinished", 0.1, ""},
		{"interactive", "throughput", 3, ""},
		{"", "slo", 0.8, ""},
		{"", "unfinished", 0, ""}, // no requests: nothing unfinished
		{"", "saturation", 0.7, ""},
		{"interactive", "saturation", 0, `no metric "saturation" for class interactive of service chat`},
		{"", "ttft_p98", 0, `no metric "ttft_p98" for service chat`},
		{"", "latency", 0, `no metric "latency"`},
		{"batch", "slo", 0, `service chat has no class "batch"`},
	} {
		v, err := s.Metric(tc.class, tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s of %q: %g, %v; want an error %q", tc.name, tc.class, v, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.want {
			t.Errorf("%s of %q: %g, %v; want %g", tc.name, tc.class, v, err, tc.want)
		}
	}
}
