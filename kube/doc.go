// Package kube is Brigade's Kubernetes scheduler: the policies that
// brigade sim benchmarks, placing pods on a real cluster's nodes through
// the same driver half (policies.Host). It is a module of its own so that
// the main module's build carries no Kubernetes client.
package kube
