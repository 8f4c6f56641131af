package hwmodel_test

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
)

// ResolveCluster takes what a user typed after --cluster: a preset name,
// or the path of a YAML or JSON spec file.
func ExampleResolveCluster() {
	spec, err := hwmodel.ResolveCluster("dgx-h100x64")
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := spec.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	n := c.Node(0)
	fmt.Printf("%s: %d nodes, %d GPUs\n", spec.Name, c.NumNodes(), c.TotalGPUs())
	fmt.Printf("first node %s: %d × %s, %d milli-CPU, %d MiB\n",
		n.Name, n.GPUs, hwmodel.Model(n.Model).Name, n.CPUMilli, n.MemoryMiB)

	_, err = hwmodel.ResolveCluster("dgx-h100x65")
	fmt.Println(err)
	// Output:
	// dgx-h100x64: 64 nodes, 512 GPUs
	// first node dgx-h100-000: 8 × H100-80GB, 224000 milli-CPU, 2097152 MiB
	// cluster "dgx-h100x65": no such file, and not a preset (presets: philly-like, philly-sample, dgx-h100x64, dgx-a100x16, mixed-small, h200x8, h200x8-mig)
}

// A spec can also come from bytes, for example embedded in a test.
func ExampleParseClusterSpec() {
	spec, err := hwmodel.ParseClusterSpec([]byte(`
name: two-boxes
node_groups:
  - name_prefix: box
    count: 2
    gpu_model: V100M32
    gpus_per_node: 4
`), "inline.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := spec.Build()
	fmt.Println(c.Node(1).Name, hwmodel.Model(c.Node(1).Model).Name, c.TotalGPUs())

	_, err = hwmodel.ParseClusterSpec([]byte("name: x\nnodes:\n  - {name: a, gpus: 1, gpu_model: T4, cpu: 4}\n"), "typo.yaml")
	fmt.Println(err)
	// Output:
	// box-001 V100-32GB 8
	// typo.yaml:3: nodes[0].cpu: unknown field (known fields: name, gpu_model, gpus, rack, cpu_milli, memory_mib, cache_gb, mig); did you mean "cpu_milli"?
}
