package results

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

type tenantObs struct {
	at   hwmodel.Time
	a, b int64 // tenants' milli-GPU
	q    int   // a queue length, to change the State without the tenants
}

// handTenantSteps is a hand-worked two-tenant step function (times in s):
//
//	[ 0, 5)  A 1000  B    0
//	[ 5,12)  A 1000  B 2000
//	[12,25)  A    0  B 2000   (at 15 s only the queue changes)
//	[25,28)  A  500  B    0   (closed at 28 s)
//
// Tenant A weighs 3, B 1: fair shares 0.75 and 0.25; 4 GPUs.
var handTenantSteps = []tenantObs{{0, 1000, 0, 1}, {5 * sec, 1000, 2000, 2}, {12 * sec, 0, 2000, 2}, {15 * sec, 0, 2000, 0}, {25 * sec, 500, 0, 0}}

func feedTenants(tl *Timeline, steps []tenantObs, end hwmodel.Time) *Timeline {
	tl.TrackTenants([]string{"A", "B"}, FairShares([]float64{3, 1}, []bool{true, true}))
	milli := make([]int64, 2)
	for _, o := range steps {
		milli[0], milli[1] = o.a, o.b
		tl.ObserveTenants(o.at, State{Queued: o.q, Running: 1, InSystem: 1 + o.q, AllocatedMilli: o.a + o.b}, milli)
	}
	tl.Close(end)
	return tl
}

func checkShares(t *testing.T, got []TenantShare, want []TenantShare) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tenant shares, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Start != w.Start || g.Width != w.Width || g.Covered != w.Covered || g.Tenant != w.Tenant || g.FairShare != w.FairShare ||
			math.Abs(g.AllocatedGPUs-w.AllocatedGPUs) > 1e-12 || math.Abs(g.GPUShare-w.GPUShare) > 1e-12 {
			t.Errorf("share %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestTimelineTenantShares(t *testing.T) {
	tl := feedTenants(NewTimeline(10*sec, 4000), handTenantSteps, 28*sec)
	// Bucket [0,10): A 1000×10 → 1 GPU; B 2000×5 → 1 GPU.
	// Bucket [10,20): A 1000×2 → 0.2 GPU; B 2000×10 → 2 GPUs.
	// Bucket [20,28), 8 s covered: A 500×3/8 → 0.1875 GPU; B 2000×5/8 → 1.25 GPUs.
	checkShares(t, tl.TenantShares(), []TenantShare{
		{0, 10 * sec, 10 * sec, "A", 1, 0.25, 0.75},
		{0, 10 * sec, 10 * sec, "B", 1, 0.25, 0.25},
		{10 * sec, 10 * sec, 10 * sec, "A", 0.2, 0.05, 0.75},
		{10 * sec, 10 * sec, 10 * sec, "B", 2, 0.5, 0.25},
		{20 * sec, 10 * sec, 8 * sec, "A", 0.1875, 0.046875, 0.75},
		{20 * sec, 10 * sec, 8 * sec, "B", 1.25, 0.3125, 0.25},
	})
	if got := tl.TenantMilliGPUSeconds(); !slices.Equal(got, []float64{13500, 40000}) {
		t.Errorf("tenant integrals %v, want [13500 40000]", got)
	}
	if got := tl.Integrals().AllocatedMilliGPUSeconds; got != 53500 {
		t.Errorf("allocated integral %v, want 53500 (the tenants' sum)", got)
	}
	// The tenants' shares sum to the bucket's utilisation.
	for i, b := range tl.Buckets() {
		s := tl.TenantShares()
		if sum := s[2*i].GPUShare + s[2*i+1].GPUShare; math.Abs(sum-b.GPUUtilisation) > 1e-12 {
			t.Errorf("bucket %d: tenants' shares sum to %v, utilisation %v", i, sum, b.GPUUtilisation)
		}
	}
}

// TestTimelineTenantSharesMerge: with room for two buckets the 10 s buckets
// merge into 20 s ones while B's [5,25) segment is still pending; the
// per-tenant series must equal the hand-worked one at 20 s.
func TestTimelineTenantSharesMerge(t *testing.T) {
	tl := feedTenants(newTimeline(10*sec, 4000, 2), handTenantSteps, 28*sec)
	if tl.BucketWidth() != 20*sec {
		t.Fatalf("width %v, want 20 s", tl.BucketWidth())
	}
	// [0,20): A 12000/20 → 0.6 GPU; B 30000/20 → 1.5 GPUs.
	checkShares(t, tl.TenantShares(), []TenantShare{
		{0, 20 * sec, 20 * sec, "A", 0.6, 0.15, 0.75},
		{0, 20 * sec, 20 * sec, "B", 1.5, 0.375, 0.25},
		{20 * sec, 20 * sec, 8 * sec, "A", 0.1875, 0.046875, 0.75},
		{20 * sec, 20 * sec, 8 * sec, "B", 1.25, 0.3125, 0.25},
	})
}

// TestTimelineTenantSharesMergeMatchesDirect: random steps, a Timeline
// that merges from 1 s to 8 s buckets agrees with one built at 8 s.
func TestTimelineTenantSharesMergeMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	var steps []tenantObs
	var now hwmodel.Time
	for range 300 {
		now += hwmodel.Time(rng.IntN(5000)) * hwmodel.Millisecond
		a, b := int64(rng.IntN(3))*500, int64(rng.IntN(4))*250
		if rng.IntN(3) == 0 && len(steps) > 0 {
			a, b = steps[len(steps)-1].a, steps[len(steps)-1].b
		}
		steps = append(steps, tenantObs{now, a, b, rng.IntN(3)})
	}
	end := now + 3*sec
	merged := feedTenants(newTimeline(sec, 2000, 128), steps, end)
	direct := feedTenants(newTimeline(merged.BucketWidth(), 2000, 4096), steps, end)
	if merged.BucketWidth() == sec {
		t.Fatal("no merge happened")
	}
	checkShares(t, merged.TenantShares(), direct.TenantShares())
	if a, b := merged.TenantMilliGPUSeconds(), direct.TenantMilliGPUSeconds(); !slices.Equal(a, b) {
		t.Errorf("integrals %v and %v", a, b)
	}
	ts := merged.TenantMilliGPUSeconds()
	if got, want := ts[0]+ts[1], merged.Integrals().AllocatedMilliGPUSeconds; math.Abs(got-want) > 1e-9*want {
		t.Errorf("tenants' integrals sum to %v, allocated %v", got, want)
	}
}

func TestFairShares(t *testing.T) {
	got := FairShares([]float64{2, 1, 5, 1}, []bool{true, true, false, true})
	if !slices.Equal(got, []float64{0.5, 0.25, 0, 0.25}) {
		t.Errorf("FairShares = %v", got)
	}
	if got := FairShares([]float64{1}, []bool{false}); !slices.Equal(got, []float64{0}) {
		t.Errorf("FairShares without jobs = %v", got)
	}
}

func TestTimelineObserveTenantsDoesNotAllocate(t *testing.T) {
	tl := NewTimeline(sec, 8000)
	tl.TrackTenants([]string{"a", "b", "c"}, []float64{0.5, 0.25, 0.25})
	milli := make([]int64, 3)
	var now hwmodel.Time
	i := 0
	allocs := testing.AllocsPerRun(100000, func() {
		i++
		now += hwmodel.Time(i%7) * 300 * hwmodel.Millisecond // crosses buckets, forces merges
		milli[i%3] = int64(i%4) * 1000
		tl.ObserveTenants(now, State{Queued: i % 5, Running: i % 3, InSystem: i%5 + i%3, AllocatedMilli: milli[0] + milli[1] + milli[2]}, milli)
	})
	if allocs != 0 {
		t.Errorf("ObserveTenants: %v allocs per call, want 0", allocs)
	}
	if tl.BucketWidth() == sec {
		t.Errorf("the run never merged; the test does not cover merging")
	}
}

func TestTimelineTenantsMisusePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"track after observe": func() {
			tl := NewTimeline(sec, 1000)
			tl.Observe(0, State{})
			tl.TrackTenants([]string{"a"}, []float64{1})
		},
		"wrong length": func() {
			tl := NewTimeline(sec, 1000)
			tl.TrackTenants([]string{"a"}, []float64{1})
			tl.ObserveTenants(0, State{}, []int64{1, 2})
		},
		"negative": func() {
			tl := NewTimeline(sec, 1000)
			tl.TrackTenants([]string{"a"}, []float64{1})
			tl.ObserveTenants(0, State{}, []int64{-1})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestWriteTenantsFiles(t *testing.T) {
	tl := feedTenants(NewTimeline(10*sec, 4000), handTenantSteps, 28*sec)
	runs := []PolicyTimeline{{Policy: "fifo", Timeline: tl}, {Policy: "none"}}
	dir := t.TempDir()
	if err := WriteTenantsCSV(filepath.Join(dir, "tenants.csv"), runs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tenants.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"bucket_start_s,policy,tenant,allocated_gpus,gpu_share,fair_share",
		"0.000000,fifo,A,1.000000,0.250000,0.750000",
		"0.000000,fifo,B,1.000000,0.250000,0.250000",
		"10.000000,fifo,A,0.200000,0.050000,0.750000",
		"10.000000,fifo,B,2.000000,0.500000,0.250000",
		"20.000000,fifo,A,0.187500,0.046875,0.750000",
		"20.000000,fifo,B,1.250000,0.312500,0.250000",
	}, "\n") + "\n"
	if string(b) != want {
		t.Errorf("tenants.csv:\n%s\nwant\n%s", b, want)
	}
	rows := TenantRows(runs)
	if len(rows) != 6 || rows[5] != (TenantRow{BucketStartS: 20, Policy: "fifo", Tenant: "B", AllocatedGPUs: 1.25, GPUShare: 0.3125, FairShare: 0.25}) {
		t.Errorf("TenantRows = %+v", rows)
	}
	if err := WriteTenantsParquet(filepath.Join(dir, "tenants.parquet"), runs); err != nil {
		t.Fatal(err)
	}
}
