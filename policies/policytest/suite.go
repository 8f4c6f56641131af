package policytest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// Driver runs a scenario to completion under p (a Checker) and reports
// what happened: a driver's adapter to the suite.
type Driver func(t *testing.T, sc Scenario, p policies.Policy) Outcome

// DriverOptions tune TestDriver to what a driver can do.
type DriverOptions struct {
	Checker CheckerOptions
	// Deterministic drivers must give the same decisions on a second run.
	Deterministic bool
	// Scenarios replaces the standard scenarios (a driver with fewer GPUs
	// than they need, say); nil runs Scenarios().
	Scenarios []Scenario
	// MIG: the driver repartitions MIG GPUs when a policy asks; it also
	// runs MIGScenario under policies that reconfigure, and must apply
	// their Reconfigure decisions.
	MIG bool
}

// TestDriver checks a driver against the contract: it runs the standard
// scenarios under the built-in policies and under test policies that
// preempt and that issue invalid decisions, each wrapped in a Checker,
// and fails t on any violation, on a job that did not end well, or (for
// a deterministic driver) on a second run that decided differently.
func TestDriver(t *testing.T, run Driver, opt DriverOptions) {
	scenarios := opt.Scenarios
	if scenarios == nil {
		scenarios = Scenarios()
	}
	type policyCase struct {
		name string
		make func() policies.Policy
		// trust: the policy issues invalid decisions on purpose.
		trust bool
	}
	spec := func(s string) func() policies.Policy {
		return func() policies.Policy {
			p, err := policies.MustParseSpec(s).New()
			if err != nil {
				panic(err)
			}
			return p
		}
	}
	cases := []policyCase{
		{"fcfs", spec("fcfs"), false},
		{"sjf+bf", spec("sjf+bf"), false},
		{"fair/bestfit", spec("fair/bestfit"), false},
		{"priority+bf/packing", spec("priority+bf/packing"), false},
		{"preempting", func() policies.Policy { return &Preemptor{Inner: spec("fcfs")(), Every: 1} }, false},
		{"adversary", func() policies.Policy { return &Adversary{Inner: spec("fcfs")()} }, true},
	}
	if opt.MIG {
		t.Run("mig", func(t *testing.T) {
			for _, s := range []string{"fcfs+mig=dynamic", "fcfs+bf+mig=convert"} {
				c := Wrap(policies.MustParseSpec(s).MustNew(), opt.Checker)
				sc := MIGScenario()
				out := run(t, sc, c)
				if err := c.Err(); err != nil {
					t.Fatalf("%s: contract broken:\n%v", s, err)
				}
				if out.Succeeded != len(sc.Jobs) {
					t.Fatalf("%s: %d of %d jobs succeeded", s, out.Succeeded, len(sc.Jobs))
				}
				if c.Reconfigurations() == 0 {
					t.Fatalf("%s: no Reconfigure was applied; the scenario needs one", s)
				}
			}
		})
	}
	for _, sc := range scenarios {
		for _, pc := range cases {
			t.Run(sc.Name+"/"+pc.name, func(t *testing.T) {
				copt := opt.Checker
				copt.TrustNoPolicy = pc.trust
				c := Wrap(pc.make(), copt)
				out := run(t, sc, c)
				if err := c.Err(); err != nil {
					t.Fatalf("contract broken:\n%v", err)
				}
				if out.Succeeded != len(sc.Jobs) || out.Failed != 0 {
					t.Fatalf("%d succeeded and %d failed of %d jobs", out.Succeeded, out.Failed, len(sc.Jobs))
				}
				if n := c.Stopping(); n > 0 {
					t.Fatalf("%d preemptions were never answered by the job's end", n)
				}
				if c.Calls() == 0 {
					t.Fatal("the driver never called the policy")
				}
				if a, ok := c.inner.(*Adversary); ok && a.sent == 0 {
					t.Fatal("the adversary never had a queued job to abuse")
				}
				if !opt.Deterministic {
					return
				}
				again := Wrap(pc.make(), copt)
				run(t, sc, again)
				if c.Log() != again.Log() {
					t.Fatalf("a second run decided differently:\n%s\nthen\n%s", c.Log(), again.Log())
				}
			})
		}
	}
}

// TestPolicy checks a policy spec against the contract on the reference
// driver, over random scenarios of gangs, shared GPUs, CPU-only jobs,
// several GPU models and tenants: every call's Starts are of queued jobs
// and reserved, every job ends, and a second run decides identically.
func TestPolicy(t *testing.T, spec policies.Spec, seeds int) {
	for seed := range seeds {
		sc := RandomScenario(uint64(seed) + 1)
		var logs [2]string
		for k := range logs {
			s := spec
			if s.NeedsTarget() {
				s.Placer = policies.PlacerConfig{Seed: uint64(seed), Target: targetOf(sc)}
			}
			s.Placer.Seed = uint64(seed)
			p, err := s.New()
			if err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			c := Wrap(p, CheckerOptions{})
			out, err := Reference(sc, c)
			if err != nil {
				t.Fatalf("%s, seed %d: %v", spec, seed, err)
			}
			if err := c.Err(); err != nil {
				t.Fatalf("%s, seed %d: contract broken:\n%v", spec, seed, err)
			}
			if out.Succeeded != len(sc.Jobs) {
				t.Fatalf("%s, seed %d: %d of %d jobs succeeded", spec, seed, out.Succeeded, len(sc.Jobs))
			}
			logs[k] = c.Log()
		}
		if logs[0] != logs[1] {
			t.Fatalf("%s, seed %d: a second run decided differently", spec, seed)
		}
	}
}

func targetOf(sc Scenario) policies.TargetWorkload {
	reqs := make([]hwmodel.Request, len(sc.Jobs))
	for i, j := range sc.Jobs {
		reqs[i] = j.Req
	}
	return policies.TargetFromRequests(reqs)
}

func req(gpus int, milli int32, cpu, mem int64) hwmodel.Request {
	if gpus == 0 {
		milli = 0
	}
	return hwmodel.Request{GPUs: gpus, GPUMilli: milli, CPUMilli: cpu, MemoryMiB: mem}
}

// Scenarios are the standard scenarios of the driver suite, small enough
// for a live driver with fake processes: one node of 4 GPUs, 32 CPUs
// and 64 GiB, two tenants.
func Scenarios() []Scenario {
	h100, _ := hwmodel.LookupModel("H100-80GB")
	node := []hwmodel.Node{{Name: "n0", Model: h100.ID, GPUs: 4, CPUMilli: 32000, MemoryMiB: 64 << 10}}
	tenants := []policies.Tenant{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}}
	s := policies.Time(hwmodel.Second)
	return []Scenario{
		{Name: "queue", Nodes: node, Tenants: tenants, Jobs: []Job{
			{Name: "j0", Duration: 3 * s, Req: req(4, 1000, 4000, 4096)},
			{Name: "j1", Tenant: 1, Submit: s, Duration: 2 * s, Req: req(2, 1000, 2000, 2048)},
			{Name: "j2", Submit: s, Duration: 1 * s, Req: req(1, 1000, 1000, 1024), Priority: 3},
			{Name: "j3", Tenant: 1, Submit: 2 * s, Duration: 2 * s, Req: req(2, 1000, 2000, 2048)},
		}},
		{Name: "mixed", Nodes: node, Tenants: tenants, Jobs: []Job{
			{Name: "half-a", Duration: 2 * s, Req: req(1, 500, 1000, 1024)},
			{Name: "half-b", Tenant: 1, Duration: 2 * s, Req: req(1, 500, 1000, 1024)},
			{Name: "cpu", Duration: s, Req: req(0, 0, 30000, 1024)},
			{Name: "gang", Tenant: 1, Submit: s, Duration: 2 * s, Req: req(4, 1000, 4000, 4096)},
			{Name: "retry", Submit: s, Duration: s, Req: req(1, 1000, 1000, 1024), Fails: 1},
			{Name: "memory", Tenant: 1, Submit: 2 * s, Duration: s, Req: req(0, 0, 1000, 60<<10)},
		}},
	}
}

// MIGScenario is one H200 node whose two GPUs are MIG-enabled with seven
// 1-slice instances each, and jobs that want 3- and 4-slice instances:
// only a policy that repartitions can run them.
func MIGScenario() Scenario {
	h200, _ := hwmodel.LookupModel("H200")
	layout, err := hwmodel.NamedMIGLayout(h200.ID, "all-1g")
	if err != nil {
		panic(err)
	}
	n := hwmodel.Node{Name: "mig0", Model: h200.ID, GPUs: 2, CPUMilli: 32000, MemoryMiB: 64 << 10,
		MIG: []hwmodel.MIGLayout{layout, layout}}
	s := policies.Time(hwmodel.Second)
	mig := func(slices int) hwmodel.Request {
		return hwmodel.Request{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024, MIG: hwmodel.MIGRequest{MinSlices: slices}}
	}
	return Scenario{Name: "mig", Nodes: []hwmodel.Node{n}, Tenants: []policies.Tenant{{Name: "a", Weight: 1}},
		MIGReconfigure: true, Jobs: []Job{
			{Name: "small", Duration: 2 * s, Req: mig(1)},
			{Name: "three", Duration: 3 * s, Req: mig(3)},
			{Name: "four", Submit: s, Duration: 2 * s, Req: mig(4)},
			{Name: "three-b", Submit: s, Duration: s, Req: mig(3)},
		}}
}

// RandomScenario draws a scenario from seed: 40 jobs on three nodes of
// two GPU models, gangs wider than a node, shared GPUs, CPU-only jobs,
// three tenants, priorities, estimates off by up to 2x.
func RandomScenario(seed uint64) Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	sc := Scenario{
		Name: fmt.Sprintf("random-%d", seed),
		Nodes: []hwmodel.Node{
			{Name: "h0", Model: h100.ID, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10},
			{Name: "h1", Model: h100.ID, GPUs: 8, CPUMilli: 64000, MemoryMiB: 512 << 10},
			{Name: "a0", Model: a100.ID, GPUs: 4, CPUMilli: 32000, MemoryMiB: 256 << 10},
		},
		Tenants: []policies.Tenant{{Name: "x", Weight: 1}, {Name: "y", Weight: 2}, {Name: "z", Weight: 0.5}},
	}
	var t policies.Time
	for i := range 40 {
		t += policies.Time(rng.IntN(120)) * policies.Time(hwmodel.Second)
		var r hwmodel.Request
		switch k := rng.IntN(10); {
		case k < 2:
			r = req(0, 0, int64(1+rng.IntN(8))*1000, int64(1+rng.IntN(16))*1024)
		case k < 4:
			r = req(1, int32(100*(1+rng.IntN(9))), 1000, 2048)
		case k < 9:
			g := []int{1, 2, 4, 8}[rng.IntN(4)]
			r = req(g, 1000, int64(g)*4000, int64(g)*8192)
		default:
			r = req(12, 1000, 12*4000, 12*8192) // a gang over two nodes
		}
		d := policies.Time(60+rng.IntN(3600)) * policies.Time(hwmodel.Second)
		sc.Jobs = append(sc.Jobs, Job{
			Name: fmt.Sprintf("j%d", i), Tenant: rng.IntN(3), Priority: rng.IntN(4), Submit: t,
			Duration: d, Estimate: d * policies.Time(50+rng.IntN(150)) / 100, Req: r, Fails: rng.IntN(5) / 4,
		})
	}
	return sc
}

// Preemptor wraps a policy and, at every Every-th call that finds a job
// running, preempts the running job it started first, unless it preempted
// that job before: drivers must stop it and queue it again, or reject the
// Preempt. Preempting each job at most once keeps a run finite however
// the driver batches its calls.
type Preemptor struct {
	Inner     policies.Policy
	Every     int
	calls     int
	running   []policies.JobID
	preempted map[policies.JobID]bool
}

var _ policies.Policy = (*Preemptor)(nil)

// Name implements policies.Policy.
func (p *Preemptor) Name() string { return p.Inner.Name() + "+preemptor" }

// Schedule implements policies.Policy.
func (p *Preemptor) Schedule(v policies.View) []policies.Decision {
	ev := v.Events()
	p.running = append(p.running, ev.Started...)
	for _, id := range ev.Ended {
		if k := indexOf(p.running, id); k >= 0 {
			p.running = append(p.running[:k], p.running[k+1:]...)
		}
	}
	victim := policies.JobID(-1)
	for _, id := range p.running {
		if !p.preempted[id] {
			victim = id
			break
		}
	}
	if victim >= 0 {
		p.calls++
	}
	ds := p.Inner.Schedule(v)
	if p.Every > 0 && victim >= 0 && p.calls%p.Every == 0 {
		if p.preempted == nil {
			p.preempted = map[policies.JobID]bool{}
		}
		p.preempted[victim] = true
		ds = append(ds, policies.Decision{Kind: policies.Preempt, Job: victim})
	}
	return ds
}

func indexOf(ids []policies.JobID, id policies.JobID) int {
	for k, x := range ids {
		if x == id {
			return k
		}
	}
	return -1
}

// Adversary wraps a policy and, at the first call that finds a job
// queued, adds decisions a driver must reject: starts of jobs that do not
// exist, of a job on an empty placement and on a placement that is not
// its request, a preemption of a job that is not running and a
// reconfiguration of a GPU that does not exist.
type Adversary struct {
	Inner policies.Policy
	sent  int
}

var _ policies.Policy = (*Adversary)(nil)

// Name implements policies.Policy.
func (a *Adversary) Name() string { return a.Inner.Name() + "+adversary" }

// Schedule implements policies.Policy.
func (a *Adversary) Schedule(v policies.View) []policies.Decision {
	queued := v.Events().Queued
	var bad []policies.Decision
	if a.sent == 0 && len(queued) > 0 {
		id := queued[0]
		j := v.Job(id)
		wrong := hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 1000, CPUMilli: j.Req.CPUMilli + 1, MemoryMiB: j.Req.MemoryMiB}}
		bad = []policies.Decision{
			{Kind: policies.Start, Job: -1, Placement: wrong},
			{Kind: policies.Start, Job: 1 << 20, Placement: wrong},
			{Kind: policies.Start, Job: id},
			{Kind: policies.Start, Job: id, Placement: wrong},
			{Kind: policies.Preempt, Job: id},
			{Kind: policies.Reconfigure, Job: -1, Node: 1 << 10, GPU: 0},
		}
		a.sent = len(bad)
	}
	return append(bad, a.Inner.Schedule(v)...)
}
