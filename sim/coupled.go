package sim

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// Coupled is a second model that shares the cluster with the batch
// workload: inference services (package serving). It keeps its own events;
// the engine interleaves only the instants where it touches the cluster.
//
// At each instant t of the run (a batch event, or Next()), after the batch
// events at t and before the policy's scheduling point, the engine calls
// Step when t == Next(), or when Waiting() and the batch books changed at
// t (a job ended or was queued). Step must first advance the model's own
// events to t, then take or give back capacity through the Access.
type Coupled interface {
	// Next is the next instant at which the model will need the cluster;
	// ok is false when it never will again.
	Next() (t hwmodel.Time, ok bool)
	// Waiting reports that the model wants capacity it could not get.
	Waiting() bool
	// Step is called at a.Now(); see the type's comment.
	Step(a *Access) error
}

// CoupledFaults is a coupled model that injected hardware faults
// (Config.Faults) can hit. Both calls come at a.Now(), the fault's time and
// its detection's, before the scheduling point of that instant; the model
// first advances its own events to then, as in Step.
type CoupledFaults interface {
	Coupled
	// Broken says the hardware of node (GPU gpu of it, or the whole node
	// when gpu < 0) broke now; nobody knows yet. What the model holds
	// there stops working now but stays held.
	Broken(a *Access, node, gpu int) error
	// Detected says the orchestrator learns of it now. The model must
	// Release everything it holds there before returning: the engine then
	// takes that hardware out of service until its repair.
	Detected(a *Access, node, gpu int) error
}

// Access is the coupled model's handle on the cluster during Step. What it
// takes counts in the cluster's books (and in Observation.AllocatedMilli
// and CoupledMilli) but belongs to no batch job or tenant.
type Access struct {
	e      *Engine
	active bool
}

// Now is the instant of the Step.
func (a *Access) Now() hwmodel.Time { return a.e.now }

// Cluster is the shared capacity book, which the coupled model reads
// through a read-only view; it takes capacity only through Access's own
// methods.
func (a *Access) Cluster() hwmodel.ClusterView { return a.e.cluster.View() }

// Acquire places n whole GPUs of an accepted model on one node, on the
// node with the fewest idle GPUs that has enough (best fit, to keep large
// holes for gangs; ties: lowest node), and takes them. ok is false when no
// node has n idle GPUs.
func (a *Access) Acquire(models hwmodel.ModelSet, n int) (p hwmodel.Placement, ok bool, err error) {
	if err := a.check(n); err != nil {
		return nil, false, err
	}
	c := a.e.cluster
	best, bestIdle := -1, 0
	for node := 0; node < c.NumNodes(); node++ {
		if !models.Accepts(c.NodeModel(node)) {
			continue
		}
		idle := a.idleGPUs(node)
		if idle >= n && (best < 0 || idle < bestIdle) {
			best, bestIdle = node, idle
		}
	}
	if best < 0 {
		return nil, false, nil
	}
	return a.take(best, n)
}

// AcquirePreempting is Acquire that may preempt running batch jobs of
// priority below maxPriority to make room. It picks the node that needs the
// fewest preempted GPU-milli (ties: fewer jobs, then lowest node),
// preempting on it the lowest-priority jobs first and, among equals, the
// most recently started (least work lost; ties: highest job id). Preempted
// jobs go back to the queue as a policy's Preempt would send them.
// preempted is the number of jobs preempted.
func (a *Access) AcquirePreempting(models hwmodel.ModelSet, n int, maxPriority int) (p hwmodel.Placement, preempted int, ok bool, err error) {
	if p, ok, err := a.Acquire(models, n); ok || err != nil {
		return p, 0, ok, err
	}
	e := a.e
	c := e.cluster
	// Candidates per node, gathered in one pass over the jobs.
	byNode := map[int][]int{}
	for i := range e.runs {
		if e.runs[i].state != Running || e.jobs[i].Priority >= maxPriority {
			continue
		}
		for _, s := range e.runs[i].placement {
			if s.GPUs != 0 && models.Accepts(c.NodeModel(s.Node)) {
				if l := byNode[s.Node]; len(l) == 0 || l[len(l)-1] != i {
					byNode[s.Node] = append(byNode[s.Node], i)
				}
			}
		}
	}
	nodes := make([]int, 0, len(byNode))
	for node := range byNode {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	bestNode, bestCost, bestJobs := -1, int64(0), 0
	var bestVictims []int
	for _, node := range nodes {
		if c.NodeGPUs(node) < n {
			continue
		}
		vs := byNode[node]
		slices.SortFunc(vs, func(x, y int) int {
			jx, jy := &e.jobs[x], &e.jobs[y]
			switch {
			case jx.Priority != jy.Priority:
				return jx.Priority - jy.Priority
			case jx.Start != jy.Start:
				if jx.Start > jy.Start {
					return -1
				}
				return 1
			}
			return y - x
		})
		free := make([]int32, c.NodeGPUs(node))
		for g := range free {
			if !c.IsMIG(node, g) {
				free[g] = c.FreeMilli(node, g)
			}
		}
		count := func() int {
			k := 0
			for _, f := range free {
				if f == hwmodel.MilliPerGPU {
					k++
				}
			}
			return k
		}
		var cost int64
		var victims []int
		for _, v := range vs {
			if count() >= n {
				break
			}
			victims = append(victims, v)
			for _, s := range e.runs[v].placement {
				if s.Node != node {
					cost += int64(s.GPUCount()) * int64(s.Milli)
					continue
				}
				for m := s.GPUs; m != 0; m &= m - 1 {
					free[bits.TrailingZeros64(m)] += s.Milli
				}
				cost += int64(s.GPUCount()) * int64(s.Milli)
			}
		}
		if count() < n {
			continue
		}
		if bestNode < 0 || cost < bestCost || (cost == bestCost && len(victims) < bestJobs) {
			bestNode, bestCost, bestJobs, bestVictims = node, cost, len(victims), victims
		}
	}
	if bestNode < 0 {
		return nil, 0, false, nil
	}
	for _, v := range bestVictims {
		e.preemptForCoupled(v)
	}
	p, ok, err = a.take(bestNode, n)
	if err == nil && !ok {
		err = fmt.Errorf("sim: preempting %d jobs on node %d did not free %d GPUs", len(bestVictims), bestNode, n)
	}
	return p, len(bestVictims), ok, err
}

// Broken reports whether hardware under p broke in a fault not detected
// yet: what runs there makes no progress until the detection.
func (a *Access) Broken(p hwmodel.Placement) bool {
	e := a.e
	if !e.flt.on {
		return false
	}
	f := &e.flt
	for _, s := range p {
		if f.nodeHitAt[s.Node] != noHit {
			return true
		}
		for m := s.GPUs; m != 0; m &= m - 1 {
			if f.gpuHitAt[f.gpuBase[s.Node]+bits.TrailingZeros64(m)] != noHit {
				return true
			}
		}
	}
	return false
}

// Release gives back what Acquire took.
func (a *Access) Release(p hwmodel.Placement) error {
	if !a.active {
		return errors.New("sim: Access used outside Step")
	}
	a.e.cluster.Release(p)
	a.e.coupledMilli -= p.Milli()
	// Freed capacity is news for the policy.
	a.e.pendingChange = true
	return nil
}

func (a *Access) check(n int) error {
	if !a.active {
		return errors.New("sim: Access used outside Step")
	}
	if n <= 0 || n > 64 {
		return fmt.Errorf("sim: Acquire of %d GPUs: want 1..64", n)
	}
	return nil
}

// idleGPUs counts node's whole GPUs that nothing holds (MIG GPUs excluded).
func (a *Access) idleGPUs(node int) int {
	c := a.e.cluster
	k := 0
	for g := 0; g < c.NodeGPUs(node); g++ {
		if !c.IsMIG(node, g) && c.FreeMilli(node, g) == hwmodel.MilliPerGPU {
			k++
		}
	}
	return k
}

func (a *Access) take(node, n int) (hwmodel.Placement, bool, error) {
	c := a.e.cluster
	var mask uint64
	k := 0
	for g := 0; g < c.NodeGPUs(node) && k < n; g++ {
		if !c.IsMIG(node, g) && c.FreeMilli(node, g) == hwmodel.MilliPerGPU {
			mask |= 1 << g
			k++
		}
	}
	if k < n {
		return nil, false, nil
	}
	p := hwmodel.Placement{{Node: node, GPUs: mask, Milli: hwmodel.MilliPerGPU}}
	if err := c.Allocate(p); err != nil {
		return nil, false, err
	}
	a.e.coupledMilli += p.Milli()
	return p, true, nil
}

// preemptForCoupled stops running job i as a Preempt decision would.
func (e *Engine) preemptForCoupled(i int) {
	e.preempt(i)
	e.res.CoupledPreemptions++
}

// stepCoupled gives the coupled model its turn at e.now when it is due.
func (e *Engine) stepCoupled(batchChanged bool) error {
	c := e.cfg.Coupled
	if c == nil {
		return nil
	}
	t, ok := c.Next()
	due := ok && t <= e.now
	if !due && !(batchChanged && c.Waiting()) {
		return nil
	}
	a := &Access{e: e, active: true}
	err := c.Step(a)
	a.active = false
	if err != nil {
		return err
	}
	if t, ok := c.Next(); ok && t <= e.now {
		return &InvariantError{At: e.now, Msg: fmt.Sprintf("coupled model's next instant %d is not after its step at %d", t, e.now)}
	}
	return nil
}

// coupledPending reports whether the coupled model still has instants to
// come.
func (e *Engine) coupledPending() bool {
	if e.cfg.Coupled == nil {
		return false
	}
	_, ok := e.cfg.Coupled.Next()
	return ok
}

// coupledFault tells the coupled model of a fault (detected false) or its
// detection on node n (GPU gpu, or all of it when gpu < 0), and checks
// that after a detection it holds nothing there.
func (e *Engine) coupledFault(n, gpu int, detected bool) error {
	c, ok := e.cfg.Coupled.(CoupledFaults)
	if !ok {
		return nil
	}
	a := &Access{e: e, active: true}
	var err error
	if detected {
		err = c.Detected(a, n, gpu)
	} else {
		err = c.Broken(a, n, gpu)
	}
	a.active = false
	if err != nil || !detected {
		return err
	}
	// Whatever is still allocated on the failed hardware now belongs to
	// the coupled model (the batch jobs there just failed), unless a
	// node's block already holds it: that block was allocated over free
	// GPUs only, at an earlier detection.
	if e.flt.nodeBlock[n] != nil {
		return nil
	}
	for g := 0; g < e.cluster.NodeGPUs(n); g++ {
		if (gpu < 0 || g == gpu) && !e.flt.gpuBlocked[e.flt.gpuBase[n]+g] && e.cluster.FreeMilli(n, g) != hwmodel.MilliPerGPU {
			return &InvariantError{At: e.now, Msg: fmt.Sprintf("the coupled model still holds GPU %d of failed node %s after its detection", g, e.cluster.Node(n).Name)}
		}
	}
	return nil
}
