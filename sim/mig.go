package sim

import (
	"fmt"
	"math/bits"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// MIG in the engine.
//
// A Reconfigure decision is applied at once (hwmodel.Cluster.Reconfigure:
// busy instances must be kept; instances it creates are blocked) and an
// unblock event is scheduled Config.MIGReconfigTime later; when it fires
// the GPU's new instances become usable, the policy hears Events.Unblocked
// and a scheduling point follows. Until then the GPU is in flight and a
// second Reconfigure of it is rejected. Each applied reconfiguration
// counts in Result.MIGReconfigurations and costs MIGReconfigTime of GPU
// time (Result.MIGReconfigGPUTime). An empty layout (MIG off, allowed only
// with Config.MIGConvertWhole) takes effect at once and costs nothing (an
// assumption: real GPUs need a reset): the GPU is whole and idle again,
// and its "reconfiguration" ends at the same instant, so the policy gets
// a scheduling point to use it. When a reconfiguration moves busy
// instances to other indices, the engine rewrites the Instance of the
// running jobs' shares (hwmodel's remap).

// migClass is a queued MIG request as fragmentation sees it.
type migClass struct {
	r      hwmodel.MIGRequest
	models hwmodel.ModelSet
}

// migBooks is the engine's MIG state.
type migBooks struct {
	base     []int     // per node: index of its first GPU in the flat arrays
	inflight []bool    // per GPU: a reconfiguration is in flight
	running  [][]int32 // per GPU: running MIG jobs
	pending  int       // unblock events in the heap

	classes []migClass // queued MIG request classes, in order of first appearance
	counts  []int      // queued jobs per class
	queued  int        // queued MIG jobs

	servable map[hwmodel.Request]string // memo of migServable
	profs    [][]hwmodel.MIGProfile     // per model, the MIG table
}

func (m *migBooks) init(c *hwmodel.Cluster) {
	n := 0
	m.base = make([]int, c.NumNodes())
	for i := range m.base {
		m.base[i] = n
		n += c.NodeGPUs(i)
	}
	m.inflight = make([]bool, n)
	m.running = make([][]int32, n)
	m.profs = make([][]hwmodel.MIGProfile, len(hwmodel.Models()))
	for k := range m.profs {
		m.profs[k] = hwmodel.MIGProfiles(hwmodel.ModelID(k))
	}
}

// queue counts a MIG job entering (+1) or leaving (-1) the queue.
func (m *migBooks) queue(r *hwmodel.Request, d int) {
	if !r.WantsMIG() {
		return
	}
	k := 0
	for ; k < len(m.classes); k++ {
		if m.classes[k].r == r.MIG && m.classes[k].models == r.Models {
			break
		}
	}
	if k == len(m.classes) {
		m.classes = append(m.classes, migClass{r.MIG, r.Models})
		m.counts = append(m.counts, 0)
	}
	m.counts[k] += d
	m.queued += d
}

// migShare returns the MIG share of a placement, if it has one.
func migShare(p hwmodel.Placement) (hwmodel.Share, bool) {
	if len(p) == 1 && p[0].Instance > 0 {
		return p[0], true
	}
	return hwmodel.Share{}, false
}

func (m *migBooks) started(i int, p hwmodel.Placement) {
	if s, ok := migShare(p); ok {
		g := m.base[s.Node] + bits.TrailingZeros64(s.GPUs)
		m.running[g] = append(m.running[g], int32(i))
	}
}

func (m *migBooks) stopped(i int, p hwmodel.Placement) {
	if s, ok := migShare(p); ok {
		g := m.base[s.Node] + bits.TrailingZeros64(s.GPUs)
		l := m.running[g]
		for k, j := range l {
			if j == int32(i) {
				l[k] = l[len(l)-1]
				m.running[g] = l[:len(l)-1]
				break
			}
		}
	}
}

// reconfigure applies a Reconfigure decision, or returns why not.
func (e *Engine) reconfigure(d policies.Decision) string {
	c := e.cluster
	switch {
	case !e.cfg.MIGReconfigure:
		return "MIG layouts are static in this run (no reconfiguration)"
	case d.Node < 0 || d.Node >= c.NumNodes() || d.GPU < 0 || d.GPU >= c.NodeGPUs(d.Node):
		return fmt.Sprintf("reconfigure: node %d GPU %d does not exist", d.Node, d.GPU)
	}
	g := e.mig.base[d.Node] + d.GPU
	name := c.Node(d.Node).Name
	switch {
	case e.mig.inflight[g]:
		return fmt.Sprintf("node %s GPU %d is already being reconfigured", name, d.GPU)
	case !e.cfg.MIGConvertWhole && !c.IsMIG(d.Node, d.GPU):
		return fmt.Sprintf("node %s GPU %d is not MIG-enabled and this run does not convert whole GPUs", name, d.GPU)
	case !e.cfg.MIGConvertWhole && len(d.Layout) == 0:
		return fmt.Sprintf("node %s GPU %d: an empty layout turns MIG off, and this run does not convert GPUs", name, d.GPU)
	}
	remap, err := c.Reconfigure(d.Node, d.GPU, d.Layout)
	if err != nil {
		return err.Error()
	}
	for _, j := range e.mig.running[g] {
		s := &e.runs[j].placement[0]
		k := remap[s.Instance-1]
		if k < 0 {
			panic(fmt.Sprintf("sim: reconfiguration of node %s GPU %d dropped the busy instance of job %s", name, d.GPU, e.jobs[j].Name))
		}
		s.Instance = k + 1
	}
	e.res.MIGReconfigurations++
	e.host.Reconfigured(policies.GPURef{Node: d.Node, GPU: d.GPU})
	delay := hwmodel.Time(0) // MIG off: the GPU is whole and idle at once
	if len(d.Layout) > 0 {
		delay = e.cfg.MIGReconfigTime
	}
	e.res.MIGReconfigGPUTime += delay
	e.mig.inflight[g] = true
	e.mig.pending++
	e.heap.push(event{at: e.now + delay, kind: evUnblock, job: int32(d.Node), attempt: int32(d.GPU)})
	return ""
}

// unblock ends a reconfiguration.
func (e *Engine) unblock(node, gpu int) {
	e.cluster.UnblockMIG(node, gpu)
	e.mig.inflight[e.mig.base[node]+gpu] = false
	e.mig.pending--
	e.host.Unblocked(policies.GPURef{Node: node, GPU: gpu})
	e.pendingChange = true
}

// checkMIGPlacement verifies that p gives MIG job i one instance that
// matches its request, on a node whose model it accepts, with its CPU and
// memory, and Milli the instance's share.
func (e *Engine) checkMIGPlacement(i int, p hwmodel.Placement) string {
	req := e.jobs[i].Req
	c := e.cluster
	if len(p) != 1 {
		return fmt.Sprintf("a MIG job is placed on one instance, placement has %d shares", len(p))
	}
	s := p[0]
	if s.Node < 0 || s.Node >= c.NumNodes() {
		return fmt.Sprintf("node %d does not exist", s.Node)
	}
	n := c.Node(s.Node)
	g := bits.TrailingZeros64(s.GPUs)
	switch {
	case s.Instance <= 0:
		return fmt.Sprintf("job %s asks for a MIG instance (%s), the share names none", e.jobs[i].Name, req.MIG)
	case s.GPUCount() != 1 || g >= n.GPUs:
		return fmt.Sprintf("a MIG share selects one GPU of the node, got mask %#x", s.GPUs)
	case !req.Models.Accepts(n.Model):
		return fmt.Sprintf("node %s has %s GPUs, job accepts %s", n.Name, hwmodel.Model(n.Model).Name, req.Models)
	case s.Instance > c.MIGInstanceCount(s.Node, g):
		return fmt.Sprintf("node %s GPU %d has no MIG instance %d", n.Name, g, s.Instance-1)
	}
	prof := c.MIGInstanceAt(s.Node, g, s.Instance-1).Profile
	if !req.MIG.Matches(n.Model, prof) {
		return fmt.Sprintf("node %s GPU %d instance %d is a %s, job asks for %s", n.Name, g, s.Instance-1, e.mig.profs[n.Model][prof].Name, req.MIG)
	}
	if want := hwmodel.MIGMilli(n.Model, prof); s.Milli != want {
		return fmt.Sprintf("share of %d milli on a MIG instance worth %d", s.Milli, want)
	}
	if s.CPUMilli != req.CPUMilli || s.MemoryMiB != req.MemoryMiB {
		return fmt.Sprintf("placement gives %d milli-CPU and %d MiB, job asks for %d and %d", s.CPUMilli, s.MemoryMiB, req.CPUMilli, req.MemoryMiB)
	}
	return ""
}

// migServable says why a MIG request that hwmodel finds satisfiable (some
// MIG-capable model could serve it) can still never run in this run, or
// "". A whole or shared request must fit the GPUs that are not
// MIG-enabled (wholeServable). With static layouts an instance of the cluster's layouts must match
// it; with reconfiguration but no conversion, a MIG-enabled GPU's model
// must have a matching profile; with conversion, Satisfiable is enough.
// Only a node with the request's CPU and memory counts.
func (e *Engine) migServable(r hwmodel.Request) string {
	if e.cfg.MIGConvertWhole {
		return ""
	}
	if !r.WantsMIG() {
		if e.cluster.NumMIGGPUs() == 0 {
			return ""
		}
		return e.wholeServable(r)
	}
	if why, ok := e.mig.servable[r]; ok {
		return why
	}
	c := e.cluster
	found := false
	for i := 0; i < c.NumNodes() && !found; i++ {
		n := c.Node(i)
		if !r.Models.Accepts(n.Model) || n.CPUMilli < r.CPUMilli || n.MemoryMiB < r.MemoryMiB {
			continue
		}
		for g := 0; g < n.GPUs && !found; g++ {
			for k := 0; k < c.MIGInstanceCount(i, g) && !found; k++ {
				if !e.cfg.MIGReconfigure {
					found = r.MIG.Matches(n.Model, c.MIGInstanceAt(i, g, k).Profile)
					continue
				}
				for p := range e.mig.profs[n.Model] {
					if r.MIG.Matches(n.Model, p) {
						found = true
						break
					}
				}
			}
		}
	}
	why := ""
	switch {
	case found:
	case e.cfg.MIGReconfigure:
		why = fmt.Sprintf("no MIG-enabled GPU of model %s on a node with %d milli-CPU and %d MiB has a profile matching %s, and this run does not convert whole GPUs", r.Models, r.CPUMilli, r.MemoryMiB, r.MIG)
	default:
		why = fmt.Sprintf("no MIG instance of the cluster's static layouts matches %s on a node of model %s with %d milli-CPU and %d MiB", r.MIG, r.Models, r.CPUMilli, r.MemoryMiB)
	}
	if e.mig.servable == nil {
		e.mig.servable = make(map[hwmodel.Request]string)
	}
	e.mig.servable[r] = why
	return why
}

// wholeServable says why a whole or shared GPU request can never run when
// the MIG-enabled GPUs stay MIG-enabled (no conversion): it must fit the
// GPUs that are not, by the placement rules (a request for at most as many
// GPUs as the largest accepted node has goes on one node; a larger one is
// a gang of one model). "" if it can.
func (e *Engine) wholeServable(r hwmodel.Request) string {
	if r.GPUs == 0 {
		return ""
	}
	if why, ok := e.mig.servable[r]; ok {
		return why
	}
	c := e.cluster
	whole := func(i int) int {
		n := 0
		for g := 0; g < c.NodeGPUs(i); g++ {
			if !c.IsMIG(i, g) {
				n++
			}
		}
		return n
	}
	why := ""
	if r.GPUs > c.MaxNodeGPUs(r.Models) {
		most := 0
		for m := range e.mig.profs {
			id := hwmodel.ModelID(m)
			if !r.Models.Accepts(id) {
				continue
			}
			n := 0
			for i := 0; i < c.NumNodes(); i++ {
				if c.NodeModel(i) == id {
					n += whole(i)
				}
			}
			most = max(most, n)
		}
		if r.GPUs > most {
			why = fmt.Sprintf("asks for a gang of %s of model %s; without MIG conversion at most %s of one model are not MIG-enabled", hwmodel.Plural(r.GPUs, "GPU", "GPUs"), r.Models, hwmodel.Plural(most, "GPU", "GPUs"))
		}
	} else {
		why = fmt.Sprintf("no node of model %s with %d milli-CPU and %d MiB has %s that are not MIG-enabled (and this run does not convert MIG GPUs)", r.Models, r.CPUMilli, r.MemoryMiB, hwmodel.Plural(r.GPUs, "GPU", "GPUs"))
		for i := 0; i < c.NumNodes(); i++ {
			n := c.Node(i)
			if r.Models.Accepts(n.Model) && n.CPUMilli >= r.CPUMilli && n.MemoryMiB >= r.MemoryMiB && whole(i) >= r.GPUs {
				why = ""
				break
			}
		}
	}
	if e.mig.servable == nil {
		e.mig.servable = make(map[hwmodel.Request]string)
	}
	e.mig.servable[r] = why
	return why
}

// observeMIG fills the MIG part of an observation. Free and fragmented
// slices need a pass over the MIG GPUs and are measured only while a MIG
// job is queued.
func (e *Engine) observeMIG(o *Observation) {
	c := e.cluster
	o.MIGSlices, o.MIGBusySlices = c.MIGSliceStats()
	if e.mig.queued == 0 || o.MIGSlices == 0 {
		return
	}
	for i := 0; i < c.NumNodes(); i++ {
		model := c.NodeModel(i)
		profs := e.mig.profs[model]
		for g := 0; g < c.NodeGPUs(i); g++ {
			n := c.MIGInstanceCount(i, g)
			if n == 0 {
				continue
			}
			used := c.MIGBusy(i, g) | c.MIGBlocked(i, g)
			for k := 0; k < n; k++ {
				if used&(1<<uint(k)) != 0 {
					continue
				}
				pi := c.MIGInstanceAt(i, g, k).Profile
				o.MIGFreeSlices += profs[pi].Slices
				fits := false
				for q, cl := range e.mig.classes {
					if e.mig.counts[q] > 0 && cl.models.Accepts(model) && cl.r.Matches(model, pi) {
						fits = true
						break
					}
				}
				if !fits {
					o.MIGFragSlices += profs[pi].Slices
				}
			}
		}
	}
}

// checkMIG verifies the engine's MIG books against the cluster: every
// running MIG job holds a busy instance of the GPU it is listed under,
// each busy instance is held by exactly one, a GPU has blocked instances
// only while a reconfiguration is in flight, and the queued MIG jobs
// match the per-class counts.
func (e *Engine) checkMIG() string {
	c := e.cluster
	inflight := 0
	for i := 0; i < c.NumNodes(); i++ {
		for g := 0; g < c.NodeGPUs(i); g++ {
			fg := e.mig.base[i] + g
			if e.mig.inflight[fg] {
				inflight++
			} else if c.MIGBlocked(i, g) != 0 {
				return fmt.Sprintf("node %d GPU %d has blocked instances but no reconfiguration in flight", i, g)
			}
			var held uint64
			for _, j := range e.mig.running[fg] {
				if e.runs[j].state != Running {
					return fmt.Sprintf("job %s is listed on node %d GPU %d but is %s", e.jobs[j].Name, i, g, e.runs[j].state)
				}
				s := e.runs[j].placement[0]
				bit := uint64(1) << uint(s.Instance-1)
				if s.Node != i || s.GPUs != 1<<uint(g) || held&bit != 0 {
					return fmt.Sprintf("job %s holds instance %d of node %d GPU %#x, listed under node %d GPU %d", e.jobs[j].Name, s.Instance-1, s.Node, s.GPUs, i, g)
				}
				held |= bit
			}
			if busy := c.MIGBusy(i, g); busy != held {
				return fmt.Sprintf("node %d GPU %d: busy instances %#x, running MIG jobs hold %#x", i, g, busy, held)
			}
		}
	}
	if inflight != e.mig.pending {
		return fmt.Sprintf("%d GPUs in flight, %d unblock events pending", inflight, e.mig.pending)
	}
	queued, running := 0, 0
	for i := range e.runs {
		if !e.jobs[i].Req.WantsMIG() {
			continue
		}
		switch e.runs[i].state {
		case Ready:
			queued++
		case Running:
			running++
		}
	}
	sum := 0
	for _, n := range e.mig.counts {
		sum += n
	}
	listed := 0
	for _, l := range e.mig.running {
		listed += len(l)
	}
	if queued != e.mig.queued || sum != queued || listed != running {
		return fmt.Sprintf("MIG jobs: %d queued (books %d, classes %d), %d running (listed %d)", queued, e.mig.queued, sum, running, listed)
	}
	return ""
}
