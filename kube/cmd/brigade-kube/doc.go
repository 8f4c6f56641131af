// Command brigade-kube is Brigade's Kubernetes scheduler: it places the
// pods whose spec.schedulerName is its own with any policy brigade sim
// benchmarks (package scheduler), and exports a results folder that
// brigade sim --replay reads.
//
//	brigade-kube --policy sjf+bf/bestfit [--scheduler-name brigade] [--leader-elect [--lease-duration 15s --renew-deadline 10s --retry-period 2s]] [--metrics 127.0.0.1:9401]
//	brigade-kube export --out DIR [--policy SPEC] [--scheduler-name brigade]
//	brigade-kube submit --jobs TRACE.csv [--namespace default] [--scheduler-name brigade] [--node-gpus 8] [--wait [--evicted restart|resume|leave]]
//	brigade-kube bench --namespace NS [--policy SPEC] [--pods 1000] (test clusters only: it binds pause pods asking for GPUs)
//
// --node-selector k=v,... confines the scheduler (and the export) to the
// nodes carrying those labels: one scheduler per partition of a cluster.
// --kube-api-qps and --kube-api-burst (default 50 and 100, as
// kube-scheduler) are the client's rate limits: client-go's own 5/10
// would hold a round's Bindings back. submit --wait is also the pods'
// controller until they have all ended: a pod evicted is created again
// (workload.Keep), to start over or to resume.
//
// Files:
//   - main.go: the flags and the subcommands.
package main
