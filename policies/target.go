package policies

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// PodClass is one kind of request in a target workload, with the share of
// the workload's requests it makes up.
type PodClass struct {
	// Req is the class's shape. Only GPUs, GPUMilli (per GPU), CPUMilli and
	// Models matter to fragmentation; TargetFromRequests leaves MemoryMiB 0.
	Req        hwmodel.Request
	Popularity float64 // fraction of the workload's requests; classes sum to 1
}

// TargetWorkload is the distribution of requests a cluster expects to
// receive. Fragmentation is measured against it: idle GPU capacity that no
// request of the target workload could use is fragmented.
type TargetWorkload struct {
	Classes []PodClass // in a deterministic order (see TargetFromRequests)
}

// DefaultTargetCoverage is the share of requests that the FGD paper's
// "typical pods" cover: the most popular classes are kept until they make
// up at least 95% of the requests.
const DefaultTargetCoverage = 0.95

// defaultCPURequest is what the Kubernetes scheduler assumes a container
// asks for when it asks for no CPU (its "non-zero" request, 100 milli-CPU).
// The FGD paper's simulator builds its typical pods from these values.
const defaultCPURequest = 100

// TargetFromRequests is the FGD paper's target workload ("typical pods")
// built from the requests of a trace, with DefaultTargetCoverage; see
// TargetFromRequestsCoverage. Pass the trace's own pod list: the paper
// builds its target from the original pods, not from a resampled workload.
func TargetFromRequests(reqs []hwmodel.Request) TargetWorkload {
	return TargetFromRequestsCoverage(reqs, DefaultTargetCoverage)
}

// TargetFromRequestsCoverage builds a target workload as the FGD paper's
// simulator does:
//
//   - A class is a distinct (CPUMilli, GPUMilli per GPU, GPUs, Models);
//     memory is not part of it. A request for no CPU counts as 100 milli-CPU
//     (the Kubernetes default request). A CPU-only request's models are
//     ignored. CPU-only requests are classes too.
//   - Classes are sorted by falling count; equal counts by falling CPUMilli,
//     then GPUMilli, then GPUs, then Models.
//   - The most popular classes are kept, one at a time, until their count
//     reaches coverage × len(reqs); coverage >= 1 keeps all.
//   - A kept class's Popularity is its count over len(reqs), divided by the
//     kept classes' share of len(reqs), so the kept popularities sum to 1.
//
// MIG requests are left out (they use MIG instances, never whole or shared
// GPU capacity) and do not count in the popularities.
//
// The result depends only on the multiset of requests. The reference keys
// classes by the text of the model constraint rather than by the set of
// models; TargetFromRequestSpecs does that when the text is at hand.
func TargetFromRequestsCoverage(reqs []hwmodel.Request, coverage float64) TargetWorkload {
	return TargetFromRequestSpecs(reqs, nil, coverage)
}

// TargetFromRequestSpecs is TargetFromRequestsCoverage for requests that
// come with the text of their GPU model constraint (specs[i] for reqs[i],
// e.g. a trace's gpu_spec with empty parts dropped; nil means none), as
// the reference simulator keys its classes by that text: "V100M16|V100M32"
// and "V100M16|V100M32|V100M32" are two classes, which matters at the
// coverage cut, and equal counts are ordered by falling text instead of
// by Models. A CPU-only request's text is ignored.
func TargetFromRequestSpecs(reqs []hwmodel.Request, specs []string, coverage float64) TargetWorkload {
	if len(reqs) == 0 {
		return TargetWorkload{}
	}
	type key struct {
		r    hwmodel.Request
		spec string
	}
	counts := make(map[key]int, 128)
	total := 0
	for i, r := range reqs {
		if r.WantsMIG() {
			continue // MIG instances are not whole or shared GPU capacity
		}
		total++
		k := key{r: classKey(r)}
		if i < len(specs) && r.GPUs > 0 {
			k.spec = specs[i]
		}
		counts[k]++
	}
	type kv struct {
		k key
		n int
	}
	all := make([]kv, 0, len(counts))
	for k, n := range counts {
		all = append(all, kv{k, n})
	}
	slices.SortFunc(all, func(a, b kv) int {
		return cmp.Or(
			cmp.Compare(b.n, a.n),
			cmp.Compare(b.k.r.CPUMilli, a.k.r.CPUMilli),
			cmp.Compare(b.k.r.GPUMilli, a.k.r.GPUMilli),
			cmp.Compare(b.k.r.GPUs, a.k.r.GPUs),
			cmp.Compare(b.k.spec, a.k.spec),
			cmp.Compare(b.k.r.Models, a.k.r.Models),
		)
	})
	if total == 0 {
		return TargetWorkload{}
	}
	want := coverage * float64(total)
	kept, cum := 0, 0.0
	for kept < len(all) && (coverage >= 1 || cum < want) {
		cum += float64(all[kept].n)
		kept++
	}
	t := TargetWorkload{Classes: make([]PodClass, kept)}
	for i := range kept {
		p := float64(all[i].n) / float64(total)
		if kept < len(all) {
			p /= cum / float64(total)
		}
		t.Classes[i] = PodClass{Req: all[i].k.r, Popularity: p}
	}
	return t
}

// classKey is a request's typical-pod class.
func classKey(r hwmodel.Request) hwmodel.Request {
	k := hwmodel.Request{GPUs: r.GPUs, GPUMilli: r.GPUMilli, CPUMilli: r.CPUMilli, Models: r.Models}
	if k.CPUMilli == 0 {
		k.CPUMilli = defaultCPURequest
	}
	if k.GPUs == 0 {
		k.Models = hwmodel.AnyModel
	}
	return k
}

// PlacerConfig carries what some placements need beyond the cluster and
// the request.
type PlacerConfig struct {
	// Seed feeds placements that draw random numbers ("random"); each
	// placer derives its own stream from it.
	Seed uint64
	// Target is the expected workload, for fragmentation-aware placement
	// ("fgd"), which refuses an empty one.
	Target TargetWorkload
	// TieRank, when it has one entry per node of the cluster placed on,
	// orders the nodes for breaking score ties: the node with the lowest
	// TieRank wins. Otherwise the scored placements draw a random order
	// from Seed (see scored.go). A driver that replays the FGD paper's
	// simulator passes that simulator's node order here.
	TieRank []int
}
