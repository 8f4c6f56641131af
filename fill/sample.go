package fill

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/workloads"
)

// MaxLoad bounds Experiment.Load: the sampled workload grows with it, and
// the published experiment stops at 1.3.
const MaxLoad = 10

// Sample returns the arrival order of one seed's workload as indices into
// pods (an index may repeat: pods are drawn with replacement). It follows
// the FGD paper's simulator step by step, with the same generator, so that
// a seed yields the same workload as the published run (see doc.go):
//
//  1. a math/rand generator seeded with seed draws one Int (the reference
//     draws one before anything else);
//  2. the pods, sorted by name, are shuffled (rand.Shuffle): every pod of
//     the list arrives once, in that order;
//  3. if their GPU requests exceed load × capacityMilli, pods at uniformly
//     drawn positions (Intn) are removed from that order until they do
//     not; if they fall short, pods are drawn uniformly from the
//     name-sorted list (Intn), with replacement, and appended, until a
//     draw's per-GPU request (gpu_milli, not num_gpu × gpu_milli: the
//     reference's test) would take the total past load × capacityMilli:
//     that draw is discarded and sampling stops.
//
// So the GPU milli requested by the returned pods is within one pod's
// request of load × capacityMilli, and exceeds it only through the last
// multi-GPU pod, by less than that pod's request (see doc.go). CPU-only
// pods are drawn like any other and add nothing to the total. It is an
// error if no pod asks for a GPU, if capacityMilli is not positive, or if
// load is not in (0, MaxLoad].
func Sample(pods []workloads.OpenBPod, capacityMilli int64, load float64, seed uint64) ([]int, error) {
	order, _, err := sample(pods, capacityMilli, load, seed)
	return order, err
}

// sample is Sample, and also returns the generator in the state the
// reference's is in when it next draws (the node order, see tieRank).
func sample(pods []workloads.OpenBPod, capacityMilli int64, load float64, seed uint64) ([]int, *rand.Rand, error) {
	if !(load > 0 && load <= MaxLoad) {
		return nil, nil, fmt.Errorf("load must be in (0, %d], got %g", MaxLoad, load)
	}
	if capacityMilli <= 0 {
		return nil, nil, fmt.Errorf("the cluster has no GPUs")
	}
	byName := make([]int, len(pods))
	var total int64
	for i := range byName {
		byName[i] = i
		total += pods[i].Req.TotalMilli()
	}
	if total <= 0 {
		return nil, nil, fmt.Errorf("no pod of the %d asks for a GPU, so no number of them reaches a GPU load", len(pods))
	}
	slices.SortStableFunc(byName, func(a, b int) int { return cmp.Compare(pods[a].Name, pods[b].Name) })

	r := rand.New(rand.NewSource(int64(seed)))
	r.Int()
	order := slices.Clone(byName)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	target := load * float64(capacityMilli)
	switch {
	case float64(total) > target:
		for float64(total) > target {
			k := r.Intn(len(order))
			total -= pods[order[k]].Req.TotalMilli()
			order = slices.Delete(order, k, k+1)
		}
	case float64(total) < target:
		for {
			p := byName[r.Intn(len(byName))]
			if float64(total+int64(pods[p].Req.GPUMilli)) > target {
				break
			}
			total += pods[p].Req.TotalMilli()
			order = append(order, p)
		}
	}
	return order, r, nil
}

// informerDraws is how many numbers the reference's generator gives out
// between the workload sampling and the node order: its Kubernetes
// informers, started in between, draw from the same global source (a
// random watch timeout each). Ten reproduces the published runs, on every
// shipped pod list and seed.
const informerDraws = 10

// tieRank is the reference's node order for breaking score ties, drawn
// from r after sampling as the reference draws it: after informerDraws
// draws, it sorts the nodes by name, draws rand.Perm of their number, and
// renames the node at sorted position i with the prefix perm[i]; among
// equally scored nodes the smallest name wins. So node n's rank is
// perm[its sorted position].
func tieRank(c *hwmodel.Cluster, r *rand.Rand) []int {
	for range informerDraws {
		r.Int63()
	}
	byName := make([]int, c.NumNodes())
	for i := range byName {
		byName[i] = i
	}
	slices.SortStableFunc(byName, func(a, b int) int { return cmp.Compare(c.Node(a).Name, c.Node(b).Name) })
	perm := r.Perm(len(byName))
	rank := make([]int, len(byName))
	for pos, n := range byName {
		rank[n] = perm[pos]
	}
	return rank
}
