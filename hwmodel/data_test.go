package hwmodel_test

import (
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

const dataSpec = `name: data
storage:
  read_gb_per_s: 2
datasets:
  - name: big
    size_gb: 300
  - name: small
    size_gb: 100
    replicas: [node-001]
  - name: huge
    size_gb: 900
node_groups:
  - name_prefix: node
    count: 2
    gpu_model: H100
    gpus_per_node: 8
    cache_gb: 500
`

// The cache keeps what fits, least recently used out first; a replica
// is never cached (nor evicted), a dataset larger than the cache never
// enters it, and a cached copy is local only once its read has ended.
func TestDataCache(t *testing.T) {
	spec, err := hwmodel.ParseClusterSpec([]byte(dataSpec), "data.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	idx := func(name string) int {
		k, ok := c.DatasetIndex(name)
		if !ok {
			t.Fatalf("no dataset %s", name)
		}
		return k
	}
	big, small, huge := idx("big"), idx("small"), idx("huge")
	if c.ReadMBPerS() != 2000 || c.DatasetMB(big) != 300_000 {
		t.Fatalf("read %v MB/s, big %d MB", c.ReadMBPerS(), c.DatasetMB(big))
	}
	if !c.DataLocal(1, small, 0) || c.DataLocal(0, small, 0) {
		t.Fatal("the replica of small is on n-001 only")
	}
	c.CacheData(0, big, 100)
	if c.DataLocal(0, big, 99) || !c.DataLocal(0, big, 100) {
		t.Fatal("a cached copy is local from the end of its read on")
	}
	c.CacheData(0, huge, 0)
	if c.DataLocal(0, huge, 1000) || c.CachedMB(0) != 300_000 {
		t.Fatalf("a dataset larger than the cache was cached (%d MB held)", c.CachedMB(0))
	}
	c.CacheData(0, small, 0) // 300 + 100 of 500
	c.CacheData(0, big, 0)   // touched: small is now the least recent
	c.CacheData(1, small, 0) // a replica there: nothing to cache
	if c.CachedMB(1) != 0 {
		t.Fatal("a replica went into the cache")
	}
	if got := c.CachedMB(0); got != 400_000 {
		t.Fatalf("cache holds %d MB, want 400000", got)
	}
	spec2, _ := hwmodel.ParseClusterSpec([]byte(strings.Replace(dataSpec, "size_gb: 900", "size_gb: 150", 1)), "data.yaml")
	c2, _ := spec2.Build()
	c2.CacheData(0, big, 0)   // 300
	c2.CacheData(0, small, 0) // 400
	c2.CacheData(0, big, 0)   // big most recent
	c2.CacheData(0, huge, 0)  // 150 more: small (least recent) leaves
	if c2.DataLocal(0, small, 1) || !c2.DataLocal(0, big, 1) || !c2.DataLocal(0, huge, 1) {
		t.Fatal("eviction did not take the least recently used dataset")
	}
}

// Bad datasets and storage are errors at their line and field.
func TestDataSpecErrors(t *testing.T) {
	base := "name: d\nnodes:\n  - name: a\n    gpus: 0\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"replica on no node", base + "storage: {read_gb_per_s: 1}\ndatasets:\n  - name: x\n    size_gb: 1\n    replicas: [a, ghost]\n", `d.yaml:9: datasets[0].replicas[1]: node "ghost" does not exist`},
		{"named twice", base + "storage: {read_gb_per_s: 1}\ndatasets:\n  - name: x\n    size_gb: 1\n  - name: x\n    size_gb: 2\n", `d.yaml:9: datasets[1].name: dataset "x" is named twice`},
		{"size 0", base + "storage: {read_gb_per_s: 1}\ndatasets:\n  - name: x\n    size_gb: 0\n", `d.yaml:8: datasets[0].size_gb: want a size in GB > 0`},
		{"bandwidth 0", base + "storage: {read_gb_per_s: 0}\ndatasets:\n  - name: x\n    size_gb: 1\n", `d.yaml:5: storage.read_gb_per_s: want a finite bandwidth > 0`},
		{"bandwidth negative", base + "storage: {read_gb_per_s: -3}\n", `d.yaml:5: storage.read_gb_per_s: want a finite bandwidth > 0`},
		{"no storage", base + "datasets:\n  - name: x\n    size_gb: 1\n", `storage: datasets need a storage tier`},
		{"negative cache", "name: d\nnodes:\n  - name: a\n    gpus: 0\n    cache_gb: -1\n", `d.yaml:5: nodes[0].cache_gb: want a size in GB`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hwmodel.ParseClusterSpec([]byte(tc.yaml), "d.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
