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
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

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

// lines parses d's input lines, each as a name followed by arguments.
func lines(d *datadriven.TestData) ([]parsedLine, error) {
	var out []parsedLine
	for k, l := range strings.Split(d.Input, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		name, args, err := datadriven.ParseLine(l)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at(d, k), err)
		}
		out = append(out, parsedLine{pos: at(d, k), name: name, args: args})
	}
	return out, nil
}

type parsedLine struct {
	pos  string
	name string
	args []datadriven.CmdArg
}

// argParser reads one line's key=value arguments, each at most once, and
// reports unknown keys.
type argParser struct {
	pos  string
	args []datadriven.CmdArg
	used []bool
	err  error
}

func newArgs(pos string, args []datadriven.CmdArg) *argParser {
	return &argParser{pos: pos, args: args, used: make([]bool, len(args))}
}

func (p *argParser) fail(field, format string, a ...any) {
	if p.err == nil {
		p.err = fieldError(p.pos, field, format, a...)
	}
}

// vals returns key's values and whether it is there.
func (p *argParser) vals(key string) ([]string, bool) {
	var out []string
	found := false
	for k, a := range p.args {
		if a.Key != key {
			continue
		}
		if found {
			p.fail(key, "given twice")
		}
		found, p.used[k], out = true, true, a.Vals
	}
	return out, found
}

// one returns key's single value.
func (p *argParser) one(key string) (string, bool) {
	v, ok := p.vals(key)
	if ok && len(v) != 1 {
		p.fail(key, "want one value, got %d", len(v))
		return "", false
	}
	if !ok {
		return "", false
	}
	return v[0], true
}

func (p *argParser) time(key string, dst *hwmodel.Time) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	t, err := hwmodel.ParseDuration(v)
	if err != nil || t < 0 {
		p.fail(key, "want a duration >= 0 such as 90s, 5m or 1h, got %q", v)
		return false
	}
	*dst = t
	return true
}

func (p *argParser) int(key string, lo, hi int, dst *int) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(key, "want an integer in %d..%d, got %q", lo, hi, v)
		return false
	}
	*dst = n
	return true
}

func (p *argParser) float(key string, lo, hi float64, dst *float64) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		p.fail(key, "want a number in %g..%g, got %q", lo, hi, v)
		return false
	}
	*dst = f
	return true
}

// cores reads a CPU amount in cores (0.5 is 500 milli-CPU).
func (p *argParser) cores(key string, dst *int64) bool {
	var f float64
	if !p.float(key, 0, 1e9, &f) {
		return false
	}
	*dst = int64(math.Round(f * 1000))
	return true
}

// memory reads a size with its unit: MiB, GiB or TiB.
func (p *argParser) memory(key string, dst *int64) bool {
	v, ok := p.one(key)
	if !ok {
		return false
	}
	for _, u := range []struct {
		suffix string
		mib    float64
	}{{"MiB", 1}, {"GiB", 1 << 10}, {"TiB", 1 << 20}} {
		if num, found := strings.CutSuffix(v, u.suffix); found {
			f, err := strconv.ParseFloat(num, 64)
			if err == nil && f >= 0 && f*u.mib <= 1<<40 {
				*dst = int64(math.Round(f * u.mib))
				return true
			}
		}
	}
	p.fail(key, "want a size such as 512MiB, 64GiB or 1TiB, got %q", v)
	return false
}

func (p *argParser) checkpoint(key string, dst *sim.Checkpoint) bool {
	v, ok := p.vals(key)
	if !ok {
		return false
	}
	var c sim.Checkpoint
	if len(v) == 2 {
		var err1, err2 error
		c.Every, err1 = hwmodel.ParseDuration(v[0])
		c.Cost, err2 = hwmodel.ParseDuration(v[1])
		if err1 == nil && err2 == nil && c.Every > 0 && c.Cost >= 0 {
			*dst = c
			return true
		}
	}
	p.fail(key, "want (EVERY, COST), two durations with EVERY > 0, got %q", strings.Join(v, ", "))
	return false
}

// done reports an unknown key, or the first error.
func (p *argParser) done() error {
	if p.err != nil {
		return p.err
	}
	for k, a := range p.args {
		if !p.used[k] {
			return fieldError(p.pos, a.Key, "unknown argument")
		}
	}
	return nil
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

func (h *harness) doPrint(d *datadriven.TestData) (string, error) {
	if err := h.start(d); err != nil {
		return "", err
	}
	what := map[string]bool{}
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "jobs", "cluster", "tenants", "faults":
			what[a.Key] = true
		default:
			return "", fieldError(d.Pos, a.Key, "unknown; want jobs, cluster, tenants or faults")
		}
	}
	if len(what) == 0 {
		what["jobs"] = true
	}
	s := h.eng.Snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "at %s\n", fmtT(s.Now))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if what["jobs"] {
		fmt.Fprintln(tw, "job\ttenant\tstate\tattempts\tstart\tend\twait\trun\tplacement\tnote")
		for i := range s.Jobs {
			j := &s.Jobs[i]
			note := j.Reason
			if j.HardwareFailures > 0 {
				note = strings.TrimPrefix(note+fmt.Sprintf("; %d lost to hardware", j.HardwareFailures), "; ")
			}
			if j.Backoff {
				note = strings.TrimPrefix(note+"; in back-off", "; ")
			}
			pl := "-"
			if len(j.Placement) > 0 {
				pl = fmtPlacement(j.Placement, s.Nodes)
				if j.MIGProfile != "" {
					pl += " " + j.MIGProfile
				}
			}
			if note == "" {
				note = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.Tenant, stateName(j), j.Attempts,
				fmtT(j.Start), fmtT(j.End), fmtT(j.Wait), fmtT(j.Run), pl, note)
		}
		tw.Flush()
	}
	if what["cluster"] {
		fmt.Fprintln(tw, "node\tmodel\tfree gpus\tfree milli per gpu\tfree cpu\tfree mem\tstatus")
		for _, n := range s.Nodes {
			free := 0
			milli := make([]string, len(n.GPUs))
			var status []string
			if n.Failed {
				status = append(status, "failed")
			}
			if n.DownUntil >= 0 {
				status = append(status, "down until "+fmtT(n.DownUntil))
			}
			for g, gs := range n.GPUs {
				milli[g] = strconv.Itoa(int(gs.FreeMilli))
				if gs.FreeMilli == hwmodel.MilliPerGPU && len(gs.MIG) == 0 {
					free++
				}
				if len(gs.MIG) > 0 {
					milli[g] = "mig"
				}
				if gs.Failed {
					status = append(status, fmt.Sprintf("gpu%d failed", g))
				}
				if gs.DownUntil >= 0 {
					status = append(status, fmt.Sprintf("gpu%d down until %s", g, fmtT(gs.DownUntil)))
				}
			}
			if len(status) == 0 {
				status = []string{"ok"}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", n.Name, hwmodel.Model(n.Model).Name, free, len(n.GPUs),
				strings.Join(milli, " "), fmtCores(n.FreeCPUMilli), fmtMiB(n.FreeMemoryMiB), strings.Join(status, ", "))
		}
		tw.Flush()
		for _, n := range s.Nodes {
			for g, gs := range n.GPUs {
				if len(gs.MIG) > 0 {
					fmt.Fprintf(&b, "%s:gpu%d mig %s\n", n.Name, g, fmtInstances(gs, n.Model))
				}
			}
		}
	}
	if what["tenants"] {
		fmt.Fprintln(tw, "tenant\tweight\tgpu milli\tcpu\tmem")
		for _, t := range s.Tenants {
			fmt.Fprintf(tw, "%s\t%g\t%d\t%s\t%s\n", t.Name, t.Weight, t.AllocatedMilliGPU, fmtCores(t.AllocatedCPUMilli), fmtMiB(t.AllocatedMemMiB))
		}
		tw.Flush()
	}
	if what["faults"] {
		fmt.Fprintln(tw, "fault\tat\tdetected\trepaired\tjobs hit")
		for _, f := range s.Faults {
			where := s.Nodes[f.Node].Name
			if f.GPU >= 0 {
				where += fmt.Sprintf(":gpu%d", f.GPU)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", where, fmtT(f.At), fmtT(f.Detected), fmtT(f.Repaired), f.JobsHit)
		}
		tw.Flush()
	}
	return b.String(), nil
}

// doAssert checks conditions on the engine's state now and returns the
// failed ones, which fail the test (a rewrite cannot turn them into
// expected output).
func (h *harness) doAssert(d *datadriven.TestData) (string, []string, error) {
	if err := h.start(d); err != nil {
		return "", nil, err
	}
	ls, err := lines(d)
	if err != nil {
		return "", nil, err
	}
	if len(ls) == 0 {
		return "", nil, fmt.Errorf("%s: assert has no conditions", d.Pos)
	}
	s := h.eng.Snapshot()
	checked := 0
	var failures []string
	for _, l := range ls {
		if len(l.args) == 0 || (l.name != "engine" && len(l.args[0].Vals) != 0) {
			return "", nil, fmt.Errorf("%s: want job NAME KEY=VALUE..., node NAME KEY=VALUE..., tenant NAME KEY=VALUE... or engine KEY=VALUE...", l.pos)
		}
		var got map[string]string
		args := l.args
		switch l.name {
		case "job":
			k := slices.IndexFunc(s.Jobs, func(j sim.JobStatus) bool { return j.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no job %q", l.pos, args[0].Key)
			}
			got = jobFacts(&s.Jobs[k], s.Nodes)
			args = args[1:]
		case "node":
			k := slices.IndexFunc(s.Nodes, func(n sim.NodeStatus) bool { return n.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no node %q", l.pos, args[0].Key)
			}
			got = nodeFacts(&s.Nodes[k])
			args = args[1:]
		case "tenant":
			k := slices.IndexFunc(s.Tenants, func(t policies.Tenant) bool { return t.Name == args[0].Key })
			if k < 0 {
				return "", nil, fmt.Errorf("%s: no tenant %q", l.pos, args[0].Key)
			}
			got = map[string]string{"milli": strconv.FormatInt(s.Tenants[k].AllocatedMilliGPU, 10)}
			args = args[1:]
		case "engine":
			got = map[string]string{
				"now": fmtT(s.Now), "queued": strconv.Itoa(s.Queued), "running": strconv.Itoa(s.Running),
				"terminal": strconv.Itoa(s.Terminal), "allocated": strconv.FormatInt(s.AllocatedMilli, 10),
				"down": strconv.FormatInt(s.DownMilli, 10), "done": strconv.FormatBool(s.Done),
				"rejections": strconv.FormatInt(s.Rejections, 10), "reconfigurations": strconv.FormatInt(s.MIGReconfigurations, 10),
			}
		default:
			return "", nil, fmt.Errorf("%s: unknown subject %q (want job, node, tenant or engine)", l.pos, l.name)
		}
		if len(args) == 0 {
			return "", nil, fmt.Errorf("%s: nothing to check", l.pos)
		}
		for _, a := range args {
			g, known := got[a.Key]
			if !known {
				keys := make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return "", nil, fieldError(l.pos, a.Key, "unknown for %s (known: %s)", l.name, strings.Join(keys, ", "))
			}
			want := strings.Join(a.Vals, ", ")
			if isTimeKey(a.Key) {
				w, err := parseT(want)
				if err != nil {
					return "", nil, fieldError(l.pos, a.Key, "%v", err)
				}
				want = fmtT(w)
			}
			if g != want {
				failures = append(failures, fmt.Sprintf("%s: assert failed at %s: %s: %s is %q, want %q", l.pos, fmtT(s.Now), subject(l), a.Key, g, want))
			}
			checked++
		}
	}
	if len(failures) > 0 {
		return "", failures, nil
	}
	return fmt.Sprintf("ok (%d checks)\n", checked), nil, nil
}

// subject names what an assert line checks: "job a", "engine".
func subject(l parsedLine) string {
	if l.name == "engine" {
		return l.name
	}
	return l.name + " " + l.args[0].Key
}

func isTimeKey(k string) bool {
	switch k {
	case "start", "end", "wait", "run", "lost", "preempt-lost", "checkpoint-time", "now", "down-until":
		return true
	}
	return false
}

// parseT reads a time as fmtT writes it: "-" is -1.
func parseT(s string) (hwmodel.Time, error) {
	if s == "-" {
		return -1, nil
	}
	t, err := hwmodel.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 90s or -, got %q", s)
	}
	return t, nil
}

func jobFacts(j *sim.JobStatus, nodes []sim.NodeStatus) map[string]string {
	pl := "-"
	if len(j.Placement) > 0 {
		pl = fmtPlacement(j.Placement, nodes)
	}
	why := map[sim.FailReason]string{
		sim.FailNone: "none", sim.FailRetriesExhausted: "retries", sim.FailDeadline: "deadline",
		sim.FailDependency: "dependency", sim.FailUnsatisfiable: "unsatisfiable",
	}[j.FailReason]
	return map[string]string{
		"state": stateName(j), "attempts": strconv.Itoa(int(j.Attempts)),
		"start": fmtT(j.Start), "end": fmtT(j.End), "wait": fmtT(j.Wait), "run": fmtT(j.Run),
		"lost": fmtT(j.LostTime), "checkpoint-time": fmtT(j.CheckpointTime), "placement": pl, "why": why, "reason": j.Reason,
		"hw-failures": strconv.Itoa(j.HardwareFailures), "profile": j.MIGProfile,
		"preemptions": strconv.Itoa(j.Preemptions), "preempt-lost": fmtT(j.PreemptLost),
	}
}

func nodeFacts(n *sim.NodeStatus) map[string]string {
	free := 0
	for _, g := range n.GPUs {
		if g.FreeMilli == hwmodel.MilliPerGPU && len(g.MIG) == 0 {
			free++
		}
	}
	return map[string]string{
		"failed": strconv.FormatBool(n.Failed), "down-until": fmtT(n.DownUntil),
		"free-gpus": strconv.Itoa(free), "free-cpu": fmtCores(n.FreeCPUMilli), "free-mem": fmtMiB(n.FreeMemoryMiB),
	}
}

// fmtT writes a time in seconds, "-" for -1 (not yet).
func fmtT(t hwmodel.Time) string {
	if t < 0 {
		return "-"
	}
	return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) + "s"
}

func fmtCores(milli int64) string { return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64) }

func fmtMiB(mib int64) string {
	if mib%(1<<10) == 0 {
		return strconv.FormatInt(mib>>10, 10) + "GiB"
	}
	return strconv.FormatInt(mib, 10) + "MiB"
}

// fmtMask writes a bitmask's bits as ranges: 0-3,6.
func fmtMask(m uint64) string {
	var parts []string
	for m != 0 {
		lo := bits.TrailingZeros64(m)
		hi := lo
		for hi+1 < 64 && m&(1<<(hi+1)) != 0 {
			hi++
		}
		if lo == hi {
			parts = append(parts, strconv.Itoa(lo))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", lo, hi))
		}
		m &^= (1<<(hi+1) - 1) &^ (1<<lo - 1)
	}
	return strings.Join(parts, ",")
}

// fmtPlacement writes a placement as node:gpuRANGES, with @M for a
// fractional share, /migK for MIG instance K and "cpu" for a share
// without GPUs; shares joined by "+".
func fmtPlacement(p hwmodel.Placement, nodes []sim.NodeStatus) string {
	parts := make([]string, len(p))
	for k, s := range p {
		name := nodes[s.Node].Name
		switch {
		case s.GPUs == 0:
			parts[k] = name + ":cpu"
		case s.Instance > 0:
			parts[k] = fmt.Sprintf("%s:gpu%s/mig%d", name, fmtMask(s.GPUs), s.Instance-1)
		case s.Milli < hwmodel.MilliPerGPU:
			parts[k] = fmt.Sprintf("%s:gpu%s@%dm", name, fmtMask(s.GPUs), s.Milli)
		default:
			parts[k] = fmt.Sprintf("%s:gpu%s", name, fmtMask(s.GPUs))
		}
	}
	return strings.Join(parts, "+")
}

func fmtLayout(l hwmodel.MIGLayout, m hwmodel.ModelID) string {
	if len(l) == 0 {
		return "whole"
	}
	return "[" + l.String(m) + "]"
}

// fmtInstances writes a MIG GPU's instances, * marking busy ones and !
// blocked ones.
func fmtInstances(g sim.GPUStatus, m hwmodel.ModelID) string {
	profs := hwmodel.MIGProfiles(m)
	parts := make([]string, len(g.MIG))
	for k, in := range g.MIG {
		parts[k] = fmt.Sprintf("%d:%s", k, profs[in.Profile].Name)
		if g.MIGBusy&(1<<k) != 0 {
			parts[k] += "*"
		}
		if g.MIGBlocked&(1<<k) != 0 {
			parts[k] += "!"
		}
	}
	return strings.Join(parts, " ")
}

// TestScenarioAssertFails checks that assert catches a wrong expectation
// and says which job, which field, what it is and what was wanted, and
// that the harness answers commands with the engine's state.
func TestScenarioAssertFails(t *testing.T) {
	h := &harness{file: "inline"}
	step := func(line, input string) (string, []string, error) {
		t.Helper()
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			t.Fatal(err)
		}
		d := &datadriven.TestData{Pos: "inline:1", Cmd: cmd, CmdArgs: args, Input: input}
		if cmd == "assert" {
			return h.doAssert(d)
		}
		out, err := h.do(t, d)
		return out, nil, err
	}
	for _, c := range []struct{ line, input string }{
		{"cluster", "n0 gpus=1 model=H100 cpu=8 mem=64GiB"},
		{"policy fcfs", ""},
		{"submit", "a at=0s dur=10s\nb at=0s dur=10s"},
		{"run until=5s", ""},
	} {
		if _, _, err := step(c.line, c.input); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
	}
	tests := []struct {
		input string
		want  []string // the failures, in order; none: it passes
	}{
		{"job a state=running start=0s\njob b state=ready wait=5s", nil},
		{"job a state=succeeded", []string{`inline:2: assert failed at 5s: job a: state is "running", want "succeeded"`}},
		{"job b start=0s attempts=1", []string{
			`inline:2: assert failed at 5s: job b: start is "-", want "0s"`,
			`inline:2: assert failed at 5s: job b: attempts is "0", want "1"`}},
		{"engine now=6s running=1", []string{`inline:2: assert failed at 5s: engine: now is "5s", want "6s"`}},
		{"node n0 free-gpus=1", []string{`inline:2: assert failed at 5s: node n0: free-gpus is "0", want "1"`}},
	}
	for _, tc := range tests {
		out, failures, err := step("assert", tc.input)
		if err != nil {
			t.Fatalf("assert %q: %v", tc.input, err)
		}
		if !slices.Equal(failures, tc.want) {
			t.Errorf("assert %q: failures\n%q\nwant\n%q", tc.input, failures, tc.want)
		}
		if (out == "") != (len(tc.want) > 0) {
			t.Errorf("assert %q: output %q with %d failures", tc.input, out, len(failures))
		}
	}
}
