package live

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// GPUHealth is one GPU's health as a HealthSource reports it.
type GPUHealth struct {
	// Index is the GPU's position in Config.GPUs (its NVML index); -1 for
	// an event NVML could not attach to a known GPU (logged, ignored).
	Index int
	// Down reports a GPU that did not answer the heartbeat or reported a
	// critical error; false reports a GPU that answered.
	Down   bool
	Reason string
	// Critical marks a hardware error (a critical XID, a double-bit ECC
	// error) after which the GPU needs an operator's reset: it does not
	// come back by answering heartbeats (see RecoverBeats).
	Critical bool
}

// HealthSource watches this machine's GPUs for the driver.
//
// The driver calls Poll once per heartbeat (Config.HeartbeatInterval) from a
// goroutine of its own, never concurrently with itself; Poll checks every
// GPU once and returns one entry per GPU, returning within about one
// interval even when a GPU hangs. Events delivers critical errors as they
// happen (nil when the source has none). The driver applies both in its
// scheduling loop; it does not close the source.
type HealthSource interface {
	Poll() []GPUHealth
	Events() <-chan GPUHealth
	Close() error
}

// DefaultHeartbeat is the heartbeat interval when Config.Health is set and
// Config.HeartbeatInterval is not.
const DefaultHeartbeat = 5 * time.Second

// RecoverBeats is how many consecutive answered heartbeats bring back a GPU
// that was marked down for not answering. A GPU marked down for a critical
// error stays down until an operator clears it (Config.GPUsUp).
const RecoverBeats = 3

// criticalXIDs are the XIDs after which a GPU is unusable until it is reset
// (or the machine rebooted), from NVIDIA's XID catalogue. XIDs caused by an
// application (13 graphics engine exception, 31 MMU fault, 43 GPU stopped
// processing, 45 preemptive cleanup) only kill the offending process and
// are not in the list: the job's own exit reports them.
var criticalXIDs = map[uint64]string{
	48:  "double-bit ECC error",
	62:  "internal micro-controller halt",
	63:  "ECC page retirement or row remapping recording event",
	64:  "ECC page retirement or row remapper recording failure",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
	120: "GSP error",
}

// CriticalXID reports whether XID xid makes the GPU unusable, and the
// reason to record ("XID 79 (GPU has fallen off the bus)").
func CriticalXID(xid uint64) (string, bool) {
	d, ok := criticalXIDs[xid]
	if !ok {
		return "", false
	}
	return fmt.Sprintf("XID %d (%s)", xid, d), true
}

// CriticalXIDs returns the XIDs CriticalXID accepts, ascending.
func CriticalXIDs() []uint64 {
	out := make([]uint64, 0, len(criticalXIDs))
	for x := range criticalXIDs {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}

// FakeHealth is a HealthSource for tests and demos over n made-up GPUs:
// each answers until Lose makes it stop; XID emits an event.
type FakeHealth struct {
	mu    sync.Mutex
	n     int
	lost  map[int]string
	ev    chan GPUHealth
	polls int
}

// NewFakeHealth returns a FakeHealth whose n GPUs all answer.
func NewFakeHealth(n int) *FakeHealth {
	return &FakeHealth{n: n, lost: map[int]string{}, ev: make(chan GPUHealth, 64)}
}

// Lose makes GPU i stop answering with the given reason.
func (f *FakeHealth) Lose(i int, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost[i] = reason
}

// Answer makes GPU i answer again.
func (f *FakeHealth) Answer(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.lost, i)
}

// XID emits XID xid on GPU i as an event when it is critical, and reports
// whether it was.
func (f *FakeHealth) XID(i int, xid uint64) bool {
	reason, ok := CriticalXID(xid)
	if ok {
		f.ev <- GPUHealth{Index: i, Down: true, Reason: reason, Critical: true}
	}
	return ok
}

// Polls is how many heartbeats were polled so far.
func (f *FakeHealth) Polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

// Poll implements HealthSource.
func (f *FakeHealth) Poll() []GPUHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls++
	out := make([]GPUHealth, f.n)
	for i := range out {
		reason, lost := f.lost[i]
		out[i] = GPUHealth{Index: i, Down: lost, Reason: reason}
	}
	return out
}

// Events implements HealthSource.
func (f *FakeHealth) Events() <-chan GPUHealth { return f.ev }

// Close implements HealthSource.
func (f *FakeHealth) Close() error { return nil }

// DownGPU is a GPU the driver holds out of service.
type DownGPU struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid"`
	Reason   string `json:"reason"`
	Since    int64  `json:"since"` // run time, µs
	Critical bool   `json:"critical"`
}

// healthState is the driver's book of GPU health. The driver goroutine owns
// everything but in, which the health goroutines append to under Driver.mu.
type healthState struct {
	in   []GPUHealth
	down map[int]*DownGPU // by GPU index
	ok   map[int]int      // consecutive answered heartbeats of a down GPU
}

var metaDown = []byte("gpus-down")

// loadDown reads the persisted down GPUs, keyed by UUID.
func (s *store) loadDown() (map[string]DownGPU, error) {
	out := map[string]DownGPU{}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bMeta).Get(metaDown)
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &out)
	})
	return out, err
}

// saveDown replaces the persisted down GPUs (fsynced on commit).
func (s *store) saveDown(m map[string]DownGPU) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(metaDown, v) })
}

// DownGPUs returns the GPUs held out of service, by index.
func (d *Driver) DownGPUs() []DownGPU {
	var out []DownGPU
	for _, g := range d.hs.down {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b DownGPU) int { return a.Index - b.Index })
	return out
}

// persistDown writes the down book, keeping entries for GPUs this machine
// no longer shows.
func (d *Driver) persistDown() error {
	m, err := d.st.loadDown()
	if err != nil {
		return err
	}
	for _, g := range d.cfg.GPUs {
		delete(m, g.UUID)
	}
	for _, g := range d.hs.down {
		m[g.UUID] = *g
	}
	return d.st.saveDown(m)
}

// restoreDown (Open, after recover) marks down again the GPUs the store
// holds as down, except those Config.GPUsUp names, whose entries it drops.
func (d *Driver) restoreDown() error {
	d.hs.down, d.hs.ok = map[int]*DownGPU{}, map[int]int{}
	m, err := d.st.loadDown()
	if err != nil {
		return err
	}
	cleared := false
	for i, g := range d.cfg.GPUs {
		rec, ok := m[g.UUID]
		if !ok {
			continue
		}
		if slices.Contains(d.cfg.GPUsUp, g.UUID) || slices.Contains(d.cfg.GPUsUp, strconv.Itoa(i)) {
			fmt.Fprintf(d.cfg.Log, "live: GPU %d %s cleared by the operator (was down: %s)\n", i, g.UUID, rec.Reason)
			cleared = true
			continue
		}
		rec.Index = i
		if err := d.markDown(rec); err != nil {
			return err
		}
	}
	if cleared {
		return d.persistDown() // drops the cleared entries
	}
	return nil
}

// startHealth starts the heartbeat and event goroutines of Config.Health;
// the returned function stops them.
func (d *Driver) startHealth(ctx context.Context) func() {
	h := d.cfg.Health
	if h == nil {
		return func() {}
	}
	// The first heartbeat is polled before the first round, so that a GPU
	// already down is not handed out.
	d.pushHealth(h.Poll()...)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.dead:
				return
			case <-t.C:
			}
			d.pushHealth(h.Poll()...)
		}
	}()
	if ev := h.Events(); ev != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-d.dead:
					return
				case e, ok := <-ev:
					if !ok {
						return
					}
					d.pushHealth(e)
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

func (d *Driver) pushHealth(hs ...GPUHealth) {
	if len(hs) == 0 {
		return
	}
	d.mu.Lock()
	d.hs.in = append(d.hs.in, hs...)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// healthRound (the start of each round) applies what the health goroutines
// reported: a GPU newly down is marked down (its jobs killed and failed);
// a GPU down for not answering comes back after RecoverBeats answered
// heartbeats in a row.
func (d *Driver) healthRound() error {
	d.mu.Lock()
	in := d.hs.in
	d.hs.in = nil
	d.mu.Unlock()
	for _, h := range in {
		if h.Index < 0 || h.Index >= len(d.cfg.GPUs) {
			if h.Down {
				fmt.Fprintf(d.cfg.Log, "live: health event on no known GPU ignored: %s\n", h.Reason)
			}
			continue
		}
		g, down := d.hs.down[h.Index]
		switch {
		case h.Down && down:
			d.hs.ok[h.Index] = 0
			if h.Critical && !g.Critical {
				g.Critical, g.Reason = true, h.Reason
				if err := d.persistDown(); err != nil {
					return err
				}
				fmt.Fprintf(d.cfg.Log, "live: GPU %d %s (down) reported %s: it stays down until an operator clears it\n", h.Index, g.UUID, h.Reason)
			}
		case h.Down:
			rec := DownGPU{Index: h.Index, UUID: d.cfg.GPUs[h.Index].UUID, Reason: h.Reason, Since: int64(d.now()), Critical: h.Critical}
			if rec.Reason == "" {
				rec.Reason = "health check failed"
			}
			if err := d.markDown(rec); err != nil {
				return err
			}
		case down && !g.Critical:
			d.hs.ok[h.Index]++
			if d.hs.ok[h.Index] >= RecoverBeats {
				if err := d.markUp(h.Index); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (d *Driver) gpuBlock(g int) hwmodel.Placement {
	if n := d.cluster.MIGInstanceCount(0, g); d.cluster.IsMIG(0, g) && n > 0 {
		// A MIG GPU is blocked instance by instance.
		p := make(hwmodel.Placement, n)
		for k := range p {
			p[k] = d.cluster.MIGShare(0, g, k, 0, 0)
		}
		return p
	}
	return hwmodel.Placement{{Node: 0, GPUs: 1 << g, Milli: hwmodel.MilliPerGPU}}
}

// markDown takes GPU rec.Index out of service: the down state is committed
// first, then the process group of every job running on the GPU is killed,
// those attempts end as failed (retried if their retries allow) with reason
// "GPU <index> <uuid> down: <reason>", their capacity is released, and the
// GPU is blocked with a whole-GPU placement so that no policy can place on
// it (as sim blocks a failed GPU).
func (d *Driver) markDown(rec DownGPU) error {
	g := rec.Index
	d.hs.down[g] = &rec
	d.hs.ok[g] = 0
	d.cfg.Metrics.SetGPUs(len(d.cfg.GPUs)-len(d.hs.down), len(d.hs.down))
	if err := d.persistDown(); err != nil {
		return err
	}
	fmt.Fprintf(d.cfg.Log, "live: GPU %d %s down: %s\n", g, rec.UUID, rec.Reason)
	// An exit already reported for an attempt keeps its own exit code.
	d.mu.Lock()
	exited := map[[2]int]int{}
	for _, e := range d.exits {
		exited[[2]int{int(e.id), e.attempt}] = e.code
	}
	d.mu.Unlock()
	var changed []*Record
	for _, r := range d.recs {
		if r.State != Running || !slices.Contains(r.GPUs, g) {
			continue
		}
		if code, ok := exited[[2]int{int(r.ID), r.Attempt}]; ok {
			d.finish(r, code, "")
		} else {
			// Its whole group goes before its GPUs are released.
			if r.PID > 0 {
				if empty, err := stopAttempt(r.PID, r.PIDStart, d.marker(r), stopWait); !empty {
					fmt.Fprintf(d.cfg.Log, "live: %s: process group %d still runs after SIGKILL (%v)\n", r.Spec.Name, r.PID, err)
				}
			}
			d.finish(r, -1, fmt.Sprintf("GPU %d %s down: %s", g, rec.UUID, rec.Reason))
			fmt.Fprintf(d.cfg.Log, "live: %s attempt %d killed: %s\n", r.Spec.Name, r.Attempt, r.Reason)
		}
		changed = append(changed, r)
	}
	changed = append(changed, d.propagate(changed)...)
	if err := d.st.put(changed...); err != nil {
		return err
	}
	for _, r := range changed {
		d.release(r.ID)
		if r.State == Queued {
			d.enqueue(r)
		}
	}
	// One share at a time: a MIG GPU's block is one share per instance.
	for _, sh := range d.gpuBlock(g) {
		if err := d.cluster.Allocate(hwmodel.Placement{sh}); err != nil {
			return fmt.Errorf("live: blocking down GPU %d: %w", g, err)
		}
	}
	return nil
}

// markUp returns GPU g to service.
func (d *Driver) markUp(g int) error {
	rec := d.hs.down[g]
	delete(d.hs.down, g)
	delete(d.hs.ok, g)
	d.cfg.Metrics.SetGPUs(len(d.cfg.GPUs)-len(d.hs.down), len(d.hs.down))
	if err := d.persistDown(); err != nil {
		return err
	}
	for _, sh := range d.gpuBlock(g) {
		d.cluster.Release(hwmodel.Placement{sh})
	}
	// Not a reconfiguration, but the policy must hear that capacity
	// came back: an Unblocked GPU makes it look again.
	d.host.Unblocked(policies.GPURef{Node: 0, GPU: g})
	fmt.Fprintf(d.cfg.Log, "live: GPU %d %s back up after %d answered heartbeats (was down: %s)\n", g, rec.UUID, RecoverBeats, rec.Reason)
	return nil
}

// stranded returns the number of queued jobs when none can ever start
// without an operator: nothing runs, the policy has heard of everything
// and started nothing, and every down GPU is down for a critical error
// (one that stopped answering may come back by itself). 0 otherwise.
func (d *Driver) stranded() int {
	if len(d.hs.down) == 0 || len(d.waiting)+len(d.later) > 0 || d.host.HasNews() {
		return 0
	}
	for _, g := range d.hs.down {
		if !g.Critical {
			return 0
		}
	}
	queued := 0
	for _, r := range d.recs {
		switch r.State {
		case Running:
			return 0
		case Queued:
			queued++
		}
	}
	return queued
}
