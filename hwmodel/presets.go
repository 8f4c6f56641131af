package hwmodel

import "fmt"

// Sizes of the philly-sample preset, the default cluster for the bundled
// two-day Philly sample. Retune the sample's cluster here and nowhere else
// (and the presets table in docs/cluster.md, which a test checks).
const (
	phillySampleNodes8 = 40 // nodes with 8 P100 each
	phillySampleNodes2 = 32 // nodes with 2 P100 each
)

// Node shapes the presets use. CPU counts are hardware threads, as
// Kubernetes counts them, in milli-cores.
const (
	tib = 1024 * 1024 // MiB

	dgxH100CPU = 224_000 // DGX H100: 2 × Xeon 8480C, 112 cores, 224 threads
	dgxH100Mem = 2 * tib
	dgxH200CPU = dgxH100CPU // DGX H200: the same two Xeon 8480C as DGX H100
	dgxH200Mem = 2 * tib
	dgxA100CPU = 256_000 // DGX A100: 2 × EPYC 7742, 128 cores, 256 threads
	dgxA100Mem = 2 * tib // the 640 GB (A100-80GB) model
	v100x4CPU  = 80_000  // a typical 4-GPU V100 server: 2 × 20-core Xeon
	v100x4Mem  = 384 * 1024
	t4x4CPU    = 48_000 // a typical 4-GPU T4 server: 2 × 12-core Xeon
	t4x4Mem    = 192 * 1024
)

func capacityOf(v int64) *int64 { return &v }

// presets lists the built-in clusters in the order Presets returns them.
// Each make function builds a fresh spec, so callers may change what they
// get.
var presets = []struct {
	name string
	make func() ClusterSpec
}{
	{"philly-like", func() ClusterSpec {
		return ClusterSpec{
			Description: "2,496 P100 GPUs on 312 nodes × 8, no CPU or memory model: " +
				"the benchmark cluster for replaying the whole Philly trace on about 2,500 GPUs",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "p100", Count: 312, GPUModel: "P100", GPUsPerNode: 8},
			},
		}
	}},
	{"philly-sample", func() ClusterSpec {
		return ClusterSpec{
			Description: fmt.Sprintf("%d P100 GPUs on %d nodes × 8 and %d nodes × 2, no CPU or memory model: "+
				"the default cluster for the bundled two-day Philly sample",
				phillySampleNodes8*8+phillySampleNodes2*2, phillySampleNodes8, phillySampleNodes2),
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "p100x8", Count: phillySampleNodes8, GPUModel: "P100", GPUsPerNode: 8},
				{NamePrefix: "p100x2", Count: phillySampleNodes2, GPUModel: "P100", GPUsPerNode: 2},
			},
		}
	}},
	{"dgx-h100x64", func() ClusterSpec {
		return ClusterSpec{
			Description: "512 H100-80GB GPUs on 64 DGX H100 nodes × 8, 224 CPU threads and 2 TiB each: " +
				"a current large training pod",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "dgx-h100", Count: 64, GPUModel: "H100-80GB", GPUsPerNode: 8,
					CPUMilli: capacityOf(dgxH100CPU), MemoryMiB: capacityOf(dgxH100Mem)},
			},
		}
	}},
	{"dgx-a100x16", func() ClusterSpec {
		return ClusterSpec{
			Description: "128 A100-80GB GPUs on 16 DGX A100 nodes × 8, 256 CPU threads and 2 TiB each: " +
				"a mid-sized homogeneous training cluster",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "dgx-a100", Count: 16, GPUModel: "A100-80GB", GPUsPerNode: 8,
					CPUMilli: capacityOf(dgxA100CPU), MemoryMiB: capacityOf(dgxA100Mem)},
			},
		}
	}},
	{"mixed-small", func() ClusterSpec {
		return ClusterSpec{
			Description: "96 GPUs of three models on 20 nodes (4 × 8 A100-80GB, 8 × 4 V100-32GB, 8 × 4 T4), " +
				"with CPU and memory: a small heterogeneous lab for model-constrained and fragmentation tests",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "dgx-a100", Count: 4, GPUModel: "A100-80GB", GPUsPerNode: 8,
					CPUMilli: capacityOf(dgxA100CPU), MemoryMiB: capacityOf(dgxA100Mem)},
				{NamePrefix: "v100", Count: 8, GPUModel: "V100-32GB", GPUsPerNode: 4,
					CPUMilli: capacityOf(v100x4CPU), MemoryMiB: capacityOf(v100x4Mem)},
				{NamePrefix: "t4", Count: 8, GPUModel: "T4", GPUsPerNode: 4,
					CPUMilli: capacityOf(t4x4CPU), MemoryMiB: capacityOf(t4x4Mem)},
			},
		}
	}},
	{"h200x8", func() ClusterSpec {
		return ClusterSpec{
			Description: "8 H200-141GB GPUs on one DGX H200 node, 224 CPU threads and 2 TiB, used as whole GPUs: " +
				"the baseline of the MIG worked example (docs/cluster.md)",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "dgx-h200", Count: 1, GPUModel: "H200-141GB", GPUsPerNode: 8,
					CPUMilli: capacityOf(dgxH200CPU), MemoryMiB: capacityOf(dgxH200Mem)},
			},
		}
	}},
	{"h200x8-mig", func() ClusterSpec {
		return ClusterSpec{
			Description: "the h200x8 node with every GPU MIG-partitioned into the balanced layout " +
				"(3g.71gb + 2g.35gb + 1g.18gb + 1g.18gb): the static-MIG case of the worked example",
			NodeGroups: []NodeGroupSpec{
				{NamePrefix: "dgx-h200", Count: 1, GPUModel: "H200-141GB", GPUsPerNode: 8,
					CPUMilli: capacityOf(dgxH200CPU), MemoryMiB: capacityOf(dgxH200Mem),
					MIG: &MIGSpec{All: "balanced"}},
			},
		}
	}},
}

// Presets lists the built-in cluster names in a fixed order.
func Presets() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// Preset returns a fresh copy of the named built-in cluster.
func Preset(name string) (*ClusterSpec, bool) {
	for _, p := range presets {
		if p.name == name {
			s := p.make()
			s.Name = p.name
			s.Source = fmt.Sprintf("preset %q", p.name)
			return &s, true
		}
	}
	return nil, false
}
