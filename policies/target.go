package policies

import (
	"cmp"
	"slices"

	"github.com/brigadesim/brigade/hwmodel"
)

// PodClass is one kind of request in a target workload, with the share of
// the workload's requests it makes up.
type PodClass struct {
	Req        hwmodel.Request
	Popularity float64 // fraction of the workload's requests; classes sum to 1
}

// TargetWorkload is the distribution of requests a cluster expects to
// receive. Fragmentation is measured against it: idle GPU capacity that no
// request of the target workload could use is fragmented.
type TargetWorkload struct {
	Classes []PodClass // in a deterministic order (see TargetFromRequests)
}

// TargetFromRequests is the empirical distribution of reqs: one class per
// distinct request, its popularity the fraction of reqs equal to it. Classes
// are ordered by falling popularity, then by the request's fields, so the
// result never depends on the order of reqs beyond their counts.
func TargetFromRequests(reqs []hwmodel.Request) TargetWorkload {
	counts := make(map[hwmodel.Request]int, 64)
	for _, r := range reqs {
		counts[r]++
	}
	t := TargetWorkload{Classes: make([]PodClass, 0, len(counts))}
	for r, n := range counts {
		t.Classes = append(t.Classes, PodClass{Req: r, Popularity: float64(n) / float64(len(reqs))})
	}
	slices.SortFunc(t.Classes, func(a, b PodClass) int {
		return cmp.Or(
			cmp.Compare(b.Popularity, a.Popularity),
			cmp.Compare(a.Req.GPUs, b.Req.GPUs),
			cmp.Compare(a.Req.GPUMilli, b.Req.GPUMilli),
			cmp.Compare(a.Req.CPUMilli, b.Req.CPUMilli),
			cmp.Compare(a.Req.MemoryMiB, b.Req.MemoryMiB),
			cmp.Compare(a.Req.Models, b.Req.Models),
		)
	})
	return t
}

// PlacerConfig carries what some placements need beyond the cluster and
// the request.
type PlacerConfig struct {
	// Seed feeds placements that draw random numbers ("random"); each
	// placer derives its own stream from it.
	Seed uint64
	// Target is the expected workload, for fragmentation-aware placement.
	Target TargetWorkload
}

// NewPlacerWith returns a fresh Placer by name, configured by cfg.
func NewPlacerWith(name string, cfg PlacerConfig) (Placer, error) {
	_ = cfg // firstfit and bestfit need nothing from it
	return NewPlacer(name)
}
