package policies

import (
	"fmt"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// racksCluster has racks of nodes of 8 H100s; busy[i] GPUs of node i
// are taken.
func racksCluster(t *testing.T, racks, perRack int, busy map[int]int) *hwmodel.Cluster {
	t.Helper()
	h100, _ := hwmodel.LookupModel("H100")
	var nodes []hwmodel.Node
	for r := range racks {
		for k := range perRack {
			nodes = append(nodes, hwmodel.Node{Name: fmt.Sprintf("n%d-%d", r, k), Rack: fmt.Sprintf("r%d", r), Model: h100.ID, GPUs: 8, CPUMilli: 1 << 40, MemoryMiB: 1 << 40})
		}
	}
	c, err := hwmodel.NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range busy {
		if err := c.Allocate(hwmodel.Placement{{Node: i, GPUs: 1<<uint(n) - 1, Milli: 1000}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// A gang goes on the fewest nodes and, among those, within one rack when
// one rack can hold it; first fit and best fit take the most idle nodes
// wherever they stand.
func TestConsolidatePrefersOneRack(t *testing.T) {
	tests := []struct {
		name      string
		busy      map[int]int // node -> busy GPUs; nodes 0..2 in r0, 3..5 in r1
		gpus      int
		wantRacks int // consolidate's
		ffRacks   int // first fit's
		wantNodes int
	}{
		// Idle: r0 8, 2, 2; r1 6, 6, 0. Two nodes at least; first fit
		// takes the most idle (8 in r0, 6 in r1), consolidate r1's two.
		{"one rack holds it on the fewest nodes", map[int]int{1: 6, 2: 6, 3: 2, 4: 2, 5: 8}, 12, 1, 2, 2},
		// Idle: r0 2, 2, 2; r1 8, 2, 0. Three nodes at least, and no rack
		// has 12 idle GPUs.
		{"no rack holds it", map[int]int{0: 6, 1: 6, 2: 6, 4: 6, 5: 8}, 12, 2, 2, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := racksCluster(t, 2, 3, tc.busy)
			for _, name := range []string{"consolidate", "firstfit"} {
				pl, err := NewPlacer(name)
				if err != nil {
					t.Fatal(err)
				}
				p, ok := pl.Place(nil, c.View(), hwmodel.Request{GPUs: tc.gpus, GPUMilli: 1000})
				if !ok {
					t.Fatalf("%s: no placement", name)
				}
				racks := map[int]bool{}
				gpus := 0
				for _, s := range p {
					racks[c.NodeRack(s.Node)] = true
					gpus += s.GPUCount()
				}
				if gpus != tc.gpus || len(p) != tc.wantNodes {
					t.Errorf("%s: %v: %d GPUs on %d nodes, want %d on %d", name, p, gpus, len(p), tc.gpus, tc.wantNodes)
				}
				want := map[string]int{"consolidate": tc.wantRacks, "firstfit": tc.ffRacks}[name]
				if len(racks) != want {
					t.Errorf("%s: %v spans %d racks, want %d", name, p, len(racks), want)
				}
				if err := c.Allocate(p); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				c.Release(p)
			}
		})
	}
}
