package hwmodel

import (
	"fmt"
	"math/bits"
)

// MIG books of a Cluster.
//
// A MIG-enabled GPU (one whose current layout is not empty) is never
// handed out whole or shared: its FreeMilli is 0, it is not an idle GPU
// (FreeWholeGPUs, HasNodeWithIdleGPUs, FreeWholeGPUsAccepted) and a share
// without an Instance cannot select it, so placements that know nothing of
// MIG skip it unchanged. It is used one instance at a time: a Share with
// Instance k+1 selects exactly that GPU and takes instance k, which must
// exist, be free and not be blocked, with Milli equal to MIGMilli of the
// instance's profile. AllocatedMilli counts a busy instance's MIGMilli.
//
// Reconfigure changes a GPU's layout. Instances it creates are blocked
// (being created: not allocatable) until UnblockMIG; the driver models
// the reconfiguration time between the two calls.

// isMIG reports whether flat GPU g is MIG-enabled.
func (c *Cluster) isMIG(g int) bool { return c.mig != nil && len(c.mig[g].layout) > 0 }

func (c *Cluster) checkGPU(node, gpu int) error {
	if node < 0 || node >= len(c.nodes) {
		return fmt.Errorf("node %d does not exist (the cluster has %d nodes)", node, len(c.nodes))
	}
	if gpu < 0 || gpu >= c.nodes[node].GPUs {
		return fmt.Errorf("node %q has %d GPUs, no GPU %d", c.nodes[node].Name, c.nodes[node].GPUs, gpu)
	}
	return nil
}

// IsMIG reports whether GPU gpu of node node is MIG-enabled now.
func (c *Cluster) IsMIG(node, gpu int) bool { return c.isMIG(c.gpuBase[node] + gpu) }

// MIGLayoutOf returns a copy of the GPU's current layout; nil when it is
// not MIG-enabled. Instance k of a MIG share is element k.
func (c *Cluster) MIGLayoutOf(node, gpu int) MIGLayout {
	if c.mig == nil {
		return nil
	}
	return c.mig[c.gpuBase[node]+gpu].layout.Clone()
}

// MIGBusy is the GPU's busy instances as a bitmask (bit k: instance k holds
// a share); 0 for a GPU that is not MIG-enabled.
func (c *Cluster) MIGBusy(node, gpu int) uint64 {
	if c.mig == nil {
		return 0
	}
	return c.mig[c.gpuBase[node]+gpu].busy
}

// MIGBlocked is the GPU's blocked instances as a bitmask (bit k: instance
// k is being created by Reconfigure and cannot be allocated until
// UnblockMIG); 0 for a GPU that is not MIG-enabled.
func (c *Cluster) MIGBlocked(node, gpu int) uint64 {
	if c.mig == nil {
		return 0
	}
	return c.mig[c.gpuBase[node]+gpu].blocked
}

// MIGInstanceFree reports whether instance k of the GPU exists, is not in
// use and is not blocked: whether a share with Instance k+1 fits (CPU and
// memory aside).
func (c *Cluster) MIGInstanceFree(node, gpu, k int) bool {
	if c.mig == nil {
		return false
	}
	mg := &c.mig[c.gpuBase[node]+gpu]
	return k >= 0 && k < len(mg.layout) && (mg.busy|mg.blocked)&(1<<k) == 0
}

// FindMIGInstance returns the lowest-indexed free, unblocked instance of
// the GPU whose profile matches r, or -1.
func (c *Cluster) FindMIGInstance(node, gpu int, r MIGRequest) int {
	if c.mig == nil {
		return -1
	}
	mg := &c.mig[c.gpuBase[node]+gpu]
	model := c.nodes[node].Model
	for k, in := range mg.layout {
		if (mg.busy|mg.blocked)&(1<<k) == 0 && r.Matches(model, in.Profile) {
			return k
		}
	}
	return -1
}

// MIGShare builds the share that places a MIG job on instance k of the
// GPU, with the given CPU and memory: Instance k+1 and Milli the
// instance's MIGMilli. It does not check that the instance is free.
func (c *Cluster) MIGShare(node, gpu, k int, cpuMilli, memoryMiB int64) Share {
	s := Share{Node: node, GPUs: 1 << gpu, CPUMilli: cpuMilli, MemoryMiB: memoryMiB, Instance: k + 1}
	if c.mig != nil {
		if l := c.mig[c.gpuBase[node]+gpu].layout; k >= 0 && k < len(l) {
			s.Milli = MIGMilli(c.nodes[node].Model, l[k].Profile)
		}
	}
	return s
}

// NumMIGGPUs is the number of MIG-enabled GPUs now.
func (c *Cluster) NumMIGGPUs() int { return c.migGPUs }

// MIGSliceStats returns the compute slices of every MIG-enabled GPU
// (total: 7 per GPU for the models in the table, whatever its layout
// leaves unused) and the compute slices of the instances in use (busy).
// busy/total is MIG slice utilisation.
func (c *Cluster) MIGSliceStats() (total, busy int) { return c.migSlicesTotal, c.migSlicesBusy }

// fitsMIG checks a share with Instance != 0 (CPU and memory are checked
// by Fits).
func (c *Cluster) fitsMIG(s Share) error {
	n := &c.nodes[s.Node]
	if s.Instance < 0 {
		return fmt.Errorf("node %q: MIG instance %d is negative: %w", n.Name, s.Instance, ErrCapacity)
	}
	if bits.OnesCount64(s.GPUs) != 1 {
		return fmt.Errorf("node %q: a MIG share selects exactly one GPU, got mask %#x: %w", n.Name, s.GPUs, ErrCapacity)
	}
	gpu := bits.TrailingZeros64(s.GPUs)
	g := c.gpuBase[s.Node] + gpu
	if !c.isMIG(g) {
		return fmt.Errorf("node %q GPU %d is not MIG-enabled: %w", n.Name, gpu, ErrCapacity)
	}
	mg := &c.mig[g]
	k := s.Instance - 1
	if k >= len(mg.layout) {
		return fmt.Errorf("node %q GPU %d has %d MIG instances, no instance %d: %w", n.Name, gpu, len(mg.layout), k, ErrCapacity)
	}
	in := mg.layout[k]
	name := migOf(n.Model).profiles[in.Profile].Name
	switch {
	case mg.busy&(1<<k) != 0:
		return fmt.Errorf("node %q GPU %d MIG instance %d (%s@%d) is in use: %w", n.Name, gpu, k, name, in.Start, ErrCapacity)
	case mg.blocked&(1<<k) != 0:
		return fmt.Errorf("node %q GPU %d MIG instance %d (%s@%d) is being reconfigured: %w", n.Name, gpu, k, name, in.Start, ErrCapacity)
	}
	if want := MIGMilli(n.Model, in.Profile); s.Milli != want {
		return fmt.Errorf("node %q GPU %d MIG instance %d (%s): share of %d milli, the instance is %d: %w", n.Name, gpu, k, name, s.Milli, want, ErrCapacity)
	}
	return nil
}

// applyMIG takes (sign -1) or returns (sign +1) a MIG share's instance.
func (c *Cluster) applyMIG(s Share, sign int) {
	i := s.Node
	gpu := bits.TrailingZeros64(s.GPUs)
	g := c.gpuBase[i] + gpu
	if bits.OnesCount64(s.GPUs) != 1 || !c.isMIG(g) || s.Instance > len(c.mig[g].layout) {
		panic(fmt.Sprintf("hwmodel: MIG share %+v on node %q names no MIG instance", s, c.nodes[i].Name))
	}
	mg := &c.mig[g]
	k := s.Instance - 1
	bit := uint64(1) << k
	slices := migOf(c.nodes[i].Model).profiles[mg.layout[k].Profile].Slices
	if sign < 0 {
		mg.busy |= bit
		c.migSlicesBusy += slices
		c.allocatedMilli += int64(s.Milli)
		return
	}
	if mg.busy&bit == 0 {
		panic(fmt.Sprintf("hwmodel: release of node %q GPU %d MIG instance %d, which is not in use", c.nodes[i].Name, gpu, k))
	}
	if want := MIGMilli(c.nodes[i].Model, mg.layout[k].Profile); s.Milli != want {
		panic(fmt.Sprintf("hwmodel: release of node %q GPU %d MIG instance %d with %d milli, the instance is %d (a share not rewritten after Reconfigure?)", c.nodes[i].Name, gpu, k, s.Milli, want))
	}
	mg.busy &^= bit
	c.migSlicesBusy -= slices
	c.allocatedMilli -= int64(s.Milli)
}

// enableMIG turns idle, non-MIG GPU gpu of node i into a MIG GPU with
// layout l (valid, not empty), whose instances start with the given
// blocked mask.
func (c *Cluster) enableMIG(i, gpu int, l MIGLayout, blocked uint64) {
	if c.mig == nil {
		c.mig = make([]migGPU, len(c.gpuFree))
	}
	g := c.gpuBase[i] + gpu
	model := c.nodes[i].Model
	c.idleHistogram[model][c.wholeFree[i]]--
	c.wholeFree[i]--
	c.wholeByModel[model]--
	c.idleHistogram[model][c.wholeFree[i]]++
	c.gpuFree[g] = 0
	c.nodeFree[i] -= MilliPerGPU
	c.mig[g] = migGPU{layout: l, blocked: blocked}
	compute, _ := MIGSlices(model)
	c.migGPUs++
	c.migSlicesTotal += compute
}

// disableMIG turns MIG GPU gpu of node i, with no instance in use, back
// into an idle whole GPU.
func (c *Cluster) disableMIG(i, gpu int) {
	g := c.gpuBase[i] + gpu
	model := c.nodes[i].Model
	c.mig[g] = migGPU{}
	c.idleHistogram[model][c.wholeFree[i]]--
	c.wholeFree[i]++
	c.wholeByModel[model]++
	c.idleHistogram[model][c.wholeFree[i]]++
	c.gpuFree[g] = MilliPerGPU
	c.nodeFree[i] += MilliPerGPU
	compute, _ := MIGSlices(model)
	c.migGPUs--
	c.migSlicesTotal -= compute
}

// Reconfigure gives GPU gpu of node node the layout l, or changes nothing
// and says why not. The rules:
//
//   - l must be valid for the node's model (ValidateMIGLayout).
//   - An instance is identified by its profile and start. Every instance in
//     use must appear in l unchanged (same profile, same start); free
//     instances may be dropped. An instance of l that was already there
//     (same profile and start) survives: it keeps its busy and blocked
//     state. Every other instance of l is new, and blocked until
//     UnblockMIG.
//   - The new layout is l exactly, in l's order: instance j of the GPU is
//     l[j]. remap[k] is the new index of old instance k, or -1 when it was
//     dropped; a driver must rewrite the Instance of every running share on
//     this GPU from k+1 to remap[k]+1 (Release checks the instance is
//     busy, so a stale index panics or frees the wrong instance). A caller
//     that lists each busy instance at its old index needs no rewrite:
//     remap is then the identity on busy instances. remap is nil when the
//     GPU was not MIG-enabled.
//   - An empty l turns MIG off: the GPU is whole (and idle) again at once,
//     which is allowed only with no instance in use. A driver that models
//     the time this takes can hold the GPU with a whole-GPU share.
//   - A GPU that is not MIG-enabled can be given a layout only while idle
//     (all 1000 milli free); all its instances are new, hence blocked.
//     Reconfiguring a whole GPU to an empty layout does nothing.
//
// Reconfigure bumps the node's Generation when it changes anything.
func (c *Cluster) Reconfigure(node, gpu int, l MIGLayout) (remap []int, err error) {
	if err := c.checkGPU(node, gpu); err != nil {
		return nil, fmt.Errorf("reconfigure: %w", err)
	}
	n := &c.nodes[node]
	if err := ValidateMIGLayout(n.Model, l); err != nil {
		return nil, fmt.Errorf("node %q GPU %d: MIG layout %q: %w", n.Name, gpu, l.String(n.Model), err)
	}
	g := c.gpuBase[node] + gpu
	if !c.isMIG(g) {
		if len(l) == 0 {
			return nil, nil
		}
		if c.gpuFree[g] != MilliPerGPU {
			return nil, fmt.Errorf("node %q GPU %d is in use (%d of 1000 milli free); a whole GPU can be MIG-partitioned only while idle", n.Name, gpu, c.gpuFree[g])
		}
		c.enableMIG(node, gpu, l.Clone(), uint64(1)<<len(l)-1)
		c.bump(node)
		return nil, nil
	}
	mg := &c.mig[g]
	remap = make([]int, len(mg.layout))
	var busy, blocked uint64
	matched := make([]bool, len(l))
	for k, in := range mg.layout {
		remap[k] = -1
		for j, nw := range l {
			if nw == in {
				remap[k] = j
				matched[j] = true
				break
			}
		}
		if remap[k] < 0 {
			if mg.busy&(1<<k) != 0 {
				name := migOf(n.Model).profiles[in.Profile].Name
				return nil, fmt.Errorf("node %q GPU %d: MIG instance %d (%s@%d) is in use and the new layout %q does not keep it", n.Name, gpu, k, name, in.Start, l.String(n.Model))
			}
			continue
		}
		busy |= (mg.busy >> k & 1) << remap[k]
		blocked |= (mg.blocked >> k & 1) << remap[k]
	}
	for j := range l {
		if !matched[j] {
			blocked |= 1 << j
		}
	}
	c.bump(node)
	if len(l) == 0 {
		c.disableMIG(node, gpu)
		return remap, nil
	}
	mg.layout = l.Clone()
	mg.busy = busy
	mg.blocked = blocked
	return remap, nil
}

// UnblockMIG makes every instance of the GPU that Reconfigure created
// allocatable; the driver calls it when the reconfiguration time is over.
// It does nothing on a GPU that is not MIG-enabled or has nothing blocked.
func (c *Cluster) UnblockMIG(node, gpu int) {
	g := c.gpuBase[node] + gpu
	if c.mig == nil || c.mig[g].blocked == 0 {
		return
	}
	c.mig[g].blocked = 0
	c.bump(node)
}

// checkMIG verifies one MIG-enabled GPU's state and returns the milli its
// busy instances hold.
func (c *Cluster) checkMIG(i, gpu int) (int64, error) {
	n := &c.nodes[i]
	g := c.gpuBase[i] + gpu
	mg := &c.mig[g]
	if c.gpuFree[g] != 0 {
		return 0, fmt.Errorf("node %q GPU %d: MIG-enabled, yet %d milli free for whole or shared use", n.Name, gpu, c.gpuFree[g])
	}
	if err := ValidateMIGLayout(n.Model, mg.layout); err != nil {
		return 0, fmt.Errorf("node %q GPU %d: MIG layout %q: %w", n.Name, gpu, mg.layout.String(n.Model), err)
	}
	all := uint64(1)<<len(mg.layout) - 1
	if mg.busy&^all != 0 || mg.blocked&^all != 0 {
		return 0, fmt.Errorf("node %q GPU %d: busy %#x or blocked %#x names an instance beyond the layout's %d", n.Name, gpu, mg.busy, mg.blocked, len(mg.layout))
	}
	if mg.busy&mg.blocked != 0 {
		return 0, fmt.Errorf("node %q GPU %d: instances %#x are both busy and blocked", n.Name, gpu, mg.busy&mg.blocked)
	}
	var used int64
	for m := mg.busy; m != 0; m &= m - 1 {
		used += int64(MIGMilli(n.Model, mg.layout[bits.TrailingZeros64(m)].Profile))
	}
	return used, nil
}

// checkMIGTotals recomputes the cluster-wide MIG counters.
func (c *Cluster) checkMIGTotals() error {
	gpus, total, busy := 0, 0, 0
	for i, n := range c.nodes {
		compute, _ := MIGSlices(n.Model)
		for gpu := 0; gpu < n.GPUs; gpu++ {
			g := c.gpuBase[i] + gpu
			if !c.isMIG(g) {
				continue
			}
			gpus++
			total += compute
			profiles := migOf(n.Model).profiles
			for m := c.mig[g].busy; m != 0; m &= m - 1 {
				busy += profiles[c.mig[g].layout[bits.TrailingZeros64(m)].Profile].Slices
			}
		}
	}
	if gpus != c.migGPUs || total != c.migSlicesTotal || busy != c.migSlicesBusy {
		return fmt.Errorf("MIG: counted %d GPUs, %d slices, %d busy; books say %d, %d, %d", gpus, total, busy, c.migGPUs, c.migSlicesTotal, c.migSlicesBusy)
	}
	return nil
}
