package policies

import (
	"fmt"
	"math"

	"github.com/brigadesim/brigade/hwmodel"
)

// Kueue is the configuration of the kueue order, as Kueue's objects
// (kueue.x-k8s.io) describe it: resource flavors, cluster queues with
// their quotas, cohorts and preemption rules, local queues and priority
// classes. It is plain data: package kueue reads it from manifests and
// checks it; a value built in Go is checked by Validate.
type Kueue struct {
	// Source names where the configuration came from (a manifest file),
	// for messages and run.json; it changes no decision.
	Source string
	// Flavors are the ResourceFlavors, each on one GPU model.
	Flavors []KueueFlavor
	// Queues are the ClusterQueues, in the order the manifests give them
	// (ties between their heads are broken by this index).
	Queues []ClusterQueue
	// Local are the LocalQueues: a job whose tenant is a LocalQueue's
	// Name (or Namespace/Name) is submitted to it.
	Local []LocalQueue
	// Priorities are the WorkloadPriorityClasses, for reference: a job's
	// priority is its Priority.
	Priorities []PriorityClass
	// FairSharing orders admission across the ClusterQueues of a cohort
	// by their weighted share (doc.go).
	FairSharing bool
}

// KueueFlavor is one ResourceFlavor: a name and the GPU model of the nodes
// its node labels select.
type KueueFlavor struct {
	Name  string
	Model hwmodel.ModelID
}

// Kueue's resources, as indices of a Quota's arrays.
const (
	ResGPU    = iota // nvidia.com/gpu, in milli-GPU
	ResCPU           // cpu, in milli-CPU
	ResMemory        // memory, in MiB
	NumRes
)

// ResourceNames are Kueue's names of the resources, by index.
var ResourceNames = [NumRes]string{"nvidia.com/gpu", "cpu", "memory"}

// NoLimit marks a borrowing or lending limit that is not set.
const NoLimit = math.MaxInt64

// Quota is one flavor's quotas in a ClusterQueue, per resource (ResGPU,
// ResCPU, ResMemory): Covered says whether the ClusterQueue covers the
// resource at all (one it does not cover is not limited); Nominal, and
// BorrowingLimit and LendingLimit (NoLimit when unset), in the resource's
// unit.
type Quota struct {
	Flavor         int // index into Kueue.Flavors
	Covered        [NumRes]bool
	Nominal        [NumRes]int64
	BorrowingLimit [NumRes]int64
	LendingLimit   [NumRes]int64
}

// Queueing strategies of a ClusterQueue.
const (
	BestEffortFIFO = "BestEffortFIFO"
	StrictFIFO     = "StrictFIFO"
)

// Preemption policies (Kueue's names).
const (
	PreemptNever                     = "Never"
	PreemptLowerPriority             = "LowerPriority"
	PreemptLowerOrNewerEqualPriority = "LowerOrNewerEqualPriority"
	PreemptAny                       = "Any"
)

// Preemption is a ClusterQueue's preemption rules; the empty strings mean
// Never.
type Preemption struct {
	WithinClusterQueue  string // Never, LowerPriority, LowerOrNewerEqualPriority
	ReclaimWithinCohort string // Never, LowerPriority, Any
	BorrowWithinCohort  string // Never, LowerPriority
	// MaxPriorityThreshold bounds the priority of the workloads that
	// BorrowWithinCohort may preempt; nil: no bound.
	MaxPriorityThreshold *int
}

// ClusterQueue is one ClusterQueue: its cohort ("" for none), queueing
// strategy, quotas per flavor in the resource group's order, preemption
// rules and fair-sharing weight.
type ClusterQueue struct {
	Name       string
	Cohort     string
	Strategy   string // StrictFIFO or BestEffortFIFO ("" is BestEffortFIFO)
	Flavors    []Quota
	Preemption Preemption
	// Weight is the fair-sharing weight (1 when unset); a ClusterQueue of
	// weight 0 borrows only when nobody else wants to.
	Weight float64
}

// LocalQueue is one LocalQueue: its namespace, name and ClusterQueue
// (an index into Kueue.Queues).
type LocalQueue struct {
	Namespace string
	Name      string
	Queue     int
}

// PriorityClass is one WorkloadPriorityClass.
type PriorityClass struct {
	Name  string
	Value int
}

// QueueOf returns the LocalQueue a tenant submits to: the one named
// Namespace/Name, or else the only one named Name; false when none is, or
// when several namespaces have a LocalQueue of that name.
func (k *Kueue) QueueOf(tenant string) (int, bool) {
	found := -1
	for i, lq := range k.Local {
		if lq.Namespace+"/"+lq.Name == tenant {
			return i, true
		}
		if lq.Name == tenant {
			if found >= 0 {
				return -1, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// Validate reports the first thing that makes k unusable by the kueue
// order: references out of range, unknown strategies or policies,
// negative quotas, a lending limit above the nominal quota. Package kueue
// reports the same with file, line and field.
func (k *Kueue) Validate() error {
	if len(k.Queues) == 0 {
		return fmt.Errorf("kueue: no ClusterQueue")
	}
	for i, f := range k.Flavors {
		if int(f.Model) < 0 || int(f.Model) >= numModels() {
			return fmt.Errorf("kueue: flavor %q: unknown GPU model %d", k.Flavors[i].Name, f.Model)
		}
	}
	for _, q := range k.Queues {
		if q.Strategy != "" && q.Strategy != StrictFIFO && q.Strategy != BestEffortFIFO {
			return fmt.Errorf("kueue: ClusterQueue %q: unknown queueing strategy %q", q.Name, q.Strategy)
		}
		if math.IsNaN(q.Weight) || q.Weight < 0 || math.IsInf(q.Weight, 0) {
			return fmt.Errorf("kueue: ClusterQueue %q: fair-sharing weight %v", q.Name, q.Weight)
		}
		p := q.Preemption
		for _, x := range []struct{ v, field string }{
			{p.WithinClusterQueue, "withinClusterQueue"}, {p.ReclaimWithinCohort, "reclaimWithinCohort"}, {p.BorrowWithinCohort, "borrowWithinCohort"}} {
			ok := x.v == "" || x.v == PreemptNever || x.v == PreemptLowerPriority
			switch x.field {
			case "withinClusterQueue":
				ok = ok || x.v == PreemptLowerOrNewerEqualPriority
			case "reclaimWithinCohort":
				ok = ok || x.v == PreemptAny
			}
			if !ok {
				return fmt.Errorf("kueue: ClusterQueue %q: preemption %s: unknown policy %q", q.Name, x.field, x.v)
			}
		}
		seen := map[int]bool{}
		for _, fq := range q.Flavors {
			if fq.Flavor < 0 || fq.Flavor >= len(k.Flavors) {
				return fmt.Errorf("kueue: ClusterQueue %q: flavor index %d out of range", q.Name, fq.Flavor)
			}
			if seen[fq.Flavor] {
				return fmt.Errorf("kueue: ClusterQueue %q: flavor %q twice", q.Name, k.Flavors[fq.Flavor].Name)
			}
			seen[fq.Flavor] = true
			for r := range NumRes {
				if fq.Nominal[r] < 0 || fq.BorrowingLimit[r] < 0 || fq.LendingLimit[r] < 0 {
					return fmt.Errorf("kueue: ClusterQueue %q: flavor %q: negative %s quota", q.Name, k.Flavors[fq.Flavor].Name, ResourceNames[r])
				}
				if fq.LendingLimit[r] != NoLimit && fq.LendingLimit[r] > fq.Nominal[r] {
					return fmt.Errorf("kueue: ClusterQueue %q: flavor %q: %s lendingLimit above nominalQuota", q.Name, k.Flavors[fq.Flavor].Name, ResourceNames[r])
				}
			}
		}
	}
	for _, lq := range k.Local {
		if lq.Queue < 0 || lq.Queue >= len(k.Queues) {
			return fmt.Errorf("kueue: LocalQueue %q: ClusterQueue index %d out of range", lq.Name, lq.Queue)
		}
	}
	return nil
}
