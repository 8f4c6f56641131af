package serving

import (
	"cmp"
	"fmt"
	"github.com/brigadesim/brigade/config"
	"slices"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/serving/iteration"
)

// IterationModel selects the iteration-level replica (package iteration)
// for a service in place of the token-rate model: each replica runs
// engine steps with continuous batching over a token budget, chunked
// prefill, a block KV cache and recompute preemption, and a step takes
// the time the latency model gives for its batch. The files are BLIS's
// formats: a Hugging Face config.json, a hardware_config.json and a
// defaults.yaml with trained_physics_coefficients.
type IterationModel struct {
	Model, Hardware, Coefficients string // file paths
	GPU                           string // the hardware file's entry
	TP                            int    // tensor parallelism (0: the service's GPUs per replica)
	MaxSeqs, TokenBudget          int    // 0: 256 and 2048
	LongPrefill                   int    // 0: none
	BlockSize                     int    // 0: 16
	MemoryUtil                    float64
	KVBlocks                      int64 // 0: from the model, GPU and MemoryUtil
	MaxRequestTokens              int   // 0: 10240

	mu     sync.Mutex // variants run in parallel and build on first use
	lat    *iteration.Latency
	params iteration.Params
	arch   iteration.Arch
	gpu    iteration.GPU
	tp     int
}

// check reports the settings out of range (the files are read by build).
func (im *IterationModel) check(e *config.Errors) {
	for _, f := range []struct {
		name string
		v    int
		lo   int
	}{{"tp", im.TP, 0}, {"max_num_seqs", im.MaxSeqs, 0}, {"max_num_batched_tokens", im.TokenBudget, 0},
		{"long_prefill_token_threshold", im.LongPrefill, 0}, {"block_size", im.BlockSize, 0}, {"max_request_tokens", im.MaxRequestTokens, 0}} {
		if f.v < f.lo || f.v > 1<<24 {
			e.Add(f.name, "want 0 (the default) to %d, got %d", 1<<24, f.v)
		}
	}
	if !(im.MemoryUtil >= 0 && im.MemoryUtil <= 1) {
		e.Add("gpu_memory_utilization", "want a fraction in (0, 1] (0: 0.9), got %g", im.MemoryUtil)
	}
	if im.KVBlocks < 0 || im.KVBlocks > 1<<30 {
		e.Add("kv_blocks", "want 0 (from the model and GPU) to %d, got %d", 1<<30, im.KVBlocks)
	}
}

// build reads the files once and derives the replica's parameters; gpus
// is the service's GPUs per replica (the default TP).
func (im *IterationModel) build(gpus int) error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.lat != nil {
		return nil
	}
	a, err := iteration.ReadArch(im.Model)
	if err != nil {
		return err
	}
	hw, err := iteration.ReadGPUs(im.Hardware)
	if err != nil {
		return err
	}
	g, ok := hw[im.GPU]
	if !ok {
		return fmt.Errorf("%s: no GPU %q (it has %v)", im.Hardware, im.GPU, iteration.GPUNames(hw))
	}
	c, err := iteration.ReadCoeffs(im.Coefficients)
	if err != nil {
		return err
	}
	tp := im.TP
	if tp == 0 {
		tp = gpus
	}
	lat, err := iteration.NewLatency(a, g, tp, c)
	if err != nil {
		return fmt.Errorf("%s: %w", im.Model, err)
	}
	p := iteration.Params{MaxSeqs: or(im.MaxSeqs, 256), TokenBudget: or(im.TokenBudget, 2048), LongPrefill: im.LongPrefill,
		BlockSize: or(im.BlockSize, 16), KVBlocks: im.KVBlocks, MaxReqTokens: or(im.MaxRequestTokens, 10240)}
	if p.KVBlocks == 0 {
		util := im.MemoryUtil
		if util == 0 {
			util = 0.9
		}
		if p.KVBlocks, err = iteration.KVBlocks(a, g, tp, p.BlockSize, util, p.MaxReqTokens); err != nil {
			return fmt.Errorf("%s on %s: %w", im.Model, im.GPU, err)
		}
	}
	if _, err := iteration.NewReplica(p, lat); err != nil {
		return err
	}
	im.lat, im.params, im.arch, im.gpu, im.tp = lat, p, a, g, tp
	return nil
}

// Calibrate fits the model's latency coefficients to measured requests
// (iteration.Calibrate) with this replica's model, GPU and settings; gpus
// is the service's GPUs per replica.
func (im *IterationModel) Calibrate(gpus int, measured []iteration.TraceReq) (*iteration.Calibration, error) {
	if err := im.build(gpus); err != nil {
		return nil, err
	}
	return iteration.Calibrate(im.params, im.arch, im.gpu, im.tp, *im.lat.Coeffs(), measured)
}

func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// iterReplica is a replica's engine under the iteration-level model.
type iterReplica struct {
	eng   *iteration.Replica
	slots []int32 // engine request index → request slot
	ver   uint32  // the pending step event's version
	due   hwmodel.Time
	// transit holds the requests dispatched to it whose queue event may
	// still be pending, in the order they reach the engine's queue
	// (dispatch order: the queueing delay is the service's constant), so
	// a drain bound looks at those only.
	transit []transit
}

// transit is a request on its way to an engine's queue.
type transit struct {
	at  hwmodel.Time
	req int32
	gen uint32
}

// prune forgets the requests that reached the queue before or at now.
func (it *iterReplica) prune(now hwmodel.Time) {
	k := 0
	for k < len(it.transit) && it.transit[k].at <= now {
		k++
	}
	if k > 0 {
		n := copy(it.transit, it.transit[k:])
		it.transit = it.transit[:n]
	}
}

func (m *model) newIterReplica(s *service) *iterReplica {
	im := s.spec.Replica.Iteration
	eng, _ := iteration.NewReplica(im.params, im.lat) // checked by build
	return &iterReplica{eng: eng}
}

// iterDispatch hands request i to r's engine: it joins the engine's wait
// queue after the server's queueing overhead (Alpha[0]).
func (m *model) iterDispatch(s *service, r *replica, i int32) {
	now := m.now
	q := &m.reqs[i]
	im := s.spec.Replica.Iteration
	it := r.it
	k := it.eng.Add(int64(now), max(q.in, 1), q.out)
	for int(k) >= len(it.slots) {
		it.slots = append(it.slots, -1)
	}
	it.slots[k] = i
	if q.group >= 0 && !s.spec.NoPrefixCache {
		it.eng.SetPrefix(k, q.group, q.prefix)
	}
	q.expectedUS = im.lat.AloneUS(int(max(q.in, 1)), int(q.out), im.params.TokenBudget)
	q.ttft = -1
	q.eng = k
	at := now + hwmodel.Time(im.lat.Coeffs().Alpha[0])
	m.heap.push(event{at: at, kind: evIterQueue, a: i, gen: q.gen})
	it.prune(now)
	it.transit = append(it.transit, transit{at: at, req: i, gen: q.gen})
}

// iterQueue puts request i into its replica's engine queue.
func (m *model) iterQueue(i int32) {
	q := &m.reqs[i]
	s := m.svcs[q.svc]
	r := s.replicas[q.replica]
	r.it.eng.Queue(q.eng, int64(m.now))
	m.iterSchedule(s, r)
}

// iterSchedule keeps one pending step event per engine, at its Next.
func (m *model) iterSchedule(s *service, r *replica) {
	it := r.it
	next := it.eng.Next()
	if next < 0 || (it.ver > 0 && it.due == hwmodel.Time(next)) {
		return
	}
	it.ver++
	it.due = hwmodel.Time(next)
	m.heap.push(event{at: it.due, kind: evIterStep, a: int32(s.idx), b: int32(r.id), gen: it.ver})
}

// iterStep runs r's engine step due now; a request that completes in it
// ends at its Done time (the step's end plus the per-request overhead).
func (m *model) iterStep(s *service, r *replica, ver uint32) {
	it := r.it
	if it == nil || ver != it.ver {
		return
	}
	it.ver++ // this event is spent; iterSchedule pushes the next one
	for _, k := range it.eng.Step(int64(m.now)) {
		e := &it.eng.Reqs[k]
		i := it.slots[k]
		q := &m.reqs[i]
		q.ttft = hwmodel.Time(e.First)
		q.done = hwmodel.Time(e.Done)
		q.itlSum, q.itls, q.preempted = e.ITLSum, e.ITLs, e.Preempted
		q.hit = e.PrefixHit
		r.lastDone = max(r.lastDone, q.done)
		m.heap.push(event{at: q.done, kind: evComplete, a: i, gen: q.gen})
		it.eng.Recycle(k)
	}
	m.iterSchedule(s, r)
}

// iterDrainBound is when r's requests end if it takes no new ones: the
// engine's future is then fixed (the requests still on their way to its
// queue included), so the time is exact. It costs O(requests in transit
// to r) plus the engine's remaining work.
func (m *model) iterDrainBound(s *service, r *replica, now hwmodel.Time) hwmodel.Time {
	var later []iteration.Later
	r.it.prune(now)
	for _, t := range r.it.transit {
		q := &m.reqs[t.req]
		if t.at > now && q.gen == t.gen && q.state == reqRunning && q.svc == int32(s.idx) && q.replica == int32(r.id) {
			later = append(later, iteration.Later{Req: q.eng, At: int64(t.at)})
		}
	}
	slices.SortFunc(later, func(a, b iteration.Later) int { return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Req, b.Req)) })
	return max(r.lastDone, hwmodel.Time(r.it.eng.DrainEnd(int64(now), later)))
}
