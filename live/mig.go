package live

import (
	"fmt"

	"github.com/brigadesim/brigade/hwmodel"
)

// migLayouts gives node the MIG layouts of the discovered GPUs that have
// MIG enabled, as they are: live mode never creates or destroys instances,
// so the layouts are static and policies place MIG jobs on existing
// instances only. It returns, per GPU, the MIG device UUIDs in layout
// order, and the MIG-enabled GPUs without any instance (nothing can run on
// them).
func migLayouts(node *hwmodel.Node, gpus []GPU) (uuids [][]string, empty []int, err error) {
	for g, gpu := range gpus {
		if !gpu.MIGEnabled {
			continue
		}
		if len(gpu.Instances) == 0 {
			empty = append(empty, g)
			continue
		}
		if !gpu.Known {
			return nil, nil, fmt.Errorf("live: GPU %d (%s) has MIG instances but its model is not in Brigade's catalogue, so its MIG profiles are unknown", g, gpu.Model)
		}
		if node.MIG == nil {
			node.MIG = make([]hwmodel.MIGLayout, len(gpus))
			uuids = make([][]string, len(gpus))
		}
		for _, inst := range gpu.Instances {
			k, _, ok := hwmodel.LookupMIGProfile(gpu.ModelID, inst.Profile)
			if !ok {
				return nil, nil, fmt.Errorf("live: GPU %d (%s): MIG profile %q is not one Brigade knows for %s", g, gpu.UUID, inst.Profile, gpu.Catalogue)
			}
			if inst.UUID == "" {
				return nil, nil, fmt.Errorf("live: GPU %d (%s): NVML gives no UUID for its %s instance %d, so no job could be pointed at it", g, gpu.UUID, inst.Profile, inst.ID)
			}
			node.MIG[g] = append(node.MIG[g], hwmodel.MIGInstance{Profile: k, Start: inst.Start})
			uuids[g] = append(uuids[g], inst.UUID)
		}
		if err := hwmodel.ValidateMIGLayout(gpu.ModelID, node.MIG[g]); err != nil {
			return nil, nil, fmt.Errorf("live: GPU %d (%s): its MIG instances do not form a layout Brigade accepts: %v", g, gpu.UUID, err)
		}
	}
	return uuids, empty, nil
}

// checkMIG says why a start placement s does not fit request req as a MIG
// placement ("" when it does): MIG jobs must get an existing instance of
// the profile they ask for, other jobs no instance.
func (d *Driver) checkMIG(req hwmodel.Request, s hwmodel.Share) string {
	switch {
	case req.WantsMIG() && s.Instance == 0:
		return "a MIG job needs a MIG instance"
	case !req.WantsMIG() && s.Instance != 0:
		return "only MIG jobs may be placed on a MIG instance"
	case s.Instance == 0:
		return ""
	case s.GPUCount() != 1:
		return "a MIG placement names one GPU"
	}
	g := 0
	for s.GPUs>>g&1 == 0 {
		g++
	}
	k := s.Instance - 1
	if g >= len(d.migUUIDs) || k >= len(d.migUUIDs[g]) {
		return fmt.Sprintf("GPU %d has no MIG instance %d", g, k)
	}
	inst := d.cluster.MIGInstanceAt(0, g, k)
	if !req.MIG.Matches(d.cluster.NodeModel(0), inst.Profile) {
		return fmt.Sprintf("instance %d of GPU %d does not match %s", k, g, req.MIG)
	}
	return ""
}

// servable says why req can never run on this machine's GPUs as they are
// ("" if it can): MIG layouts are fixed in live mode, so a MIG job needs an
// existing instance of its profile, and other GPU jobs need enough GPUs
// without MIG.
func (d *Driver) servable(req hwmodel.Request) string {
	c := d.cluster
	if req.WantsMIG() {
		for g := 0; g < c.NodeGPUs(0); g++ {
			for k := 0; k < c.MIGInstanceCount(0, g); k++ {
				if req.MIG.Matches(c.NodeModel(0), c.MIGInstanceAt(0, g, k).Profile) {
					return ""
				}
			}
		}
		return fmt.Sprintf("no MIG instance of this machine matches %s (live mode never creates instances)", req.MIG)
	}
	whole := 0
	for g := 0; g < c.NodeGPUs(0); g++ {
		if !c.IsMIG(0, g) {
			whole++
		}
	}
	if req.GPUs > whole {
		return fmt.Sprintf("it asks for %d GPUs and %d are not in MIG mode", req.GPUs, whole)
	}
	return ""
}
