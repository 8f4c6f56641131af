package fill

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
	"github.com/brigadesim/brigade/workloads"
)

// Experiment is one trace's fill experiment: every (policy, seed) pair
// fills its own copy of the cluster.
type Experiment struct {
	// Trace names the pod list in results, e.g. "openb_pod_list_default"
	// (the published CSV's workload column).
	Trace string
	// Cluster is the node list; it is built afresh for every run.
	Cluster *hwmodel.ClusterSpec
	// Pods is the pod list the workload is drawn from (and the target
	// workload built from).
	Pods []workloads.OpenBPod
	// Policies are placement names, as policies.NewPlacerWith knows them
	// (fgd, bestfit, dotprod, packing, clustering, random, firstfit, ...).
	Policies []string
	// Seeds are the workload seeds; each run's placer gets its seed too.
	Seeds []uint64
	// Load is the arrived GPU request the workload reaches, as a multiple
	// of the cluster's GPU capacity (1.3 in the paper).
	Load float64
	// Workers is how many runs go at once; 0 means GOMAXPROCS. Results do
	// not depend on it.
	Workers int
	// Progress, when not nil, is called after each run (policy and seed)
	// ends with how many have ended; calls come one at a time, from the
	// workers' goroutines. It cannot change any result.
	Progress func(done, total int)
}

// Results is an experiment's outcome: one Curve per (policy, seed), in
// policy order, then seed order, whatever the number of workers.
type Results struct {
	Trace     string
	Cluster   string // the cluster spec's name
	Nodes     int
	TotalGPUs int
	Load      float64
	Policies  []string
	Seeds     []uint64
	Curves    []Curve
}

// Curve is one (policy, seed) run.
type Curve struct {
	Policy string
	Seed   uint64
	// Pods is how many pods arrived; Placed how many of them found room
	// (the others failed and stay failed).
	Pods, Placed int
	// ArrivedMilli and AllocatedMilli are the GPU milli requested by all
	// arrived pods and allocated at the end.
	ArrivedMilli, AllocatedMilli int64
	// Points has one entry per whole arrived percent, 0..MaxPct().
	Points []Point
}

// Point is a curve at one whole percent of arrived load (see doc.go for
// how the per-pod records become these values).
type Point struct {
	ArrivedPct  int
	GPUAllocPct float64 // % of the cluster's GPU milli allocated
	FragPct     float64 // % of the idle GPU milli fragmented for the target workload
}

// MaxPct is the last whole percent a curve of this load reports:
// floor(100 × load).
func MaxPct(load float64) int { return int(math.Floor(100*load + 1e-9)) }

// Run runs the experiment. Policy names are checked before any run starts;
// an unknown one is an error that lists the known ones.
func Run(e Experiment) (*Results, error) {
	prep, err := prepare(e)
	if err != nil {
		return nil, err
	}
	res := &Results{
		Trace: e.Trace, Cluster: e.Cluster.Name, Nodes: prep.proto.NumNodes(), TotalGPUs: prep.proto.TotalGPUs(),
		Load: e.Load, Policies: slices.Clone(e.Policies), Seeds: slices.Clone(e.Seeds),
		Curves: make([]Curve, len(e.Policies)*len(e.Seeds)),
	}
	errs := make([]error, len(res.Curves))
	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var progressMu sync.Mutex
	finished := 0
	for range min(workers, len(res.Curves)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := prep.run(j/len(e.Seeds), j%len(e.Seeds))
				res.Curves[j], errs[j] = r.do()
				if e.Progress != nil {
					progressMu.Lock()
					finished++
					e.Progress(finished, len(res.Curves))
					progressMu.Unlock()
				}
			}
		}()
	}
	for j := range res.Curves {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	for j, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("policy %s, seed %d: %w", e.Policies[j/len(e.Seeds)], e.Seeds[j%len(e.Seeds)], err)
		}
	}
	return res, nil
}

// prepared is what every run of an experiment shares, read-only: the
// target workload, each seed's arrival order, and the empty cluster's
// per-node fragmentation.
type prepared struct {
	e         Experiment
	proto     *hwmodel.Cluster
	target    policies.TargetWorkload
	orders    [][]int // per seed
	ties      [][]int // per seed: the reference's node order (PlacerConfig.TieRank)
	emptyFrag []float64
}

func prepare(e Experiment) (*prepared, error) {
	if len(e.Policies) == 0 || len(e.Seeds) == 0 {
		return nil, fmt.Errorf("want at least one policy and one seed")
	}
	if len(e.Pods) == 0 {
		return nil, fmt.Errorf("the pod list is empty")
	}
	if e.Cluster == nil {
		return nil, fmt.Errorf("no cluster")
	}
	proto, err := e.Cluster.Build()
	if err != nil {
		return nil, err
	}
	reqs := make([]hwmodel.Request, len(e.Pods))
	specs := make([]string, len(e.Pods))
	for i, p := range e.Pods {
		reqs[i], specs[i] = p.Req, p.GPUSpec
	}
	p := &prepared{e: e, proto: proto, target: policies.TargetFromRequestSpecs(reqs, specs, policies.DefaultTargetCoverage)}
	for _, name := range e.Policies {
		if _, err := policies.NewPlacerWith(name, policies.PlacerConfig{Seed: e.Seeds[0], Target: p.target}); err != nil {
			return nil, err
		}
	}
	capacity := int64(proto.TotalGPUs()) * hwmodel.MilliPerGPU
	p.orders = make([][]int, len(e.Seeds))
	p.ties = make([][]int, len(e.Seeds))
	for k, seed := range e.Seeds {
		order, r, err := sample(e.Pods, capacity, e.Load, seed)
		if err != nil {
			return nil, err
		}
		p.orders[k], p.ties[k] = order, tieRank(proto, r)
	}
	p.emptyFrag = make([]float64, proto.NumNodes())
	for i := range p.emptyFrag {
		p.emptyFrag[i] = policies.NodeFragmentation(proto.View(), i, p.target)
	}
	return p, nil
}

// run is policy number pi's fill with seed number si.
func (p *prepared) run(pi, si int) run {
	return run{
		policy: p.e.Policies[pi], seed: p.e.Seeds[si], spec: p.e.Cluster, pods: p.e.Pods,
		order: p.orders[si], ties: p.ties[si], target: p.target, emptyFrag: p.emptyFrag, load: p.e.Load,
	}
}

// run is one (policy, seed) fill.
type run struct {
	policy    string
	seed      uint64
	spec      *hwmodel.ClusterSpec
	pods      []workloads.OpenBPod
	order     []int
	ties      []int // nil: the placer's own tie order
	target    policies.TargetWorkload
	emptyFrag []float64
	load      float64
}

func (r *run) do() (Curve, error) {
	c, err := r.spec.Build()
	if err != nil {
		return Curve{}, err
	}
	placer, err := policies.NewPlacerWith(r.policy, policies.PlacerConfig{Seed: r.seed, Target: r.target, TieRank: r.ties})
	if err != nil {
		return Curve{}, err
	}
	nodeFrag := slices.Clone(r.emptyFrag)
	totalGPUs := float64(c.TotalGPUs())
	capacity := int64(c.TotalGPUs()) * hwmodel.MilliPerGPU
	fragRatio := func() float64 {
		idle := capacity - c.AllocatedMilli()
		if idle <= 0 {
			return 0
		}
		var sum float64
		for _, f := range nodeFrag {
			sum += f
		}
		return round2(100 * sum / float64(idle))
	}
	emptyFragPct := fragRatio()

	maxPct := MaxPct(r.load)
	// The records, in arrival order; k_i never decreases, so the records of
	// one percent are contiguous: first[k] is the first of percent k, and
	// first[k+1] the end of them.
	allocs := make([]float64, 0, len(r.order))
	frags := make([]float64, 0, len(r.order))
	first := make([]int, maxPct+3)
	next := 0 // the percent whose first record is still to come
	cur := Curve{Policy: r.policy, Seed: r.seed, Pods: len(r.order)}
	var buf hwmodel.Placement
	view := c.View()
	for _, idx := range r.order {
		req := r.pods[idx].Req
		cur.ArrivedMilli += req.TotalMilli()
		var ok bool
		if buf, ok = placer.Place(buf[:0], view, req); ok {
			if err := c.Allocate(buf); err != nil {
				return Curve{}, fmt.Errorf("placer %s chose a placement that does not fit, for pod %s: %w", r.policy, r.pods[idx].Name, err)
			}
			for _, sh := range buf {
				nodeFrag[sh.Node] = policies.NodeFragmentation(view, sh.Node, r.target)
			}
			cur.Placed++
		}
		// One record per arrival, as the reference logs one per pod.
		k := int(math.RoundToEven(float64(cur.ArrivedMilli) / totalGPUs / 10))
		if k > maxPct+1 {
			continue // past the last percent reported and its neighbour
		}
		for ; next <= k; next++ {
			first[next] = len(allocs)
		}
		allocs = append(allocs, round2(float64(c.AllocatedMilli())/totalGPUs/10))
		frags = append(frags, fragRatio())
	}
	for ; next < len(first); next++ {
		first[next] = len(allocs)
	}
	cur.AllocatedMilli = c.AllocatedMilli()
	cur.Points = make([]Point, maxPct+1)
	for k := range cur.Points {
		p := Point{ArrivedPct: k, FragPct: emptyFragPct}
		lo, hi := first[k], first[k+1]
		if lo == hi { // no record at k: those at k-1 and k+1, adjacent
			lo, hi = first[max(k-1, 0)], first[k+2]
		}
		if lo == hi {
			// Not one within a percent of k either: the cluster is as the
			// last arrival before k left it (or empty).
			if lo > 0 {
				p.GPUAllocPct, p.FragPct = allocs[lo-1], frags[lo-1]
			}
		} else {
			p.GPUAllocPct = roundAsNumPy(meanAsNumPy(allocs[lo:hi]))
			p.FragPct = roundAsNumPy(meanAsNumPy(frags[lo:hi]))
		}
		cur.Points[k] = p
	}
	return cur, nil
}

// meanAsNumPy is the mean of xs (not empty) as pandas computes it
// (Series.mean: NumPy's add.reduce, the pairwise sum of the values from
// the identity 0, then a division), so that means within a rounding error
// of a two-decimal tie round as the reference's do.
func meanAsNumPy(xs []float64) float64 {
	return (0 + pairwiseSum(xs)) / float64(len(xs))
}

// roundAsNumPy rounds to two decimals as Python's round() does on the
// NumPy float64 that pandas' mean returns (numpy.around): x × 100, rounded
// to the nearest integer, ties to even, then ÷ 100. Unlike round2 it sees
// x × 100 after that product's own rounding, so 69.045000000000002 becomes
// 69.04 (6904.5 exactly, to even), where round2 gives 69.05.
func roundAsNumPy(x float64) float64 { return math.RoundToEven(x*100) / 100 }

// pairwiseSum is NumPy's pairwise summation of float64 (pairwise_sum in
// numpy/core/src/umath/loops_utils.h): below 8 values a plain loop; up to
// 128, eight interleaved partial sums combined as
// ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the remainder; above, the two
// halves (the first a multiple of 8 long) summed apart.
func pairwiseSum(xs []float64) float64 {
	n := len(xs)
	switch {
	case n < 8:
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], xs[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += xs[i+j]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += xs[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(xs[:n2]) + pairwiseSum(xs[n2:])
}

// round2 rounds x to two decimals as Python's round(x, 2) does (the
// reference's analysis): the nearest two-decimal value to x's exact
// binary value, exact ties to even.
func round2(x float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	if err != nil {
		return x
	}
	return v
}
