package hwmodel

// Read-only MIG queries that placements call in their inner loops: unlike
// Node and MIGLayoutOf they copy nothing, so a MIG placement allocates
// nothing per node or GPU.

// NodeModel is node i's GPU model (Node(i).Model without copying the node).
func (c *Cluster) NodeModel(i int) ModelID { return c.nodes[i].Model }

// NodeGPUs is node i's GPU count (Node(i).GPUs without copying the node).
func (c *Cluster) NodeGPUs(i int) int { return c.nodes[i].GPUs }

// MIGInstanceCount is the number of instances in the GPU's current layout;
// 0 when it is not MIG-enabled.
func (c *Cluster) MIGInstanceCount(node, gpu int) int {
	if c.mig == nil {
		return 0
	}
	return len(c.mig[c.gpuBase[node]+gpu].layout)
}

// MIGInstanceAt is instance k of the GPU's current layout; k must be in
// 0..MIGInstanceCount-1.
func (c *Cluster) MIGInstanceAt(node, gpu, k int) MIGInstance {
	return c.mig[c.gpuBase[node]+gpu].layout[k]
}
