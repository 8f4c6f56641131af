package hwmodel_test

import (
	"slices"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
)

// A rack's failure takes every node of the rack down at one instant for
// one repair time, nodes without a rack never; rack failures come from
// their own streams, so adding them leaves the node failures as they were.
func TestRackFailuresAreCorrelated(t *testing.T) {
	spec := &hwmodel.ClusterSpec{Name: "racks", NodeGroups: []hwmodel.NodeGroupSpec{
		{NamePrefix: "a", Count: 8, GPUModel: "H100", GPUsPerNode: 8, NodesPerRack: 4},
		{NamePrefix: "loose", Count: 2, GPUModel: "H100", GPUsPerNode: 8},
	}}
	c, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if c.NumRacks() != 2 || c.NodeRack(0) != 0 || c.NodeRack(4) != 1 || c.NodeRack(8) != -1 {
		t.Fatalf("racks %d, node racks %d %d %d", c.NumRacks(), c.NodeRack(0), c.NodeRack(4), c.NodeRack(8))
	}
	repair := hwmodel.RepairModel{Kind: "fixed", Mean: 2 * hwmodel.Hour}
	nodesOnly := hwmodel.FailureModel{NodeMTBF: 30 * hwmodel.Day, NodeRepair: repair}
	withRacks := nodesOnly
	withRacks.RackMTBF, withRacks.RackRepair = 10*hwmodel.Day, hwmodel.RepairModel{Kind: "exponential", Mean: hwmodel.Hour}
	horizon := 365 * hwmodel.Day
	plain := nodesOnly.Schedule(c, horizon, 7)
	all := withRacks.Schedule(c, horizon, 7)
	if !slices.Equal(all, withRacks.Schedule(c, horizon, 7)) {
		t.Fatal("two schedules from one seed differ")
	}
	// Group the faults that are not node failures by (At, Repair): each
	// group must be exactly the nodes of one rack.
	rest := map[hwmodel.Fault]int{}
	for _, f := range plain {
		rest[f]++
	}
	groups := map[[2]hwmodel.Time][]int{}
	for _, f := range all {
		if rest[f] > 0 {
			rest[f]--
			continue
		}
		groups[[2]hwmodel.Time{f.At, f.Repair}] = append(groups[[2]hwmodel.Time{f.At, f.Repair}], f.Node)
	}
	for f, n := range rest {
		if n > 0 {
			t.Fatalf("node failure %+v is missing once rack failures are added", f)
		}
	}
	if len(groups) < 40 { // about 36.5 a year per rack, two racks
		t.Fatalf("%d rack failures in a year of two racks at a 10-day MTBF", len(groups))
	}
	for k, nodes := range groups {
		slices.Sort(nodes)
		if !slices.Equal(nodes, []int{0, 1, 2, 3}) && !slices.Equal(nodes, []int{4, 5, 6, 7}) {
			t.Fatalf("a rack failure at %v hit nodes %v, want one rack's four", k[0], nodes)
		}
	}
}
