package sim

import (
	"math"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
)

// Processor sharing of fractional jobs (Config.ProcessorSharing; see the
// package doc). A shared job is a non-MIG job on one GPU with GPUMilli <
// 1000. Each one is in one of two phases: start-up (its restart and
// start-up delay, at full speed, using no GPU compute) and work (its
// remaining duration, progressing at 1000 / max(1000, S) per unit of time,
// where S is the sum of the compute demands of the jobs on its GPU that
// are in their work phase). Whenever a GPU's set of working jobs changes
// (a start, an end, a start-up ending) every job on it is advanced to now
// at its old rate and gets a new event at its new phase end; older events
// carry an older version and are dropped.
type shareBooks struct {
	on   bool
	base []int     // first global GPU index of each node
	occ  [][]int32 // per global GPU: shared jobs on it, in start order
	gpu  []int32   // per job: its global GPU while shared and running; -1 otherwise
	// Per job: start-up time left, work left (µs of full-speed progress),
	// slow-down factor max(1000, S)/1000 of the work phase, time of the
	// last advance, and the version of its pending event.
	startLeft []hwmodel.Time
	workLeft  []float64
	slow      []float64
	last      []hwmodel.Time
	ver       []int32
	// Checkpoints: per job, the attempt's work at its start, the progress
	// between two checkpoint ends (Every + Cost; 0 without checkpoints),
	// and the wall time at which its last completed checkpoint ended (the
	// end of its start-up before the first).
	work0  []float64
	period []float64
	ckWall []hwmodel.Time
	// frozen marks the GPUs under an undetected fault: their jobs make no
	// progress and get no events until the detection fails them.
	frozen []bool
	// model is each global GPU's model, for co-location factors.
	model []hwmodel.ModelID
}

func (e *Engine) initSharing() error {
	if !e.cfg.ProcessorSharing {
		return nil
	}
	s := &e.shr
	s.on = true
	c := e.cluster
	s.base = make([]int, c.NumNodes())
	total := 0
	for n := 0; n < c.NumNodes(); n++ {
		s.base[n] = total
		total += c.NodeGPUs(n)
		for range c.NodeGPUs(n) {
			s.model = append(s.model, c.NodeModel(n))
		}
	}
	s.occ = make([][]int32, total)
	n := len(e.w.Jobs)
	s.gpu = make([]int32, n)
	for i := range s.gpu {
		s.gpu[i] = -1
	}
	s.frozen = make([]bool, total)
	s.work0 = make([]float64, n)
	s.period = make([]float64, n)
	s.ckWall = make([]hwmodel.Time, n)
	s.startLeft = make([]hwmodel.Time, n)
	s.workLeft = make([]float64, n)
	s.slow = make([]float64, n)
	s.last = make([]hwmodel.Time, n)
	s.ver = make([]int32, n)
	return nil
}

// sharedGPU is the global GPU of placement p when job i is a shared job
// on it, else -1.
func (e *Engine) sharedGPU(i int, p hwmodel.Placement) int {
	req := e.jobs[i].Req
	if !e.shr.on || req.WantsMIG() || req.GPUs != 1 || req.GPUMilli >= hwmodel.MilliPerGPU || len(p) != 1 || p[0].Instance != 0 || p[0].GPUs == 0 {
		return -1
	}
	return e.shr.base[p[0].Node] + bits.TrailingZeros64(p[0].GPUs)
}

// demand is job i's compute demand in milli-GPU.
func (e *Engine) demand(i int) int64 {
	if d := e.w.Jobs[i].DemandMilli; d > 0 {
		return int64(d)
	}
	return int64(e.jobs[i].Req.GPUMilli)
}

// shareStart books shared job i, starting now on GPU g with start-up
// time startup and work w, and re-times the GPU's jobs.
func (e *Engine) shareStart(i, g int, startup hwmodel.Time, w hwmodel.Time) {
	s := &e.shr
	e.shareAdvance(g)
	s.gpu[i] = int32(g)
	s.startLeft[i], s.workLeft[i], s.last[i] = startup, float64(w), e.now
	s.work0[i], s.period[i], s.ckWall[i] = float64(w), 0, e.now+startup
	if ck := e.checkpointOf(i); ck.Every > 0 && e.runs[i].ckpts > 0 {
		s.period[i] = float64(ck.Every)/e.runs[i].rate + float64(ck.Cost)
	}
	s.occ[g] = append(s.occ[g], int32(i))
	e.shareRetime(g)
}

// shareStop removes job i (which stopped running) from its GPU, if shared.
func (e *Engine) shareStop(i int) {
	s := &e.shr
	if !s.on || s.gpu[i] < 0 {
		return
	}
	g := int(s.gpu[i])
	e.shareAdvance(g)
	occ := s.occ[g]
	for k, x := range occ {
		if int(x) == i {
			s.occ[g] = append(occ[:k], occ[k+1:]...)
			break
		}
	}
	s.gpu[i] = -1
	s.ver[i]++ // its pending event, if any, is stale
	e.shareRetime(g)
}

// shareAdvance brings every job on GPU g to now at its current rate
// (a frozen GPU's jobs make no progress), noting when a job's progress
// completes a checkpoint.
func (e *Engine) shareAdvance(g int) {
	s := &e.shr
	for _, x := range s.occ[g] {
		j := int(x)
		dt := e.now - s.last[j]
		switch {
		case s.frozen[g]:
		case s.startLeft[j] > 0:
			s.startLeft[j] = max(0, s.startLeft[j]-dt)
		default:
			before := s.work0[j] - s.workLeft[j]
			s.workLeft[j] = math.Max(0, s.workLeft[j]-float64(dt)/s.slow[j])
			if p := s.period[j]; p > 0 {
				k := min(math.Floor((s.work0[j]-s.workLeft[j])/p), float64(e.runs[j].ckpts))
				if k > math.Floor(before/p) {
					// The rate was constant since last: the crossing is exact.
					s.ckWall[j] = s.last[j] + hwmodel.Time(math.Ceil((k*p-before)*s.slow[j]-1e-6))
				}
			}
		}
		s.last[j] = e.now
	}
}

// shareProgress is shared job i's progress in its attempt (µs at full
// speed, checkpoints included) up to now, and the wall time at which its
// last completed checkpoint ended.
func (e *Engine) shareProgress(i int) (float64, hwmodel.Time) {
	s := &e.shr
	e.shareAdvance(int(s.gpu[i]))
	if s.startLeft[i] > 0 {
		return 0, s.ckWall[i]
	}
	return s.work0[i] - s.workLeft[i], s.ckWall[i]
}

// shareFreeze stops the progress of the shared jobs on node n's GPU gpu
// (every GPU of n when gpu < 0): the hardware broke now.
func (e *Engine) shareFreeze(n, gpu int) {
	s := &e.shr
	if !s.on {
		return
	}
	for g := 0; g < e.cluster.NodeGPUs(n); g++ {
		if gpu >= 0 && g != gpu {
			continue
		}
		fg := s.base[n] + g
		e.shareAdvance(fg)
		s.frozen[fg] = true
		for _, x := range s.occ[fg] {
			s.ver[x]++ // their pending events are stale
		}
	}
}

// shareThaw lets node n's GPUs (GPU gpu, or all when gpu < 0) progress
// again once no undetected fault is under them (after the detection
// failed their jobs).
func (e *Engine) shareThaw(n, gpu int) {
	s := &e.shr
	if !s.on {
		return
	}
	f := &e.flt
	for g := 0; g < e.cluster.NodeGPUs(n); g++ {
		fg := s.base[n] + g
		if (gpu < 0 || g == gpu) && f.nodeHits[n] == 0 && f.gpuHits[f.gpuBase[n]+g] == 0 {
			e.shareAdvance(fg)
			s.frozen[fg] = false
			e.shareRetime(fg)
		}
	}
}

// shareRetime sets the rates of GPU g's jobs and pushes each one's next
// event (end of start-up, or finish).
func (e *Engine) shareRetime(g int) {
	s := &e.shr
	var sum int64
	for _, x := range s.occ[g] {
		if s.startLeft[x] == 0 {
			sum += e.demand(int(x))
		}
	}
	slow := float64(max(sum, hwmodel.MilliPerGPU)) / hwmodel.MilliPerGPU
	pair, paired := e.pairSlow(g)
	for _, x := range s.occ[g] {
		j := int(x)
		s.slow[j] = slow
		switch {
		case paired && x == pair.a:
			s.slow[j] = pair.slowA
		case paired && x == pair.b:
			s.slow[j] = pair.slowB
		}
		s.ver[j]++
		if s.frozen[g] {
			continue
		}
		at := e.now + s.startLeft[j]
		if s.startLeft[j] == 0 {
			at = e.now + hwmodel.Time(math.Ceil(s.workLeft[j]*s.slow[j]-1e-6))
		}
		e.heap.push(event{at: at, kind: evFinish, job: x, attempt: e.runs[j].attempt, ver: s.ver[j]})
	}
}

// pairSlow is, when GPU g's working set is two jobs whose classes the
// speed table has co-location rows for on g's model, each one's slow-down
// (1 / its factor), by job; measured pair throughputs replace the
// proportional share then (Config.Speeds).
func (e *Engine) pairSlow(g int) (coPair, bool) {
	s := &e.shr
	if e.rates == nil {
		return coPair{}, false
	}
	var two [2]int32
	n := 0
	for _, x := range s.occ[g] {
		if s.startLeft[x] == 0 {
			if n == 2 {
				return coPair{}, false
			}
			two[n] = x
			n++
		}
	}
	if n != 2 {
		return coPair{}, false
	}
	fa, fb, ok := e.rates.Pair(e.jobs[two[0]].Class, e.jobs[two[1]].Class, s.model[g])
	if !ok {
		return coPair{}, false
	}
	return coPair{a: two[0], b: two[1], slowA: 1 / fa, slowB: 1 / fb}, true
}

// coPair is two co-located jobs and their slow-downs.
type coPair struct {
	a, b         int32
	slowA, slowB float64
}

// shareEvent handles a shared job's event: it returns true when the event
// is stale or ends the start-up (nothing more to do), false when the job
// finishes now.
func (e *Engine) shareEvent(ev event) bool {
	s := &e.shr
	i := int(ev.job)
	if ev.ver != s.ver[i] {
		return true
	}
	if s.startLeft[i] > 0 {
		g := int(s.gpu[i])
		e.shareAdvance(g)
		s.startLeft[i] = 0 // exact: the event is at its end
		e.shareRetime(g)
		return true
	}
	return false
}
