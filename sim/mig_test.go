package sim_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

var h200 = func() hwmodel.ModelID {
	m, ok := hwmodel.LookupModel("H200")
	if !ok {
		panic("no H200 in the catalogue")
	}
	return m.ID
}()

// migCluster is one node of H200s, each with the named layout ("" for a
// whole GPU).
func migCluster(t testing.TB, layouts ...string) *hwmodel.Cluster {
	t.Helper()
	n := hwmodel.Node{Name: "h0", Model: h200, GPUs: len(layouts), CPUMilli: 1 << 40, MemoryMiB: 1 << 40, MIG: make([]hwmodel.MIGLayout, len(layouts))}
	for g, name := range layouts {
		if name == "" {
			continue
		}
		l, err := hwmodel.NamedMIGLayout(h200, name)
		if err != nil {
			t.Fatal(err)
		}
		n.MIG[g] = l
	}
	c, err := hwmodel.NewCluster([]hwmodel.Node{n})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// migJob is a MIG job: a profile name, or "<n>g" for at least n slices.
type migJob struct {
	submit, dur float64
	ask         string
}

func migWorkload(t testing.TB, jobs []migJob) *workloads.Workload {
	t.Helper()
	var out []workloads.Job
	for i, j := range jobs {
		r := hwmodel.Request{GPUs: 1, GPUMilli: hwmodel.MilliPerGPU}
		switch {
		case j.ask == "whole":
		case strings.Contains(j.ask, "."):
			r = hwmodel.Request{GPUs: 1, MIG: hwmodel.MIGRequest{Profile: j.ask}}
		default:
			var n int
			fmt.Sscanf(j.ask, "%dg", &n)
			r = hwmodel.Request{GPUs: 1, MIG: hwmodel.MIGRequest{MinSlices: n}}
		}
		out = append(out, workloads.Job{Name: fmt.Sprintf("j%d", i), Tenant: "t", Submit: hwmodel.FromSeconds(j.submit),
			Duration: hwmodel.FromSeconds(j.dur), Req: r})
	}
	w, err := workloads.Build(out, nil, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	return w
}

// runMIG runs w on c under policy with every invariant checked.
func runMIG(t testing.TB, c *hwmodel.Cluster, w *workloads.Workload, policy string, opt policies.Options, reconfig hwmodel.Time) (*sim.Result, *runner.Prepared) {
	t.Helper()
	p, err := policies.New(policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := runner.Prepare(c, w, p, runner.Options{CheckInvariants: true, RevealOracle: opt.UseOracle,
		MIGReconfigure: opt.MIGReconfigure, MIGConvertWhole: opt.MIGConvertWhole, MIGReconfigTime: reconfig})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prep.Engine.Run()
	if err != nil {
		t.Fatal(err)
	}
	prep.Timeline.Close(res.End)
	return res, prep
}

func secs(t hwmodel.Time) float64 { return t.Seconds() }

// One H200 in the balanced layout (3g@4, 2g@0, 1g@2, 1g@3) and two 3g jobs
// of 100 s at t=0. Statically the second waits for the first: start 100.
// Dynamically the GPU is repartitioned at t=0 into 3g@4 (kept, busy) and
// a new 3g@0, usable after the 30 s reconfiguration: start 30. One
// reconfiguration, 30 GPU-seconds.
func TestMIGTwo3gJobsStaticAndDynamic(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 100, "3g.71gb"}, {0, 100, "3g"}})
	for _, c := range []struct {
		name       string
		opt        policies.Options
		start1     float64
		reconfigs  int64
		gpuSeconds float64
		layout     string
	}{
		{"static", policies.Options{}, 100, 0, 0, "3g.71gb@4,2g.35gb@0,1g.18gb@2,1g.18gb@3"},
		{"dynamic", policies.Options{MIGReconfigure: true}, 30, 1, 30, "3g.71gb@4,3g.71gb@0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := migCluster(t, "balanced")
			res, _ := runMIG(t, cl, w, "fcfs", c.opt, 30*hwmodel.Second)
			o := res.Jobs
			if o[0].Start != 0 || secs(o[1].Start) != c.start1 || secs(o[1].End) != c.start1+100 {
				t.Errorf("starts %v and %v s, want 0 and %v", secs(o[0].Start), secs(o[1].Start), c.start1)
			}
			if res.MIGReconfigurations != c.reconfigs || secs(res.MIGReconfigGPUTime) != c.gpuSeconds {
				t.Errorf("%d reconfigurations costing %v GPU-s, want %d and %v", res.MIGReconfigurations, secs(res.MIGReconfigGPUTime), c.reconfigs, c.gpuSeconds)
			}
			if res.Rejections != 0 {
				t.Errorf("%d rejections", res.Rejections)
			}
			if got := cl.MIGLayoutOf(0, 0).String(h200); got != c.layout {
				t.Errorf("final layout %q, want %q", got, c.layout)
			}
			for i, x := range o {
				if x.MIGProfile != "3g.71gb" || x.Placement[0].Milli != 429 {
					t.Errorf("job %d ran on %q with %d milli, want 3g.71gb and 429", i, x.MIGProfile, x.Placement[0].Milli)
				}
			}
		})
	}
}

// The smallest matching instance wins: on balanced, a ">= 1 slice" job
// takes a 1g (index 2), a 2g job the 2g, and a second 1g job the other 1g.
func TestMIGSmallestInstanceFirst(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 10, "1g"}, {0, 10, "2g"}, {0, 10, "1g"}, {0, 10, "1g"}})
	res, _ := runMIG(t, migCluster(t, "whole", "balanced"), w, "fcfs", policies.Options{}, 0)
	want := []struct {
		gpu      uint64
		instance int
		profile  string
	}{{2, 3, "1g.18gb"}, {2, 2, "2g.35gb"}, {2, 4, "1g.18gb"}, {2, 1, "3g.71gb"}}
	for i, x := range res.Jobs {
		s := x.Placement[0]
		if s.GPUs != want[i].gpu || s.Instance != want[i].instance || x.MIGProfile != want[i].profile || x.Start != 0 {
			t.Errorf("job %d on GPU mask %#x share instance %d (%s) at %v, want %#x instance %d (%s) at 0", i, s.GPUs, s.Instance, x.MIGProfile, x.Start, want[i].gpu, want[i].instance, want[i].profile)
		}
	}
}

// A busy instance is never destroyed, and its job's share follows its
// instance to a new index. Balanced; two 1g jobs hold 1g@2 and 1g@3
// (instances 2 and 3); a 4g job needs memory slices 0-3, where the busy
// 1g instances sit, so no layout of this GPU serves it while they run: it
// waits until they end (t=50), then the GPU becomes 4g@0 + 3g@4 (kept)
// and it starts at 80. Meanwhile a 3g job at t=10 takes 3g@4.
func TestMIGBusyInstancesAreKept(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 50, "1g"}, {0, 50, "1g"}, {5, 100, "4g"}, {10, 20, "3g"}})
	cl := migCluster(t, "balanced")
	res, _ := runMIG(t, cl, w, "fcfs", policies.Options{MIGReconfigure: true, Backfill: true}, 30*hwmodel.Second)
	o := res.Jobs
	got := []float64{secs(o[0].Start), secs(o[1].Start), secs(o[2].Start), secs(o[3].Start)}
	if fmt.Sprint(got) != "[0 0 80 10]" {
		t.Errorf("starts %v, want [0 0 80 10]", got)
	}
	if res.MIGReconfigurations != 1 || res.Rejections != 0 {
		t.Errorf("%d reconfigurations, %d rejections; want 1 and 0", res.MIGReconfigurations, res.Rejections)
	}
	if o[2].MIGProfile != "4g.71gb" {
		t.Errorf("4g job ran on %q", o[2].MIGProfile)
	}
}

// A reconfiguration that moves a busy instance to another index: the
// engine rewrites the running job's share (its invariant check, every busy
// instance held by the job listed on it, fails otherwise, and so would the
// release at the job's end). all-1g: three 1g jobs take 1g@0, 1g@1, 1g@2
// (instances 0-2); the first ends at 10. At 20 a 3g job finds no 3g: the
// GPU keeps 1g@1 and 1g@2 (now instances 0 and 1), adds 3g@4, and fills
// with 1g@0 and 1g@3 (which survive: they were free). It starts at 50.
func TestMIGReconfigurationRemapsRunningShares(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 10, "1g"}, {0, 100, "1g"}, {0, 100, "1g"}, {20, 100, "3g"}})
	cl := migCluster(t, "all-1g")
	res, _ := runMIG(t, cl, w, "fcfs", policies.Options{MIGReconfigure: true}, 30*hwmodel.Second)
	o := res.Jobs
	if secs(o[3].Start) != 50 || res.MIGReconfigurations != 1 {
		t.Errorf("3g job started at %v after %d reconfigurations, want 50 and 1", secs(o[3].Start), res.MIGReconfigurations)
	}
	if got := cl.MIGLayoutOf(0, 0).String(h200); got != "1g.18gb@1,1g.18gb@2,3g.71gb@4,1g.18gb@0,1g.18gb@3" {
		t.Errorf("final layout %q", got)
	}
	if o[1].Placement[0].Instance != 1 || o[2].Placement[0].Instance != 2 || o[3].Placement[0].Instance != 3 {
		t.Errorf("shares name instances %d, %d, %d; want 0, 1, 2 (+1)", o[1].Placement[0].Instance, o[2].Placement[0].Instance, o[3].Placement[0].Instance)
	}
}

// Static layouts: a job that no instance matches fails at submission; with
// reconfiguration it runs after one; on a cluster of whole GPUs it fails
// unless whole GPUs may be converted.
func TestMIGSatisfiability(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 10, "3g"}, {0, 10, "1g"}})
	for _, c := range []struct {
		name      string
		layout    string
		opt       policies.Options
		failed    []bool
		reconfigs int64
	}{
		{"static all-1g", "all-1g", policies.Options{}, []bool{true, false}, 0},
		// The 3g job gets halves (one reconfiguration); the 1g job, which
		// would take the spare 3g, is right-sized: a second one.
		{"dynamic all-1g", "all-1g", policies.Options{MIGReconfigure: true}, []bool{false, false}, 2},
		{"static whole", "", policies.Options{}, []bool{true, true}, 0},
		{"dynamic whole", "", policies.Options{MIGReconfigure: true}, []bool{true, true}, 0},
		{"convert whole", "", policies.Options{MIGReconfigure: true, MIGConvertWhole: true}, []bool{false, false}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := runMIG(t, migCluster(t, c.layout), w, "fcfs", c.opt, 30*hwmodel.Second)
			for i, o := range res.Jobs {
				if (o.State == sim.Failed) != c.failed[i] {
					t.Errorf("job %d ended %s (%s), want failed=%v", i, o.State, o.Reason, c.failed[i])
				}
				if o.State == sim.Failed && (!strings.HasPrefix(o.Reason, sim.ReasonUnsatisfiable) || o.FailReason != sim.FailUnsatisfiable) {
					t.Errorf("job %d failed for %v, %q", i, o.FailReason, o.Reason)
				}
			}
			if res.MIGReconfigurations != c.reconfigs {
				t.Errorf("%d reconfigurations, want %d", res.MIGReconfigurations, c.reconfigs)
			}
		})
	}
}

// Counts and costs are exact: 7g.141gb and 1g.18gb jobs of 100 s take
// turns on one all-1g GPU, 500 s apart, with a 20 s reconfiguration time:
// each needs the GPU repartitioned (to one 7g, or back to seven 1g), so
// six jobs make six reconfigurations, 120 GPU-seconds, and each waits 20 s.
func TestMIGReconfigurationCountAndCost(t *testing.T) {
	var jobs []migJob
	for k := 0; k < 3; k++ {
		jobs = append(jobs, migJob{float64(k * 1000), 100, "7g.141gb"}, migJob{float64(k*1000 + 500), 100, "1g.18gb"})
	}
	w := migWorkload(t, jobs)
	res, prep := runMIG(t, migCluster(t, "all-1g"), w, "fcfs", policies.Options{MIGReconfigure: true}, 20*hwmodel.Second)
	// all-1g: 7g needs a reconfiguration (1), then a 1g job at 500 needs
	// one back (2), the 7g at 1000 (3), ... six in all, 120 GPU-seconds.
	if res.MIGReconfigurations != 6 || secs(res.MIGReconfigGPUTime) != 120 {
		t.Errorf("%d reconfigurations costing %v GPU-s, want 6 and 120", res.MIGReconfigurations, secs(res.MIGReconfigGPUTime))
	}
	for i, o := range res.Jobs {
		if secs(o.Start-o.Submit) != 20 {
			t.Errorf("job %d waited %v s, want 20", i, secs(o.Start-o.Submit))
		}
	}
	// Busy slices: 7 for 3 × 100 s and 1 for 3 × 100 s.
	ig := prep.Timeline.Integrals()
	if ig.MIGBusySliceSeconds != 7*300+1*300 {
		t.Errorf("busy slice-seconds %v, want %v", ig.MIGBusySliceSeconds, 7*300+300)
	}
}

// scripted is a policy that returns fixed decisions at its first call,
// then starts queued MIG jobs on the lowest free matching instance, and
// records what it hears.
type scripted struct {
	first []policies.Decision
	calls int
	heard []policies.Events
	queue []policies.JobID
}

func (p *scripted) Name() string { return "scripted" }

func (p *scripted) Schedule(v policies.View) []policies.Decision {
	ev := v.Events()
	p.heard = append(p.heard, policies.Events{
		Rejected: append([]policies.Rejection(nil), ev.Rejected...), Reconfigured: append([]policies.GPURef(nil), ev.Reconfigured...),
		Unblocked: append([]policies.GPURef(nil), ev.Unblocked...), Started: append([]policies.JobID(nil), ev.Started...),
	})
	p.queue = append(p.queue, ev.Queued...)
	for _, r := range ev.Rejected {
		if r.Decision.Kind == policies.Start {
			p.queue = append(p.queue, r.Decision.Job)
		}
	}
	p.calls++
	var out []policies.Decision
	if p.calls == 1 {
		out = p.first
		for _, d := range out {
			if d.Kind == policies.Start {
				p.queue = slices.DeleteFunc(p.queue, func(id policies.JobID) bool { return id == d.Job })
			}
		}
		return out
	}
	c := v.Cluster()
	rest := p.queue[:0]
	for _, id := range p.queue {
		j := v.Job(id)
		placed := false
		for i := 0; i < c.NumNodes() && !placed; i++ {
			for g := 0; g < c.NodeGPUs(i) && !placed; g++ {
				if k := c.FindMIGInstance(i, g, j.Req.MIG); k >= 0 {
					pl := hwmodel.Placement{c.MIGShare(i, g, k, j.Req.CPUMilli, j.Req.MemoryMiB)}
					if v.Reserve(pl) == nil {
						out = append(out, policies.Decision{Kind: policies.Start, Job: id, Placement: pl})
						placed = true
					}
				}
			}
		}
		if !placed {
			rest = append(rest, id)
		}
	}
	p.queue = rest
	return out
}

func TestMIGReconfigureRejections(t *testing.T) {
	layout := func(s string) hwmodel.MIGLayout {
		l, err := hwmodel.ParseMIGLayout(h200, s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	rc := func(g int, l hwmodel.MIGLayout) policies.Decision {
		return policies.Decision{Kind: policies.Reconfigure, Job: -1, Node: 0, GPU: g, Layout: l}
	}
	// Job 0 (a 3g) starts on GPU 0's 3g@4 (instance 0) in the same call.
	start := policies.Decision{Kind: policies.Start, Job: 0, Placement: hwmodel.Placement{{Node: 0, GPUs: 1, Milli: 429, Instance: 1}}}
	for _, c := range []struct {
		name      string
		cfg       func(*sim.Config)
		d         []policies.Decision
		reason    string
		reconfigs int64
	}{
		{"static", nil, []policies.Decision{rc(0, layout("halves"))}, "static", 0},
		{"busy instance dropped", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{start, rc(0, layout("all-1g"))}, "is in use", 0},
		{"in flight", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{rc(0, layout("halves")), rc(0, layout("all-2g"))}, "already being reconfigured", 1},
		{"whole GPU", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{rc(1, layout("halves"))}, "not MIG-enabled", 0},
		{"MIG off", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{rc(0, nil)}, "turns MIG off", 0},
		{"no such GPU", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{rc(5, layout("halves"))}, "does not exist", 0},
		{"invalid layout", func(c *sim.Config) { c.MIGReconfigure = true },
			[]policies.Decision{rc(0, hwmodel.MIGLayout{{Profile: 4, Start: 2}})}, "cannot start at memory slice 2", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &scripted{first: c.d}
			cfg := sim.Config{Cluster: migCluster(t, "balanced", ""), Workload: migWorkload(t, []migJob{{0, 100, "3g"}}),
				Policy: p, CheckInvariants: true, MIGReconfigTime: 30 * hwmodel.Second}
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			e, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run()
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, h := range p.heard {
				for _, r := range h.Rejected {
					reasons = append(reasons, r.Reason)
				}
			}
			if len(reasons) != 1 || !strings.Contains(reasons[0], c.reason) {
				t.Errorf("rejections %q, want one containing %q", reasons, c.reason)
			}
			if res.MIGReconfigurations != c.reconfigs {
				t.Errorf("%d reconfigurations, want %d", res.MIGReconfigurations, c.reconfigs)
			}
		})
	}
}

// The policy hears Reconfigured at the next call and Unblocked when the
// reconfiguration time is over.
func TestMIGEventsReachThePolicy(t *testing.T) {
	l, _ := hwmodel.NamedMIGLayout(h200, "halves")
	p := &scripted{first: []policies.Decision{{Kind: policies.Reconfigure, Job: -1, Node: 0, GPU: 0, Layout: l}}}
	w := migWorkload(t, []migJob{{0, 10, "1g"}, {100, 10, "1g"}})
	e, err := sim.New(sim.Config{Cluster: migCluster(t, "balanced"), Workload: w, Policy: p, CheckInvariants: true,
		MIGReconfigure: true, MIGReconfigTime: 30 * hwmodel.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(); err != nil {
		t.Fatal(err)
	}
	ref := policies.GPURef{Node: 0, GPU: 0}
	if len(p.heard) < 3 || fmt.Sprint(p.heard[1].Reconfigured) != fmt.Sprint([]policies.GPURef{ref}) || fmt.Sprint(p.heard[1].Unblocked) != fmt.Sprint([]policies.GPURef{ref}) {
		t.Fatalf("heard %+v; want Reconfigured and Unblocked of %v at the second call (t=30)", p.heard, ref)
	}
}

// Fragmentation and utilisation on one balanced H200: a 4g job (MIG
// request ">= 4 slices") waits with nothing of its size; the free
// instances (3 + 2 + 1 + 1 = 7 slices) all fit no queued request.
func TestMIGFragmentationObserved(t *testing.T) {
	w := migWorkload(t, []migJob{{0, 100, "2g"}, {0, 100, "4g"}})
	// Static: the 4g job can never run (no 4g instance): it fails at
	// submission, so nothing MIG is queued: no fragmentation.
	res, prep := runMIG(t, migCluster(t, "balanced"), w, "fcfs", policies.Options{}, 0)
	if res.Jobs[1].State != sim.Failed {
		t.Fatalf("4g job %s", res.Jobs[1].State)
	}
	if ig := prep.Timeline.Integrals(); ig.MIGFreeSliceSeconds != 0 || ig.MIGBusySliceSeconds != 200 || ig.MIGSliceSeconds != 700 {
		t.Errorf("integrals %+v, want free 0, busy 2 × 100, total 7 × 100", ig)
	}
	// A 3g.71gb job queued behind a running 3g job sees the 2g and two
	// 1g instances free (4 slices), none of which fits it: all fragmented.
	w = migWorkload(t, []migJob{{0, 100, "3g"}, {0, 100, "3g"}})
	_, prep = runMIG(t, migCluster(t, "balanced"), w, "fcfs", policies.Options{}, 0)
	ig := prep.Timeline.Integrals()
	if ig.MIGFreeSliceSeconds != 400 || ig.MIGFragSliceSeconds != 400 {
		t.Errorf("free %v and fragmented %v slice-seconds, want 4 × 100 each", ig.MIGFreeSliceSeconds, ig.MIGFragSliceSeconds)
	}
}

// migModes are the MIG setups the property tests run: static, dynamic,
// dynamic with backfill and best fit, and conversion with backfill or FGD.
var migModes = []struct {
	name string
	opt  policies.Options
}{
	{"static", policies.Options{}},
	{"dynamic", policies.Options{MIGReconfigure: true}},
	{"dynamic+bf/bestfit", policies.Options{Backfill: true, Placement: "bestfit", MIGReconfigure: true}},
	{"convert+bf", policies.Options{Backfill: true, MIGReconfigure: true, MIGConvertWhole: true}},
	{"convert/fgd", policies.Options{Placement: "fgd", MIGReconfigure: true, MIGConvertWhole: true}},
}

// runMIGMode runs a MIG mix workload on the mixed MIG cluster in a mode,
// with every invariant checked, and the outcome rules.
func runMIGMode(t testing.TB, name string, opt policies.Options, seed uint64, jobs int) *sim.Result {
	w := migMixWorkload(t, seed, jobs)
	if opt.Placement == "fgd" {
		reqs := make([]hwmodel.Request, len(w.Jobs))
		for i := range w.Jobs {
			reqs[i] = w.Jobs[i].Req
		}
		opt.Placer.Target = policies.TargetFromRequests(reqs)
		if len(opt.Placer.Target.Classes) == 0 {
			opt.Placement = "" // only MIG jobs: FGD has nothing to aim at
		}
	}
	res, prep := runMIG(t, mixedMIGCluster(t), w, name, opt, 30*hwmodel.Second)
	checkOutcomes(t, w, res, prep.Timeline)
	if !opt.MIGReconfigure && res.MIGReconfigurations != 0 {
		t.Errorf("%d reconfigurations with static layouts", res.MIGReconfigurations)
	}
	for i, o := range res.Jobs {
		if o.State == sim.Failed && opt.MIGConvertWhole && strings.HasPrefix(o.Reason, sim.ReasonUnsatisfiable) {
			t.Errorf("job %s (%+v) failed with conversion on: %s", w.Jobs[i].Name, w.Jobs[i].Req, o.Reason)
		}
	}
	return res
}

// MIG jobs mixed with whole-GPU and shared jobs under every policy and
// MIG mode, with invariants checked after every event: no rejection,
// every job ends, outcomes consistent; dynamic modes do reconfigure.
func TestMIGInvariantsUnderEveryPolicy(t *testing.T) {
	for _, name := range policies.StandaloneNames() {
		for _, mode := range migModes {
			var reconfigs int64
			for seed := uint64(1); seed <= 2; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", name, mode.name, seed), func(t *testing.T) {
					reconfigs += runMIGMode(t, name, mode.opt, seed, 250).MIGReconfigurations
				})
			}
			if mode.opt.MIGReconfigure && reconfigs == 0 {
				t.Errorf("%s/%s: no reconfiguration in two runs", name, mode.name)
			}
		}
	}
}

func TestMIGRunsAreDeterministic(t *testing.T) {
	a := runMIGMode(t, "fair", migModes[3].opt, 5, 300)
	b := runMIGMode(t, "fair", migModes[3].opt, 5, 300)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same MIG workload and policy differ")
	}
}

// FuzzEngineMIG drives the engine on the mixed MIG cluster in every MIG
// mode; every run must keep the invariants and the outcome rules.
func FuzzEngineMIG(f *testing.F) {
	for _, s := range []uint64{1, 2, 3} {
		f.Add(s, uint8(0), uint8(60), uint8(1))
		f.Add(s, uint8(3), uint8(90), uint8(3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, policyIdx, jobs, mode uint8) {
		names := policies.StandaloneNames()
		m := migModes[int(mode)%len(migModes)]
		runMIGMode(t, names[int(policyIdx)%len(names)], m.opt, seed, 1+int(jobs))
	})
}

// mixedMIGCluster: two H200 nodes, one with four balanced MIG GPUs and
// four whole ones, one with two all-1g and two halves; and two whole-GPU
// A100 nodes (which accept MIG jobs only through conversion).
func mixedMIGCluster(t testing.TB) *hwmodel.Cluster {
	t.Helper()
	spec := `name: mig-mix
node_groups:
  - name_prefix: h200a
    count: 1
    gpu_model: H200-141GB
    gpus_per_node: 8
    cpu_milli: 224000
    memory_mib: 2097152
    mig: [balanced, balanced, balanced, balanced, "", "", "", ""]
  - name_prefix: h200b
    count: 1
    gpu_model: H200-141GB
    gpus_per_node: 4
    cpu_milli: 112000
    memory_mib: 1048576
    mig: [all-1g, all-1g, halves, halves]
  - name_prefix: a100
    count: 2
    gpu_model: A100-80GB
    gpus_per_node: 4
    cpu_milli: 128000
    memory_mib: 1048576
`
	s, err := hwmodel.ParseClusterSpec([]byte(spec), "mig-mix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// migMixWorkload is smallWorkload with 40% MIG jobs (inference: short).
func migMixWorkload(t testing.TB, seed uint64, jobs int) *workloads.Workload {
	t.Helper()
	cfg := workloads.DefaultSyntheticConfig()
	cfg.Jobs = jobs
	cfg.Arrival.RatePerHour = 400
	cfg.Duration.Max = 2 * hwmodel.Day
	cfg.GPUCounts = []int{1, 2, 4, 8}
	cfg.GPUWeights = []float64{6, 2, 1, 1}
	cfg.SharedFraction = 0.3
	cfg.CPUMilliPerGPU = 8000
	cfg.MemoryMiBPerGPU = 64 * 1024
	cfg.DAG = workloads.DAGConfig{Probability: 0.2, Shape: "forkjoin", Tasks: 3}
	inference := workloads.DurationConfig{Dist: "lognormal", Median: 5 * hwmodel.Minute, Sigma: 1, Min: hwmodel.Second, Max: 6 * hwmodel.Hour}
	cfg.MIG = workloads.MIGConfig{Fraction: 0.4, Classes: append(workloads.DefaultMIGClasses(), workloads.MIGClass{MinSlices: 7, Weight: 2}), Duration: &inference}
	w, err := workloads.Generate(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	w.FillEstimates()
	return w
}
