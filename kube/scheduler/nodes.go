package scheduler

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource and label names of NVIDIA's device plugin and GPU feature
// discovery, which is where a node says what GPUs it has.
const (
	ResourceGPU       corev1.ResourceName = "nvidia.com/gpu"
	migResourcePre                        = "nvidia.com/mig-"
	LabelGPUProduct                       = "nvidia.com/gpu.product"
	LabelGPUMemory                        = "nvidia.com/gpu.memory" // MiB
	fallbackModelName                     = "H100-80GB"
)

// nodeInfo is one schedulable node as the cluster holds it, with what
// the policy's books cannot say: its hard taints, checked against each
// pod's tolerations when a placement is applied.
type nodeInfo struct {
	name   string
	hw     hwmodel.Node
	taints []corev1.Taint
	// product is the node's gpu.product label, for the export's spec.
	product string
}

// memToken is a memory size inside an NVIDIA product string (80GB).
var memToken = regexp.MustCompile(`^[0-9]+GB$`)

// modelForProduct maps an NVIDIA product string (GPU feature discovery's
// nvidia.com/gpu.product, e.g. NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-80GB,
// Tesla-T4) to the catalogue: the chip and its memory size first
// (H100-80GB), then the whole string less its vendor word, then the chip
// alone. ok is false for a product the catalogue does not know.
func modelForProduct(product string) (hwmodel.GPUModel, bool) {
	p := strings.ToUpper(strings.TrimSpace(product))
	p = strings.ReplaceAll(p, " ", "-")
	for _, pre := range []string{"NVIDIA-", "TESLA-"} {
		p = strings.TrimPrefix(p, pre)
	}
	if p == "" {
		return hwmodel.GPUModel{}, false
	}
	toks := strings.Split(p, "-")
	var tries []string
	for _, t := range toks[1:] {
		if memToken.MatchString(t) {
			tries = append(tries, toks[0]+"-"+t)
			break
		}
	}
	tries = append(tries, p)
	for k := len(toks) - 1; k >= 1; k-- {
		tries = append(tries, strings.Join(toks[:k], "-"))
	}
	for _, t := range tries {
		if m, ok := hwmodel.LookupModel(t); ok {
			return m, true
		}
	}
	return hwmodel.GPUModel{}, false
}

// quantity reads a resource list's value as an integer (0 when absent).
func quantity(l corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	return q.Value()
}

// mebibytes rounds a memory quantity up to whole MiB.
func mebibytes(q resource.Quantity) int64 {
	return (q.Value() + (1<<20 - 1)) >> 20
}

// buildNode turns a Node into the cluster's node: its allocatable
// nvidia.com/gpu as whole GPUs, its MIG resources (the device plugin's
// mixed strategy, nvidia.com/mig-<profile>: N) as further GPUs holding
// those instances, packed in order of profile size, CPU and memory
// allocatable, and its NoSchedule and NoExecute taints. ok is false for a
// node no pod may land on (cordoned). warn receives what a person should
// know (an unknown product, MIG resources the catalogue cannot model).
func buildNode(n *corev1.Node, warn func(string)) (nodeInfo, bool) {
	if n.Spec.Unschedulable {
		return nodeInfo{}, false
	}
	alloc := n.Status.Allocatable
	info := nodeInfo{name: n.Name, product: n.Labels[LabelGPUProduct]}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			info.taints = append(info.taints, t)
		}
	}
	gpus := int(quantity(alloc, ResourceGPU))
	model, known := modelForProduct(info.product)
	var mig []string // profile names, one per instance
	for name, q := range alloc {
		if p, ok := strings.CutPrefix(string(name), migResourcePre); ok {
			for range q.Value() {
				mig = append(mig, p)
			}
		}
	}
	if !known && (gpus > 0 || len(mig) > 0) {
		fb, _ := hwmodel.LookupModel(fallbackModelName)
		if info.product == "" {
			warn(fmt.Sprintf("node %s: no %s label; its GPUs are taken as %s", n.Name, LabelGPUProduct, fb.Name))
		} else {
			warn(fmt.Sprintf("node %s: GPU product %q is not in Brigade's catalogue; its GPUs are taken as %s", n.Name, info.product, fb.Name))
		}
		model = fb
	}
	info.hw = hwmodel.Node{Name: n.Name, Model: model.ID, GPUs: gpus, CPUMilli: alloc.Cpu().MilliValue(), MemoryMiB: mebibytes(*alloc.Memory())}
	if len(mig) > 0 {
		layouts, err := packMIG(model.ID, mig)
		if err != nil {
			warn(fmt.Sprintf("node %s: its MIG resources are left out: %v", n.Name, err))
		} else {
			info.hw.MIG = make([]hwmodel.MIGLayout, gpus, gpus+len(layouts))
			info.hw.MIG = append(info.hw.MIG, layouts...)
			info.hw.GPUs += len(layouts)
		}
	}
	if info.hw.GPUs > hwmodel.MaxGPUsPerNode {
		warn(fmt.Sprintf("node %s: %d GPUs; only the first %d are used", n.Name, info.hw.GPUs, hwmodel.MaxGPUsPerNode))
		info.hw.GPUs = hwmodel.MaxGPUsPerNode
		if info.hw.MIG != nil {
			info.hw.MIG = info.hw.MIG[:hwmodel.MaxGPUsPerNode]
		}
	}
	return info, true
}

// packMIG places MIG instances on GPUs: the device plugin counts
// instances per profile but does not say which GPU holds which, and the
// scheduler only counts, so any layout with the same instances books the
// same. Larger profiles go first, each into the first GPU whose layout
// still accepts it (hwmodel.ParseMIGLayout decides), else a new GPU.
func packMIG(m hwmodel.ModelID, profiles []string) ([]hwmodel.MIGLayout, error) {
	if !hwmodel.MIGCapable(m) {
		return nil, fmt.Errorf("%s has no MIG profiles in the catalogue", hwmodel.Model(m).Name)
	}
	slices.SortFunc(profiles, func(a, b string) int {
		_, pa, _ := hwmodel.LookupMIGProfile(m, a)
		_, pb, _ := hwmodel.LookupMIGProfile(m, b)
		if pa.Slices != pb.Slices {
			return pb.Slices - pa.Slices
		}
		return strings.Compare(a, b)
	})
	var gpus [][]string
	var layouts []hwmodel.MIGLayout
	for _, p := range profiles {
		if _, _, ok := hwmodel.LookupMIGProfile(m, p); !ok {
			return nil, fmt.Errorf("profile %q is not one of %s's", p, hwmodel.Model(m).Name)
		}
		placed := false
		for g := range gpus {
			l, err := hwmodel.ParseMIGLayout(m, strings.Join(append(slices.Clone(gpus[g]), p), ","))
			if err == nil {
				gpus[g], layouts[g], placed = append(gpus[g], p), l, true
				break
			}
		}
		if !placed {
			l, err := hwmodel.ParseMIGLayout(m, p)
			if err != nil {
				return nil, err
			}
			gpus, layouts = append(gpus, []string{p}), append(layouts, l)
		}
	}
	return layouts, nil
}

// tolerates reports whether tolerations allow a pod on a node with the
// given hard taints (Kubernetes' matching: key and effect, Exists or
// Equal with the value; an empty key with Exists tolerates everything).
func tolerates(tols []corev1.Toleration, taints []corev1.Taint) bool {
	for i := range taints {
		ok := false
		for j := range tols {
			if toleratesTaint(&tols[j], &taints[i]) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// toleratesTaint is Kubernetes' rule for one toleration and one taint:
// the effect, if given, must be the taint's; an empty key with Exists
// matches every key; Exists matches any value, Equal (the default) only
// the taint's.
func toleratesTaint(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != taint.Key && (t.Key != "" || t.Operator != corev1.TolerationOpExists) {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	}
	return false
}

// nodeKey is what of a node the cluster is built from: a change of it
// rebuilds the books.
func nodeKey(info nodeInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%d|%d|%d|%d|", info.name, info.hw.Model, info.hw.GPUs, info.hw.CPUMilli, info.hw.MemoryMiB, len(info.hw.MIG))
	for _, l := range info.hw.MIG {
		b.WriteString(l.String(info.hw.Model))
		b.WriteByte(';')
	}
	for _, t := range info.taints {
		fmt.Fprintf(&b, "%s=%s:%s;", t.Key, t.Value, t.Effect)
	}
	return b.String()
}

// selects reports whether node n carries every label of sel (an empty
// selector selects every node): the partition a scheduler owns.
func selects(sel map[string]string, n *corev1.Node) bool {
	for k, v := range sel {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
