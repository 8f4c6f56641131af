package fill

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"

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
//     name-sorted list (Intn), with replacement, and appended, until the
//     next draw would take the total past load × capacityMilli: that draw
//     is discarded and sampling stops.
//
// So the GPU milli requested by the returned pods never exceeds
// load × capacityMilli, and after step 3's appending it is within one
// pod's request of it. CPU-only pods (no GPU request) are drawn like any
// other and add nothing to the total. It is an error if no pod asks for a
// GPU, if capacityMilli is not positive, or if load is not in (0, MaxLoad].
func Sample(pods []workloads.OpenBPod, capacityMilli int64, load float64, seed uint64) ([]int, error) {
	if !(load > 0 && load <= MaxLoad) {
		return nil, fmt.Errorf("load must be in (0, %d], got %g", MaxLoad, load)
	}
	if capacityMilli <= 0 {
		return nil, fmt.Errorf("the cluster has no GPUs")
	}
	byName := make([]int, len(pods))
	var total int64
	for i := range byName {
		byName[i] = i
		total += pods[i].Req.TotalMilli()
	}
	if total <= 0 {
		return nil, fmt.Errorf("no pod of the %d asks for a GPU, so no number of them reaches a GPU load", len(pods))
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
			if float64(total+pods[p].Req.TotalMilli()) > target {
				break
			}
			total += pods[p].Req.TotalMilli()
			order = append(order, p)
		}
	}
	return order, nil
}
