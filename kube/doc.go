// Package kube is Brigade's Kubernetes scheduler: the policies that
// brigade sim benchmarks, placing pods on a real cluster's nodes through
// the same driver half (policies.Host). It is a module of its own so that
// the main module's build carries no Kubernetes client. The scheduler is
// package kube/scheduler (its doc.go states the restart protocol); the
// command is kube/cmd/brigade-kube; docs/kubernetes.md is its page.
// Package kube/workload turns a Brigade CSV trace into pods (brigade-kube
// submit), and kube/e2e runs the scheduler under every policy spec on a
// real control plane and compares its start order with brigade sim
// --replay of its export.
package kube
