package sim

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// scripted is a Coupled model that runs a fixed list of actions.
type scripted struct {
	steps []scriptStep
	k     int
	held  []hwmodel.Placement
	log   []string
	err   error
}

type scriptStep struct {
	at       hwmodel.Time
	gpus     int
	preempt  int // max priority (exclusive) of the jobs it may preempt; 0: none
	release  bool
	wantJobs int // jobs preempted expected
}

func (s *scripted) Next() (hwmodel.Time, bool) {
	if s.k < len(s.steps) {
		return s.steps[s.k].at, true
	}
	return 0, false
}

func (s *scripted) Waiting() bool { return false }

func (s *scripted) Step(a *Access) error {
	st := s.steps[s.k]
	s.k++
	switch {
	case st.release:
		for _, p := range s.held {
			if err := a.Release(p); err != nil {
				return err
			}
		}
		s.held = nil
		s.log = append(s.log, fmt.Sprintf("%d: released", a.Now()/hwmodel.Second))
	case st.preempt > 0:
		p, n, ok, err := a.AcquirePreempting(hwmodel.AnyModel, st.gpus, st.preempt)
		if err != nil {
			return err
		}
		if ok {
			s.held = append(s.held, p)
		}
		s.log = append(s.log, fmt.Sprintf("%d: %v node %d preempted %d", a.Now()/hwmodel.Second, ok, nodeOf(p), n))
	default:
		p, ok, err := a.Acquire(hwmodel.AnyModel, st.gpus)
		if err != nil {
			return err
		}
		if ok {
			s.held = append(s.held, p)
		}
		s.log = append(s.log, fmt.Sprintf("%d: %v node %d", a.Now()/hwmodel.Second, ok, nodeOf(p)))
	}
	return nil
}

func nodeOf(p hwmodel.Placement) int {
	if len(p) == 0 {
		return -1
	}
	return p[0].Node
}

// Two 4-GPU nodes full of batch jobs: node 0 holds jobs of priority 5 and
// 1 (2 GPUs each), node 1 one 4-GPU job of priority 0. A coupled model asks
// for 4 GPUs without preemption (refused), then preempting below priority
// 5: only node 1 can be freed (node 0 would need the priority-5 job), so
// its job is preempted; it reruns at the release and every job ends; the
// books (invariants) hold throughout.
func TestCoupledAcquirePreempting(t *testing.T) {
	c, err := hwmodel.NewCluster([]hwmodel.Node{
		{Name: "a", Model: 0, GPUs: 4, CPUMilli: 1 << 40, MemoryMiB: 1 << 40},
		{Name: "b", Model: 0, GPUs: 4, CPUMilli: 1 << 40, MemoryMiB: 1 << 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string, prio, gpus int, submit hwmodel.Time) workloads.Job {
		return workloads.Job{Name: name, Tenant: "t", Priority: prio, Submit: submit, Duration: 100 * hwmodel.Second,
			Req: hwmodel.Request{GPUs: gpus, GPUMilli: 1000}}
	}
	w := &workloads.Workload{Tenants: []workloads.Tenant{{Name: "t", Weight: 1}}, Jobs: []workloads.Job{
		job("hi", 5, 2, 0), job("mid", 1, 2, 0), job("low", 0, 4, hwmodel.Second),
	}}
	pol, _ := policies.New("fcfs", policies.Options{})
	m := &scripted{steps: []scriptStep{
		{at: 10 * hwmodel.Second, gpus: 4},
		{at: 20 * hwmodel.Second, gpus: 4, preempt: 5},
		{at: 30 * hwmodel.Second, gpus: 2, preempt: 1}, // only priority 0 may go: none runs
		{at: 50 * hwmodel.Second, release: true},
	}}
	e, err := New(Config{Cluster: c, Workload: w, Policy: pol, Coupled: m, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10: false node -1", "20: true node 1 preempted 1", "30: false node -1 preempted 0", "50: released"}
	if fmt.Sprint(m.log) != fmt.Sprint(want) {
		t.Fatalf("steps:\n got %v\nwant %v", m.log, want)
	}
	low := res.Jobs[2]
	if res.CoupledPreemptions != 1 || low.State != Succeeded || len(low.Log()) != 2 || low.Log()[0].Ended != AttemptPreempted {
		t.Fatalf("low job: %+v, coupled preemptions %d", low, res.CoupledPreemptions)
	}
	if low.Log()[1].Start != 50*hwmodel.Second {
		t.Errorf("low job restarted at %v, want at the release (50 s)", low.Log()[1].Start)
	}
	for i, o := range res.Jobs[:2] {
		if len(o.Log()) != 1 || o.End != 100*hwmodel.Second {
			t.Errorf("job %d was disturbed: %+v", i, o)
		}
	}
}

// A coupled model whose Next does not move past its step is a bug the
// engine reports rather than looping on.
func TestCoupledMustAdvance(t *testing.T) {
	c, _ := hwmodel.NewCluster([]hwmodel.Node{{Name: "a", Model: 0, GPUs: 1, CPUMilli: 1, MemoryMiB: 1}})
	pol, _ := policies.New("fcfs", policies.Options{})
	e, err := New(Config{Cluster: c, Workload: &workloads.Workload{}, Policy: pol, Coupled: stuck{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(); err == nil {
		t.Fatal("want an invariant error")
	}
}

type stuck struct{}

func (stuck) Next() (hwmodel.Time, bool) { return 5, true }
func (stuck) Waiting() bool              { return false }
func (stuck) Step(*Access) error         { return nil }
