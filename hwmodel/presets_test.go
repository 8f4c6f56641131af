package hwmodel_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// presetSizes is what each preset must describe. Change a preset and this
// table, and docs/cluster.md, together.
var presetSizes = []struct {
	name         string
	nodes, gpus  int
	cpuModelled  bool
	modelsByGPUs map[string]int
}{
	{"philly-like", 312, 2496, false, map[string]int{"P100": 2496}},
	{"philly-sample", 72, 384, false, map[string]int{"P100": 384}},
	{"dgx-h100x64", 64, 512, true, map[string]int{"H100-80GB": 512}},
	{"dgx-a100x16", 16, 128, true, map[string]int{"A100-80GB": 128}},
	{"mixed-small", 20, 96, true, map[string]int{"A100-80GB": 32, "V100-32GB": 32, "T4": 32}},
	{"h200x8", 1, 8, true, map[string]int{"H200-141GB": 8}},
	{"h200x8-mig", 1, 8, true, map[string]int{"H200-141GB": 8}},
}

func TestPresets(t *testing.T) {
	var names []string
	for _, p := range presetSizes {
		names = append(names, p.name)
	}
	if got := hwmodel.Presets(); !slices.Equal(got, names) {
		t.Fatalf("Presets() = %v, want %v", got, names)
	}
	for _, p := range presetSizes {
		t.Run(p.name, func(t *testing.T) {
			spec, ok := hwmodel.Preset(p.name)
			if !ok {
				t.Fatal("missing")
			}
			if spec.Name != p.name || spec.Description == "" {
				t.Errorf("name %q, description %q", spec.Name, spec.Description)
			}
			c, err := spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			checkRedLine(t, c)
			if c.NumNodes() != p.nodes || c.TotalGPUs() != p.gpus || spec.NumNodes() != p.nodes || spec.NumGPUs() != p.gpus {
				t.Errorf("%d nodes / %d GPUs (spec %d / %d), want %d / %d", c.NumNodes(), c.TotalGPUs(), spec.NumNodes(), spec.NumGPUs(), p.nodes, p.gpus)
			}
			for name, n := range p.modelsByGPUs {
				if got := c.GPUsOfModel(modelID(t, name)); got != n {
					t.Errorf("%d %s GPUs, want %d", got, name, n)
				}
			}
			for i := 0; i < c.NumNodes(); i++ {
				n := c.Node(i)
				unmodelled := n.CPUMilli == hwmodel.UnlimitedCapacity && n.MemoryMiB == hwmodel.UnlimitedCapacity
				if unmodelled == p.cpuModelled {
					t.Fatalf("node %+v: CPU and memory modelled should be %v", n, p.cpuModelled)
				}
			}
			// Renders to YAML that reads back the same.
			y, err := spec.YAML()
			if err != nil {
				t.Fatal(err)
			}
			back, err := hwmodel.ParseClusterSpec(y, p.name+".yaml")
			if err != nil {
				t.Fatalf("rendering does not parse: %v\n%s", err, y)
			}
			if !reflect.DeepEqual(withoutSource(back), withoutSource(spec)) {
				t.Fatalf("round trip changed the preset:\n%s", y)
			}
			// Each call returns a fresh copy.
			spec.NodeGroups[0].Count = 1
			*spec = hwmodel.ClusterSpec{}
			again, _ := hwmodel.Preset(p.name)
			if again.NumNodes() != p.nodes {
				t.Errorf("changing a returned preset changed the next one")
			}
		})
	}
	if _, ok := hwmodel.Preset("openb"); ok {
		t.Error("unexpected preset openb")
	}
}

func TestPresetDGXShapes(t *testing.T) {
	spec, _ := hwmodel.Preset("dgx-h100x64")
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < c.NumNodes(); i++ {
		if n := c.Node(i); n.GPUs != 8 || n.CPUMilli != 224000 || n.MemoryMiB != 2*1024*1024 {
			t.Fatalf("node %+v, want 8 GPUs, 224000 milli-CPU, 2 TiB", n)
		}
	}
}
