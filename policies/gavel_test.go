package policies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// lpOf builds an LP over classes given as (ρ vector, weight, GPUs).
func lpOf(caps []float64, classes ...gavelClass) *gavelLP {
	return &gavelLP{caps: caps, classes: classes}
}

func gavelNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestGavelMaxMinHandSolved checks the max-min LP on instances solved by
// hand (ρ = C·r/e, the normalised rates of gavellp.go).
//
//   - two types of one GPU each; A runs at rates (1, 1), B at (1, 3):
//     ρ_A = 2·(1,1)/2 = (1, 1), ρ_B = 2·(1,3)/4 = (½, 3/2). With both time
//     caps and both capacities tight, b1 = a2 and b2 = a1, so A's
//     normalised throughput is a1 + a2 = 1 whatever the split and B's is
//     ½ + a1: z* = 1, and the second stage gives A all of type 0 and B
//     all of type 1 (B: 3/2). A first stage alone may stop at any a1 ≥ ½.
//   - one type of 2 GPUs; A and B ask for 2 GPUs each, A of weight 2:
//     V_A/2 ≥ 2z, V_B/2 ≥ z, V_A + V_B ≤ 2 give z* = 1/3, V_A = 4/3,
//     V_B = 2/3 (X_A = 2/3, X_B = 1/3).
func TestGavelMaxMinHandSolved(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lp    *gavelLP
		z     float64
		alloc [][]float64
	}{
		{"heterogeneous", lpOf([]float64{1, 1},
			gavelClass{rho: []float64{1, 1}, weight: 1, gpus: 1},
			gavelClass{rho: []float64{0.5, 1.5}, weight: 1, gpus: 1}),
			1, [][]float64{{1, 0}, {0, 1}}},
		{"weighted", lpOf([]float64{2},
			gavelClass{rho: []float64{1}, weight: 2, gpus: 2},
			gavelClass{rho: []float64{1}, weight: 1, gpus: 2}),
			1.0 / 3, [][]float64{{4.0 / 3}, {2.0 / 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, ok := tc.lp.maxMin()
			if !ok || !gavelNear(z, tc.z, 1e-6) {
				t.Fatalf("z = %v (ok %v), want %v", z, ok, tc.z)
			}
			for k, want := range tc.alloc {
				for ti, w := range want {
					if got := tc.lp.classes[k].alloc[ti]; !gavelNear(got, w, 1e-6) {
						t.Errorf("class %d type %d: V = %v, want %v", k, ti, got, w)
					}
				}
			}
		})
	}
}

// TestGavelClassesAreExact: solving max-min over a class equals solving
// it over its members as classes of their own (the aggregation of
// gavellp.go loses nothing), on random instances.
func TestGavelClassesAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 30 {
		T := 1 + rng.IntN(3)
		caps := make([]float64, T)
		for t := range caps {
			caps[t] = float64(1 + rng.IntN(8))
		}
		var merged, split []gavelClass
		for range 1 + rng.IntN(3) {
			rho := make([]float64, T)
			for t := range rho {
				rho[t] = 0.2 + 2*rng.Float64()
			}
			w := float64(1 + rng.IntN(2))
			cl := gavelClass{rho: rho, weight: w}
			for range 1 + rng.IntN(3) {
				g := float64(int(1) << rng.IntN(3))
				cl.gpus += g
				split = append(split, gavelClass{rho: rho, weight: w, gpus: g})
			}
			merged = append(merged, cl)
		}
		zm, okm := lpOf(caps, merged...).maxMin()
		zs, oks := lpOf(caps, split...).maxMin()
		if !okm || !oks || !gavelNear(zm, zs, 1e-6*max(1, zs)) {
			t.Fatalf("trial %d: z over classes %v (ok %v), over jobs %v (ok %v)", trial, zm, okm, zs, oks)
		}
	}
}

// TestGavelFTFHandSolved: one GPU, two one-GPU jobs of one class. A has
// waited 1 h and needs 1 h; B has just come and needs 2 h. C = 1, S = 2,
// so the equal share is ½ and the isolated durations are D_A = 2 h and
// D_B = 4 h. With x = A's share: φ_A = (1 + 1/x)/2 and φ_B = (2/(1−x))/4;
// equal at x² + x − 1 = 0, x = (√5 − 1)/2 ≈ 0.618, φ = 1/(2(1 − x)) ≈
// 1.309 (the equal share gives φ_A = 1.5).
func TestGavelFTFHandSolved(t *testing.T) {
	p := lpOf([]float64{1}, gavelClass{rho: []float64{1}, weight: 1, gpus: 2})
	jobs := []gavelFTFJob{
		{class: 0, g: 1, e: 1, rmax: 1, age: 1, left: 1, iso: 2},
		{class: 0, g: 1, e: 1, rmax: 1, age: 0, left: 2, iso: 4},
	}
	phi, ok := p.finishTimeFair(jobs, 1, 0.5)
	x := (math.Sqrt(5) - 1) / 2
	want := 1 / (2 * (1 - x))
	if !ok || !gavelNear(phi, want, 2*ftfRelTol*want) {
		t.Fatalf("φ = %v (ok %v), want %v", phi, ok, want)
	}
	dA, dB := jobs[0].delta(phi, 1), jobs[1].delta(phi, 1)
	if share := dA / (dA + dB); !gavelNear(share, x, 5e-3) {
		t.Errorf("A's share %v, want %v", share, x)
	}
	if got := p.classes[0].alloc[0]; got > 1+1e-9 || got < dA+dB-1e-6 {
		t.Errorf("class allocation %v, want the capacity's, at least the demands %v", got, dA+dB)
	}
}

// TestGavelPlacesByAllocation: one V100 and one H100 GPU, H100 listed
// first. Job A (class legacy) runs at half speed on the H100, job B
// (generic) at twice: ρ_A = 2·(1, ½)/1.5, ρ_B = 2·(1, 2)/3, and max-min
// gives each all of its faster model. First fit would put A, the first
// job, on the H100. Without speeds both rates are 1, so any split is
// optimal: both start, one on each. Bugs it catches: rates ignored, types
// swapped in the LP, the priority picking the smallest share.
func TestGavelPlacesByAllocation(t *testing.T) {
	v100, h100 := model(t, "V100-16GB"), model(t, "H100-80GB")
	for _, tc := range []struct {
		name   string
		speeds bool
		spec   string
		wantA  hwmodel.ModelID // 0: either
	}{
		{"max-min", true, "gavel", v100},
		{"ftf", true, "gavel+objective=ftf", v100},
		{"no speeds", false, "gavel", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newFakeView(t, newCluster(t, node(h100, 1, 64000, 1<<20), node(v100, 1, 64000, 1<<20)))
			if tc.speeds {
				v.SetSpeeds(fastestRates(t))
			}
			a := v.add(Job{Class: 1, Reference: v100, Estimate: hwmodel.Hour, Req: whole(1)})
			b := v.add(Job{Class: 0, Reference: v100, Estimate: hwmodel.Hour, Req: whole(1)})
			p := MustParseSpec(tc.spec).MustNew()
			on := map[JobID]hwmodel.ModelID{}
			for _, d := range v.call(p) {
				if d.Kind == Start {
					on[d.Job] = v.cluster.NodeModel(d.Placement[0].Node)
				}
			}
			if len(on) != 2 || on[a] == on[b] || (tc.wantA != 0 && on[a] != tc.wantA) {
				t.Fatalf("started on %v, want A on model %d and B on the other", on, tc.wantA)
			}
		})
	}
}

// TestGavelSpecs: the options parse, label and refuse as the other
// preemptive orders' do.
func TestGavelSpecs(t *testing.T) {
	for _, tc := range []struct{ in, label, err string }{
		{"gavel", "gavel", ""},
		{"gavel+objective=maxmin+round=6m", "gavel", ""},
		{"gavel+objective=ftf+round=90s", "gavel+objective=ftf+round=90s", ""},
		{"gavel+round=1h/bestfit", "gavel+round=1h/bestfit", ""},
		{"gavel+objective=fair", "", `want maxmin or ftf, got "fair"`},
		{"gavel+round=0", "", "want a duration such as 6m"},
		{"gavel+bf", "", "EASY backfill (bf) does not combine with the preemptive order gavel"},
		{"gavel+fastest", "", "the fastest option does not combine"},
		{"fcfs+objective=ftf+round=2m", "fcfs", ""},
		{"gavel+objective=ftf+oracle", "gavel+oracle+objective=ftf", ""},
		{"gavel+oracle", "gavel", ""},
	} {
		checkSpec(t, tc.in, tc.label, tc.err)
	}
	if !Preemptive("gavel", Options{}) {
		t.Error("gavel is not preemptive")
	}
}

// BenchmarkGavelLP measures one solve of each objective over K classes
// on three types (a mixed cluster of 32 + 32 + 32 GPUs), with n = 2,000
// one-GPU jobs spread over the classes. The LP
// has at most K·T + 1 structural variables and 2K + T rows whatever n.
//
//	go test -run '^$' -bench GavelLP ./policies
func BenchmarkGavelLP(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const T = 3
	caps := []float64{32, 32, 32}
	for _, K := range []int{5, 10, gavelMaxClasses} {
		classes := make([]gavelClass, K)
		for k := range classes {
			rho := make([]float64, T)
			for t := range rho {
				rho[t] = 0.2 + 2*rng.Float64()
			}
			classes[k] = gavelClass{rho: rho, weight: float64(1 + k%4)}
		}
		jobs := make([]gavelFTFJob, 2000)
		for i := range jobs {
			k := i % K
			e := 0.0
			rmax := 0.0
			for t := range T {
				e += classes[k].rho[t] * caps[t]
				rmax = max(rmax, classes[k].rho[t])
			}
			left := 0.5 + 10*rng.Float64()
			classes[k].gpus++
			jobs[i] = gavelFTFJob{class: k, g: 1, e: e, rmax: rmax, age: 5 * rng.Float64(), left: left, iso: left * 2000 / e}
		}
		b.Run(fmt.Sprintf("maxmin/classes=%d", K), func(b *testing.B) {
			p := lpOf(caps, classes...)
			for b.Loop() {
				if _, ok := p.maxMin(); !ok {
					b.Fatal("no solution")
				}
			}
			b.ReportMetric(float64(K*T+1), "vars")
			b.ReportMetric(float64(2*K+T), "rows")
		})
		b.Run(fmt.Sprintf("ftf/classes=%d/jobs=2000", K), func(b *testing.B) {
			p := lpOf(caps, classes...)
			p.solves = 0
			for b.Loop() {
				if _, ok := p.finishTimeFair(jobs, 96, 1/2000.0); !ok {
					b.Fatal("no solution")
				}
			}
			b.ReportMetric(float64(p.solves)/float64(b.N), "LPs/solve")
		})
	}
}

// TestGavelFTFSplit: one class on a fast type (ρ = 2) and a slow one
// (ρ = 1), each of one GPU, and two one-GPU members that need 1.9 and
// 1.1 (Σ ρ·time). Together they need all of it (2 + 1 = 3). A split in
// proportion to demand would give A 1.9/3 of each type, 1.27 of its
// time; served most urgent first, A takes 0.9 fast and 0.1 slow (1.8 +
// 0.1 = 1.9) and B what is left, 0.1 fast and 0.9 slow (0.2 + 0.9 =
// 1.1): both met exactly, within their time.
func TestGavelFTFSplit(t *testing.T) {
	p := lpOf([]float64{1, 1}, gavelClass{rho: []float64{2, 1}, gpus: 2, alloc: []float64{1, 1}})
	// delta = g·left·C/(e·(phi·iso − age)); with g = e = C = 1, age 0 and
	// phi = 1, it is left/iso.
	jobs := []gavelFTFJob{
		{class: 0, g: 1, e: 1, left: 1.1, iso: 1},
		{class: 0, g: 1, e: 1, left: 1.9, iso: 1},
	}
	x := make([]float64, 4)
	var s ftfScratch
	p.ftfSplit(jobs, []JobID{0, 1}, 1, 1, x, &s)
	want := []float64{0.1, 0.9, 0.9, 0.1}
	for k := range want {
		if !gavelNear(x[k], want[k], 1e-9) {
			t.Fatalf("shares %v, want %v", x, want)
		}
	}
}

// checkSpec parses and checks spec in: it must fail with an error holding
// wantErr, or, when wantErr is "", succeed with label. ok reports that it
// succeeded as wanted, with the spec.
func checkSpec(t *testing.T, in, label, wantErr string) (s Spec, ok bool) {
	t.Helper()
	s, err := ParseSpec(in)
	if err == nil {
		err = s.Check()
	}
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s: error %v, want one with %q", in, err, wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v", in, err)
	case wantErr == "" && s.String() != label:
		t.Errorf("%s: label %q, want %q", in, s.String(), label)
	case wantErr == "":
		return s, true
	}
	return s, false
}
