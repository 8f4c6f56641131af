package hwmodel_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// openbTrace finds a shipped openb file: under $BRIGADE_TRACES, else the
// shared folder next to the checkout. Tests that need one skip without it.
func openbTrace(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range []string{os.Getenv("BRIGADE_TRACES"), "../../shared/traces", "../shared/traces"} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "alibaba-gpu-v2023", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s not found (set BRIGADE_TRACES)", name)
	return ""
}

func TestOpenBNodeListReal(t *testing.T) {
	tests := []struct {
		file                 string
		nodes, gpus, cpuOnly int
		cpuMilli, memMiB     int64
	}{
		{"openb_node_list_gpu_node.csv", 1213, 6212, 0, 107018000, 503828480},
		{"openb_node_list_all_node.csv", 1523, 6212, 310, 125514000, 612028416},
	}
	wantByModel := map[string]int{"G2": 4392, "T4": 842, "G3": 312, "P100": 265, "V100-32GB": 204, "V100-16GB": 195, "A10": 2}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := openbTrace(t, tc.file)
			spec, err := hwmodel.ResolveCluster(path) // detected by its header
			if err != nil {
				t.Fatal(err)
			}
			if spec.Name != strings.TrimSuffix(tc.file, ".csv") {
				t.Errorf("name %q", spec.Name)
			}
			if spec.NumNodes() != tc.nodes || spec.NumGPUs() != tc.gpus {
				t.Errorf("%d nodes, %d GPUs; want %d, %d", spec.NumNodes(), spec.NumGPUs(), tc.nodes, tc.gpus)
			}
			c, err := spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range wantByModel {
				m, _ := hwmodel.LookupModel(name)
				if got := c.GPUsOfModel(m.ID); got != want {
					t.Errorf("%s: %d GPUs, want %d", name, got, want)
				}
			}
			cpuOnly := 0
			var cpu, mem int64
			for i := 0; i < c.NumNodes(); i++ {
				n := c.Node(i)
				if n.GPUs == 0 {
					cpuOnly++
				}
				cpu += n.CPUMilli
				mem += n.MemoryMiB
			}
			if cpuOnly != tc.cpuOnly || cpu != tc.cpuMilli || mem != tc.memMiB {
				t.Errorf("%d CPU-only nodes, %d milli-CPU, %d MiB; want %d, %d, %d", cpuOnly, cpu, mem, tc.cpuOnly, tc.cpuMilli, tc.memMiB)
			}
			if first := c.Node(0); first.Name != "openb-node-0000" {
				t.Errorf("first node %+v; want openb-node-0000 (file order)", first)
			}
		})
	}
}

func TestOpenBNodeListSmall(t *testing.T) {
	in := "\ufeffSN, cpu_milli ,memory_mib,gpu,model,extra\n" +
		"a,64000,262144,2,P100,x\n" +
		"b,96000,786432,8,V100M32,\n" +
		"c,32000,131072,0,,\n" +
		"d,1,2,1,g2,\n"
	spec, err := hwmodel.ParseOpenBNodeList(strings.NewReader(in), "n.csv", "small")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := []hwmodel.Node{
		{Name: "a", Model: mustModel(t, "P100"), GPUs: 2, CPUMilli: 64000, MemoryMiB: 262144},
		{Name: "b", Model: mustModel(t, "V100-32GB"), GPUs: 8, CPUMilli: 96000, MemoryMiB: 786432},
		{Name: "c", GPUs: 0, CPUMilli: 32000, MemoryMiB: 131072},
		{Name: "d", Model: mustModel(t, "G2"), GPUs: 1, CPUMilli: 1, MemoryMiB: 2},
	}
	if c.NumNodes() != len(want) {
		t.Fatalf("%d nodes", c.NumNodes())
	}
	for i, w := range want {
		if got := c.Node(i); !reflect.DeepEqual(got, w) {
			t.Errorf("node %d: %+v, want %+v", i, got, w)
		}
	}
	// The spec renders to YAML that reads back to the same cluster.
	y, err := spec.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := hwmodel.ParseClusterSpec(y, "back.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	nb, _ := back.NodeList()
	na, _ := spec.NodeList()
	for i := range na {
		if !reflect.DeepEqual(na[i], nb[i]) {
			t.Errorf("node %d after YAML round trip: %+v, want %+v", i, nb[i], na[i])
		}
	}
}

func mustModel(t *testing.T, name string) hwmodel.ModelID {
	t.Helper()
	m, ok := hwmodel.LookupModel(name)
	if !ok {
		t.Fatalf("no model %q", name)
	}
	return m.ID
}

func TestOpenBFileErrors(t *testing.T) {
	const head = "sn,cpu_milli,memory_mib,gpu,model\n"
	tests := []struct{ in, want string }{
		{"", `n.csv:1: want a header line`},
		{"sn,cpu_milli,memory_mib,gpu\n", `n.csv:1: field "model": required column "model" is missing`},
		{"sn,sn,cpu_milli,memory_mib,gpu,model\n", `n.csv:1: field "sn": column "sn" appears twice`},
		{head, `n.csv: the node list has a header but no nodes`},
		{head + "a,1,1,1\n", `n.csv:2: want 5 fields as in the header on line 1, found 4`},
		{head + "a,1,1,1,T4\n,1,1,1,T4\n", `n.csv:3: field "sn": want a node name`},
		{head + "a b,1,1,1,T4\n", `n.csv:2: field "sn": want a node name of printable characters without spaces, found "a b"`},
		{head + "a,1,1,1,T4\nb,1,1,1,T4\na,1,1,1,T4\n", `n.csv:4: field "sn": node name "a" repeats line 2`},
		{head + "a,x,1,1,T4\n", `n.csv:2: field "cpu_milli": want a whole number in 0..1099511627776, found "x"`},
		{head + "a,-1,1,1,T4\n", `n.csv:2: field "cpu_milli": want a whole number`},
		{head + "a,1,1.5,1,T4\n", `n.csv:2: field "memory_mib": want a whole number`},
		{head + "a,1,1,65,T4\n", `n.csv:2: field "gpu": want a whole number in 0..64, found "65"`},
		{head + "a,1,1,2,\n", `n.csv:2: field "model": want the GPU model of a node with 2 GPUs, found an empty cell`},
		{head + "a,1,1,2,Z80\n", `n.csv:2: field "model": want a GPU model name, found "Z80"`},
		{head + "a,1,1,0,Z80\n", `n.csv:2: field "model": want a GPU model name, found "Z80"`},
		{head + "a,1,1,1,\"T4\n", `n.csv:2: malformed CSV`},
	}
	for _, tc := range tests {
		_, err := hwmodel.ParseOpenBNodeList(strings.NewReader(tc.in), "n.csv", "x")
		var ne *hwmodel.FileError
		if !errors.As(err, &ne) {
			t.Errorf("%q: error %v (%T), want a *FileError", tc.in, err, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s...", tc.in, err, tc.want)
		}
	}
}

// TestResolveClusterDetectsNodeList: a YAML spec and a node list under
// names that do not tell them apart are both read correctly.
func TestResolveClusterDetectsNodeList(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "cluster.txt")
	if err := os.WriteFile(list, []byte("\n sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,4,T4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := hwmodel.ResolveCluster(list)
	if err != nil || spec.NumGPUs() != 4 || spec.Name != "cluster.txt" {
		t.Fatalf("node list: %+v, %v", spec, err)
	}
	yml := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(yml, []byte("name: yml\nnodes:\n  - name: n1\n    gpu_model: T4\n    gpus: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err = hwmodel.ResolveCluster(yml)
	if err != nil || spec.NumGPUs() != 2 {
		t.Fatalf("YAML spec: %+v, %v", spec, err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,4,Z80\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hwmodel.ResolveCluster(bad); err == nil || !strings.Contains(err.Error(), "bad.csv:2: field \"model\"") {
		t.Fatalf("bad node list: %v", err)
	}
}

// FuzzParseOpenBNodeList: no input panics; an error is a *FileError
// about the named file; an accepted list builds a cluster that passes
// CheckInvariants and holds exactly the nodes, GPUs, CPU and memory listed.
func FuzzParseOpenBNodeList(f *testing.F) {
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\nopenb-node-0001,32000,131072,0,\n"))
	f.Add([]byte("model,gpu,memory_mib,cpu_milli,sn\nG3,8,786432,96000,x\nG2,1,1,1,y\n"))
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\na,1099511627776,0,64,A10\n"))
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\na,1,1,1,\"T4\"\"\"\n"))
	for _, name := range []string{"openb_node_list_gpu_node.csv", "openb_node_list_all_node.csv"} {
		for _, dir := range []string{"../../shared/traces/alibaba-gpu-v2023", "../shared/traces/alibaba-gpu-v2023"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(b[:min(len(b), 2000)])
				break
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := hwmodel.ParseOpenBNodeList(bytes.NewReader(data), "fuzz.csv", "fuzz")
		if err != nil {
			var ne *hwmodel.FileError
			if !errors.As(err, &ne) || ne.File != "fuzz.csv" || ne.Line < 0 || ne.Msg == "" {
				t.Fatalf("badly located error %T: %v", err, err)
			}
			if spec != nil {
				t.Fatal("spec returned along with an error")
			}
			return
		}
		c, err := spec.Build()
		if err != nil {
			t.Fatalf("accepted list does not build: %v", err)
		}
		if err := c.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if c.NumNodes() != len(spec.Nodes) || c.TotalGPUs() != spec.NumGPUs() {
			t.Fatalf("cluster has %d nodes, %d GPUs; spec %d, %d", c.NumNodes(), c.TotalGPUs(), len(spec.Nodes), spec.NumGPUs())
		}
		for i, n := range spec.Nodes {
			got := c.Node(i)
			if got.Name != n.Name || got.GPUs != n.GPUs || got.CPUMilli != *n.CPUMilli || got.MemoryMiB != *n.MemoryMiB {
				t.Fatalf("node %d: %+v from %+v", i, got, n)
			}
		}
	})
}
