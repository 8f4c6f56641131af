package kueue

import (
	"slices"
	"strings"

	"github.com/brigadesim/brigade/config"
)

// The API versions read.
const (
	apiVersion       = "kueue.x-k8s.io/v1beta1"
	configAPIVersion = "config.kueue.x-k8s.io/v1beta1"
)

// document is one manifest of the file: its kind decides the type it is
// read into.
type document struct {
	kind   string
	flavor *resourceFlavor
	cq     *clusterQueue
	lq     *localQueue
	wpc    *priorityClass
	conf   *configuration
}

// kinds are the kinds read, in the order messages list them.
var kinds = []string{"ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Configuration"}

// UnmarshalConfig reads the document by its kind.
func (d *document) UnmarshalConfig(v config.Value) {
	if !v.IsMapping() {
		v.Fail("want a Kueue object (a mapping with apiVersion and kind), got %s", v.Describe())
		return
	}
	k, ok := v.Field("kind")
	if !ok {
		v.Fail("missing kind: want one of %s", strings.Join(kinds, ", "))
		return
	}
	kind, _ := k.String()
	d.kind = kind
	switch kind {
	case "ResourceFlavor":
		d.flavor = new(resourceFlavor)
		v.Decode(d.flavor)
	case "ClusterQueue":
		d.cq = new(clusterQueue)
		v.Decode(d.cq)
	case "LocalQueue":
		d.lq = new(localQueue)
		v.Decode(d.lq)
	case "WorkloadPriorityClass":
		d.wpc = new(priorityClass)
		v.Decode(d.wpc)
	case "Configuration":
		d.conf = new(configuration)
		v.Decode(d.conf)
	case "Cohort":
		k.Fail("unsupported: hierarchical cohorts (Cohort objects); a ClusterQueue's spec.cohort names a flat cohort")
	case "Topology", "AdmissionCheck", "ProvisioningRequestConfig", "MultiKueueConfig", "MultiKueueCluster":
		k.Fail("unsupported: %s objects (Brigade models quotas, cohorts, preemption and fair sharing)", kind)
	default:
		k.Fail("want one of %s, got %s%s", strings.Join(kinds, ", "), k.Describe(), hint(kind, kinds))
	}
}

// hint suggests the known name nearest got (within two edits, ignoring
// case, for names of four bytes or more), as "; did you mean X?".
func hint(got string, known []string) string {
	best, bestD := "", 3
	if len(got) < 4 {
		return ""
	}
	for _, k := range known {
		if d := config.EditDistance(strings.ToLower(got), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// unsupported is a field Kueue has and Brigade does not model: present
// with any value, it is an error that names the feature.
type unsupported struct{}

// UnmarshalConfig reports the feature by its field.
func (unsupported) UnmarshalConfig(v config.Value) {
	field := v.Path()
	if i := strings.LastIndexAny(field, ".]"); i >= 0 {
		field = field[i+1:]
	}
	v.Fail("unsupported: %s (Brigade does not model it; remove the field)", feature(field))
}

// feature names what an unsupported field turns on.
func feature(field string) string {
	switch field {
	case "admissionChecks", "admissionChecksStrategy":
		return "admission checks"
	case "topologyName":
		return "topology-aware scheduling"
	case "nodeTaints", "tolerations":
		return "flavor taints and tolerations"
	case "stopPolicy":
		return "stop policies (a held or draining queue)"
	case "preemptionStrategies":
		return "fair-sharing preemption strategies"
	case "admissionFairSharing":
		return "admission fair sharing"
	}
	return field
}

type meta struct {
	Name        string            `json:"name" config:"required"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type resourceFlavor struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   meta               `json:"metadata"`
	Spec       resourceFlavorSpec `json:"spec"`
}

type resourceFlavorSpec struct {
	NodeLabels   map[string]string `json:"nodeLabels"`
	NodeTaints   *unsupported      `json:"nodeTaints"`
	Tolerations  *unsupported      `json:"tolerations"`
	TopologyName *unsupported      `json:"topologyName"`
}

type clusterQueue struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   meta             `json:"metadata"`
	Spec       clusterQueueSpec `json:"spec"`
}

type clusterQueueSpec struct {
	Cohort                  string            `json:"cohort"`
	NamespaceSelector       *selector         `json:"namespaceSelector"`
	QueueingStrategy        string            `json:"queueingStrategy"`
	ResourceGroups          []resourceGroup   `json:"resourceGroups" config:"max=16"`
	Preemption              *preemption       `json:"preemption"`
	FairSharing             *fairSharing      `json:"fairSharing"`
	FlavorFungibility       *flavorFungibilty `json:"flavorFungibility"`
	AdmissionChecks         *unsupported      `json:"admissionChecks"`
	AdmissionChecksStrategy *unsupported      `json:"admissionChecksStrategy"`
	StopPolicy              *stopPolicy       `json:"stopPolicy"`
	AdmissionScope          *unsupported      `json:"admissionScope"`
}

// selector is a namespaceSelector: only the empty one, which matches
// every namespace, is modelled.
type selector struct {
	MatchLabels      map[string]string `json:"matchLabels"`
	MatchExpressions *unsupported      `json:"matchExpressions"`
}

// stopPolicy is modelled only as None.
type stopPolicy string

type resourceGroup struct {
	CoveredResources []string       `json:"coveredResources" config:"max=16"`
	Flavors          []flavorQuotas `json:"flavors" config:"max=64"`
}

type flavorQuotas struct {
	Name      string          `json:"name" config:"required"`
	Resources []resourceQuota `json:"resources" config:"max=16"`
}

type resourceQuota struct {
	Name           string    `json:"name" config:"required"`
	NominalQuota   *Quantity `json:"nominalQuota" config:"required"`
	BorrowingLimit *Quantity `json:"borrowingLimit"`
	LendingLimit   *Quantity `json:"lendingLimit"`
}

type preemption struct {
	WithinClusterQueue  string              `json:"withinClusterQueue"`
	ReclaimWithinCohort string              `json:"reclaimWithinCohort"`
	BorrowWithinCohort  *borrowWithinCohort `json:"borrowWithinCohort"`
}

type borrowWithinCohort struct {
	Policy               string `json:"policy"`
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold"`
}

type fairSharing struct {
	Weight *Quantity `json:"weight"`
}

type flavorFungibilty struct {
	WhenCanBorrow  string `json:"whenCanBorrow"`
	WhenCanPreempt string `json:"whenCanPreempt"`
}

type localQueue struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   meta           `json:"metadata"`
	Spec       localQueueSpec `json:"spec"`
}

type localQueueSpec struct {
	ClusterQueue string       `json:"clusterQueue" config:"required"`
	StopPolicy   *stopPolicy  `json:"stopPolicy"`
	FairSharing  *unsupported `json:"fairSharing"`
}

type priorityClass struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	Metadata    meta   `json:"metadata"`
	Value       *int32 `json:"value" config:"required"`
	Description string `json:"description"`
}

// configuration is the part of Kueue's own Configuration that changes
// admission: fair sharing.
type configuration struct {
	APIVersion  string             `json:"apiVersion"`
	Kind        string             `json:"kind"`
	FairSharing *configFairSharing `json:"fairSharing"`
}

type configFairSharing struct {
	Enable               bool         `json:"enable"`
	PreemptionStrategies *unsupported `json:"preemptionStrategies"`
}

// Check reports what the decoder cannot: the API version.
func (f *resourceFlavor) Check(e *config.Errors) { checkVersion(e, f.APIVersion, apiVersion) }

// Check reports the API version, strategies, policies and resources.
func (q *clusterQueue) Check(e *config.Errors) {
	checkVersion(e, q.APIVersion, apiVersion)
	s := &q.Spec
	se := e.In("spec")
	oneOf(se, "queueingStrategy", s.QueueingStrategy, "BestEffortFIFO", "StrictFIFO")
	if ns := s.NamespaceSelector; ns != nil && len(ns.MatchLabels) > 0 {
		se.Add("namespaceSelector.matchLabels", "unsupported: a namespaceSelector other than the empty one ({}), which admits every namespace")
	}
	if p := s.Preemption; p != nil {
		pe := se.In("preemption")
		oneOf(pe, "withinClusterQueue", p.WithinClusterQueue, "Never", "LowerPriority", "LowerOrNewerEqualPriority")
		oneOf(pe, "reclaimWithinCohort", p.ReclaimWithinCohort, "Never", "LowerPriority", "Any")
		if b := p.BorrowWithinCohort; b != nil {
			oneOf(pe.In("borrowWithinCohort"), "policy", b.Policy, "Never", "LowerPriority")
			if b.Policy == "LowerPriority" && (p.ReclaimWithinCohort == "" || p.ReclaimWithinCohort == "Never") {
				pe.Add("borrowWithinCohort.policy", "LowerPriority needs reclaimWithinCohort other than Never")
			}
		}
	}
	if f := s.FlavorFungibility; f != nil {
		if f.WhenCanBorrow != "" && f.WhenCanBorrow != "Borrow" {
			se.Add("flavorFungibility.whenCanBorrow", "unsupported: flavor fungibility other than the default (whenCanBorrow: Borrow)")
		}
		if f.WhenCanPreempt != "" && f.WhenCanPreempt != "TryNextFlavor" {
			se.Add("flavorFungibility.whenCanPreempt", "unsupported: flavor fungibility other than the default (whenCanPreempt: TryNextFlavor)")
		}
	}
	if s.StopPolicy != nil && *s.StopPolicy != "" && *s.StopPolicy != "None" {
		se.Add("stopPolicy", "unsupported: %s", feature("stopPolicy"))
	}
	if fs := s.FairSharing; fs != nil && fs.Weight != nil && fs.Weight.Sign() < 0 {
		se.Add("fairSharing.weight", "want a weight >= 0, got %s", fs.Weight)
	}
	switch len(s.ResourceGroups) {
	case 0:
		se.Add("resourceGroups", "missing: want one resource group covering nvidia.com/gpu")
	case 1:
	default:
		se.Add("resourceGroups", "unsupported: more than one resource group (give every flavor nvidia.com/gpu, and cpu and memory if you limit them, in one group)")
	}
	for g, rg := range s.ResourceGroups {
		ge := se.Index("resourceGroups", g)
		for i, r := range rg.CoveredResources {
			if !slices.Contains(resourceNames, r) {
				ge.Index("coveredResources", i).Add("", "unsupported resource %q: want %s", r, strings.Join(resourceNames, ", "))
			}
			if slices.Index(rg.CoveredResources, r) < i {
				ge.Index("coveredResources", i).Add("", "%q is listed twice", r)
			}
		}
		if !slices.Contains(rg.CoveredResources, "nvidia.com/gpu") {
			ge.Add("coveredResources", "want nvidia.com/gpu among the covered resources")
		}
		if len(rg.Flavors) == 0 {
			ge.Add("flavors", "missing: want at least one flavor")
		}
		for f, fq := range rg.Flavors {
			fe := ge.Index("flavors", f)
			if k := slices.IndexFunc(rg.Flavors, func(x flavorQuotas) bool { return x.Name == fq.Name }); k < f {
				fe.Add("name", "flavor %q is already flavors[%d]", fq.Name, k)
			}
			var names []string
			for r, rq := range fq.Resources {
				re := fe.Index("resources", r)
				names = append(names, rq.Name)
				if !slices.Contains(rg.CoveredResources, rq.Name) {
					re.Add("name", "%q is not among the group's coveredResources (%s)", rq.Name, strings.Join(rg.CoveredResources, ", "))
					continue
				}
				if slices.Index(names, rq.Name) < r {
					re.Add("name", "%q is listed twice", rq.Name)
				}
				checkQuota(re, rq, s.Cohort != "")
			}
			for _, c := range rg.CoveredResources {
				if !slices.Contains(names, c) {
					fe.Add("resources", "missing %s: every flavor gives a quota for each covered resource", c)
				}
			}
		}
	}
}

// checkQuota reports quantities that are negative or not whole in the
// resource's unit, limits without a cohort, a lending limit above the
// nominal quota.
func checkQuota(e *config.Errors, rq resourceQuota, cohort bool) {
	for _, x := range []struct {
		field string
		q     *Quantity
	}{{"nominalQuota", rq.NominalQuota}, {"borrowingLimit", rq.BorrowingLimit}, {"lendingLimit", rq.LendingLimit}} {
		if x.q == nil {
			continue
		}
		if _, err := x.q.In(rq.Name); err != nil {
			e.Add(x.field, "%v", err)
		}
		if x.field != "nominalQuota" && !cohort {
			e.Add(x.field, "a %s needs a cohort (spec.cohort): without one there is nobody to borrow from or lend to", x.field)
		}
	}
	if rq.LendingLimit != nil && rq.NominalQuota != nil && rq.LendingLimit.Cmp(rq.NominalQuota) > 0 {
		e.Add("lendingLimit", "%s is above the nominal quota %s", rq.LendingLimit, rq.NominalQuota)
	}
}

// Check reports the API version and an unsupported stop policy.
func (q *localQueue) Check(e *config.Errors) {
	checkVersion(e, q.APIVersion, apiVersion)
	if q.Spec.StopPolicy != nil && *q.Spec.StopPolicy != "" && *q.Spec.StopPolicy != "None" {
		e.Add("spec.stopPolicy", "unsupported: %s", feature("stopPolicy"))
	}
}

// Check reports the API version.
func (p *priorityClass) Check(e *config.Errors) { checkVersion(e, p.APIVersion, apiVersion) }

// Check reports the API version.
func (c *configuration) Check(e *config.Errors) { checkVersion(e, c.APIVersion, configAPIVersion) }

func checkVersion(e *config.Errors, got, want string) {
	if got != want {
		e.Add("apiVersion", "want %s, got %q", want, got)
	}
}

func oneOf(e *config.Errors, field, got string, known ...string) {
	if got != "" && !slices.Contains(known, got) {
		e.Add(field, "want one of %s, got %q%s", strings.Join(known, ", "), got, hint(got, known))
	}
}
