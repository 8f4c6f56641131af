package sim_test

// The scenario harness: each file under testdata/scenarios is a script of
// commands, each followed by the output the real engine gives, run by
// github.com/cockroachdb/datadriven. `go test ./sim -run TestScenarios
// -rewrite` writes the engine's present output into the files; review the
// diff before committing it. Commands (a line each; input lines below the
// command where it takes some):
//
//	cluster                 one node per line: NAME gpus=N model=M cpu=CORES mem=SIZE
//	                        [count=K] [mig=LAYOUT] [migG=LAYOUT]; count=K makes
//	                        NAME0..NAME(K-1); mig= applies to every GPU, migG= to GPU G
//	                        (mig=(3g.71gb, 4g.71gb) or a named layout; migG= empty: whole)
//	tenants                 one per line: NAME weight=W
//	policy SPEC [seed=N]    policies.ParseSpec's grammar, e.g. sjf+bf/bestfit
//	kueue                   Kueue manifests (package kueue) for policy kueue, as input
//	config KEY=VALUE...     restart= startup= retry=trace|none|fixed|deadline retry-max=
//	                        backoff= backoff-factor= checkpoint=(EVERY, COST)
//	                        mig-reconfig-time= sharing=processor preempt-restart=
//	                        save-on-preempt=true|false
//	heartbeat interval=T timeout=T
//	submit                  one job per line: NAME at=T dur=T [gpus=N] [gpu_milli=M]
//	                        [mig=PROFILE] [mig-slices=N] [mig-mem=SIZE] [cpu=CORES] [mem=SIZE] [tenant=NAME] [prio=P]
//	                        [est=T] [deps=(A, B)] [fails=K] [retries=R] [deadline=T]
//	                        [models=(M1, M2)] [checkpoint=(EVERY, COST)]
//	fail node=NAME at=T repair=T [gpu=G]
//	run [until=T]           step the engine to T (every instant <= T) or to the end;
//	                        prints what changed at each instant
//	print [jobs] [cluster] [tenants] [faults]
//	assert                  one check per line: job NAME KEY=VALUE...,
//	                        node NAME KEY=VALUE..., tenant NAME milli=M, engine KEY=VALUE...
//	reset                   forget everything: a new scenario in the same file
//
// Times are durations as hwmodel.ParseDuration reads them (90s, 5m, 1h;
// a bare number is seconds) and print as seconds. A job asks for one whole
// GPU unless it says otherwise (gpus=0: CPU only; gpu_milli=M: M
// milli-GPU of one GPU; mig=PROFILE: one MIG instance of that profile;
// mig-slices=N, mig-mem=SIZE: one MIG instance with at least N compute
// slices and SIZE memory), and its estimate is its true duration unless
// est= says otherwise. Setup commands must come before the first command
// that needs the engine (run, print, assert). Bad input is answered with
// an "error:" line naming the file, line and field, so a scenario can show
// the message; a failed assert fails the test whatever the flags.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/kueue"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/sim"
	"github.com/brigadesim/brigade/workloads"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		h := &harness{file: path}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.do(t, d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// harness holds one scenario: the setup read so far, then the engine.
type harness struct {
	file string

	nodes      []hwmodel.Node
	hasCluster bool
	spec       policies.Spec
	hasPolicy  bool
	kueue      []byte // Kueue manifests, and where they were given
	kueuePos   string
	tenants    []workloads.Tenant
	jobs       []workloads.Job
	deps       [][]string
	faults     []hwmodel.Fault
	faultNode  []string
	faultPos   []string
	cfg        sim.Config

	cluster *hwmodel.Cluster
	w       *workloads.Workload
	eng     *sim.Engine
	ran     bool // Run returned: the engine is spent
	// last is the state after the previous instant; log collects what
	// changed at each instant of the current run command.
	last sim.Snapshot
	log  strings.Builder
	head hwmodel.Time // the instant of the last header in log, -1: none
}

// at locates the k-th input line of d (0-based), or d's own line for k < 0.
func at(d *datadriven.TestData, k int) string {
	if k < 0 {
		return d.Pos
	}
	file, line, ok := strings.Cut(d.Pos, ":")
	n, err := strconv.Atoi(line)
	if !ok || err != nil {
		return d.Pos
	}
	return fmt.Sprintf("%s:%d", file, n+1+k)
}

// fieldError names where a bad value is, the field and what was expected.
func fieldError(pos, field, format string, a ...any) error {
	return fmt.Errorf("%s: field %q: %s", pos, field, fmt.Sprintf(format, a...))
}

func (h *harness) do(t *testing.T, d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "cluster", "tenants", "policy", "kueue", "config", "heartbeat", "submit", "fail":
		if h.eng != nil {
			return "", fmt.Errorf("%s: %s must come before the first run, print or assert", d.Pos, d.Cmd)
		}
	}
	switch d.Cmd {
	case "cluster":
		return h.doCluster(d)
	case "tenants":
		return "", h.doTenants(d)
	case "policy":
		return h.doPolicy(d)
	case "kueue":
		h.kueue, h.kueuePos = []byte(d.Input), d.Pos
		return "", nil
	case "config":
		return "", h.doConfig(d)
	case "heartbeat":
		return "", h.doHeartbeat(d)
	case "submit":
		return "", h.doSubmit(d)
	case "fail":
		return "", h.doFail(d)
	case "run":
		return h.doRun(d)
	case "print":
		return h.doPrint(d)
	case "reset":
		*h = harness{file: h.file}
		return "", nil
	case "assert":
		out, failures, err := h.doAssert(d)
		for _, f := range failures {
			t.Error(f)
		}
		return out, err
	}
	return "", fmt.Errorf("%s: unknown command %q (want cluster, tenants, policy, kueue, config, heartbeat, submit, fail, run, print, assert or reset)", d.Pos, d.Cmd)
}

func (h *harness) doCluster(d *datadriven.TestData) (string, error) {
	if h.hasCluster {
		return "", fmt.Errorf("%s: the cluster is already defined", d.Pos)
	}
	ls, err := lines(d)
	if err != nil {
		return "", err
	}
	var nodes []hwmodel.Node
	for _, l := range ls {
		p := newArgs(l.pos, l.args)
		var gpus, count int
		count = 1
		var n hwmodel.Node
		model, hasModel := p.one("model")
		p.int("gpus", 0, hwmodel.MaxGPUsPerNode, &gpus)
		p.int("count", 1, 1000, &count)
		hasCPU := p.cores("cpu", &n.CPUMilli)
		hasMem := p.memory("mem", &n.MemoryMiB)
		var m hwmodel.GPUModel
		switch {
		case p.err != nil:
		case !hasModel:
			p.fail("model", "missing; want a GPU model such as H100 or A100")
		case !hasCPU:
			p.fail("cpu", "missing; want the node's cores, e.g. cpu=64")
		case !hasMem:
			p.fail("mem", "missing; want the node's memory, e.g. mem=512GiB")
		default:
			var ok bool
			if m, ok = hwmodel.LookupModel(model); !ok {
				p.fail("model", "unknown GPU model %q", model)
			}
		}
		n.Model, n.GPUs = m.ID, gpus
		// MIG layouts: mig= for every GPU, then migG= for GPU G.
		layouts := make([]string, gpus)
		anyMIG := false
		if v, ok := p.vals("mig"); ok {
			for g := range layouts {
				layouts[g] = strings.Join(v, ",")
			}
			anyMIG = true
		}
		for g := range gpus {
			if v, ok := p.vals("mig" + strconv.Itoa(g)); ok {
				layouts[g] = strings.Join(v, ",")
				anyMIG = true
			}
		}
		if anyMIG && p.err == nil {
			n.MIG = make([]hwmodel.MIGLayout, gpus)
			for g, text := range layouts {
				l, err := hwmodel.ParseMIGLayout(m.ID, text)
				if err != nil {
					p.fail("mig", "GPU %d: %v", g, err)
					break
				}
				n.MIG[g] = l
			}
		}
		if err := p.done(); err != nil {
			return "", err
		}
		for k := range count {
			c := n
			c.Name = l.name
			if count > 1 {
				c.Name += strconv.Itoa(k)
			}
			nodes = append(nodes, c)
		}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		return "", fmt.Errorf("%s: %v", d.Pos, err)
	}
	h.nodes, h.hasCluster = nodes, true
	var b strings.Builder
	for i := range c.NumNodes() {
		n := c.Node(i)
		fmt.Fprintf(&b, "%s: %d x %s, cpu %s, mem %s\n", n.Name, n.GPUs, hwmodel.Model(n.Model).Name, fmtCores(n.CPUMilli), fmtMiB(n.MemoryMiB))
		for g, l := range n.MIG {
			if len(l) > 0 {
				fmt.Fprintf(&b, "  gpu%d mig %s\n", g, l.String(n.Model))
			}
		}
	}
	return b.String(), nil
}

func (h *harness) doTenants(d *datadriven.TestData) error {
	ls, err := lines(d)
	if err != nil {
		return err
	}
	var ts []workloads.Tenant
	for _, l := range ls {
		p := newArgs(l.pos, l.args)
		w := workloads.DefaultTenantWeight
		p.float("weight", 0, 1e9, &w)
		if err := p.done(); err != nil {
			return err
		}
		ts = append(ts, workloads.Tenant{Name: l.name, Weight: w})
	}
	h.tenants = append(h.tenants, ts...)
	return nil
}

func (h *harness) doPolicy(d *datadriven.TestData) (string, error) {
	if len(d.CmdArgs) == 0 {
		return "", fmt.Errorf("%s: policy needs a spec, e.g. policy sjf+bf/bestfit", d.Pos)
	}
	// The spec is the first argument as written ("sjf+bf=10/bestfit"
	// parses as a key and a value).
	spec, err := policies.ParseSpec(d.CmdArgs[0].String())
	if err != nil {
		return "", fmt.Errorf("%s: %v", d.Pos, err)
	}
	p := newArgs(d.Pos, d.CmdArgs[1:])
	var seed int
	if p.int("seed", 0, math.MaxInt32, &seed) {
		spec.Placer.Seed = uint64(seed)
	}
	if err := p.done(); err != nil {
		return "", err
	}
	h.spec, h.hasPolicy = spec, true
	return spec.String() + "\n", nil
}

func (h *harness) doConfig(d *datadriven.TestData) error {
	p := newArgs(d.Pos, d.CmdArgs)
	cfg := h.cfg
	c := &cfg
	p.time("restart", &c.RestartTime)
	p.time("startup", &c.StartupDelay)
	p.time("preempt-restart", &c.PreemptRestart)
	if v, ok := p.one("save-on-preempt"); ok {
		switch v {
		case "true", "false":
			c.SaveOnPreempt = v == "true"
		default:
			p.fail("save-on-preempt", "want true or false, got %q", v)
		}
	}
	if v, ok := p.one("retry"); ok {
		switch v {
		case sim.RetryTrace, sim.RetryNone, sim.RetryFixed, sim.RetryDeadline:
			c.Retry.Kind = v
		default:
			p.fail("retry", "want trace, none, fixed or deadline, got %q", v)
		}
	}
	p.int("retry-max", 0, 1000, &c.Retry.Max)
	p.time("backoff", &c.Retry.BackoffBase)
	p.float("backoff-factor", 0, 100, &c.Retry.BackoffFactor)
	p.checkpoint("checkpoint", &c.DefaultCheckpoint)
	p.time("mig-reconfig-time", &c.MIGReconfigTime)
	if v, ok := p.one("sharing"); ok {
		if v != "processor" {
			p.fail("sharing", "want processor, got %q", v)
		}
		c.ProcessorSharing = true
	}
	if err := p.done(); err != nil {
		return err
	}
	h.cfg = cfg
	return nil
}

func (h *harness) doHeartbeat(d *datadriven.TestData) error {
	p := newArgs(d.Pos, d.CmdArgs)
	hb := h.cfg.Heartbeat
	p.time("interval", &hb.Interval)
	p.time("timeout", &hb.Timeout)
	if err := p.done(); err != nil {
		return err
	}
	h.cfg.Heartbeat = hb
	return nil
}

func (h *harness) doSubmit(d *datadriven.TestData) error {
	ls, err := lines(d)
	if err != nil {
		return err
	}
	var jobs []workloads.Job
	var deps [][]string
	for _, l := range ls {
		p := newArgs(l.pos, l.args)
		j := workloads.Job{Name: l.name, Tenant: "default", Source: l.pos,
			Req: hwmodel.Request{GPUs: 1, GPUMilli: hwmodel.MilliPerGPU}}
		if !p.time("at", &j.Submit) && p.err == nil {
			p.fail("at", "missing; want the submission time, e.g. at=10s")
		}
		if !p.time("dur", &j.Duration) && p.err == nil {
			p.fail("dur", "missing; want the true running time, e.g. dur=1m")
		}
		if p.int("gpus", 0, hwmodel.MaxGPUsPerNode*1000, &j.Req.GPUs) && j.Req.GPUs == 0 {
			j.Req.GPUMilli = 0
		}
		var milli int
		if p.int("gpu_milli", 1, hwmodel.MilliPerGPU, &milli) {
			j.Req.GPUMilli = int32(milli)
		}
		if v, ok := p.one("mig"); ok {
			j.Req.MIG.Profile, j.Req.GPUMilli = v, 0
		}
		if p.int("mig-slices", 1, 64, &milli) {
			j.Req.MIG.MinSlices, j.Req.GPUMilli = milli, 0
		}
		if p.memory("mig-mem", &j.Req.MIG.MinMemoryMiB) {
			j.Req.GPUMilli = 0
		}
		p.cores("cpu", &j.Req.CPUMilli)
		p.memory("mem", &j.Req.MemoryMiB)
		if v, ok := p.one("tenant"); ok {
			j.Tenant = v
		}
		p.int("prio", -1000000, 1000000, &j.Priority)
		if !p.time("est", &j.Estimate) {
			j.Estimate = j.Duration
		}
		jobDeps, _ := p.vals("deps")
		p.int("fails", 0, 1000, &j.FailedAttempts)
		p.int("retries", 0, 1000, &j.MaxRetries)
		p.time("deadline", &j.Deadline)
		if v, ok := p.vals("models"); ok {
			set, err := hwmodel.ParseModelSet(strings.Join(v, ","))
			if err != nil {
				p.fail("models", "%v", err)
			}
			j.Req.Models = set
		}
		p.checkpoint("checkpoint", &j.Checkpoint)
		if err := p.done(); err != nil {
			return err
		}
		jobs = append(jobs, j)
		deps = append(deps, jobDeps)
	}
	h.jobs = append(h.jobs, jobs...)
	h.deps = append(h.deps, deps...)
	return nil
}

func (h *harness) doFail(d *datadriven.TestData) error {
	p := newArgs(d.Pos, d.CmdArgs)
	f := hwmodel.Fault{GPU: -1}
	node, hasNode := p.one("node")
	hasAt := p.time("at", &f.At)
	hasRepair := p.time("repair", &f.Repair)
	p.int("gpu", 0, hwmodel.MaxGPUsPerNode-1, &f.GPU)
	switch {
	case p.err != nil:
	case !hasNode:
		p.fail("node", "missing; want the failed node's name")
	case !hasAt:
		p.fail("at", "missing; want the failure time, e.g. at=100s")
	case !hasRepair || f.Repair == 0:
		p.fail("repair", "want a repair time > 0, e.g. repair=1h")
	}
	if err := p.done(); err != nil {
		return err
	}
	h.faults = append(h.faults, f)
	h.faultNode = append(h.faultNode, node)
	h.faultPos = append(h.faultPos, d.Pos)
	return nil
}

// start builds the engine from the setup.
func (h *harness) start(d *datadriven.TestData) error {
	if h.eng != nil {
		return nil
	}
	switch {
	case !h.hasCluster:
		return fmt.Errorf("%s: no cluster: a cluster command must come first", d.Pos)
	case !h.hasPolicy:
		return fmt.Errorf("%s: no policy: add policy SPEC before %s", d.Pos, d.Cmd)
	}
	c, err := hwmodel.NewCluster(h.nodes)
	if err != nil {
		return fmt.Errorf("%s: %v", d.Pos, err)
	}
	w, err := workloads.Build(h.jobs, h.deps, h.tenants, h.file)
	if err != nil {
		return err
	}
	spec := h.spec
	if spec.NeedsTarget() {
		reqs := make([]hwmodel.Request, len(w.Jobs))
		for i := range w.Jobs {
			reqs[i] = w.Jobs[i].Req
		}
		spec.Placer.Target = policies.TargetFromRequests(reqs)
	}
	if spec.Order == "kueue" {
		if spec.Kueue, err = kueue.Parse(h.kueue, h.kueuePos, kueue.Present(c.View())); err != nil {
			return fmt.Errorf("%s: %v", d.Pos, err)
		}
	}
	policy, err := spec.New()
	if err != nil {
		return fmt.Errorf("%s: policy %s: %v", d.Pos, spec, err)
	}
	byName := map[string]int{}
	for i := range c.NumNodes() {
		byName[c.Node(i).Name] = i
	}
	faults := slices.Clone(h.faults)
	for k := range faults {
		n, ok := byName[h.faultNode[k]]
		if !ok {
			return fieldError(h.faultPos[k], "node", "no node is named %q", h.faultNode[k])
		}
		faults[k].Node = n
		if err := faults[k].Validate(c); err != nil {
			return fmt.Errorf("%s: %v", h.faultPos[k], err)
		}
	}
	slices.SortStableFunc(faults, func(a, b hwmodel.Fault) int { return cmp.Compare(a.At, b.At) })
	cfg := h.cfg
	cfg.Cluster, cfg.Workload, cfg.Policy = c, w, policy
	cfg.CheckInvariants = true
	cfg.RevealOracle = spec.UseOracle
	cfg.MIGReconfigure, cfg.MIGConvertWhole = spec.MIGReconfigure, spec.MIGConvertWhole
	cfg.Faults = faults
	cfg.Observe = func(now hwmodel.Time, _ sim.Observation) { h.observe() }
	eng, err := sim.New(cfg)
	if err != nil {
		return fmt.Errorf("%s: %v", d.Pos, err)
	}
	h.cluster, h.w, h.eng = c, w, eng
	h.last = eng.Snapshot()
	return nil
}

func (h *harness) doRun(d *datadriven.TestData) (string, error) {
	if err := h.start(d); err != nil {
		return "", err
	}
	if h.ran {
		return "", fmt.Errorf("%s: the run is over", d.Pos)
	}
	p := newArgs(d.Pos, d.CmdArgs)
	var until hwmodel.Time
	hasUntil := p.time("until", &until)
	if err := p.done(); err != nil {
		return "", err
	}
	h.log.Reset()
	h.head = -1
	var err error
	if hasUntil {
		err = h.eng.RunUntil(until)
	} else {
		var res *sim.Result
		res, err = h.eng.Run()
		h.ran = true
		if err == nil {
			fmt.Fprintf(&h.log, "done at %s\n", fmtT(res.End))
		}
	}
	if err != nil {
		return h.log.String() + "error: " + err.Error() + "\n", nil
	}
	if hasUntil {
		if next, ok := h.eng.Next(); ok {
			fmt.Fprintf(&h.log, "now %s, next instant %s\n", fmtT(h.eng.Now()), fmtT(next))
		} else {
			fmt.Fprintf(&h.log, "now %s, nothing left to do\n", fmtT(h.eng.Now()))
		}
	}
	return h.log.String(), nil
}

// observe logs what changed at the instant just processed.
func (h *harness) observe() {
	cur := h.eng.Snapshot()
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	for n := range cur.Nodes {
		pn, cn := &h.last.Nodes[n], &cur.Nodes[n]
		diffFault(add, cn.Name, pn.Failed, cn.Failed, pn.DownUntil, cn.DownUntil)
		for g := range cn.GPUs {
			pg, cg := &pn.GPUs[g], &cn.GPUs[g]
			where := fmt.Sprintf("%s:gpu%d", cn.Name, g)
			diffFault(add, where, pg.Failed, cg.Failed, pg.DownUntil, cg.DownUntil)
			if !slices.Equal(pg.MIG, cg.MIG) {
				add("%s: MIG layout %s -> %s", where, fmtLayout(pg.MIG, cn.Model), fmtLayout(cg.MIG, cn.Model))
			}
			if pg.MIGBlocked != cg.MIGBlocked {
				if cg.MIGBlocked != 0 {
					add("%s: instances %s blocked", where, fmtMask(cg.MIGBlocked))
				} else {
					add("%s: instances unblocked", where)
				}
			}
		}
	}
	for i := range cur.Jobs {
		if s := diffJob(&h.last.Jobs[i], &cur.Jobs[i], cur.Nodes); s != "" {
			lines = append(lines, s)
		}
	}
	if r := cur.Rejections - h.last.Rejections; r > 0 {
		add("engine rejected %d decision(s)", r)
	}
	h.last = cur
	if len(lines) == 0 {
		return
	}
	if h.head != cur.Now {
		fmt.Fprintf(&h.log, "%s:\n", fmtT(cur.Now))
		h.head = cur.Now
	}
	for _, l := range lines {
		fmt.Fprintf(&h.log, "  %s\n", l)
	}
}

func diffFault(add func(string, ...any), where string, wasFailed, failed bool, wasDown, down hwmodel.Time) {
	switch {
	case !wasFailed && failed:
		add("%s: failed (not detected yet)", where)
	case wasFailed && !failed && down >= 0:
		add("%s: failure detected, out of service until %s", where, fmtT(down))
	case wasFailed && !failed:
		add("%s: failure detected, already repaired", where)
	case wasDown >= 0 && down < 0:
		add("%s: back in service", where)
	case down != wasDown:
		add("%s: out of service until %s", where, fmtT(down))
	}
}

// diffJob describes job p's changes into c in one line, "" if none.
func diffJob(p, c *sim.JobStatus, nodes []sim.NodeStatus) string {
	if p.Submitted == c.Submitted && p.State == c.State && p.Attempts == c.Attempts &&
		p.Backoff == c.Backoff && endedAttempts(p) == endedAttempts(c) {
		return ""
	}
	// Attempts that ended come before those that started: that is their
	// order within an instant.
	var parts, started []string
	for k := range c.Log() {
		a := &c.Log()[k]
		switch {
		case k >= len(p.Log()) && a.Ended == sim.AttemptRunning:
			started = append(started, fmt.Sprintf("attempt %d on %s", k+1, fmtPlacement(a.Placement, nodes)))
		case k >= len(p.Log()):
			started = append(started, fmt.Sprintf("attempt %d on %s %s", k+1, fmtPlacement(a.Placement, nodes), a.Ended))
		case p.Log()[k].Ended == sim.AttemptRunning && a.Ended != sim.AttemptRunning:
			parts = append(parts, fmt.Sprintf("attempt %d %s", k+1, a.Ended))
		}
	}
	parts = append(parts, started...)
	if c.Backoff && !p.Backoff {
		parts = append(parts, "retry after a back-off")
	}
	if c.State == sim.Failed {
		parts = append(parts, fmt.Sprintf("reason %q", c.Reason))
	}
	s := fmt.Sprintf("%s: %s -> %s", c.Name, stateName(p), stateName(c))
	if len(parts) > 0 {
		s += ", " + strings.Join(parts, ", ")
	}
	return s
}

func endedAttempts(j *sim.JobStatus) int {
	n := 0
	for _, a := range j.Log() {
		if a.Ended != sim.AttemptRunning {
			n++
		}
	}
	return n
}

func stateName(j *sim.JobStatus) string {
	if !j.Submitted {
		return "unsubmitted"
	}
	return j.State.String()
}
