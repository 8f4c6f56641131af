package kueue

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

// maxBytes bounds a manifest file.
const maxBytes = 4 << 20

// modelLabels are the node labels that name a flavor's GPU model.
var modelLabels = []string{"nvidia.com/gpu.product", "brigade.dev/gpu-model"}

// Load reads a manifest file for a cluster whose GPU models are present.
func Load(path string, present hwmodel.ModelSet) (*policies.Kueue, error) {
	data, err := config.ReadFile(path, "Kueue manifests", maxBytes)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, present)
}

// Parse reads Kueue manifests (file names them in errors) for a cluster
// whose GPU models are present (0: do not check) into the kueue order's
// configuration. Every problem is reported at once with its line and
// field: unknown fields, unsupported features, names given twice,
// references to objects the file lacks, a flavor on a model the cluster
// lacks.
func Parse(data []byte, file string, present hwmodel.ModelSet) (*policies.Kueue, error) {
	e := config.NewErrors(file)
	root, ok := config.ParseDocuments(data, e)
	if !ok {
		return nil, e.Err()
	}
	var docs []document
	root.Decode(&docs)
	if err := e.Err(); err != nil {
		return nil, err
	}
	k := build(docs, e, present)
	if err := e.Err(); err != nil {
		return nil, err
	}
	k.Source = file
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return k, nil
}

// build turns the decoded documents into the configuration, reporting
// what only the whole file shows.
func build(docs []document, e *config.Errors, present hwmodel.ModelSet) *policies.Kueue {
	k := &policies.Kueue{}
	flavorAt := map[string]int{}
	bad := map[string]bool{} // flavors already reported
	cqAt := map[string]int{}
	seen := map[string]int{} // kind/namespace/name -> document
	dup := func(i int, kind, ns, name string) bool {
		key := kind + "/" + ns + "/" + name
		if j, ok := seen[key]; ok {
			e.Index("", i).Add("metadata.name", "%s %q is already document %d's", kind, name, j+1)
			return true
		}
		seen[key] = i
		return false
	}
	single := singleModel(present)
	for i, d := range docs {
		if d.flavor == nil || dup(i, d.kind, "", d.flavor.Metadata.Name) {
			continue
		}
		m, ok := flavorModel(e.Index("", i), d.flavor, present, single)
		if !ok {
			bad[d.flavor.Metadata.Name] = true
			continue
		}
		flavorAt[d.flavor.Metadata.Name] = len(k.Flavors)
		k.Flavors = append(k.Flavors, policies.KueueFlavor{Name: d.flavor.Metadata.Name, Model: m})
	}
	for i, d := range docs {
		if d.cq == nil || dup(i, d.kind, "", d.cq.Metadata.Name) {
			continue
		}
		cqAt[d.cq.Metadata.Name] = len(k.Queues)
		k.Queues = append(k.Queues, clusterQueueOf(e.Index("", i), d.cq, flavorAt, bad))
	}
	for i, d := range docs {
		switch {
		case d.lq != nil:
			if dup(i, d.kind, d.lq.Metadata.Namespace, d.lq.Metadata.Name) {
				continue
			}
			q, ok := cqAt[d.lq.Spec.ClusterQueue]
			if !ok {
				e.Index("", i).Add("spec.clusterQueue", "no ClusterQueue %q in the file%s", d.lq.Spec.ClusterQueue, hint(d.lq.Spec.ClusterQueue, keys(cqAt)))
				continue
			}
			k.Local = append(k.Local, policies.LocalQueue{Namespace: d.lq.Metadata.Namespace, Name: d.lq.Metadata.Name, Queue: q})
		case d.wpc != nil:
			if dup(i, d.kind, "", d.wpc.Metadata.Name) || d.wpc.Value == nil {
				continue
			}
			k.Priorities = append(k.Priorities, policies.PriorityClass{Name: d.wpc.Metadata.Name, Value: int(*d.wpc.Value)})
		case d.conf != nil:
			if dup(i, d.kind, "", "") {
				continue
			}
			k.FairSharing = d.conf.FairSharing != nil && d.conf.FairSharing.Enable
		}
	}
	if len(k.Queues) == 0 && e.Count() == 0 {
		e.Add("", "no ClusterQueue: want at least one (kind: ClusterQueue, apiVersion: %s)", apiVersion)
	}
	return k
}

func keys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// singleModel is the cluster's one GPU model, or -1 when it has none or
// several (or they are not known).
func singleModel(present hwmodel.ModelSet) int {
	found := -1
	for m := range hwmodel.NumModels() {
		if present&hwmodel.Of(hwmodel.ModelID(m)) != 0 {
			if found >= 0 {
				return -1
			}
			found = m
		}
	}
	return found
}

// flavorModel is the GPU model a flavor's node labels select: the value
// of nvidia.com/gpu.product (as GPU feature discovery writes it, e.g.
// NVIDIA-H100-80GB-HBM3) or of brigade.dev/gpu-model (a model name); a
// flavor without labels on a cluster of one model selects that model.
func flavorModel(e *config.Errors, f *resourceFlavor, present hwmodel.ModelSet, single int) (hwmodel.ModelID, bool) {
	var label, value string
	for _, l := range slices.Sorted(maps.Keys(f.Spec.NodeLabels)) {
		if !slices.Contains(modelLabels, l) {
			e.Add("spec.nodeLabels", "%s: unsupported node label: a flavor selects nodes by their GPU model (%s)", l, strings.Join(modelLabels, " or "))
			continue
		}
		if label != "" {
			e.Add("spec.nodeLabels", "%s: the flavor names its model twice (also %s)", l, label)
			continue
		}
		label, value = l, f.Spec.NodeLabels[l]
	}
	if label == "" {
		if single >= 0 {
			return hwmodel.ModelID(single), true
		}
		e.Add("spec.nodeLabels", "want %s naming the flavor's GPU model (the cluster has several models, or none)", modelLabels[0])
		return 0, false
	}
	m, ok := lookupProduct(value)
	if !ok {
		e.Add("spec.nodeLabels", "%s: unknown GPU model %q (known: %s)", label, value, hwmodel.ModelNames())
		return 0, false
	}
	if present != 0 && present&hwmodel.Of(m) == 0 {
		e.Add("spec.nodeLabels", "%s: the cluster has no %s GPUs (its models: %s)", label, hwmodel.Model(m).Name, present)
		return 0, false
	}
	return m, true
}

// lookupProduct finds the model of a GPU product name: a model name or
// alias, or one as GPU feature discovery writes it, with a vendor prefix
// (NVIDIA-, Tesla-) and trailing parts (-HBM3, -PCIe) that Brigade's
// names leave out.
func lookupProduct(value string) (hwmodel.ModelID, bool) {
	v := value
	for _, p := range []string{"NVIDIA-", "Nvidia-", "nvidia-", "Tesla-", "TESLA-", "AMD-"} {
		v = strings.TrimPrefix(v, p)
	}
	for v != "" {
		if m, ok := hwmodel.LookupModel(v); ok {
			return m.ID, true
		}
		i := strings.LastIndexByte(v, '-')
		if i < 0 {
			break
		}
		v = v[:i]
	}
	return 0, false
}

// clusterQueueOf converts a checked ClusterQueue.
func clusterQueueOf(e *config.Errors, q *clusterQueue, flavorAt map[string]int, bad map[string]bool) policies.ClusterQueue {
	s := &q.Spec
	out := policies.ClusterQueue{Name: q.Metadata.Name, Cohort: s.Cohort, Strategy: s.QueueingStrategy, Weight: 1}
	if out.Strategy == "" {
		out.Strategy = policies.BestEffortFIFO
	}
	if p := s.Preemption; p != nil {
		out.Preemption.WithinClusterQueue = p.WithinClusterQueue
		out.Preemption.ReclaimWithinCohort = p.ReclaimWithinCohort
		if b := p.BorrowWithinCohort; b != nil {
			out.Preemption.BorrowWithinCohort = b.Policy
			if b.MaxPriorityThreshold != nil {
				t := int(*b.MaxPriorityThreshold)
				out.Preemption.MaxPriorityThreshold = &t
			}
		}
	}
	if fs := s.FairSharing; fs != nil && fs.Weight != nil {
		out.Weight = fs.Weight.Float()
	}
	for g, rg := range s.ResourceGroups {
		for f, fq := range rg.Flavors {
			fe := e.Index("spec.resourceGroups", g).Index("flavors", f)
			at, ok := flavorAt[fq.Name]
			if !ok && bad[fq.Name] {
				continue
			}
			if !ok {
				fe.Add("name", "no ResourceFlavor %q in the file%s", fq.Name, hint(fq.Name, keys(flavorAt)))
				continue
			}
			qt := policies.Quota{Flavor: at}
			for r := range policies.NumRes {
				qt.BorrowingLimit[r], qt.LendingLimit[r] = policies.NoLimit, policies.NoLimit
			}
			for _, rq := range fq.Resources {
				r := slices.Index(resourceNames, rq.Name)
				if r < 0 || rq.NominalQuota == nil {
					continue
				}
				qt.Covered[r] = true
				qt.Nominal[r], _ = rq.NominalQuota.In(rq.Name)
				if rq.BorrowingLimit != nil {
					qt.BorrowingLimit[r], _ = rq.BorrowingLimit.In(rq.Name)
				}
				if rq.LendingLimit != nil {
					qt.LendingLimit[r], _ = rq.LendingLimit.In(rq.Name)
				}
			}
			out.Flavors = append(out.Flavors, qt)
		}
	}
	return out
}

// CheckTenants reports tenants that name no LocalQueue of k: their jobs
// would never be admitted. what names the workload in the message.
func CheckTenants(k *policies.Kueue, tenants []string, what string) error {
	var bad []string
	for _, t := range tenants {
		if _, ok := k.QueueOf(t); !ok {
			bad = append(bad, strconv.Quote(t))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	names := []string{}
	for _, lq := range k.Local {
		names = append(names, lq.Namespace+"/"+lq.Name)
	}
	if len(names) == 0 {
		names = append(names, "none")
	}
	return fmt.Errorf("%s: tenant %s names no LocalQueue of %s (a job goes to the LocalQueue its tenant names, NAME or NAMESPACE/NAME; known: %s)",
		what, strings.Join(bad, ", "), k.Source, strings.Join(names, ", "))
}

// Present is the set of GPU models cluster c has.
func Present(c hwmodel.ClusterView) hwmodel.ModelSet {
	var s hwmodel.ModelSet
	for m := range hwmodel.NumModels() {
		if c.GPUsOfModel(hwmodel.ModelID(m)) > 0 {
			s |= hwmodel.Of(hwmodel.ModelID(m))
		}
	}
	return s
}

// Attach reads the manifest file path (none: "") for cluster c and the
// workload's tenants, and gives it to every spec of the kueue order. It
// refuses a kueue spec without a file, a file without a kueue spec, and
// a tenant that names no LocalQueue. flag names the setting in messages
// (--kueue, kueue:).
func Attach(specs []policies.Spec, path, flag string, c hwmodel.ClusterView, tenants []string, what string) error {
	uses := slices.ContainsFunc(specs, func(s policies.Spec) bool { return s.Order == "kueue" })
	switch {
	case path == "" && !uses:
		return nil
	case path == "":
		return fmt.Errorf("the kueue order needs Kueue manifests: give %s FILE", flag)
	case !uses:
		return fmt.Errorf("%s %s: no policy of the kueue order reads it", flag, path)
	}
	k, err := Load(path, Present(c))
	if err != nil {
		return err
	}
	if err := CheckTenants(k, tenants, what); err != nil {
		return err
	}
	for i := range specs {
		if specs[i].Order == "kueue" {
			specs[i].Kueue = k
		}
	}
	return nil
}
