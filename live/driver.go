package live

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// recover rebuilds the in-memory books from the store: queued jobs are
// queued again (same Submit, so same place); a running job whose wrapper
// is still the same live process is re-adopted; any other running job is
// settled as its process group and exit file say (settle): ended with its
// exit status, queued again unspent if its command never ran, or failed.
// Members of its group that outlived the wrapper are stopped first.
func (d *Driver) recover() error {
	recs, err := d.st.all()
	if err != nil {
		return err
	}
	var marked map[string]int // one /proc scan, when a PID is missing
	var changed []*Record
	for _, r := range recs {
		d.addJob(r)
		d.cfg.Metrics.recovered(r)
		switch r.State {
		case Queued:
			d.enqueue(r)
		case Running:
			adopted, err := d.recoverRunning(r, &marked)
			if err != nil {
				return fmt.Errorf("live: %s: %w", r.Spec.Name, err)
			}
			changed = append(changed, r)
			if !adopted && r.State == Queued {
				d.enqueue(r)
			}
		}
	}
	// A job whose dependencies ended while it was pending moves on now
	// (its parents' ends and its move are committed together, so this
	// finds nothing unless the state file is older).
	for _, r := range d.recs {
		if r.State != Pending {
			continue
		}
		switch st, failed := depState(r, d.byName); st {
		case Failed:
			d.failOnDep(r, failed, int64(d.now()))
			changed = append(changed, r)
		case Queued:
			r.State = Queued
			changed = append(changed, r)
			d.enqueue(r)
		}
	}
	changed = append(changed, d.propagate(changed)...)
	if err := d.st.put(changed...); err != nil {
		return err
	}
	d.dropExitFiles(changed)
	d.dropStaleExitFiles()
	return nil
}

// dropStaleExitFiles removes the exit files of this state file whose
// attempt the store holds as ended: a crash between committing an end and
// removing its file leaves them.
func (d *Driver) dropStaleExitFiles() {
	dir := filepath.Join(d.cfg.LogDir, ".exit")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), d.nonce+".")
		if !ok {
			continue // another state file's
		}
		id, attempt, _ := strings.Cut(rest, ".")
		i, err1 := strconv.Atoi(id)
		a, err2 := strconv.Atoi(attempt)
		if err1 != nil || err2 != nil || i < 0 || i >= len(d.recs) {
			continue
		}
		if r := d.recs[i]; r.State != Running || r.Attempt != a {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// recoverRunning re-adopts or settles a job the store holds as running.
func (d *Driver) recoverRunning(r *Record, marked *map[string]int) (bool, error) {
	if r.Boot != "" && r.Boot != d.boot {
		// The machine restarted: the process is gone, and its pid may
		// now be another's.
		_, err := d.settle(r, ending{})
		return false, err
	}
	if r.PID == 0 || r.PIDStart == 0 {
		// Launched just before a crash, its PID (or start time) not yet
		// in the store: look for its marker.
		if *marked == nil {
			m, err := scanMarked("BRIGADE_LIVE_JOB=" + d.nonce + ".")
			if err != nil {
				return false, fmt.Errorf("cannot look for its process: %w", err)
			}
			*marked = m
		}
		if pg := (*marked)[d.marker(r)]; pg > 0 {
			r.PID = pg
			s, ok, err := procStart(pg)
			if err != nil {
				return false, fmt.Errorf("cannot tell whether pid %d runs: %w", pg, err)
			}
			if ok {
				r.PIDStart = s
			}
		}
	}
	if r.PID == 0 {
		_, err := d.settle(r, ending{})
		return false, err
	}
	s, ok, err := procStart(r.PID)
	if err != nil {
		return false, fmt.Errorf("cannot tell whether pid %d runs: %w", r.PID, err)
	}
	if ok && s == r.PIDStart {
		p := d.placementOf(r)
		if d.host.Start(policies.JobID(r.ID), p) == nil {
			d.place[r.ID] = p
			d.adopted[r.ID] = true
			fmt.Fprintf(d.cfg.Log, "live: re-adopted %s (pid %d)\n", r.Spec.Name, r.PID)
			return true, nil
		}
		// Its GPUs are no longer there to hold: it cannot go on.
		fmt.Fprintf(d.cfg.Log, "live: %s (pid %d) runs on GPUs this machine no longer offers; stopping it\n", r.Spec.Name, r.PID)
	}
	// The wrapper is gone (or must go): whatever of its group lives is
	// stopped before the attempt ends, so that its GPUs are free.
	n, err := groupMembers(r.PID, r.PIDStart)
	if err != nil {
		return false, fmt.Errorf("cannot read process group %d: %w", r.PID, err)
	}
	killed := n > 0
	if killed {
		empty, err := stopGroup(r.PID, r.PIDStart, stopWait)
		if err != nil {
			return false, fmt.Errorf("cannot stop process group %d: %w", r.PID, err)
		}
		if !empty {
			return false, fmt.Errorf("process group %d still runs %v after SIGKILL", r.PID, stopWait)
		}
		fmt.Fprintf(d.cfg.Log, "live: %s: stopped what was left of its process group %d\n", r.Spec.Name, r.PID)
	}
	_, err = d.settle(r, ending{killed: killed})
	return false, err
}

// stopWait bounds how long the driver waits for a process group it has
// SIGKILLed to be gone.
const stopWait = 10 * time.Second

// ending is what the driver saw of the end of an attempt's wrapper.
type ending struct {
	reaped bool // the driver was its parent and reaped it: code and signal hold
	code   int  // its exit status (-1 when killed by a signal)
	signal int  // the signal that killed it, 0 if none
	killed bool // the driver stopped group members that outlived it
}

// settle ends r's current attempt, whose process group is gone, as its
// exit file and e say, and reports whether the command ever ran:
//
//   - no exit file: the wrapper never started the command (the driver was
//     killed before the launch, or the wrapper before its first line, or
//     the file could not be created): the start is undone (unstart), the
//     attempt not spent;
//   - an exit status in the file: the attempt ended with it;
//   - "started" only: the status was lost. If the driver reaped the
//     wrapper, the status it got counts (a wrapper killed by a signal is a
//     failed attempt); if the driver had to stop the group, or the machine
//     restarted, the command was stopped before its end: a failed attempt,
//     retried as its spec says. Otherwise the whole group ended while the
//     driver was down and nobody knows how: it may have succeeded, so it
//     is not rerun; it fails with reason "exit status lost".
//
// Records of older versions (no ExitFile) keep their rules: the old file
// format, else failed with exit -1, or unspent if no PID was recorded.
func (d *Driver) settle(r *Record, e ending) (ran bool, err error) {
	if r.ExitFile == "" {
		switch code, ok := d.oldExitCode(r); {
		case ok:
			d.finish(r, code, "")
		case e.reaped:
			d.finish(r, e.code, signalReason(e.signal))
		case r.PID == 0:
			d.unstart(r)
			return false, nil
		default:
			d.finish(r, -1, "process gone after a restart")
		}
		return true, nil
	}
	st, code, err := readExit(r.ExitFile)
	if err != nil {
		return false, err
	}
	switch {
	case st == notStarted:
		d.unstart(r)
		return false, nil
	case st == exited:
		d.finish(r, code, "")
	case e.reaped:
		d.finish(r, e.code, signalReason(e.signal))
	case e.killed:
		d.finish(r, -1, "stopped: its command still ran after its wrapper had ended")
	case r.Boot != d.boot:
		d.finish(r, -1, "the machine restarted while it ran")
	default:
		d.end(r, -1, ReasonExitLost, false)
	}
	return true, nil
}

// ReasonExitLost is the reason of an attempt whose process group ended
// while the driver was down without recording an exit status (its
// wrapper was killed, or its exit file could not be written): the job
// fails without a retry, since it may have succeeded.
const ReasonExitLost = "exit status lost: its process group ended while the driver was down, recording no exit status; not rerun, as it may have succeeded"

func signalReason(sig int) string {
	if sig == 0 {
		return ""
	}
	return fmt.Sprintf("its wrapper was killed by signal %d (%v)", sig, syscall.Signal(sig))
}

func (d *Driver) placementOf(r *Record) hwmodel.Placement {
	var mask uint64
	for _, g := range r.GPUs {
		mask |= 1 << g
	}
	cpu, mem := r.Spec.CPUMilli, r.Spec.MemoryMiB
	if mask == 0 {
		return hwmodel.Placement{{Node: 0, CPUMilli: cpu, MemoryMiB: mem}}
	}
	if r.MIGInstance > 0 && len(r.GPUs) == 1 {
		return hwmodel.Placement{d.cluster.MIGShare(0, r.GPUs[0], r.MIGInstance-1, cpu, mem)}
	}
	return hwmodel.Placement{{Node: 0, GPUs: mask, Milli: r.Milli, CPUMilli: cpu, MemoryMiB: mem}}
}

// finish moves a record out of Running after an exit (code -1: unknown),
// to Succeeded, Failed, or back to Queued when retries remain.
func (d *Driver) finish(r *Record, code int, reason string) { d.end(r, code, reason, true) }

// end is finish; retry false fails the job whatever retries it has left.
func (d *Driver) end(r *Record, code int, reason string, retry bool) {
	now := int64(d.now())
	preempted := r.Preempting && code != 0
	if preempted {
		reason = ReasonPreempted
	}
	r.Attempts = append(r.Attempts, AttemptRecord{Queued: r.Queued, Start: r.Start, End: now,
		GPUs: slices.Clone(r.GPUs), Milli: r.Milli, Exit: code, Reason: reason, Preempted: preempted})
	r.Exit, r.Reason, r.PID, r.PIDStart, r.Preempting = code, reason, 0, 0, false
	switch {
	case code == 0:
		r.State, r.End = Succeeded, now
	case preempted:
		// Back to the queue at once, its retries unspent, as the
		// simulator returns a preempted job.
		r.Preemptions++
		r.State, r.Queued = Queued, now
		d.job(r).Queued = hwmodel.Time(now)
	case retry && r.Spec.Deadline != "" && d.deadlineGivesUp(r, now):
		r.State, r.End = Failed, now
	case retry && r.Attempt-r.Preemptions <= r.Spec.Retries:
		r.State, r.Queued = Queued, now
		d.job(r).Queued = hwmodel.Time(now)
		r.NotBefore = now + int64(d.backoff(r.Attempt))
	default:
		r.State, r.End = Failed, now
	}
	d.cfg.Metrics.moved(r, Running)
}

// deadlineGivesUp applies brigade sim's deadline-aware retry rule to r,
// whose attempt has just failed: at its first failure it is granted
// hwmodel.DeadlineAttempts(time left, estimate, retries) retries; it gives
// up when they are spent (retries exhausted) or when its estimate no
// longer fits before the deadline (DeadlineMissed). A live run knows no
// restart time, nor what a checkpoint saved, so the attempt needed is the
// whole estimate.
func (d *Driver) deadlineGivesUp(r *Record, now int64) bool {
	dl, err := hwmodel.ParseDuration(r.Spec.Deadline)
	if err != nil || dl <= 0 {
		return false
	}
	remaining := hwmodel.Time(r.Submit) + dl - hwmodel.Time(now)
	if r.Granted == 0 {
		r.Granted = hwmodel.DeadlineAttempts(remaining, r.Spec.estimate(), r.Spec.Retries)
	}
	failures := r.Attempt - r.Preemptions
	switch {
	case failures > r.Granted:
		return true
	case r.Spec.estimate() > remaining:
		r.DeadlineMissed = true
		us := func(t hwmodel.Time) time.Duration { return time.Duration(t) * time.Microsecond }
		r.Reason = fmt.Sprintf("deadline: %s left before the deadline, the estimate is %s", us(max(remaining, 0)), us(r.Spec.estimate()))
		return true
	}
	return false
}

// ReasonPreempted is the reason of an attempt the policy preempted.
const ReasonPreempted = "preempted"

// transient reports whether a launch error is a shortage that passes
// (EMFILE, ENFILE, EAGAIN, ENOMEM, ENOSPC, ...) rather than a fault of the
// job's spec (a missing workdir, EACCES): the first leaves the job queued
// with its attempt unspent, the second fails the attempt. A command that
// does not exist is no launch error: the wrapper starts and reports 127.
func transient(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EAGAIN, syscall.ENOMEM,
		syscall.ENOSPC, syscall.EDQUOT, syscall.ENOBUFS, syscall.EINTR, syscall.ETXTBSY} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// unstart undoes the start of r's current attempt, whose command never
// ran: the job is queued again where it was (same Queued time), with
// Attempt and Runs as before the start and no attempt recorded.
func (d *Driver) unstart(r *Record) {
	r.Attempt--
	r.Runs--
	r.State, r.PID, r.PIDStart, r.MIGInstance = Queued, 0, 0, 0
	r.Start, r.GPUs, r.Milli = 0, nil, 0
	if n := len(r.Attempts); n > 0 {
		a := r.Attempts[n-1]
		r.Start, r.GPUs, r.Milli = a.Start, slices.Clone(a.GPUs), a.Milli
	}
	j := d.job(r)
	j.Attempt, j.Start = max(r.Attempt-1, 0), hwmodel.Time(r.Start)
	d.cfg.Metrics.unstarted(r)
}

// backoff is the delay before the k-th retry.
func (d *Driver) backoff(k int) hwmodel.Time {
	if d.cfg.Backoff <= 0 {
		return 0
	}
	return hwmodel.RetryBackoff(hwmodel.Time(d.cfg.Backoff.Microseconds()), d.cfg.BackoffFactor, k)
}

// enqueue tells the policy that r is queued, now or, in retry back-off,
// when its NotBefore comes (dueWaiting).
func (d *Driver) enqueue(r *Record) {
	if r.NotBefore > int64(d.now()) {
		d.waiting = append(d.waiting, r.ID)
		return
	}
	d.host.Queue(policies.JobID(r.ID))
}

// dueWaiting queues the jobs whose back-off is over, in ID order, and
// returns how long until the next one's ends (0: none waits).
func (d *Driver) dueWaiting() time.Duration {
	now := int64(d.now())
	slices.Sort(d.waiting)
	next := int64(0)
	keep := d.waiting[:0]
	for _, id := range d.waiting {
		r := d.recs[id]
		switch {
		case r.State != Queued:
		case r.NotBefore <= now:
			d.host.Queue(policies.JobID(id))
		default:
			keep = append(keep, id)
			if next == 0 || r.NotBefore < next {
				next = r.NotBefore
			}
		}
	}
	d.waiting = keep
	if next == 0 {
		return 0
	}
	return time.Duration(next-now) * time.Microsecond
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
	if !d.host.HasNews() {
		return nil
	}
	t0 := time.Now()
	d.host.SetNow(d.now())
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

// terminate asks r's attempt to end: SIGTERM to every process of its
// group but the wrapper (which must live to record the command's exit
// status), then, after Config.Grace, SIGKILL to the whole group. A job
// that checkpoints on SIGTERM ($BRIGADE_CHECKPOINT_DIR) resumes from it.
func (d *Driver) terminate(r *Record) {
	pid, start, grace := r.PID, r.PIDStart, d.cfg.Grace
	if pid <= 0 {
		return
	}
	go func() {
		_ = signalGroup(pid, start, syscall.SIGTERM, true)
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			if n, err := groupMembers(pid, start); err == nil && n == 0 {
				return
			}
			select {
			case <-d.dead:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		_, _ = stopGroup(pid, start, stopWait)
	}()
}

// exitWrapper runs a job's command ("$@") between two writes to
// $BRIGADE_EXIT_FILE (an absolute path): "started" before the command, so
// that a file exists if and only if the command may have run (the wrapper
// does not run it when the write fails), then its exit status appended
// after it, before exiting with that status. A restarted driver, which is
// not the job's parent, reads how the job ended there. Shell builtins
// only (printf, redirections): nothing depends on the job's PATH. The
// status is appended to a file that already holds a few bytes, so it needs
// no new disk block: a disk filled by the job does not lose it.
const exitWrapper = `printf 'started\n' > "$BRIGADE_EXIT_FILE" || exit 125
"$@"
c=$?
printf '%d\n' "$c" >> "$BRIGADE_EXIT_FILE"
exit $c`

// exitPath is where the wrapper of r's current attempt writes (the nonce
// keeps files of another state file apart).
func (d *Driver) exitPath(r *Record) string {
	return filepath.Join(d.cfg.LogDir, ".exit", fmt.Sprintf("%s.%d.%d", d.nonce, r.ID, r.Attempt))
}

// exitState is what an exit file says.
type exitState int

const (
	notStarted  exitState = iota // no file: the command never ran
	startedOnly                  // the command started; no status recorded
	exited                       // the command ended with the recorded status
)

// readExit reads an exit file written by exitWrapper. Something else at
// the path (a link, a device) counts as started without a status, and is
// never followed nor read beyond a few bytes. An error (other than the
// file's absence) says nothing about the attempt: read again later.
func readExit(path string) (exitState, int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notStarted, 0, nil
	case errors.Is(err, syscall.ELOOP):
		return startedOnly, 0, nil
	case err != nil:
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return startedOnly, 0, nil
	}
	b := make([]byte, 64)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	lines := strings.Split(string(b[:n]), "\n")
	// "started\n<code>\n": the status counts only when its line is whole.
	if len(lines) >= 3 && lines[0] == "started" {
		if code, err := strconv.Atoi(lines[1]); err == nil {
			return exited, code, nil
		}
	}
	return startedOnly, 0, nil
}

// oldExitCode reads the exit file of an attempt launched by an older
// version, whose wrapper wrote only "<code>\n", renamed into place.
func (d *Driver) oldExitCode(r *Record) (int, bool) {
	b, err := os.ReadFile(d.exitPath(r))
	if err != nil || len(b) > 32 {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil
}

// dropExitFiles removes the exit files of attempts whose end the store now
// holds (never before: a crash in between would lose the status).
func (d *Driver) dropExitFiles(recs []*Record) {
	for _, r := range recs {
		if r.State == Running {
			continue
		}
		if r.ExitFile != "" {
			os.Remove(r.ExitFile)
		} else {
			os.Remove(d.exitPath(r))
		}
	}
}

func (d *Driver) launch(r *Record) error {
	argv := []string{"/bin/sh", "-c", exitWrapper, "brigade-job"}
	if r.Spec.Shell {
		argv = append(argv, "/bin/sh", "-c", r.Spec.Command)
	} else {
		argv = append(argv, r.Spec.Command)
		argv = append(argv, r.Spec.Args...)
	}
	if err := os.MkdirAll(filepath.Dir(r.ExitFile), 0o755); err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.Spec.Workdir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	env := os.Environ()
	keys := make([]string, 0, len(r.Spec.Env))
	for k := range r.Spec.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+r.Spec.Env[k])
	}
	uuids := make([]string, len(r.GPUs))
	for i, g := range r.GPUs {
		uuids[i] = d.cfg.GPUs[g].UUID
		if r.MIGInstance > 0 {
			uuids[i] = d.migUUIDs[g][r.MIGInstance-1]
		}
	}
	ckpt := d.checkpointDir(r)
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		return err
	}
	env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(uuids, ","), d.marker(r),
		"BRIGADE_JOB_NAME="+r.Spec.Name, "BRIGADE_ATTEMPT="+strconv.Itoa(r.Attempt), "BRIGADE_EXIT_FILE="+r.ExitFile,
		"BRIGADE_CHECKPOINT_DIR="+ckpt, "BRIGADE_GRACE_S="+strconv.FormatFloat(d.cfg.Grace.Seconds(), 'f', -1, 64))
	cmd.Env = env
	f, err := os.OpenFile(filepath.Join(d.cfg.LogDir, r.Spec.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "== brigade live: %s attempt %d on GPUs %v ==\n", r.Spec.Name, r.Attempt, uuids)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	pid := cmd.Process.Pid
	r.PID = pid
	// 0 when /proc cannot be read now: a restart then finds the process
	// by its marker.
	r.PIDStart, _, _ = procStart(pid)
	id, attempt, start := r.ID, r.Attempt, r.PIDStart
	go func() {
		// The wrapper's end is its attempt's end only once nothing of its
		// process group lives: a daemon it left, or its command when the
		// wrapper alone was killed, would go on using the GPUs.
		waited := waitExited(pid) == nil
		select {
		case <-d.dead:
			_ = cmd.Wait() // abandoned: whoever opens the store next settles it
			f.Close()
			return
		default:
		}
		if waited {
			// The unreaped wrapper keeps the group's id from reuse.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		err := cmd.Wait()
		f.Close()
		code, sig := 0, 0
		if err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ee.ExitCode() >= 0 {
					code = ee.ExitCode()
				}
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					sig = int(ws.Signal())
				}
			}
		}
		for {
			if empty, err := stopGroup(pid, start, stopWait); empty && err == nil {
				break
			}
			select {
			case <-d.dead:
				return
			case <-time.After(time.Second):
			}
		}
		d.mu.Lock()
		d.exits = append(d.exits, exitMsg{id, attempt, code, sig})
		d.mu.Unlock()
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}()
	return nil
}

// checkpointDir is r's checkpoint folder, the same for every attempt:
// LOGS/checkpoints/<name>. An attempt finds there what the previous one
// saved before it was stopped.
func (d *Driver) checkpointDir(r *Record) string {
	return filepath.Join(d.cfg.LogDir, "checkpoints", r.Spec.Name)
}

// crashHook, set by tests, is called at the points where a kill -9 is the
// most delicate: "starts" (a round's starts committed, none launched),
// "launched" (one launched, its PID not yet committed) and "ended" (a
// round's ends committed, their exit files not yet removed).
var crashHook func(point string)
