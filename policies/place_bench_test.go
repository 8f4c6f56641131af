package policies

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// A realistic placement workload: the Alibaba GPU trace's cluster and pods
// (openb_node_list_gpu_node.csv and openb_pod_list_default.csv, the FGD
// paper's), scaled to any node count.

// benchNodeTypes are the trace's node types with their counts (1,213
// nodes, 6,212 GPUs).
var benchNodeTypes = []struct {
	model string
	gpus  int
	cpu   int64
	mem   int64
	count int
}{
	{"G2", 8, 96000, 393216, 549}, {"T4", 2, 104000, 524288, 387}, {"P100", 2, 16000, 122880, 107},
	{"G3", 8, 128000, 786432, 39}, {"V100-16GB", 4, 32000, 131072, 28}, {"P100", 2, 64000, 262144, 22},
	{"V100-32GB", 8, 96000, 786432, 21}, {"V100-16GB", 1, 8000, 32768, 19}, {"T4", 4, 96000, 393216, 17},
	{"V100-32GB", 4, 48000, 376832, 9}, {"V100-16GB", 8, 64000, 262144, 7}, {"P100", 1, 8000, 61440, 3},
	{"P100", 2, 8000, 61440, 2}, {"A10", 1, 128000, 1048576, 2}, {"V100-16GB", 8, 82000, 344064, 1},
}

// benchPodClasses are the trace's pod shapes that make up 95% of its
// 8,152 pods (CPU, GPUs, milli per GPU, count), and its multi-GPU ones.
var benchPodClasses = []struct {
	cpu   int64
	gpus  int
	milli int32
	count int
}{
	{3152, 1, 810, 1047}, {11300, 1, 1000, 874}, {11400, 1, 1000, 599}, {3152, 1, 1000, 470}, {11908, 1, 470, 388},
	{12500, 0, 0, 366}, {8000, 1, 470, 360}, {12000, 1, 1000, 326}, {32000, 0, 0, 290}, {18708, 1, 1000, 255},
	{11908, 1, 650, 237}, {4000, 1, 320, 232}, {9810, 1, 1000, 195}, {8000, 0, 0, 185}, {8000, 1, 1000, 164},
	{4000, 1, 1000, 159}, {15700, 1, 1000, 158}, {11908, 1, 1000, 153}, {16000, 1, 1000, 150}, {4000, 1, 230, 122},
	{6000, 1, 460, 120}, {15400, 0, 0, 120}, {16500, 0, 0, 95}, {14200, 1, 1000, 93}, {24200, 1, 1000, 84},
	{3152, 1, 590, 75}, {8000, 1, 320, 72}, {4152, 1, 550, 72}, {11900, 1, 1000, 55}, {4000, 1, 160, 54},
	{88000, 8, 1000, 18}, {32000, 2, 1000, 16}, {40000, 4, 1000, 15}, {64000, 8, 1000, 26},
}

// benchCluster is the trace's cluster scaled to about n nodes, each type
// in its share, in the trace's order.
func benchCluster(tb testing.TB, n int) *hwmodel.Cluster {
	total := 0
	for _, t := range benchNodeTypes {
		total += t.count
	}
	var nodes []hwmodel.Node
	for _, t := range benchNodeTypes {
		for k := (t.count*n + total/2) / total; k > 0; k-- {
			nodes = append(nodes, hwmodel.Node{Name: fmt.Sprintf("node-%05d", len(nodes)), Model: model(tb, t.model), GPUs: t.gpus, CPUMilli: t.cpu, MemoryMiB: t.mem})
		}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// benchPods draws pods in the trace's proportions, with 1 to 48 GiB of
// memory, and one GPU pod in ten restricted to two GPU models.
type benchPods struct {
	rng   *rand.Rand
	total int
	two   hwmodel.ModelSet
}

func newBenchPods(tb testing.TB, seed uint64) *benchPods {
	p := &benchPods{rng: rand.New(rand.NewPCG(seed, 7)), two: hwmodel.Of(model(tb, "G2"), model(tb, "V100-32GB"))}
	for _, k := range benchPodClasses {
		p.total += k.count
	}
	return p
}

func (p *benchPods) next() hwmodel.Request {
	x := p.rng.IntN(p.total)
	for _, k := range benchPodClasses {
		if x >= k.count {
			x -= k.count
			continue
		}
		r := hwmodel.Request{GPUs: k.gpus, GPUMilli: k.milli, CPUMilli: k.cpu, MemoryMiB: int64(1+p.rng.IntN(48)) * 1024}
		if k.gpus > 0 && p.rng.IntN(10) == 0 {
			r.Models = p.two
		}
		return r
	}
	panic("unreachable")
}

// benchRun keeps a cluster about half full of GPU pods in steady state:
// before each placement it ends random running pods until at most half
// the GPU milli is allocated.
type benchRun struct {
	c      *hwmodel.Cluster
	p      Placer
	target TargetWorkload // the placer's (fgd's), from the pods
	pods   *benchPods
	rng    *rand.Rand
	live   []hwmodel.Placement
	dst    hwmodel.Placement
	ok     int
}

func newBenchRun(tb testing.TB, name string, nodes int) *benchRun {
	pods := newBenchPods(tb, 1)
	var sample []hwmodel.Request
	for k := 0; k < 8000; k++ {
		sample = append(sample, pods.next())
	}
	target := TargetFromRequests(sample)
	p, err := NewPlacerWith(name, PlacerConfig{Seed: 42, Target: target})
	if err != nil {
		tb.Fatal(err)
	}
	b := &benchRun{c: benchCluster(tb, nodes), p: p, target: target, pods: newBenchPods(tb, 2), rng: rand.New(rand.NewPCG(3, 4)), dst: make(hwmodel.Placement, 0, 64)}
	for k := 0; k < 5*b.c.NumNodes(); k++ { // fill, then churn
		b.step(tb)
	}
	b.ok = 0
	return b
}

func (b *benchRun) step(tb testing.TB) {
	for 2*b.c.AllocatedMilli() > int64(b.c.TotalGPUs())*hwmodel.MilliPerGPU {
		k := b.rng.IntN(len(b.live))
		b.c.Release(b.live[k])
		b.live[k] = b.live[len(b.live)-1]
		b.live = b.live[:len(b.live)-1]
	}
	got, ok := b.p.Place(b.dst[:0], b.c.View(), b.pods.next())
	if !ok {
		return
	}
	p := append(hwmodel.Placement(nil), got...)
	if err := b.c.Allocate(p); err != nil {
		tb.Fatal(err)
	}
	b.live = append(b.live, p)
	b.ok++
}

// BenchmarkPlace measures one placement on a cluster shaped like the
// Alibaba trace's, kept half full by the trace's pods in steady state
// (each iteration also ends pods to stay at half and allocates what it
// places): the cost per placement, index upkeep included.
//
//	go test -run '^$' -bench 'Place/' -benchtime 20000x ./policies
func BenchmarkPlace(b *testing.B) {
	for _, name := range PlacementNames() {
		for _, nodes := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", name, nodes), func(b *testing.B) {
				run := newBenchRun(b, name, nodes)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run.step(b)
				}
				b.ReportMetric(float64(run.ok)/float64(b.N), "placed/op")
			})
		}
	}
}
