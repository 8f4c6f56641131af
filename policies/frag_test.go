package policies

import (
	"math"
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// gpuReq is a class shape: g GPUs of milli each and cpu milli-CPU.
func gpuReq(g int, milli int32, cpu int64) hwmodel.Request {
	return hwmodel.Request{GPUs: g, GPUMilli: milli, CPUMilli: cpu}
}

func target(classes ...PodClass) TargetWorkload { return TargetWorkload{Classes: classes} }

func TestNodeFragmentation(t *testing.T) {
	v100 := model(t, "V100-16GB")
	a100 := model(t, "A100-80GB")
	one := gpuReq(1, 1000, 4000)
	half := gpuReq(1, 500, 4000)
	onlyA100 := one
	onlyA100.Models = hwmodel.Of(a100)
	// free GPUs 1000/500/250: GPU 1 has 500 used, GPU 2 750 used.
	mixed := func(t *testing.T, c *hwmodel.Cluster) {
		busy(t, c, 0, 0b010, 500, 0)
		busy(t, c, 0, 0b100, 750, 0)
	}
	cases := []struct {
		name  string
		n     hwmodel.Node
		setup func(*testing.T, *hwmodel.Cluster)
		t     TargetWorkload
		want  float64
	}{
		{
			// whole GPU fits on GPU 0; 500+250 left over on shared GPUs
			// is fragmented for it: 0.5·750. The 0.5-GPU class fits on
			// GPUs 0 and 1 and cannot use GPU 2's 250: 0.5·250.
			name: "1000/500/250 free, {1 GPU: 50%, 0.5 GPU: 50%}", n: node(v100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{one, 0.5}, PodClass{half, 0.5}),
			want: 0.5*750 + 0.5*250,
		},
		{
			// the whole-GPU class lacks CPU: all 1750 free is fragmented for it.
			name: "class short of CPU counts all free milli", n: node(v100, 3, 32000, 1<<20),
			setup: func(t *testing.T, c *hwmodel.Cluster) { mixed(t, c); busy(t, c, 0, 0, 0, 30000) },
			t:     target(PodClass{gpuReq(1, 1000, 4000), 0.5}, PodClass{gpuReq(1, 500, 2000), 0.5}),
			want:  0.5*1750 + 0.5*250,
		},
		{
			name: "two whole GPUs do not fit: all free", n: node(v100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{gpuReq(2, 1000, 1000), 1}),
			want: 1750,
		},
		{
			name: "0.6 GPU fits only on the idle GPU", n: node(v100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{gpuReq(1, 600, 1000), 1}),
			want: 750,
		},
		{
			name: "GPU model not accepted: all free", n: node(v100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{onlyA100, 0.25}, PodClass{half, 0.75}),
			want: 0.25*1750 + 0.75*250,
		},
		{
			name: "accepted model", n: node(a100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{onlyA100, 1}),
			want: 750,
		},
		{
			name: "CPU-only class: all free GPU milli, whatever the CPU", n: node(v100, 3, 32000, 1<<20), setup: mixed,
			t:    target(PodClass{cpuOnly(1000), 0.2}, PodClass{one, 0.8}),
			want: 0.2*1750 + 0.8*750,
		},
		{
			name: "idle node, every class fits", n: node(v100, 8, 96000, 1<<20),
			t:    target(PodClass{gpuReq(8, 1000, 8000), 0.5}, PodClass{gpuReq(1, 300, 1000), 0.5}),
			want: 0,
		},
		{
			name: "full node has nothing to fragment", n: node(v100, 2, 32000, 1<<20),
			setup: func(t *testing.T, c *hwmodel.Cluster) { busy(t, c, 0, 0b11, 1000, 0) },
			t:     target(PodClass{cpuOnly(1000), 1}),
			want:  0,
		},
		{
			name: "node without GPUs", n: node(v100, 0, 32000, 1<<20),
			t:    target(PodClass{cpuOnly(1000), 1}),
			want: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, tc.n)
			if tc.setup != nil {
				tc.setup(t, c)
			}
			if got := NodeFragmentation(c.View(), 0, tc.t); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("NodeFragmentation = %v, want %v", got, tc.want)
			}
			if got := ClusterFragmentation(c.View(), tc.t); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ClusterFragmentation = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClusterFragmentationSumsNodes(t *testing.T) {
	v100 := model(t, "V100-16GB")
	c := newCluster(t, node(v100, 2, 16000, 1<<20), node(v100, 4, 16000, 1<<20), node(v100, 1, 16000, 1<<20))
	busy(t, c, 0, 0b01, 700, 0) // n0: 300 + 1000 free
	busy(t, c, 1, 0b0111, 1000, 0)
	busy(t, c, 1, 0b1000, 100, 0) // n1: 900 free
	tw := target(PodClass{gpuReq(1, 1000, 1000), 0.5}, PodClass{gpuReq(1, 500, 1000), 0.5})
	// n0: whole fits (GPU 1), 300 fragmented; 500 fits, 300 fragmented.
	// n1: whole does not fit, 900; 500 fits, 0. n2 idle: 0.
	want := 0.5*300 + 0.5*300 + 0.5*900
	if got := ClusterFragmentation(c.View(), tw); math.Abs(got-want) > 1e-9 {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTargetFromRequests(t *testing.T) {
	a100 := model(t, "A100-80GB")
	mem := func(r hwmodel.Request, m int64) hwmodel.Request { r.MemoryMiB = m; return r }
	rep := func(n int, r hwmodel.Request) []hwmodel.Request {
		out := make([]hwmodel.Request, n)
		for i := range out {
			out[i] = mem(r, int64(i)) // memory varies; it is not part of a class
		}
		return out
	}
	cat := func(parts ...[]hwmodel.Request) (out []hwmodel.Request) {
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	a, b, c, d := gpuReq(1, 1000, 8000), gpuReq(1, 500, 4000), cpuOnly(2000), gpuReq(2, 1000, 16000)
	c.MemoryMiB = 0

	t.Run("95% cut and renormalised", func(t *testing.T) {
		got := TargetFromRequests(cat(rep(50, a), rep(30, b), rep(15, c), rep(5, d)))
		// 50+30+15 = 95 reaches 95% of 100: d is cut, the rest renormalised.
		want := target(PodClass{a, 50.0 / 100 / (95.0 / 100)}, PodClass{b, 30.0 / 100 / (95.0 / 100)}, PodClass{c, 15.0 / 100 / (95.0 / 100)})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("coverage 1 keeps all, popularities are plain shares", func(t *testing.T) {
		got := TargetFromRequestsCoverage(cat(rep(6, a), rep(3, b), rep(1, c)), 1)
		want := target(PodClass{a, 0.6}, PodClass{b, 0.3}, PodClass{c, 0.1})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("class key: memory ignored, zero CPU is 100, CPU-only ignores models", func(t *testing.T) {
		noCPU := gpuReq(1, 300, 0)
		cpuA100 := cpuOnly(2000)
		cpuA100.Models = hwmodel.Of(a100)
		got := TargetFromRequestsCoverage([]hwmodel.Request{noCPU, mem(noCPU, 7), cpuA100, c}, 1)
		// Equal counts: the larger CPU request (2000) comes first.
		want := target(PodClass{cpuOnly(2000), 0.5}, PodClass{gpuReq(1, 300, 100), 0.5})
		want.Classes[0].Req.MemoryMiB = 0
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	})
	t.Run("equal counts: larger CPU, then larger GPU milli first", func(t *testing.T) {
		x, y, z := gpuReq(1, 200, 1000), gpuReq(1, 900, 1000), gpuReq(1, 100, 3000)
		got := TargetFromRequestsCoverage([]hwmodel.Request{x, y, z}, 1)
		if len(got.Classes) != 3 || got.Classes[0].Req != z || got.Classes[1].Req != y || got.Classes[2].Req != x {
			t.Fatalf("order %+v", got.Classes)
		}
		// With a 60% cut the tie order decides: z and y are kept.
		got = TargetFromRequestsCoverage([]hwmodel.Request{x, y, z}, 0.6)
		if len(got.Classes) != 2 || got.Classes[0].Req != z || got.Classes[1].Req != y || got.Classes[0].Popularity != 0.5 {
			t.Fatalf("cut %+v", got.Classes)
		}
	})
	t.Run("specs: the same models written two ways are two classes, ties by falling text", func(t *testing.T) {
		v16, v32 := model(t, "V100-16GB"), model(t, "V100-32GB")
		r := gpuReq(1, 500, 1000)
		r.Models = hwmodel.Of(v16, v32)
		reqs := []hwmodel.Request{r, r, r, r, r, r, r, r, r, r}
		specs := []string{"V100M16|V100M32", "V100M16|V100M32", "V100M16|V100M32", "V100M16|V100M32", "V100M16|V100M32",
			"V100M16|V100M32|V100M32", "V100M16|V100M32|V100M32", "V100M16|V100M32|V100M32", "V100M16|V100M32|V100M32", "V100M16|V100M32|V100M32"}
		// Two classes of 5: the longer text sorts first; a 50% cut keeps it alone.
		got := TargetFromRequestSpecs(reqs, specs, 0.5)
		if want := target(PodClass{r, 1}); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		if got := TargetFromRequestSpecs(reqs, specs, 1); len(got.Classes) != 2 || got.Classes[0].Popularity != 0.5 {
			t.Fatalf("coverage 1: %+v", got)
		}
		if got := TargetFromRequestsCoverage(reqs, 0.5); len(got.Classes) != 1 || got.Classes[0].Popularity != 1 {
			t.Fatalf("without specs, one class: %+v", got)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if got := TargetFromRequests(nil); len(got.Classes) != 0 {
			t.Fatalf("got %+v", got)
		}
	})
}
