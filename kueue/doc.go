// Package kueue reads Kueue manifests (kueue.x-k8s.io/v1beta1) into the
// kueue order's configuration, policies.Kueue: ResourceFlavors,
// ClusterQueues, LocalQueues, WorkloadPriorityClasses and the fair
// sharing switch of Kueue's own Configuration
// (config.kueue.x-k8s.io/v1beta1), in one multi-document YAML file.
//
// # Invariants
//
//   - The file goes through the one config decoder
//     (config.ParseDocuments): an unknown field is an error with file,
//     line and field, and so is a field Kueue has that Brigade does not
//     model (admission checks, topology-aware scheduling, flavor taints,
//     stop policies, namespace selectors other than the empty one,
//     flavor fungibility other than the defaults, fair-sharing
//     preemption strategies, more than one resource group, Cohort
//     objects): its message says which feature is unsupported. Every
//     problem is reported at once.
//   - A ResourceFlavor is one GPU model of the cluster, named by its node
//     label nvidia.com/gpu.product (the product name GPU feature
//     discovery writes, NVIDIA-H100-80GB-HBM3, or a Brigade model name)
//     or brigade.dev/gpu-model; a flavor without labels is the cluster's
//     only model. A flavor on a model the cluster lacks is an error.
//   - Cohorts are flat: a ClusterQueue's spec.cohort names one;
//     hierarchical cohorts (Cohort objects with a parent) are refused.
//   - Resources: nvidia.com/gpu (required, whole GPUs), cpu and memory,
//     each with nominalQuota, borrowingLimit and lendingLimit in
//     Kubernetes quantities (8, 500m, 256Gi); limits need a cohort, a
//     lending limit is at most the nominal quota.
//   - A job goes to the LocalQueue its tenant names (NAME, or
//     NAMESPACE/NAME when several namespaces have one of that name);
//     CheckTenants refuses a workload with a tenant that names none.
//   - The output is plain data; this package does no I/O but Load's read
//     of the file.
//
// # Files
//
//   - kueue.go: Load, Parse, the conversion into policies.Kueue,
//     flavors' models, CheckTenants.
//   - manifest.go: the manifest types, their Check methods, and the
//     fields Kueue has that are refused as unsupported.
//   - quantity.go: Kubernetes resource quantities.
package kueue
