package policies

import (
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// fastestTable is a speed table where H100 runs work twice as fast as
// V100 in general, but class legacy runs faster on V100.
const fastestTable = "class,gpu_model,speed\n" +
	"*,V100-16GB,1\n" +
	"*,H100-80GB,2\n" +
	"legacy,V100-16GB,1\n" +
	"legacy,H100-80GB,0.5\n"

// fastestRates compiles fastestTable for a workload of class legacy.
func fastestRates(t *testing.T) *hwmodel.Rates {
	t.Helper()
	tab, err := hwmodel.ReadSpeedTable(strings.NewReader(fastestTable), "speeds.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab.Compile([]string{"legacy"})
}

// startedOn runs one scheduling point of the spec's policy and returns
// the node each started job's placement is on, by job, -1 for none.
func startedOn(t *testing.T, v *fakeView, spec string, jobs int) []int {
	t.Helper()
	p, err := MustParseSpec(spec).New()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, jobs)
	for i := range out {
		out[i] = -1
	}
	for _, d := range v.call(p) {
		if d.Kind == Start && len(d.Placement) > 0 {
			out[d.Job] = d.Placement[0].Node
		}
	}
	return out
}

// TestFastestPlacement: fcfs+fastest puts a job on the GPU model it runs
// fastest on (by its class) when that model has room, though first fit
// would take the slow node listed first; without speeds, or without the
// option, it is first fit; with the fast model full it takes the slow
// one. Bugs it catches: the option ignored, the generic rate used for
// every class, the models tried slowest first, a full fast model leaving
// the job queued, a job's own model constraint overridden, and the option
// acting in a run without speeds.
func TestFastestPlacement(t *testing.T) {
	v100 := model(t, "V100-16GB")
	h100 := model(t, "H100-80GB")
	const slow, fast = 0, 1 // node indices: the slow model first
	cluster := func() *hwmodel.Cluster {
		return newCluster(t, node(v100, 8, 64000, 1<<20), node(h100, 8, 64000, 1<<20))
	}
	job := func(class uint16, g int) Job {
		return Job{Class: class, Reference: v100, Req: whole(g)}
	}
	tests := []struct {
		name     string
		spec     string
		speeds   bool
		fastFull bool // every GPU of the fast node busy
		jobs     []Job
		want     []int // node per job, -1: not started
	}{
		{"fastest with speeds: the fast node", "fcfs+fastest", true, false, []Job{job(0, 4)}, []int{fast}},
		{"fastest with speeds, reference on the fast model", "fcfs+fastest", true, false, []Job{{Reference: h100, Req: whole(4)}}, []int{fast}},
		{"fastest without speeds: first fit", "fcfs+fastest", false, false, []Job{job(0, 4)}, []int{slow}},
		{"speeds without fastest: first fit", "fcfs", true, false, []Job{job(0, 4)}, []int{slow}},
		{"fast node full: the slow one", "fcfs+fastest", true, true, []Job{job(0, 4)}, []int{slow}},
		{"fast node filled by the first job", "fcfs+fastest", true, false, []Job{job(0, 8), job(0, 4)}, []int{fast, slow}},
		{"the class runs faster on the slow model", "fcfs+fastest", true, false, []Job{job(1, 4), job(0, 4)}, []int{slow, fast}},
		{"a job that accepts only the slow model", "fcfs+fastest", true, false, []Job{{Reference: v100, Req: hwmodel.Request{GPUs: 2, GPUMilli: 1000, CPUMilli: 2000, MemoryMiB: 2048, Models: hwmodel.Of(v100)}}}, []int{slow}},
		{"no room anywhere", "fcfs+fastest", true, true, []Job{job(0, 12)}, []int{-1}},
		{"best fit with fastest", "fcfs+fastest/bestfit", true, false, []Job{job(0, 2)}, []int{fast}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			if tc.fastFull {
				busy(t, c, fast, 0xff, 1000, 8000)
			}
			v := newFakeView(t, c)
			for _, j := range tc.jobs {
				v.add(j)
			}
			if tc.speeds {
				v.SetSpeeds(fastestRates(t))
			}
			if got := startedOn(t, v, tc.spec, len(tc.jobs)); !slices.Equal(got, tc.want) {
				t.Errorf("%s: jobs started on nodes %v, want %v", tc.spec, got, tc.want)
			}
		})
	}

	// The rates the placement reads: H100 twice V100 in general, half for
	// legacy; none without speeds.
	v := newFakeView(t, cluster())
	g, legacy := v.Job(v.add(job(0, 1))), v.Job(v.add(job(1, 1)))
	if HasSpeeds(v) || v.RateOn(g, h100) != 1 {
		t.Errorf("without speeds: HasSpeeds %v, RateOn %v; want false, 1", HasSpeeds(v), v.RateOn(g, h100))
	}
	v.SetSpeeds(fastestRates(t))
	if !HasSpeeds(v) || v.RateOn(g, h100) != 2 || v.RateOn(legacy, h100) != 0.5 || v.RateOn(legacy, v100) != 1 {
		t.Errorf("with speeds: HasSpeeds %v, RateOn %v, %v, %v; want true, 2, 0.5, 1", HasSpeeds(v), v.RateOn(g, h100), v.RateOn(legacy, h100), v.RateOn(legacy, v100))
	}
	if v.MaxRate() != 2 {
		t.Errorf("MaxRate = %v, want 2", v.MaxRate())
	}
}
