package hwmodel

// ClusterView is a read-only window on a Cluster: what a scheduling policy
// sees (policies.View.Cluster). It has the Cluster's queries and none of
// its mutators (Allocate, Release, Reconfigure, UnblockMIG), so code that
// holds only a ClusterView cannot change the capacity books; the driver
// that owns the *Cluster changes them, and the view shows every change at
// once (it is not a snapshot).
//
// The invariant: nothing reachable from a ClusterView's methods aliases
// the Cluster's state. Every method returns plain values (numbers,
// bitmasks, a Share, a MIGInstance); Node returns a copy whose MIG
// layouts are copied too. clusterview_test.go checks the method set by
// reflection: no mutator, no method that the Cluster lacks, no result
// type that holds a pointer, slice or map other than Node's copied MIG.
//
// A ClusterView is a small value, not an interface: placements call its
// methods in their inner loops, and each forwards to the Cluster's method
// of the same name and is inlined. The zero ClusterView views no cluster;
// its methods panic. Two views of the same Cluster are ==.
type ClusterView struct{ c *Cluster }

// View returns the read-only view of c.
func (c *Cluster) View() ClusterView { return ClusterView{c} }

// NumNodes is Cluster.NumNodes.
func (v ClusterView) NumNodes() int { return v.c.NumNodes() }

// Node is Cluster.Node, except that the node's MIG layouts are a copy, so
// the caller may keep or modify them. A MIG node's copy allocates:
// placement loops read NodeModel and NodeGPUs instead.
func (v ClusterView) Node(i int) Node {
	n := v.c.Node(i)
	if n.MIG != nil {
		mig := make([]MIGLayout, len(n.MIG))
		for g, l := range n.MIG {
			mig[g] = l.Clone()
		}
		n.MIG = mig
	}
	return n
}

// NodeModel is Cluster.NodeModel.
func (v ClusterView) NodeModel(i int) ModelID { return v.c.NodeModel(i) }

// DataLocal is Cluster.DataLocal.
func (v ClusterView) DataLocal(i, d int, now Time) bool { return v.c.DataLocal(i, d, now) }

// NumDatasets is Cluster.NumDatasets.
func (v ClusterView) NumDatasets() int { return v.c.NumDatasets() }

// NodeRack is Cluster.NodeRack.
func (v ClusterView) NodeRack(i int) int { return v.c.NodeRack(i) }

// SpreadOf is Cluster.SpreadOf.
func (v ClusterView) SpreadOf(p Placement) Spread { return v.c.SpreadOf(p) }

// NumRacks is Cluster.NumRacks.
func (v ClusterView) NumRacks() int { return v.c.NumRacks() }

// NodeGPUs is Cluster.NodeGPUs.
func (v ClusterView) NodeGPUs(i int) int { return v.c.NodeGPUs(i) }

// TotalGPUs is Cluster.TotalGPUs.
func (v ClusterView) TotalGPUs() int { return v.c.TotalGPUs() }

// GPUsOfModel is Cluster.GPUsOfModel.
func (v ClusterView) GPUsOfModel(id ModelID) int { return v.c.GPUsOfModel(id) }

// FreeWholeGPUsAccepted is Cluster.FreeWholeGPUsAccepted.
func (v ClusterView) FreeWholeGPUsAccepted(s ModelSet) int { return v.c.FreeWholeGPUsAccepted(s) }

// HasNodeWithIdleGPUs is Cluster.HasNodeWithIdleGPUs.
func (v ClusterView) HasNodeWithIdleGPUs(s ModelSet, n int) bool {
	return v.c.HasNodeWithIdleGPUs(s, n)
}

// MaxNodeGPUs is Cluster.MaxNodeGPUs.
func (v ClusterView) MaxNodeGPUs(s ModelSet) int { return v.c.MaxNodeGPUs(s) }

// AllocatedMilli is Cluster.AllocatedMilli.
func (v ClusterView) AllocatedMilli() int64 { return v.c.AllocatedMilli() }

// FreeWholeGPUs is Cluster.FreeWholeGPUs.
func (v ClusterView) FreeWholeGPUs(i int) int { return v.c.FreeWholeGPUs(i) }

// FreeMilli is Cluster.FreeMilli.
func (v ClusterView) FreeMilli(i, g int) int32 { return v.c.FreeMilli(i, g) }

// FreeCPU is Cluster.FreeCPU.
func (v ClusterView) FreeCPU(i int) int64 { return v.c.FreeCPU(i) }

// FreeMemory is Cluster.FreeMemory.
func (v ClusterView) FreeMemory(i int) int64 { return v.c.FreeMemory(i) }

// Generation is Cluster.Generation.
func (v ClusterView) Generation(i int) uint64 { return v.c.Generation(i) }

// Changes is Cluster.Changes.
func (v ClusterView) Changes() int64 { return v.c.Changes() }

// ChangedNode is Cluster.ChangedNode.
func (v ClusterView) ChangedNode(seq int64) int { return v.c.ChangedNode(seq) }

// NodeFreeMilli is Cluster.NodeFreeMilli.
func (v ClusterView) NodeFreeMilli(i int) int64 { return v.c.NodeFreeMilli(i) }

// SharesOfKind is Cluster.SharesOfKind.
func (v ClusterView) SharesOfKind(i, k int) int { return v.c.SharesOfKind(i, k) }

// ShareKinds is Cluster.ShareKinds.
func (v ClusterView) ShareKinds(i int) int { return v.c.ShareKinds(i) }

// IsMIG is Cluster.IsMIG.
func (v ClusterView) IsMIG(node, gpu int) bool { return v.c.IsMIG(node, gpu) }

// MIGBusy is Cluster.MIGBusy.
func (v ClusterView) MIGBusy(node, gpu int) uint64 { return v.c.MIGBusy(node, gpu) }

// MIGBlocked is Cluster.MIGBlocked.
func (v ClusterView) MIGBlocked(node, gpu int) uint64 { return v.c.MIGBlocked(node, gpu) }

// MIGShare is Cluster.MIGShare.
func (v ClusterView) MIGShare(node, gpu, k int, cpuMilli, memoryMiB int64) Share {
	return v.c.MIGShare(node, gpu, k, cpuMilli, memoryMiB)
}

// FindMIGInstance is Cluster.FindMIGInstance.
func (v ClusterView) FindMIGInstance(node, gpu int, r MIGRequest) int {
	return v.c.FindMIGInstance(node, gpu, r)
}

// NumMIGGPUs is Cluster.NumMIGGPUs.
func (v ClusterView) NumMIGGPUs() int { return v.c.NumMIGGPUs() }

// MIGInstanceCount is Cluster.MIGInstanceCount.
func (v ClusterView) MIGInstanceCount(node, gpu int) int { return v.c.MIGInstanceCount(node, gpu) }

// MIGInstanceAt is Cluster.MIGInstanceAt.
func (v ClusterView) MIGInstanceAt(node, gpu, k int) MIGInstance {
	return v.c.MIGInstanceAt(node, gpu, k)
}
