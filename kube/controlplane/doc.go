// Package controlplane runs a real Kubernetes control plane on loopback
// for tests of Brigade's scheduler: etcd, kube-apiserver and KWOK (which
// plays the nodes and the pods' lifecycle), so that binding, watching,
// admission and validation are the API server's own, with no kubelet and
// no container runtime.
//
// Use from a test:
//
//	cp := controlplane.ForTest(t) // stopped by t.Cleanup
//	names, err := controlplane.AddGPUNodes(ctx, cp.Clientset, 150, controlplane.NodeSpec{GPUs: 8})
//	err = controlplane.WaitNodesReady(ctx, cp.Clientset, names)
//	// a pod with annotation brigade.sim/duration: 2s, once bound, turns
//	// Running and then Succeeded 2 s later.
//
// Invariants:
//   - The binaries are built from the pinned module files in tools/ (embedded,
//     so nothing outside this package is read at run time), at most once per
//     machine and cache key: the key hashes those files, the build flags, the
//     Go version and the platform. A build holds an flock on KEY.lock in the
//     cache root, writes into KEY.tmp-*, and renames that to KEY only when all
//     three binaries are there, so a killed build leaves no entry (the next
//     build removes its leftovers) and a waiting process never sees half of one.
//   - Everything listens on 127.0.0.1 only, on ports the kernel handed out, so
//     several control planes (parallel test binaries) can run at once.
//   - Every program runs in its own process group with a parent-death signal
//     (Linux): Stop ends the groups in reverse start order (SIGTERM, SIGKILL
//     after 10 s), and a test binary that dies takes them with it.
//   - Start either returns a healthy control plane or leaves nothing behind,
//     and its error quotes the failing program's log.
//
// Files:
//   - binaries.go: Binaries, Cached, CacheRoot: the cache, its key and lock.
//   - build.go: the real build (go build of each pinned tool module).
//   - start.go: Options, Start, ControlPlane, Stop.
//   - nodes.go: AddGPUNodes, NodeSpec, WaitNodesReady: GPU Nodes for KWOK.
//   - fortest.go: ForTest, the one-line use from a test, and ForTestWith.
//   - lock_unix.go, lock_other.go: the build lock (flock).
//   - proc_linux.go, proc_other.go, proc_nounix.go: process groups and Pdeathsig.
//   - tools/: the pinned go.mod/go.sum of each program and the KWOK stages,
//     with their provenance in tools/README.md.
package controlplane
