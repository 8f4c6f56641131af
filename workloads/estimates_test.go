package workloads

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// FillEstimates gives the estimates of the straightforward algorithm it
// replaced (each group's jobs sorted by duration, ties by index, the
// job's own position left out), on workloads with many ties, singleton
// groups and estimates already given.
func TestFillEstimatesMatchesReference(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 1 + rng.IntN(300)
		w := &Workload{}
		for i := 0; i < n; i++ {
			j := Job{
				Name:     string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)),
				Tenant:   []string{"x", "y", "z", "w"}[rng.IntN(1+rng.IntN(4))],
				Duration: hwmodel.Time(1 + rng.IntN(1+rng.IntN(50))),
				Req:      hwmodel.Request{GPUs: 1 << rng.IntN(1+rng.IntN(6))},
			}
			if rng.IntN(10) == 0 {
				j.Estimate = hwmodel.Time(1 + rng.IntN(100))
			}
			w.Jobs = append(w.Jobs, j)
		}
		for _, j := range w.Jobs {
			if !slices.ContainsFunc(w.Tenants, func(x Tenant) bool { return x.Name == j.Tenant }) {
				w.Tenants = append(w.Tenants, Tenant{Name: j.Tenant, Weight: 1})
			}
		}
		ref := &Workload{Jobs: slices.Clone(w.Jobs), Tenants: w.Tenants}
		fillEstimatesReference(ref)
		w.FillEstimates()
		for i := range w.Jobs {
			if w.Jobs[i].Estimate != ref.Jobs[i].Estimate {
				t.Fatalf("seed %d job %d: estimate %d, reference %d", seed, i, w.Jobs[i].Estimate, ref.Jobs[i].Estimate)
			}
		}
	}
}

func TestFillEstimatesReferenceRealTrace(t *testing.T) {
	w := mustRead(t, tracePath(t, "philly-pollux/philly.csv"), "philly")
	ref := &Workload{Jobs: slices.Clone(w.Jobs), Tenants: w.Tenants}
	fillEstimatesReference(ref)
	w.FillEstimates()
	for i := range w.Jobs {
		if w.Jobs[i].Estimate != ref.Jobs[i].Estimate {
			t.Fatalf("job %d: estimate %d, reference %d", i, w.Jobs[i].Estimate, ref.Jobs[i].Estimate)
		}
	}
}

// fillEstimatesReference is FillEstimates as it was first written.
func fillEstimatesReference(w *Workload) {
	n := len(w.Jobs)
	missing := false
	for i := range w.Jobs {
		if w.Jobs[i].Estimate == 0 {
			missing = true
			break
		}
	}
	if !missing || n == 0 {
		return
	}
	type key struct {
		tenant string
		gpus   int
	}
	// Each level groups job indices, sorted by Duration, and records each
	// job's rank in its group, so that a leave-one-out median is O(1).
	type level struct {
		group [][]int // sorted job indices per group
		of    []int   // job index -> group
		rank  []int   // job index -> position in its group
	}
	build := func(groupOf func(i int) int, ngroups int) level {
		l := level{group: make([][]int, ngroups), of: make([]int, n), rank: make([]int, n)}
		for i := range w.Jobs {
			g := groupOf(i)
			l.of[i] = g
			l.group[g] = append(l.group[g], i)
		}
		for _, g := range l.group {
			slices.SortStableFunc(g, func(a, b int) int { return cmp.Compare(w.Jobs[a].Duration, w.Jobs[b].Duration) })
			for r, i := range g {
				l.rank[i] = r
			}
		}
		return l
	}
	keyIdx := make(map[key]int)
	gpuIdx := make(map[int]int)
	for i := range w.Jobs {
		j := &w.Jobs[i]
		k := key{j.Tenant, j.Req.GPUs}
		if _, ok := keyIdx[k]; !ok {
			keyIdx[k] = len(keyIdx)
		}
		if _, ok := gpuIdx[j.Req.GPUs]; !ok {
			gpuIdx[j.Req.GPUs] = len(gpuIdx)
		}
	}
	levels := []level{
		build(func(i int) int { return keyIdx[key{w.Jobs[i].Tenant, w.Jobs[i].Req.GPUs}] }, len(keyIdx)),
		build(func(i int) int { return gpuIdx[w.Jobs[i].Req.GPUs] }, len(gpuIdx)),
		build(func(int) int { return 0 }, 1),
	}
	// Compute every estimate before writing any, so that the order of
	// filling cannot matter (durations do not change, but stay explicit).
	est := make([]hwmodel.Time, n)
	for i := range w.Jobs {
		if w.Jobs[i].Estimate != 0 {
			continue
		}
		est[i] = w.Jobs[i].Duration
		for _, l := range levels {
			g := l.group[l.of[i]]
			if len(g) > 1 {
				est[i] = medianWithoutReference(w.Jobs, g, l.rank[i])
				break
			}
		}
	}
	for i := range w.Jobs {
		if w.Jobs[i].Estimate == 0 {
			w.Jobs[i].Estimate = est[i]
		}
	}
}
func medianWithoutReference(jobs []Job, g []int, skip int) hwmodel.Time {
	m := len(g) - 1
	at := func(k int) hwmodel.Time {
		if k >= skip {
			k++
		}
		return jobs[g[k]].Duration
	}
	if m%2 == 1 {
		return at(m / 2)
	}
	a, b := at(m/2-1), at(m/2)
	return a + (b-a)/2
}
