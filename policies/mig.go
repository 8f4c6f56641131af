package policies

import (
	"cmp"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
)

// MIG placement and dynamic reconfiguration.
//
// # Placement (every placer)
//
// A MIG request (hwmodel.Request.WantsMIG) is served by one free,
// unblocked instance of a MIG-enabled GPU on a node whose model the
// request accepts, with the CPU and memory it asks for, whose profile
// matches the request (hwmodel.MIGRequest.Matches). Every placer chooses
// the same way, deterministically: the smallest matching instance (fewest
// compute slices, then least memory, then lowest profile index, so a plain
// 1g before its +me twin), ties by lowest node, then GPU, then instance
// index. Best fit keeps big instances for the requests that need them;
// the scored placements' node scores, which weigh whole-GPU milli, say
// nothing about instances. MIG GPUs are invisible to whole and shared
// placement (hwmodel), so the two never compete for a GPU.
//
// # Dynamic reconfiguration (Options.MIGReconfigure)
//
// When a queued MIG job finds no free matching instance, the scheduler
// first looks for an instance that is on its way: a blocked instance of a
// GPU being reconfigured, or one that a reconfiguration decided earlier in
// the same call will create, that matches the job on a node with its CPU
// and memory and that no job before it in this call's walk has claimed.
// If there is one, the job claims it and waits (the instance is free when
// the reconfiguration ends, and the job, being ahead in the queue, takes
// it first). Otherwise the scheduler tries to repartition one GPU:
//
//   - Candidates: MIG GPUs of an accepted model on a node with the job's
//     CPU and memory free, not being reconfigured (neither in flight,
//     Events.Reconfigured without Unblocked yet, nor chosen earlier in this
//     call); with Options.MIGConvertWhole, and only for the job at the
//     head of the queue, also entirely idle whole GPUs of a MIG-capable
//     accepted model.
//   - New layout: every busy instance is kept as it is (profile and
//     start); the smallest matching profile (same order as placement) is
//     put at its lowest valid start in the free memory slices; then the
//     free slices left are filled greedily with the largest profile that
//     still fits (most compute slices, then most memory, lowest index; +me
//     profiles are never used as filler), each at its lowest valid start,
//     until nothing fits. Large instances serve any smaller request (a
//     request is a minimum), so this keeps the GPU useful to whatever
//     comes next; on an empty H200 a 1g request gives 1g + 3g + 2g + 1g,
//     the balanced layout. (Filling with more of the same profile first
//     was tried: it leaves GPUs of one shape that later requests of other
//     shapes use badly.) Free instances of the old layout are dropped
//     (those the new layout repeats survive as they are). Validity is
//     hwmodel.ValidateMIGLayout's.
//   - Choice: a MIG GPU before a whole GPU to convert; then the GPU with
//     the fewest free compute slices (best fit: emptier GPUs stay
//     available for big profiles); then the fewest free instances
//     dropped; then lowest node, then GPU.
//
// The decision is a Reconfigure of that GPU. Its free instances (or, for a
// conversion, the whole GPU) are reserved for the rest of the call, so no
// later Start in the same call uses what the reconfiguration destroys; its
// new instances other than the job's become claimable by later jobs of the
// walk. A GPU has at most one reconfiguration in flight, and busy instances
// are never destroyed. A request class (same MIG request, models, CPU and
// memory) that found no candidate is not tried again in the same call.
//
// Right-sizing: with reconfiguration, a MIG job whose smallest free
// matching instance has more compute slices than the smallest profile of
// that model that matches it (a 1-slice request and only a 3g free) does
// not take it if it can instead claim an instance of exactly the right
// size on its way, or get one from a reconfiguration decided now by the
// rules above; it then waits for it. Otherwise it takes the larger
// instance. Without this, small requests occupy the large instances that
// earlier reconfigurations made, layouts never shrink back, and dynamic
// layouts did worse than static ones in the worked example (docs/mig.md).
//
// In a strict queue only the head may reconfigure (then the walk stops as
// for any blocked head). With backfill, MIG jobs behind the blocked head
// may also reconfigure MIG GPUs, never convert whole ones.
//
// # Turning MIG off (Options.MIGConvertWhole)
//
// With conversion, a whole or shared GPU job at the head of the queue that
// cannot be placed may turn idle MIG GPUs (no busy instance, not being
// reconfigured) back into whole GPUs, with Reconfigure decisions of an
// empty layout: for a single-node request, on the node (accepted model,
// CPU and memory free) that needs the fewest conversions to reach the
// request's idle GPUs (one for a shared request with no GPU to share),
// lowest node first, converting its lowest-numbered idle MIG GPUs; for a
// gang, on the first accepted model whose idle whole GPUs plus idle MIG
// GPUs reach the request, converting idle MIG GPUs in node and GPU order.
// Without conversion the set of MIG GPUs never changes, and a whole or
// shared job that only MIG GPUs could hold fails at submission.
//
// # MIG and backfill
//
// A MIG job holds no whole-GPU capacity, so it counts as releasing none in
// the EASY reservation walk, and it may backfill behind a blocked head
// without the reservation test: it cannot delay a whole or shared head
// (different GPUs), nor a blocked MIG head, since every instance it can
// take is one the head does not match (or the head would have taken it).
// For the same reason a blocked MIG head makes no reservation: jobs behind
// it backfill freely. (With conversion, a whole-GPU job backfilled behind a
// MIG head may take an idle GPU that a later conversion would have used;
// that approximation is accepted.)

// migProfiles caches each model's MIG profiles; the table is static.
var migProfiles = func() [][]hwmodel.MIGProfile {
	out := make([][]hwmodel.MIGProfile, len(hwmodel.Models()))
	for i := range out {
		out[i] = hwmodel.MIGProfiles(hwmodel.ModelID(i))
	}
	return out
}()

func migProfilesOf(m hwmodel.ModelID) []hwmodel.MIGProfile {
	if int(m) >= len(migProfiles) {
		return nil
	}
	return migProfiles[m]
}

// migMatch is hwmodel.MIGRequest.Matches on a cached profile, without the
// copy that Matches makes of the model's table.
func migMatch(r *hwmodel.MIGRequest, p *hwmodel.MIGProfile) bool {
	if r.IsZero() {
		return false
	}
	if r.Profile != "" && !strings.EqualFold(r.Profile, p.Name) {
		return false
	}
	return p.Slices >= r.MinSlices && p.MemoryMiB >= r.MinMemoryMiB
}

// migSmaller orders profiles by size: fewer compute slices, then less
// memory, then lower index in the model's table.
func migSmaller(profs []hwmodel.MIGProfile, a, b int) bool {
	pa, pb := &profs[a], &profs[b]
	if pa.Slices != pb.Slices {
		return pa.Slices < pb.Slices
	}
	if pa.MemoryMiB != pb.MemoryMiB {
		return pa.MemoryMiB < pb.MemoryMiB
	}
	return a < b
}

// validMIGRequest is Request.Validate for a MIG request, without errors.
func validMIGRequest(r *hwmodel.Request) bool {
	return r.GPUs == 1 && r.GPUMilli == 0 && r.CPUMilli >= 0 && r.MemoryMiB >= 0 &&
		r.MIG.MinSlices >= 0 && r.MIG.MinMemoryMiB >= 0
}

// placeMIG places a MIG request by the rule above (the smallest matching
// free instance, then lowest node, GPU, instance).
func placeMIG(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if c.NumMIGGPUs() == 0 {
		return dst, false
	}
	bi, bg, bk, bp := -1, -1, -1, -1
	var bprofs []hwmodel.MIGProfile
	for i := 0; i < c.NumNodes(); i++ {
		m := c.NodeModel(i)
		profs := migProfilesOf(m)
		if profs == nil || !r.Models.Accepts(m) || !nodeFits(c, i, r.CPUMilli, r.MemoryMiB) {
			continue
		}
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
				if !migMatch(&r.MIG, &profs[pi]) {
					continue
				}
				// Strictly smaller only: ties keep the lower node, GPU and
				// instance. Profiles of different models compare by size.
				if bi >= 0 && !migLess(profs, pi, bprofs, bp) {
					continue
				}
				bi, bg, bk, bp, bprofs = i, g, k, pi, profs
			}
		}
	}
	if bi < 0 {
		return dst, false
	}
	return append(dst, c.MIGShare(bi, bg, bk, r.CPUMilli, r.MemoryMiB)), true
}

// migLess reports whether profile a of table pa is strictly smaller than
// profile b of table pb (slices, memory, then index within one table).
func migLess(pa []hwmodel.MIGProfile, a int, pb []hwmodel.MIGProfile, b int) bool {
	x, y := &pa[a], &pb[b]
	if x.Slices != y.Slices {
		return x.Slices < y.Slices
	}
	if x.MemoryMiB != y.MemoryMiB {
		return x.MemoryMiB < y.MemoryMiB
	}
	return a < b
}

// migPending is an instance on its way: blocked by a reconfiguration in
// flight, or to be created by one decided in this call.
type migPending struct {
	node, gpu int
	model     hwmodel.ModelID
	profile   int
	claimed   bool
}

// migPlanner is the scheduler's MIG reconfiguration state.
type migPlanner struct {
	enabled, convert bool
	inflight         map[GPURef]struct{} // from Events; looked up, never iterated

	// Per call.
	built   bool
	pending []migPending
	planned []GPURef
	failed  []hwmodel.Request // request classes with no candidate this call

	// Scratch.
	layout, best hwmodel.MIGLayout
	order        []int
}

func (m *migPlanner) resetCall() {
	m.built = false
	m.pending = m.pending[:0]
	m.planned = m.planned[:0]
	m.failed = m.failed[:0]
}

// absorb follows reconfigurations in flight.
func (m *migPlanner) absorb(ev *Events) {
	if !m.enabled {
		return
	}
	for _, g := range ev.Reconfigured {
		if m.inflight == nil {
			m.inflight = make(map[GPURef]struct{})
		}
		m.inflight[g] = struct{}{}
	}
	for _, g := range ev.Unblocked {
		delete(m.inflight, g)
	}
}

func (m *migPlanner) busy(c hwmodel.ClusterView, i, g int) bool {
	if c.MIGBlocked(i, g) != 0 || slices.Contains(m.planned, GPURef{i, g}) {
		return true
	}
	_, ok := m.inflight[GPURef{i, g}]
	return ok
}

// collect lists the blocked instances of GPUs in flight, once per call.
func (m *migPlanner) collect(c hwmodel.ClusterView) {
	if m.built {
		return
	}
	m.built = true
	if c.NumMIGGPUs() == 0 {
		return
	}
	for i := 0; i < c.NumNodes(); i++ {
		for g := 0; g < c.NodeGPUs(i); g++ {
			blocked := c.MIGBlocked(i, g)
			for k := 0; blocked != 0; k++ {
				if blocked&1 != 0 {
					m.pending = append(m.pending, migPending{node: i, gpu: g, model: c.NodeModel(i), profile: c.MIGInstanceAt(i, g, k).Profile})
				}
				blocked >>= 1
			}
		}
	}
}

// claim takes the smallest unclaimed pending instance that fits r (lowest
// position in the list on ties), of exactly exact compute slices when
// exact > 0; false if none.
func (m *migPlanner) claim(c hwmodel.ClusterView, r *hwmodel.Request, exact int) bool {
	best := -1
	for k := range m.pending {
		p := &m.pending[k]
		profs := migProfilesOf(p.model)
		if p.claimed || !r.Models.Accepts(p.model) || !migMatch(&r.MIG, &profs[p.profile]) || !nodeFits(c, p.node, r.CPUMilli, r.MemoryMiB) {
			continue
		}
		if exact > 0 && profs[p.profile].Slices != exact {
			continue
		}
		if best >= 0 {
			b := &m.pending[best]
			if !migLess(profs, p.profile, migProfilesOf(b.model), b.profile) {
				continue
			}
		}
		best = k
	}
	if best < 0 {
		return false
	}
	m.pending[best].claimed = true
	return true
}

// migWait handles a MIG job that found no free instance: it claims an
// instance on its way, or decides a reconfiguration (appended to s.out),
// or does nothing. head says whether j is the first blocked job, which
// alone may convert a whole GPU.
func (s *scheduler) migWait(v View, j *Job, head bool) bool {
	return s.migWaitFor(v, j, head, 0)
}

// migWaitFor is migWait; exact > 0 restricts it to instances of exactly
// that many compute slices (right-sizing, see migRightSize).
func (s *scheduler) migWaitFor(v View, j *Job, head bool, exact int) bool {
	m := &s.mig
	if !m.enabled || !validMIGRequest(&j.Req) {
		return false
	}
	c := v.Cluster()
	m.collect(c)
	if m.claim(c, &j.Req, exact) {
		return true
	}
	if slices.Contains(m.failed, j.Req) {
		return false
	}
	i, g, conv, need, ok := m.choose(c, &j.Req, head && m.convert)
	if !ok {
		m.failed = append(m.failed, j.Req)
		return false
	}
	layout := slices.Clone(m.best)
	// Hide what the reconfiguration destroys from the rest of this call.
	if conv {
		_ = v.Reserve(hwmodel.Placement{{Node: i, GPUs: 1 << uint(g), Milli: hwmodel.MilliPerGPU}})
	} else {
		used := c.MIGBusy(i, g) | c.MIGBlocked(i, g)
		for k := 0; k < c.MIGInstanceCount(i, g); k++ {
			if used&(1<<uint(k)) == 0 {
				_ = v.Reserve(hwmodel.Placement{c.MIGShare(i, g, k, 0, 0)})
			}
		}
	}
	m.planned = append(m.planned, GPURef{i, g})
	model := c.NodeModel(i)
	for k := need + 1; k < len(layout); k++ { // new instances follow the kept ones
		m.pending = append(m.pending, migPending{node: i, gpu: g, model: model, profile: layout[k].Profile})
	}
	s.out = append(s.out, Decision{Kind: Reconfigure, Job: -1, Node: i, GPU: g, Layout: layout})
	return true
}

// migRightSize reports whether MIG job j, which p would place on a free
// instance larger than the smallest profile of that model matching j,
// should rather wait for a right-sized instance: one on its way (claimed),
// or one a reconfiguration decided now will create. Only with
// Options.MIGReconfigure.
func (s *scheduler) migRightSize(v View, j *Job, p hwmodel.Placement, head bool) bool {
	if !s.mig.enabled || len(p) != 1 || p[0].Instance == 0 {
		return false
	}
	c := v.Cluster()
	sh := p[0]
	model := c.NodeModel(sh.Node)
	profs := migProfilesOf(model)
	have := profs[c.MIGInstanceAt(sh.Node, bitIndexOf(sh.GPUs), sh.Instance-1).Profile].Slices
	want := 0
	for k := range profs {
		if migMatch(&j.Req.MIG, &profs[k]) && (want == 0 || profs[k].Slices < want) {
			want = profs[k].Slices
		}
	}
	if want == 0 || have <= want {
		return false
	}
	return s.migWaitFor(v, j, head, want)
}

func bitIndexOf(m uint64) int {
	for g := 0; g < 64; g++ {
		if m&(1<<uint(g)) != 0 {
			return g
		}
	}
	return -1
}

// choose finds the GPU to reconfigure for r and leaves its new layout in
// m.best; need is the index in it of r's instance (every index before it
// is a kept busy instance).
func (m *migPlanner) choose(c hwmodel.ClusterView, r *hwmodel.Request, convert bool) (bi, bg int, bconv bool, bneed int, ok bool) {
	type score struct {
		conv          bool
		free, dropped int
	}
	var best score
	bi, bg = -1, -1
	for i := 0; i < c.NumNodes(); i++ {
		model := c.NodeModel(i)
		profs := migProfilesOf(model)
		if profs == nil || !r.Models.Accepts(model) || !nodeFits(c, i, r.CPUMilli, r.MemoryMiB) {
			continue
		}
		compute, _ := hwmodel.MIGSlices(model)
		for g := 0; g < c.NodeGPUs(i); g++ {
			var sc score
			m.layout = m.layout[:0]
			switch {
			case c.IsMIG(i, g):
				if m.busy(c, i, g) {
					continue
				}
				busy := c.MIGBusy(i, g)
				sc.free = compute
				for k := 0; k < c.MIGInstanceCount(i, g); k++ {
					in := c.MIGInstanceAt(i, g, k)
					if busy&(1<<uint(k)) != 0 {
						m.layout = append(m.layout, in)
						sc.free -= profs[in.Profile].Slices
					} else {
						sc.dropped++
					}
				}
			case convert && c.FreeMilli(i, g) == hwmodel.MilliPerGPU:
				sc.conv, sc.free = true, compute
			default:
				continue
			}
			// Dropping no instance is the best this GPU can do; ties keep
			// the lower node and GPU.
			if bi >= 0 && !scoreLess(sc.conv, sc.free, 0, best.conv, best.free, best.dropped) {
				continue
			}
			need := len(m.layout)
			if !m.extend(model, profs, &r.MIG) {
				continue
			}
			// Free instances that the new layout repeats survive: not dropped.
			if !sc.conv {
				sc.dropped = 0
				used := c.MIGBusy(i, g)
				for k := 0; k < c.MIGInstanceCount(i, g); k++ {
					if used&(1<<uint(k)) == 0 && !slices.Contains(m.layout[need:], c.MIGInstanceAt(i, g, k)) {
						sc.dropped++
					}
				}
				if bi >= 0 && !scoreLess(sc.conv, sc.free, sc.dropped, best.conv, best.free, best.dropped) {
					continue
				}
			}
			best, bi, bg, bconv, bneed = sc, i, g, sc.conv, need
			m.best = append(m.best[:0], m.layout...)
		}
	}
	return bi, bg, bconv, bneed, bi >= 0
}

// scoreLess orders reconfiguration candidates: no conversion first, then
// fewest free compute slices, then fewest free instances dropped.
func scoreLess(conv bool, free, dropped int, bconv bool, bfree, bdropped int) bool {
	if conv != bconv {
		return !conv
	}
	if free != bfree {
		return free < bfree
	}
	return dropped < bdropped
}

// extend adds to m.layout (the kept busy instances of a GPU of model
// model) an instance of the smallest profile matching r at its lowest
// valid start, then fills the free slices as the package comment says. It
// reports false, leaving m.layout with only the kept instances, if no
// matching profile fits.
func (m *migPlanner) extend(model hwmodel.ModelID, profs []hwmodel.MIGProfile, r *hwmodel.MIGRequest) bool {
	m.order = m.order[:0]
	for k := range profs {
		if migMatch(r, &profs[k]) {
			m.order = append(m.order, k)
		}
	}
	slices.SortFunc(m.order, func(a, b int) int {
		if migSmaller(profs, a, b) {
			return -1
		}
		if migSmaller(profs, b, a) {
			return 1
		}
		return 0
	})
	kept := len(m.layout)
	want := -1
	for _, p := range m.order {
		if m.tryAdd(model, profs, p) {
			want = p
			break
		}
	}
	if want < 0 {
		m.layout = m.layout[:kept]
		return false
	}
	// Fill: the largest profile that fits, repeatedly.
	m.order = m.order[:0]
	for k := range profs {
		if !strings.HasSuffix(profs[k].Name, "+me") {
			m.order = append(m.order, k)
		}
	}
	slices.SortFunc(m.order, func(a, b int) int {
		return cmp.Or(cmp.Compare(profs[b].Slices, profs[a].Slices), cmp.Compare(profs[b].MemoryMiB, profs[a].MemoryMiB), cmp.Compare(a, b))
	})
	for added := true; added; {
		added = false
		for _, p := range m.order {
			if m.tryAdd(model, profs, p) {
				added = true
				break
			}
		}
	}
	return true
}

// tryAdd appends profile p at its lowest start that keeps m.layout valid.
func (m *migPlanner) tryAdd(model hwmodel.ModelID, profs []hwmodel.MIGProfile, p int) bool {
	for _, st := range profs[p].Starts {
		m.layout = append(m.layout, hwmodel.MIGInstance{Profile: p, Start: st})
		if hwmodel.ValidateMIGLayout(model, m.layout) == nil {
			return true
		}
		m.layout = m.layout[:len(m.layout)-1]
	}
	return false
}

// migOff handles a whole or shared GPU job j at the head of the queue that
// could not be placed, with conversion on: it turns idle MIG GPUs back into
// whole GPUs if that lets j fit (see the package comment above).
func (s *scheduler) migOff(v View, j *Job) {
	m := &s.mig
	r := &j.Req
	c := v.Cluster()
	if !m.enabled || !m.convert || r.GPUs == 0 || r.WantsMIG() || !validRequest(*r) || c.NumMIGGPUs() == 0 {
		return
	}
	idle := func(i, g int) bool {
		return c.IsMIG(i, g) && c.MIGBusy(i, g) == 0 && !m.busy(c, i, g)
	}
	if r.GPUs > c.MaxNodeGPUs(r.Models) { // a gang
		for mi := 0; mi < numModels(); mi++ {
			id := hwmodel.ModelID(mi)
			if !r.Models.Accepts(id) || c.GPUsOfModel(id) < r.GPUs {
				continue
			}
			have := c.FreeWholeGPUsAccepted(hwmodel.Of(id))
			var conv []GPURef
			for i := 0; i < c.NumNodes() && have+len(conv) < r.GPUs; i++ {
				if c.NodeModel(i) != id {
					continue
				}
				for g := 0; g < c.NodeGPUs(i) && have+len(conv) < r.GPUs; g++ {
					if idle(i, g) {
						conv = append(conv, GPURef{i, g})
					}
				}
			}
			if have+len(conv) >= r.GPUs && len(conv) > 0 {
				s.migOffAll(v, conv)
				return
			}
		}
		return
	}
	need := r.GPUs
	if r.Fractional() {
		need = 1
	}
	bi, bn := -1, 0
	for i := 0; i < c.NumNodes(); i++ {
		if !r.Models.Accepts(c.NodeModel(i)) || !nodeFits(c, i, r.CPUMilli, r.MemoryMiB) {
			continue
		}
		n := 0
		for g := 0; g < c.NodeGPUs(i); g++ {
			if idle(i, g) {
				n++
			}
		}
		conv := need - c.FreeWholeGPUs(i)
		if conv <= 0 || n < conv {
			continue // fits already (the placer refused it for another reason) or cannot
		}
		if bi < 0 || conv < bn {
			bi, bn = i, conv
		}
	}
	if bi < 0 {
		return
	}
	var conv []GPURef
	for g := 0; g < c.NodeGPUs(bi) && len(conv) < bn; g++ {
		if idle(bi, g) {
			conv = append(conv, GPURef{bi, g})
		}
	}
	s.migOffAll(v, conv)
}

// migOffAll decides to turn the given idle MIG GPUs into whole GPUs,
// reserving their instances for the rest of the call.
func (s *scheduler) migOffAll(v View, gpus []GPURef) {
	c := v.Cluster()
	for _, ref := range gpus {
		for k := 0; k < c.MIGInstanceCount(ref.Node, ref.GPU); k++ {
			_ = v.Reserve(hwmodel.Placement{c.MIGShare(ref.Node, ref.GPU, k, 0, 0)})
		}
		s.mig.planned = append(s.mig.planned, ref)
		s.out = append(s.out, Decision{Kind: Reconfigure, Job: -1, Node: ref.Node, GPU: ref.GPU})
	}
}
