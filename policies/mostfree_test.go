package policies

import (
	"reflect"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// TestMostFree checks the Pollux artifact's placement on four-GPU nodes:
// each case's expected shares are taken in order from the node with the
// most idle GPUs, ties to the lowest index.
func TestMostFree(t *testing.T) {
	v100 := model(t, "V100-16GB")
	four := func() hwmodel.Node { return node(v100, 4, 64000, 512*1024) }
	gpus := func(g int) hwmodel.Request { return hwmodel.Request{GPUs: g, GPUMilli: hwmodel.MilliPerGPU} }
	sh := func(n int, mask uint64) hwmodel.Share {
		return hwmodel.Share{Node: n, GPUs: mask, Milli: hwmodel.MilliPerGPU}
	}
	cases := []struct {
		name string
		busy map[int]uint64 // node: busy GPUs
		req  hwmodel.Request
		want hwmodel.Placement // nil: none
	}{
		{"one node when one has room, the emptiest", map[int]uint64{0: 0b0001, 2: 0b0011}, gpus(2), hwmodel.Placement{sh(1, 0b0011)}},
		{"ties to the lowest index", nil, gpus(3), hwmodel.Placement{sh(0, 0b0111)}},
		{"spread: 4 then 2", map[int]uint64{1: 0b0011}, gpus(6), hwmodel.Placement{sh(0, 0b1111), sh(2, 0b0011)}},
		{"spread over fragments, most idle first", map[int]uint64{0: 0b0111, 1: 0b0011, 2: 0b0001}, gpus(4), hwmodel.Placement{sh(2, 0b1110), sh(1, 0b0100)}},
		{"a four-GPU job split when no node is empty", map[int]uint64{0: 0b0001, 1: 0b0011, 2: 0b0111}, gpus(4), hwmodel.Placement{sh(0, 0b1110), sh(1, 0b0100)}},
		{"too few idle GPUs", map[int]uint64{0: 0b1111, 1: 0b1111}, gpus(5), nil},
		{"CPU and memory split by GPUs, remainder first", nil, hwmodel.Request{GPUs: 6, GPUMilli: 1000, CPUMilli: 7000, MemoryMiB: 700},
			hwmodel.Placement{{Node: 0, GPUs: 0b1111, Milli: 1000, CPUMilli: 4667, MemoryMiB: 467}, {Node: 1, GPUs: 0b0011, Milli: 1000, CPUMilli: 2333, MemoryMiB: 233}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, four(), four(), four())
			for n, m := range tc.busy {
				busy(t, c, n, m, 1000, 0)
			}
			p, ok := new(MostFree).Place(nil, c.View(), tc.req)
			if tc.want == nil {
				if ok || len(p) != 0 {
					t.Fatalf("placed %+v, want nothing", p)
				}
				return
			}
			if !ok || !reflect.DeepEqual(p, tc.want) {
				t.Fatalf("got %v %+v, want %+v", ok, p, tc.want)
			}
			if err := c.Allocate(p); err != nil {
				t.Fatalf("the cluster refuses the placement: %v", err)
			}
		})
	}
}
