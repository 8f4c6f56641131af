package kueue

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/policies"
)

func models(tb testing.TB, names ...string) hwmodel.ModelSet {
	var s hwmodel.ModelSet
	for _, n := range names {
		m, ok := hwmodel.LookupModel(n)
		if !ok {
			tb.Fatalf("no model %s", n)
		}
		s |= hwmodel.Of(m.ID)
	}
	return s
}

// The example file, converted by hand: GPUs in milli, CPU in milli, memory
// in MiB; unset limits NoLimit; research's weight 2, prod's default 1.
func TestParse(t *testing.T) {
	k, err := Load("testdata/quotas.yaml", models(t, "H100-80GB", "A100-80GB"))
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := hwmodel.LookupModel("H100-80GB")
	a100, _ := hwmodel.LookupModel("A100-80GB")
	const no = policies.NoLimit
	thr := 100
	want := &policies.Kueue{
		Source:  "testdata/quotas.yaml",
		Flavors: []policies.KueueFlavor{{Name: "h100", Model: h100.ID}, {Name: "a100", Model: a100.ID}},
		Queues: []policies.ClusterQueue{
			{Name: "research", Cohort: "org", Strategy: policies.StrictFIFO, Weight: 2,
				Preemption: policies.Preemption{WithinClusterQueue: "LowerPriority", ReclaimWithinCohort: "Any", BorrowWithinCohort: "LowerPriority", MaxPriorityThreshold: &thr},
				Flavors: []policies.Quota{
					{Flavor: 0, Covered: [3]bool{true, true, true}, Nominal: [3]int64{8000, 64000, 512 << 10},
						BorrowingLimit: [3]int64{4000, no, no}, LendingLimit: [3]int64{no, no, 256 << 10}},
					{Flavor: 1, Covered: [3]bool{true, true, true}, Nominal: [3]int64{4000, 32500, 256 << 10},
						BorrowingLimit: [3]int64{no, no, no}, LendingLimit: [3]int64{no, no, no}},
				}},
			{Name: "prod", Cohort: "org", Strategy: policies.BestEffortFIFO, Weight: 1,
				Flavors: []policies.Quota{{Flavor: 0, Covered: [3]bool{true, false, false}, Nominal: [3]int64{8000, 0, 0},
					BorrowingLimit: [3]int64{no, no, no}, LendingLimit: [3]int64{2000, no, no}}}},
		},
		Local:       []policies.LocalQueue{{Namespace: "research", Name: "research", Queue: 0}, {Namespace: "prod", Name: "prod", Queue: 1}},
		Priorities:  []policies.PriorityClass{{Name: "high", Value: 1000}},
		FairSharing: true,
	}
	if !reflect.DeepEqual(k, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", k, want)
	}
	if err := CheckTenants(k, []string{"research", "prod/prod"}, "jobs.csv"); err != nil {
		t.Fatal(err)
	}
	err = CheckTenants(k, []string{"research", "ops"}, "jobs.csv")
	if err == nil || !strings.Contains(err.Error(), `tenant "ops" names no LocalQueue`) {
		t.Fatalf("got %v", err)
	}
}

const flavor = `apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels:
    nvidia.com/gpu.product: H100-80GB
---
`

const queue = `apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: a
spec:
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
`

// Each bad file is refused with its line, field and what is wrong.
func TestErrors(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown field", flavor + strings.Replace(queue, "  cohort", "", 1) + "  cohrt: x\n",
			`f.yaml:21: [1].spec.cohrt: unknown field`},
		{"unsupported admission checks", flavor + queue + "  admissionChecks: [prov]\n",
			`f.yaml:21: [1].spec.admissionChecks: unsupported: admission checks`},
		{"unsupported topology", strings.Replace(flavor, "spec:\n", "spec:\n  topologyName: default\n", 1) + queue,
			`f.yaml:6: [0].spec.topologyName: unsupported: topology-aware scheduling`},
		{"unsupported stop policy", flavor + queue + "  stopPolicy: Hold\n",
			`f.yaml:21: [1].spec.stopPolicy: unsupported: stop policies`},
		{"unsupported namespace selector", flavor + queue + "  namespaceSelector:\n    matchLabels: {team: a}\n",
			`f.yaml:22: [1].spec.namespaceSelector.matchLabels: unsupported: a namespaceSelector other than the empty one`},
		{"unsupported fungibility", flavor + queue + "  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n",
			`f.yaml:22: [1].spec.flavorFungibility.whenCanBorrow: unsupported: flavor fungibility`},
		{"hierarchical cohorts", flavor + queue + "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: org\nspec:\n  parent: root\n",
			`f.yaml:23: [2].kind: unsupported: hierarchical cohorts`},
		{"flavor the cluster lacks", strings.Replace(flavor, "H100-80GB", "NVIDIA-B200", 1) + queue,
			`f.yaml:6: [0].spec.nodeLabels: nvidia.com/gpu.product: the cluster has no B200-180GB GPUs`},
		{"unknown model", strings.Replace(flavor, "H100-80GB", "Z9000", 1) + queue,
			`f.yaml:6: [0].spec.nodeLabels: nvidia.com/gpu.product: unknown GPU model "Z9000"`},
		{"missing flavor", queue,
			`f.yaml:9: [0].spec.resourceGroups[0].flavors[0].name: no ResourceFlavor "h100" in the file`},
		{"limit without cohort", flavor + queue + "        borrowingLimit: 2\n",
			`f.yaml:21: [1].spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: a borrowingLimit needs a cohort`},
		{"lending above nominal", flavor + strings.Replace(queue, "spec:\n", "spec:\n  cohort: org\n", 1) + "        lendingLimit: 9\n",
			`f.yaml:22: [1].spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: 9 is above the nominal quota 8`},
		{"fractional GPUs", flavor + strings.Replace(queue, "nominalQuota: 8", "nominalQuota: 500m", 1),
			`f.yaml:20: [1].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: want whole GPUs, got 500m`},
		{"no GPU resource", flavor + strings.Replace(strings.Replace(queue, `"nvidia.com/gpu"]`, `"cpu"]`, 1), "name: nvidia.com/gpu", "name: cpu", 1),
			`f.yaml:15: [1].spec.resourceGroups[0].coveredResources: want nvidia.com/gpu among the covered resources`},
		{"unknown strategy", flavor + queue + "  queueingStrategy: LIFO\n",
			`f.yaml:21: [1].spec.queueingStrategy: want one of BestEffortFIFO, StrictFIFO, got "LIFO"`},
		{"unknown preemption policy", flavor + queue + "  preemption:\n    reclaimWithinCohort: Sometimes\n",
			`f.yaml:22: [1].spec.preemption.reclaimWithinCohort: want one of Never, LowerPriority, Any, got "Sometimes"`},
		{"local queue of no cluster queue", flavor + queue + "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: a\n  namespace: a\nspec:\n  clusterQueue: b\n",
			`f.yaml:28: [2].spec.clusterQueue: no ClusterQueue "b" in the file`},
		{"two queues of one name", flavor + queue + "---\n" + queue,
			`f.yaml:25: [2].metadata.name: ClusterQueue "a" is already document 2's`},
		{"wrong api version", strings.Replace(flavor, "v1beta1", "v1alpha1", 1) + queue,
			`f.yaml:1: [0].apiVersion: want kueue.x-k8s.io/v1beta1, got "kueue.x-k8s.io/v1alpha1"`},
		{"unknown kind", flavor + queue + "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQeue\nmetadata:\n  name: x\n",
			`f.yaml:23: [2].kind: want one of ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass, Configuration, got "ClusterQeue"; did you mean ClusterQueue?`},
		{"priority out of range", flavor + queue + "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: x\nvalue: 3000000000\n",
			`f.yaml:26: [2].value: number 3000000000 is out of range`},
		{"no cluster queue", flavor, `f.yaml:1: no ClusterQueue`},
	}
	present := models(t, "H100-80GB", "A100-80GB")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), "f.yaml", present)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A flavor without labels is the cluster's only model.
func TestFlavorWithoutLabels(t *testing.T) {
	file := strings.Replace(flavor, "spec:\n  nodeLabels:\n    nvidia.com/gpu.product: H100-80GB\n", "", 1) + queue
	k, err := Parse([]byte(file), "f.yaml", models(t, "H100-80GB"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := hwmodel.LookupModel("H100-80GB"); k.Flavors[0].Model != m.ID {
		t.Fatalf("flavor on %v", k.Flavors[0].Model)
	}
	if _, err := Parse([]byte(file), "f.yaml", models(t, "H100-80GB", "A100-80GB")); err == nil || !strings.Contains(err.Error(), "the cluster has several models") {
		t.Fatalf("got %v", err)
	}
}

// The decoder never panics and either returns a valid configuration or
// an error.
func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/quotas.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(flavor + queue))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("kind: ClusterQueue\n"))
	f.Add([]byte("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: a}\nspec:\n  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: x, resources: [{name: nvidia.com/gpu, nominalQuota: 1e30Ki}]}]}]\n"))
	present := models(f, "H100-80GB", "A100-80GB")
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := Parse(data, "f.yaml", present)
		if err == nil {
			if k.Validate() != nil {
				t.Fatalf("parsed but invalid: %v", k.Validate())
			}
		}
	})
}
