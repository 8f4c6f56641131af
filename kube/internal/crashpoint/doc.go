// Package crashpoint names the moments at which a kill -9 is the worst
// for Brigade's Kubernetes scheduler, so that a test can kill it there.
//
// Invariants: Hook is nil in every program but a test's child process,
// which sets it once before the scheduler starts and never again, so At
// costs one nil check in production. The package is internal: nothing
// outside the kube module can set it.
//
// Files:
//   - doc.go: this comment.
//   - crashpoint.go: Hook, At and the names of the points.
package crashpoint
