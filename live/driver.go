package live

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// Clock is the driver's source of wall time; tests inject a fake.
type Clock interface{ Now() time.Time }

// WallClock is the real clock.
type WallClock struct{}

// Now implements Clock.
func (WallClock) Now() time.Time { return time.Now() }

// Config configures a Driver.
type Config struct {
	GPUs     []GPU  // this machine's GPUs (DiscoverLocal, or FakeGPUs)
	Policy   string // a policy spec (policies.ParseSpec)
	State    string // bbolt file
	LogDir   string // per-job log files <name>.log
	JobsFile string // when set, re-read every Tick; new names are submitted
	Clock    Clock  // nil: WallClock
	Tick     time.Duration
	// ExitWhenDone makes Run return once no job is queued or running.
	ExitWhenDone bool
	Log          io.Writer // rejections and warnings; nil discards
	// Health, when set, is polled every HeartbeatInterval (0: 5s) and its
	// events applied: a GPU that stops answering or reports a critical
	// error is marked down, its jobs killed and failed (health.go).
	Health            HealthSource
	HeartbeatInterval time.Duration
	// GPUsUp names GPUs (UUIDs or indices) an operator has repaired: their
	// down state in the store is cleared at Open.
	GPUsUp []string
	// Metrics, when set, is updated at every transition (NewMetrics);
	// nil records nothing.
	Metrics *Metrics
	// Backoff and BackoffFactor are the retry back-off, as brigade sim's
	// --backoff and --backoff-factor: the k-th retry of a job is queued
	// Backoff·BackoffFactor^(k−1) after the failure (hwmodel.RetryBackoff).
	// Backoff 0 is DefaultBackoff, so that a job failing at once is not
	// relaunched in a tight loop; negative turns back-off off.
	// BackoffFactor 0 is 2.
	Backoff       time.Duration
	BackoffFactor float64
	// Grace is how long a preempted attempt has between SIGTERM and
	// SIGKILL, to checkpoint ($BRIGADE_CHECKPOINT_DIR); 0 is DefaultGrace.
	Grace time.Duration
	// Machine is the node's CPU and memory that jobs' cpu_milli and
	// memory_mib requests are booked against (0: this machine's, as
	// DetectMachine reads them), and the tenants' weights for fair share.
	Machine Machine
}

// Machine is what the live node offers besides its GPUs, and how its
// tenants weigh.
type Machine struct {
	CPUMilli  int64 `json:"cpu_milli"`
	MemoryMiB int64 `json:"memory_mib"`
	// TenantWeights weigh tenants in fair share (brigade sim's
	// --tenant-weights); a tenant not listed weighs 1.
	TenantWeights map[string]float64 `json:"tenant_weights,omitempty"`
}

// DefaultGrace is Config.Grace when it is 0.
const DefaultGrace = 10 * time.Second

// DefaultBackoff is the first retry's back-off when Config.Backoff is 0.
const DefaultBackoff = time.Second

// FakeGPUs returns n made-up H100 GPUs for tests and demos.
func FakeGPUs(n int) []GPU {
	out := make([]GPU, n)
	m, _ := hwmodel.LookupModel("H100-80GB")
	for i := range out {
		out[i] = GPU{Index: i, Model: "fake H100", Catalogue: m.Name, ModelID: m.ID, Known: true,
			UUID: fmt.Sprintf("GPU-fake-%04d", i), MemoryTotalMiB: m.MemoryMiB}
	}
	return out
}

type exitMsg struct {
	id      int32
	attempt int
	code    int
	signal  int
}

// Driver runs a policy over real processes on one node.
type Driver struct {
	cfg     Config
	st      *store
	cluster *hwmodel.Cluster
	policy  policies.Policy
	epoch   int64
	nonce   string

	// host is the driver half of the policy contract, shared with the
	// simulator: the View, reservations, the Events batch, decisions
	// applied in order, the tenant books. Job i of the host is recs[i].
	host    policies.Host
	applyFn func(policies.Decision) string
	// launchFn starts an attempt's process: launch, or a test's fake that
	// keeps the same protocol (the exit file, then an exitMsg).
	launchFn func(*Record) error
	// stopFn asks a preempted attempt to end: terminate, or a test's fake.
	stopFn    func(*Record)
	preempted []*Record // the current round's accepted preemptions
	starts    []*Record // the current round's accepted starts, to launch
	recs      []*Record
	names     map[string]int32
	// dependants lists, by job name, the jobs whose deps name it.
	dependants map[string][]int32
	tenantOf   map[string]int
	place      map[int32]hwmodel.Placement
	// migUUIDs[g][k] is the MIG device UUID of instance k of GPU g, in the
	// order of the cluster's layout (nil for GPUs without MIG).
	migUUIDs [][]string
	adopted  map[int32]bool
	// stopping are re-adopted jobs whose wrapper ended while processes of
	// their group lived on: the driver has SIGKILLed the group and waits.
	stopping map[int32]bool
	boot     string // bootID() of this boot
	// waiting are queued jobs in retry back-off (Record.NotBefore ahead):
	// the policy hears of them when it is over.
	waiting []int32
	// later are queued jobs whose launch met a transient error: the policy
	// hears of them at the next tick.
	later   []policies.JobID
	hs      healthState
	nextDue time.Duration // until the next back-off ends (0: none)

	mu    sync.Mutex
	exits []exitMsg
	wake  chan struct{}
	dead  chan struct{}

	fileMod  time.Time
	fileSize int64

	// Latencies holds the duration of every Schedule call that returned
	// decisions, with the decisions' application (not the launches).
	Latencies []time.Duration
	Decisions int
}

// Open opens (or creates) the state file, recovers what a previous run
// left, and builds the cluster and the policy.
func Open(cfg Config) (*Driver, error) {
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeat
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.BackoffFactor == 0 {
		cfg.BackoffFactor = 2
	}
	if cfg.BackoffFactor < 1 || math.IsNaN(cfg.BackoffFactor) || math.IsInf(cfg.BackoffFactor, 0) {
		return nil, fmt.Errorf("live: BackoffFactor must be finite and >= 1, got %g", cfg.BackoffFactor)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if len(cfg.GPUs) == 0 || len(cfg.GPUs) > 64 {
		return nil, fmt.Errorf("live: need 1..64 GPUs, got %d", len(cfg.GPUs))
	}
	model := cfg.GPUs[0].ModelID
	if !cfg.GPUs[0].Known {
		m, _ := hwmodel.LookupModel("H100-80GB")
		model = m.ID
	}
	if cfg.Machine.CPUMilli == 0 || cfg.Machine.MemoryMiB == 0 {
		m, err := DetectMachine()
		if err != nil {
			return nil, err
		}
		if cfg.Machine.CPUMilli == 0 {
			cfg.Machine.CPUMilli = m.CPUMilli
		}
		if cfg.Machine.MemoryMiB == 0 {
			cfg.Machine.MemoryMiB = m.MemoryMiB
		}
	}
	if cfg.Machine.CPUMilli < 0 || cfg.Machine.MemoryMiB < 0 {
		return nil, fmt.Errorf("live: the machine's CPU and memory must be > 0, got %d milli-CPU and %d MiB", cfg.Machine.CPUMilli, cfg.Machine.MemoryMiB)
	}
	for t, w := range cfg.Machine.TenantWeights {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("live: tenant %q: weight must be > 0 and finite, got %v", t, w)
		}
	}
	node := hwmodel.Node{Name: "local", Model: model, GPUs: len(cfg.GPUs), CPUMilli: cfg.Machine.CPUMilli, MemoryMiB: cfg.Machine.MemoryMiB}
	migUUIDs, noInstances, err := migLayouts(&node, cfg.GPUs)
	if err != nil {
		return nil, err
	}
	cl, err := hwmodel.NewCluster([]hwmodel.Node{node})
	if err != nil {
		return nil, err
	}
	for _, g := range noInstances {
		// MIG is on but no instance exists: nothing can run there, and
		// live mode does not create instances.
		if err := cl.Allocate(hwmodel.Placement{{Node: 0, GPUs: 1 << g, Milli: hwmodel.MilliPerGPU}}); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "live: GPU %d has MIG enabled but no GPU instances; it is not used\n", g)
	}
	pol, _, err := newPolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return nil, err
	}
	logs, err := filepath.Abs(cfg.LogDir)
	if err != nil {
		return nil, err
	}
	// Absolute: the exit file's path is handed to jobs that run in their
	// own workdir.
	cfg.LogDir = logs
	if err := os.MkdirAll(filepath.Join(logs, ".exit"), 0o755); err != nil {
		return nil, err
	}
	st, err := openStore(cfg.State)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, st: st, cluster: cl, policy: pol, migUUIDs: migUUIDs, names: map[string]int32{}, dependants: map[string][]int32{}, tenantOf: map[string]int{},
		place: map[int32]hwmodel.Placement{}, adopted: map[int32]bool{}, stopping: map[int32]bool{}, boot: bootID(),
		wake: make(chan struct{}, 1), dead: make(chan struct{})}
	if err := d.host.Init(cl, nil, nil); err != nil {
		st.db.Close()
		return nil, err
	}
	d.applyFn = d.apply
	d.launchFn = d.launch
	d.stopFn = d.terminate
	cfg.Metrics.SetGPUs(len(cfg.GPUs), 0)
	var e [8]byte
	binary.BigEndian.PutUint64(e[:], uint64(cfg.Clock.Now().UnixMicro()))
	ev, err := st.meta("epoch", e[:])
	if err == nil {
		d.epoch = int64(binary.BigEndian.Uint64(ev))
		var n [8]byte
		_, _ = rand.Read(n[:])
		var nv []byte
		nv, err = st.meta("nonce", []byte(hex.EncodeToString(n[:])))
		d.nonce = string(nv)
	}
	if err == nil {
		err = st.putRunMeta(cfg.Policy, cfg.GPUs, logs, cfg.Machine)
	}
	if err == nil {
		err = d.recover()
	}
	if err == nil {
		err = d.restoreDown()
	}
	if err == nil && cfg.JobsFile != "" {
		err = d.watch()
	}
	if err != nil {
		st.db.Close()
		return nil, err
	}
	return d, nil
}

func (d *Driver) now() hwmodel.Time {
	return hwmodel.Time(d.cfg.Clock.Now().UnixMicro() - d.epoch)
}

func (d *Driver) marker(r *Record) string {
	return fmt.Sprintf("BRIGADE_LIVE_JOB=%s.%d.%d", d.nonce, r.ID, r.Attempt)
}

func (d *Driver) addJob(r *Record) {
	t, ok := d.tenantOf[r.Spec.Tenant]
	if !ok {
		name := r.Spec.Tenant
		if name == "" {
			name = "default"
		}
		w, ok := d.cfg.Machine.TenantWeights[name]
		if !ok {
			w = 1
		}
		t = d.host.AddTenant(name, w)
		d.tenantOf[r.Spec.Tenant] = t
	}
	d.recs = append(d.recs, r)
	d.names[r.Spec.Name] = r.ID
	for _, dep := range r.Spec.Deps {
		d.dependants[dep] = append(d.dependants[dep], r.ID)
	}
	// Records are dense from 0 in ID order, so the host's next ID is r's.
	d.host.AddJob(policies.Job{Name: r.Spec.Name, Tenant: t, Priority: r.Spec.Priority,
		Submit: hwmodel.Time(r.Submit), Queued: hwmodel.Time(r.Queued), Start: hwmodel.Time(r.Start),
		Estimate: r.Spec.estimate(), Attempt: max(r.Attempt-1, 0), Req: r.Spec.request()})
}

// Submit adds the specs whose names the store does not hold yet, in order,
// in one transaction. It returns how many were new.
func (d *Driver) Submit(specs []JobSpec) (int, error) {
	now := int64(d.now())
	var add []*Record
	for _, s := range specs {
		if _, ok := d.names[s.Name]; ok {
			continue
		}
		r := &Record{ID: int32(len(d.recs) + len(add)), Spec: s, State: Queued, Submit: now, Queued: now, Exit: -1}
		if err := d.cluster.Satisfiable(s.request()); err != nil {
			r.State, r.End, r.Reason = Failed, now, "never fits this machine: "+err.Error()
		} else if reason := d.servable(s.request()); reason != "" {
			r.State, r.End, r.Reason = Failed, now, "never fits this machine: "+reason
		}
		add = append(add, r)
	}
	// Dependencies resolve against the store's jobs and the batch's: a
	// job may wait for one later in the same file.
	batch := map[string]*Record{}
	for _, r := range add {
		batch[r.Spec.Name] = r
	}
	find := func(name string) *Record {
		if r := batch[name]; r != nil {
			return r
		}
		return d.byName(name)
	}
	for changed := true; changed; {
		changed = false
		for _, r := range add {
			if r.State != Queued && r.State != Pending || len(r.Spec.Deps) == 0 {
				continue
			}
			switch st, failed := depState(r, find); {
			case st == Failed:
				d.failOnDep(r, failed, now)
				changed = true
			case st != r.State:
				r.State = st
			}
		}
	}
	if err := d.st.put(add...); err != nil {
		return 0, err
	}
	for _, r := range add {
		d.addJob(r)
		d.cfg.Metrics.moved(r, "")
		switch r.State {
		case Queued:
			d.host.Queue(policies.JobID(r.ID))
		case Failed:
			fmt.Fprintf(d.cfg.Log, "live: %s failed: %s\n", r.Spec.Name, r.Reason)
		}
	}
	return len(add), nil
}

func (d *Driver) watch() error {
	fi, err := os.Stat(d.cfg.JobsFile)
	if err != nil {
		return err
	}
	if fi.ModTime().Equal(d.fileMod) && fi.Size() == d.fileSize {
		return nil
	}
	specs, err := ParseJobFile(d.cfg.JobsFile)
	if err != nil {
		return err
	}
	d.fileMod, d.fileSize = fi.ModTime(), fi.Size()
	_, err = d.Submit(specs)
	return err
}

// Machine is the CPU, memory and tenant weights the driver books against.
func (d *Driver) Machine() Machine { return d.cfg.Machine }

// job is the policy's view of r, which the driver writes through.
func (d *Driver) job(r *Record) *policies.Job { return d.host.Job(policies.JobID(r.ID)) }

// Pending reports how many jobs are queued or running.
func (d *Driver) Pending() int {
	n := 0
	for _, r := range d.recs {
		if r.State == Queued || r.State == Running {
			n++
		}
	}
	return n
}

// Run schedules until ctx ends (or, with ExitWhenDone, until no job is
// queued or running). Processes still running when ctx ends keep running;
// a restart re-adopts them.
func (d *Driver) Run(ctx context.Context) error {
	defer d.startHealth(ctx)()
	t := time.NewTicker(d.cfg.Tick)
	defer t.Stop()
	backoff := time.NewTimer(time.Hour)
	defer backoff.Stop()
	for {
		if err := d.round(); err != nil {
			return err
		}
		if w := d.nextDue; w > 0 {
			backoff.Reset(w)
		}
		if d.cfg.ExitWhenDone && d.Pending() == 0 {
			return nil
		}
		if n := d.stranded(); d.cfg.ExitWhenDone && n > 0 {
			fmt.Fprintf(d.cfg.Log, "live: %d queued jobs cannot start: nothing runs and the GPUs they need are down for a critical error; they stay queued in the state file (restart with --gpu-up once the GPU is reset)\n", n)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-backoff.C:
		case <-t.C:
			for _, id := range d.later {
				d.host.Queue(id)
			}
			d.later = d.later[:0]
			if d.cfg.JobsFile != "" {
				if err := d.watch(); err != nil {
					fmt.Fprintf(d.cfg.Log, "live: %v (ignored until the file changes)\n", err)
				}
			}
		}
	}
}

// Close waits for nothing: it closes the store. Running processes go on.
func (d *Driver) Close() error {
	select {
	case <-d.dead:
	default:
		close(d.dead)
	}
	return d.st.db.Close()
}

func (d *Driver) release(id int32) {
	if p, ok := d.place[id]; ok {
		d.host.Stop(policies.JobID(id), p)
		delete(d.place, id)
	}
	delete(d.adopted, id)
}

// pollAdopted checks a re-adopted job (the driver is not its wrapper's
// parent) and settles it when its attempt has ended: when its wrapper is
// gone and no process of its group lives any more (the driver stops those
// that outlived the wrapper, and waits for them before it settles). ran
// is settle's.
func (d *Driver) pollAdopted(r *Record) (ended, ran bool, err error) {
	s, ok, err := procStart(r.PID)
	if err != nil {
		return false, false, fmt.Errorf("cannot read pid %d in /proc: %w", r.PID, err)
	}
	if ok && s == r.PIDStart {
		return false, false, nil
	}
	n, err := groupMembers(r.PID, r.PIDStart)
	if err != nil {
		return false, false, fmt.Errorf("cannot read process group %d in /proc: %w", r.PID, err)
	}
	if n > 0 {
		d.stopping[r.ID] = true
		if empty, err := stopGroup(r.PID, r.PIDStart, 100*time.Millisecond); err != nil || !empty {
			return false, false, err // not yet: next round
		}
	}
	// What left the group (setsid) but carries the attempt's marker.
	if empty, err := stopMarked(d.marker(r), 100*time.Millisecond); err != nil || !empty {
		return false, false, err // not yet: next round
	}
	if ran, err = d.settle(r, ending{killed: d.stopping[r.ID]}); err != nil {
		return false, false, err
	}
	delete(d.stopping, r.ID)
	return true, ran, nil
}

// round is one scheduling point: record exits, schedule, launch.
func (d *Driver) round() error {
	if err := d.healthRound(); err != nil {
		return err
	}
	d.nextDue = d.dueWaiting()
	d.mu.Lock()
	exits := d.exits
	d.exits = nil
	d.mu.Unlock()
	var changed []*Record
	unspent := map[int32]bool{}
	for _, e := range exits {
		r := d.recs[e.id]
		if r.State != Running || r.Attempt != e.attempt {
			continue
		}
		ran, err := d.settle(r, ending{reaped: true, code: e.code, signal: e.signal})
		if err != nil {
			// The exit file cannot be read now: try again next round.
			fmt.Fprintf(d.cfg.Log, "live: %s: reading its exit status: %v (retried)\n", r.Spec.Name, err)
			d.mu.Lock()
			d.exits = append(d.exits, e)
			d.mu.Unlock()
			continue
		}
		unspent[r.ID] = !ran
		changed = append(changed, r)
	}
	for _, id := range slices.Sorted(maps.Keys(d.adopted)) {
		r := d.recs[id]
		ended, ran, err := d.pollAdopted(r)
		if err != nil {
			// Not knowing is not an end: look again next round.
			fmt.Fprintf(d.cfg.Log, "live: %s: %v; still taken as running\n", r.Spec.Name, err)
			continue
		}
		if ended {
			unspent[r.ID] = !ran
			changed = append(changed, r)
		}
	}
	slices.SortFunc(changed, func(a, b *Record) int { return int(a.ID - b.ID) })
	changed = append(changed, d.propagate(changed)...)
	if err := d.st.put(changed...); err != nil {
		return err
	}
	if crashHook != nil && len(changed) > 0 {
		crashHook("ended")
	}
	d.dropExitFiles(changed)
	for _, r := range changed {
		d.release(r.ID)
		switch {
		case r.State != Queued:
		case unspent[r.ID]:
			// Its command never ran (the wrapper could not record its
			// start): offered again at the next tick, not at once.
			d.later = append(d.later, policies.JobID(r.ID))
		default:
			d.enqueue(r)
		}
	}
	// The clock first: a wake-up the policy asked for is news once due.
	d.host.SetNow(d.now())
	if !d.host.HasNews() {
		return nil
	}
	t0 := time.Now()
	d.starts, d.preempted = d.starts[:0], d.preempted[:0]
	decs := d.host.Schedule(d.policy, d.applyFn)
	starts := d.starts
	// A preemption is committed before its signal, so that a restart
	// knows the attempt's end is a preemption.
	if err := d.st.put(d.preempted...); err != nil {
		return err
	}
	for _, r := range d.preempted {
		d.stopFn(r)
	}
	if len(decs) > 0 {
		d.Latencies = append(d.Latencies, time.Since(t0))
		d.Decisions += len(decs)
	}
	// Written (fsynced) before any process starts.
	if err := d.st.put(starts...); err != nil {
		return err
	}
	if crashHook != nil && len(starts) > 0 {
		crashHook("starts")
	}
	var launched []*Record
	for _, r := range starts {
		if err := d.launchFn(r); err != nil {
			if transient(err) {
				// The machine is short of something (descriptors, memory,
				// processes, disk) for a while: the command never ran, so
				// the job keeps its attempt and its place, and is offered
				// to the policy again at the next tick.
				fmt.Fprintf(d.cfg.Log, "live: %s: launch deferred to a later round: %v\n", r.Spec.Name, err)
				d.unstart(r)
				if err := d.st.put(r); err != nil {
					return err
				}
				d.release(r.ID)
				d.later = append(d.later, policies.JobID(r.ID))
				continue
			}
			fmt.Fprintf(d.cfg.Log, "live: %s: %v\n", r.Spec.Name, err)
			d.finish(r, -1, err.Error())
			deps := d.propagate([]*Record{r})
			if err := d.st.put(append([]*Record{r}, deps...)...); err != nil {
				return err
			}
			d.release(r.ID)
			for _, q := range append([]*Record{r}, deps...) {
				if q.State == Queued {
					d.enqueue(q)
				}
			}
			continue
		}
		launched = append(launched, r)
		if crashHook != nil {
			crashHook("launched")
		}
	}
	return d.st.put(launched...)
}

// apply carries out one decision of the policy (through the host, which
// books it), or says why not. A Start is committed to the store and
// launched after the round's decisions are all applied (round).
func (d *Driver) apply(dec policies.Decision) string {
	if dec.Kind == policies.Preempt {
		return d.preempt(dec.Job)
	}
	reason := ""
	switch {
	case dec.Kind != policies.Start:
		reason = "live mode applies Start and Preempt decisions; MIG layouts are as the GPUs have them"
	case dec.Job < 0 || int(dec.Job) >= len(d.recs) || d.recs[dec.Job].State != Queued:
		reason = "job is not queued"
	case len(dec.Placement) != 1 || dec.Placement[0].Node != 0:
		reason = "placement is not one share on the local node"
	case d.recs[dec.Job].Spec.MIGProfile != "":
		reason = d.checkMIG(d.host.Job(dec.Job).Req, dec.Placement[0])
	default:
		reason = d.host.CheckPlacement(dec.Job, dec.Placement)
	}
	if reason == "" {
		if err := d.host.Start(dec.Job, dec.Placement); err != nil {
			reason = err.Error()
		}
	}
	if reason != "" {
		fmt.Fprintf(d.cfg.Log, "live: rejected %s of job %d: %s\n", dec.Kind, dec.Job, reason)
		return reason
	}
	now := int64(d.host.Now())
	r := d.recs[dec.Job]
	s := dec.Placement[0]
	r.GPUs = r.GPUs[:0]
	for g := 0; g < len(d.cfg.GPUs); g++ {
		if s.GPUs&(1<<g) != 0 {
			r.GPUs = append(r.GPUs, g)
		}
	}
	r.Milli, r.MIGInstance, r.State, r.Start, r.PID, r.PIDStart, r.NotBefore = s.Milli, s.Instance, Running, now, 0, 0, 0
	r.Attempt++
	r.Runs++
	r.ExitFile, r.Boot = d.exitPath(r), d.boot
	d.place[r.ID] = dec.Placement
	j := d.job(r)
	j.Start, j.Attempt = hwmodel.Time(now), r.Attempt-1
	d.cfg.Metrics.moved(r, Queued)
	d.starts = append(d.starts, r)
	return ""
}

// preempt starts stopping a running job's attempt (stopFn): its
// processes get SIGTERM and Config.Grace to end, then SIGKILL. The
// policy hears of the end (Ended, then Queued) at the round that follows
// it, when no process of the attempt lives and its GPUs are free.
func (d *Driver) preempt(id policies.JobID) string {
	if id < 0 || int(id) >= len(d.recs) {
		return fmt.Sprintf("job %d does not exist", id)
	}
	r := d.recs[id]
	switch {
	case r.State != Running:
		return fmt.Sprintf("job %s is %s, not running", r.Spec.Name, r.State)
	case r.Preempting:
		return fmt.Sprintf("job %s is already being stopped", r.Spec.Name)
	}
	r.Preempting = true
	d.preempted = append(d.preempted, r) // committed, then signalled (round)
	return ""
}
