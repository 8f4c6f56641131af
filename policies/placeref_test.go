package policies

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// refPlacer is the linear placement every placer had before the node
// indexes: one pass over all nodes per request, scoring each feasible one.
// It is kept, copied whole, as the reference the indexed placers must
// decide exactly like (TestIndexedPlacementsMatchReference). Do not
// "improve" it: its value is that it is the old code.
type refPlacer struct {
	kind     string // a PlacementNames entry
	seed     uint64
	given    []int
	s        refScratch
	rng      *rand.Rand // random
	fm       fragModel  // fgd
	rankOf   hwmodel.ClusterView
	rank     []int32
	feasList []int32
	cands    []int8
}

func newRefPlacer(kind string, cfg PlacerConfig) *refPlacer {
	p := &refPlacer{kind: kind, seed: cfg.Seed, given: cfg.TieRank}
	if kind == "random" {
		p.rng = rand.New(rand.NewPCG(cfg.Seed, 0x72616e646f6d))
	}
	if kind == "fgd" {
		p.fm = compileTarget(cfg.Target)
	}
	return p
}

func (p *refPlacer) ties(c hwmodel.ClusterView) []int32 {
	if p.rankOf == c && len(p.rank) == c.NumNodes() {
		return p.rank
	}
	p.rankOf = c
	p.rank = p.rank[:0]
	if len(p.given) == c.NumNodes() {
		for _, v := range p.given {
			p.rank = append(p.rank, int32(v))
		}
		return p.rank
	}
	rng := rand.New(rand.NewPCG(p.seed, 0x74696573))
	for _, v := range rng.Perm(c.NumNodes()) {
		p.rank = append(p.rank, int32(v))
	}
	return p.rank
}

func (p *refPlacer) Place(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if p.kind == "firstfit" {
		return p.s.place(dst, c, r)
	}
	if !validRequest(r) {
		return dst, false
	}
	if r.WantsMIG() {
		return placeMIG(dst, c, r)
	}
	if r.GPUs > 0 {
		maxNode := c.MaxNodeGPUs(r.Models)
		switch {
		case maxNode == 0:
			return dst, false
		case r.GPUs > maxNode:
			return p.s.placeGang(dst, c, r, true)
		case r.Fractional():
			if int64(c.TotalGPUs())*hwmodel.MilliPerGPU-c.AllocatedMilli() < int64(r.GPUMilli) {
				return dst, false
			}
		case !c.HasNodeWithIdleGPUs(r.Models, r.GPUs):
			return dst, false
		}
	}
	pick, gpu := -1, -1
	if p.kind == "random" {
		p.feasList = p.feasList[:0]
		for i := 0; i < c.NumNodes(); i++ {
			if refFeasible(c, i, &r) {
				p.feasList = append(p.feasList, int32(i))
			}
		}
		if len(p.feasList) > 0 {
			pick = int(p.feasList[p.rng.IntN(len(p.feasList))])
		}
	} else {
		rank := p.ties(c)
		best := int64(math.MinInt64)
		for i := 0; i < c.NumNodes(); i++ {
			if !refFeasible(c, i, &r) {
				continue
			}
			s, g := p.score(c, i, &r)
			if s > best || (s == best && rank[i] < rank[pick]) {
				pick, gpu, best = i, g, s
			}
		}
	}
	if pick < 0 {
		return dst, false
	}
	sh := hwmodel.Share{Node: pick, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}
	switch {
	case r.GPUs == 0:
	case r.Fractional():
		if gpu < 0 {
			gpu = p.shareGPU(c, pick, r.GPUMilli)
		}
		sh.GPUs, sh.Milli = 1<<uint(gpu), r.GPUMilli
	default:
		sh.GPUs, sh.Milli = refIdleMask(c, pick, r.GPUs), hwmodel.MilliPerGPU
	}
	return append(dst, sh), true
}

func refFeasible(c hwmodel.ClusterView, i int, r *hwmodel.Request) bool {
	if r.GPUs > 0 {
		idle := c.FreeWholeGPUs(i)
		switch {
		case !r.Fractional():
			if idle < r.GPUs {
				return false
			}
		case idle == 0:
			if c.NodeFreeMilli(i) < int64(r.GPUMilli) || refTightestGPU(c, i, r.GPUMilli) < 0 {
				return false
			}
		}
		if r.Models != hwmodel.AnyModel && !r.Models.Accepts(c.NodeModel(i)) {
			return false
		}
	}
	return c.FreeCPU(i) >= r.CPUMilli && c.FreeMemory(i) >= r.MemoryMiB
}

func refTightestGPU(c hwmodel.ClusterView, i int, milli int32) int {
	pick, left := -1, int32(math.MaxInt32)
	for g := 0; g < c.NodeGPUs(i); g++ {
		if f := c.FreeMilli(i, g); f >= milli && f < left {
			pick, left = g, f
		}
	}
	return pick
}

func (p *refPlacer) shareGPU(c hwmodel.ClusterView, i int, milli int32) int {
	if p.kind != "random" {
		return refTightestGPU(c, i, milli)
	}
	p.cands = p.cands[:0]
	for g := 0; g < c.NodeGPUs(i); g++ {
		if c.FreeMilli(i, g) >= milli {
			p.cands = append(p.cands, int8(g))
		}
	}
	return int(p.cands[p.rng.IntN(len(p.cands))])
}

func (p *refPlacer) score(c hwmodel.ClusterView, i int, r *hwmodel.Request) (int64, int) {
	switch p.kind {
	case "bestfit", "consolidate": // consolidate differs only in gangs across racks, which consolidate_test.go covers
		s := (float64(c.FreeCPU(i))-float64(r.CPUMilli))/maxSpecCPU*0.5 +
			(float64(c.NodeFreeMilli(i))-float64(r.TotalMilli()))/maxSpecGPU*0.5
		return int64((1.0 - s) * maxScore), -1
	case "dotprod":
		dot := float64(c.FreeCPU(i))/maxSpecCPU*(float64(r.CPUMilli)/maxSpecCPU) +
			float64(c.NodeFreeMilli(i))/maxSpecGPU*(float64(r.TotalMilli())/maxSpecGPU)
		return int64(maxScore * (1 - dot/2)), -1
	case "packing":
		return refPackingScore(c, i, r), -1
	case "clustering":
		return refClusteringScore(c, i, r), -1
	case "fgd":
		return p.fgdCompute(c, i, r)
	}
	panic("refPlacer: unknown kind " + p.kind)
}

func refPackingScore(c hwmodel.ClusterView, i int, r *hwmodel.Request) int64 {
	if r.GPUs == 0 {
		return 0
	}
	idle := c.FreeWholeGPUs(i)
	if idle == c.NodeGPUs(i) {
		return max(maxScore/3-int64(idle), int64(idle))
	}
	if !r.Fractional() {
		return max(maxScore/2-int64(r.GPUs), maxScore/3)
	}
	g := refTightestGPU(c, i, r.GPUMilli)
	f := c.FreeMilli(i, g)
	if f == hwmodel.MilliPerGPU {
		return max(maxScore/2-1, maxScore/3)
	}
	return max(maxScore-int64(f)*100/hwmodel.MilliPerGPU/10, maxScore/2)
}

func refClusteringScore(c hwmodel.ClusterView, i int, r *hwmodel.Request) int64 {
	if r.GPUs == 0 {
		return 0
	}
	base := maxScore / 4 * (maxSpecGPU - c.NodeFreeMilli(i)) / maxSpecGPU
	kind := r.GPUs
	if r.Fractional() {
		kind = 0
	}
	kinds := c.ShareKinds(i)
	switch {
	case c.SharesOfKind(i, kind) > 0 && kinds == 1:
		return base + maxScore*3/4
	case c.SharesOfKind(i, kind) > 0:
		return base + maxScore*2/4
	case kinds == 0:
		return base + maxScore/4
	}
	return base
}

// fgdCompute is the FGD score without any cache: fragmentation before
// (NodeFragmentation's sums, through the compiled target) and after.
func (p *refPlacer) fgdCompute(c hwmodel.ClusterView, i int, r *hwmodel.Request) (int64, int) {
	m := &p.fm
	model := c.NodeModel(i)
	var buf [hwmodel.MaxGPUsPerNode]int32
	free := buf[:c.NodeGPUs(i)]
	for g := range free {
		free[g] = c.FreeMilli(i, g)
	}
	before := m.eval(free, c.FreeCPU(i), model)
	cpu := c.FreeCPU(i) - r.CPUMilli
	switch {
	case r.GPUs == 0:
		return fgdScore(before - m.eval(free, cpu, model)), -1
	case !r.Fractional():
		for g, k := 0, r.GPUs; g < len(free) && k > 0; g++ {
			if free[g] == hwmodel.MilliPerGPU {
				free[g] = 0
				k--
			}
		}
		return fgdScore(before - m.eval(free, cpu, model)), -1
	}
	best, bestG := int64(-1), -1
	for g, v := range free {
		if v < r.GPUMilli {
			continue
		}
		free[g] = v - r.GPUMilli
		s := fgdScore(before - m.eval(free, cpu, model))
		free[g] = v
		if s > best {
			best, bestG = s, g
		}
	}
	return best, bestG
}

// The first-fit half of the reference: placement.go as it was.

type refGangNode struct {
	node int32
	idle int32
	take int32
}

type refScratch struct {
	cand  []refGangNode
	order []refGangNode
	cur   []refGangNode
	best  []refGangNode
}

func (s *refScratch) place(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request) (hwmodel.Placement, bool) {
	if !validRequest(r) {
		return dst, false
	}
	switch {
	case r.WantsMIG():
		return placeMIG(dst, c, r)
	case r.GPUs == 0:
		for i := 0; i < c.NumNodes(); i++ {
			if c.FreeCPU(i) >= r.CPUMilli && c.FreeMemory(i) >= r.MemoryMiB {
				return append(dst, hwmodel.Share{Node: i, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}), true
			}
		}
		return dst, false
	case r.Fractional():
		need := r.GPUMilli
		if int64(c.TotalGPUs())*hwmodel.MilliPerGPU-c.AllocatedMilli() < int64(need) {
			return dst, false
		}
		for i := 0; i < c.NumNodes(); i++ {
			gpus := c.NodeGPUs(i)
			if gpus == 0 || !r.Models.Accepts(c.NodeModel(i)) || c.FreeCPU(i) < r.CPUMilli || c.FreeMemory(i) < r.MemoryMiB {
				continue
			}
			for g := 0; g < gpus; g++ {
				if c.FreeMilli(i, g) >= need {
					return append(dst, hwmodel.Share{Node: i, GPUs: 1 << uint(g), Milli: need, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}), true
				}
			}
		}
		return dst, false
	}
	maxNode := c.MaxNodeGPUs(r.Models)
	if maxNode == 0 {
		return dst, false
	}
	if r.GPUs > maxNode {
		return s.placeGang(dst, c, r, false)
	}
	if !c.HasNodeWithIdleGPUs(r.Models, r.GPUs) {
		return dst, false
	}
	for i := 0; i < c.NumNodes(); i++ {
		if c.FreeWholeGPUs(i) < r.GPUs || !r.Models.Accepts(c.NodeModel(i)) || c.FreeCPU(i) < r.CPUMilli || c.FreeMemory(i) < r.MemoryMiB {
			continue
		}
		return append(dst, hwmodel.Share{Node: i, GPUs: refIdleMask(c, i, r.GPUs), Milli: hwmodel.MilliPerGPU, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}), true
	}
	return dst, false
}

func refIdleMask(c hwmodel.ClusterView, i, k int) uint64 {
	var m uint64
	n := c.NodeGPUs(i)
	for g := 0; g < n && k > 0; g++ {
		if c.FreeMilli(i, g) == hwmodel.MilliPerGPU {
			m |= 1 << uint(g)
			k--
		}
	}
	return m
}

func (s *refScratch) placeGang(dst hwmodel.Placement, c hwmodel.ClusterView, r hwmodel.Request, best bool) (hwmodel.Placement, bool) {
	g := r.GPUs
	found := false
	var bCount, bWaste, bFirst int
	for m := 0; m < numModels(); m++ {
		id := hwmodel.ModelID(m)
		if !r.Models.Accepts(id) || c.GPUsOfModel(id) < g || c.FreeWholeGPUsAccepted(hwmodel.Of(id)) < g {
			continue
		}
		s.collect(c, id)
		waste, first, ok := s.selectGang(c, r, best)
		if !ok {
			continue
		}
		count := len(s.cur)
		better := !found || count < bCount
		if found && count == bCount {
			if best && waste != bWaste {
				better = waste < bWaste
			} else {
				better = first < bFirst
			}
		}
		if better {
			found, bCount, bWaste, bFirst = true, count, waste, first
			s.cur, s.best = s.best, s.cur
		}
	}
	if !found {
		return dst, false
	}
	var cpu, mem int64
	base := len(dst)
	for _, n := range s.best {
		sh := hwmodel.Share{
			Node: int(n.node), GPUs: refIdleMask(c, int(n.node), int(n.take)), Milli: hwmodel.MilliPerGPU,
			CPUMilli: r.CPUMilli * int64(n.take) / int64(g), MemoryMiB: r.MemoryMiB * int64(n.take) / int64(g),
		}
		cpu += sh.CPUMilli
		mem += sh.MemoryMiB
		dst = append(dst, sh)
	}
	dst[base].CPUMilli += r.CPUMilli - cpu
	dst[base].MemoryMiB += r.MemoryMiB - mem
	return dst, true
}

func (s *refScratch) collect(c hwmodel.ClusterView, id hwmodel.ModelID) {
	s.cand = s.cand[:0]
	var cnt [hwmodel.MaxGPUsPerNode + 2]int
	for i := 0; i < c.NumNodes(); i++ {
		if f := c.FreeWholeGPUs(i); f > 0 && c.NodeModel(i) == id {
			s.cand = append(s.cand, refGangNode{node: int32(i), idle: int32(f)})
			cnt[f]++
		}
	}
	pos := 0
	for k := hwmodel.MaxGPUsPerNode; k >= 1; k-- {
		n := cnt[k]
		cnt[k] = pos
		pos += n
	}
	s.order = slices.Grow(s.order[:0], len(s.cand))[:len(s.cand)]
	for _, n := range s.cand {
		s.order[cnt[n.idle]] = n
		cnt[n.idle]++
	}
}

func (s *refScratch) selectGang(c hwmodel.ClusterView, r hwmodel.Request, best bool) (waste, first int, ok bool) {
	g := int64(r.GPUs)
	fits := func(n refGangNode, t int32) bool {
		i := int(n.node)
		return c.FreeCPU(i) >= r.CPUMilli*int64(t)/g && c.FreeMemory(i) >= r.MemoryMiB*int64(t)/g
	}
	s.cur = s.cur[:0]
	rem := int32(r.GPUs)
	for k := 0; k < len(s.order) && rem > 0; k++ {
		n := s.order[k]
		if best && n.idle >= rem {
			pick, q := -1, k
			for ; q < len(s.order) && s.order[q].idle >= rem; q++ {
				if (pick < 0 || s.order[q].idle < s.order[pick].idle) && fits(s.order[q], rem) {
					pick = q
				}
			}
			if pick >= 0 {
				p := s.order[pick]
				p.take = rem
				s.cur = append(s.cur, p)
				rem = 0
				break
			}
			k = q - 1
			continue
		}
		t := min(n.idle, rem)
		if !fits(n, t) {
			continue
		}
		n.take = t
		s.cur = append(s.cur, n)
		rem -= t
	}
	if rem > 0 || len(s.cur) == 0 {
		return 0, 0, false
	}
	var cpu, mem int64
	first = math.MaxInt
	for _, n := range s.cur {
		cpu += r.CPUMilli * int64(n.take) / g
		mem += r.MemoryMiB * int64(n.take) / g
		waste += int(n.idle - n.take)
		first = min(first, int(n.node))
	}
	h := s.cur[0]
	if c.FreeCPU(int(h.node)) < r.CPUMilli*int64(h.take)/g+r.CPUMilli-cpu || c.FreeMemory(int(h.node)) < r.MemoryMiB*int64(h.take)/g+r.MemoryMiB-mem {
		return 0, 0, false
	}
	return waste, first, true
}
