// Command brigade-k8s-env builds and runs the test control plane of package
// kube/controlplane for people (scripts/k8s-control-plane.sh wraps it):
//
//	brigade-k8s-env build                  # build or find the binaries; print their folder
//	brigade-k8s-env up [-dir D] [-nodes N] # run until SIGINT/SIGTERM
//
// up prints "export KUBECONFIG=..." and writes D/ready once the control
// plane answers; the programs die with it (they are its children).
//
// Files:
//   - main.go: build and up.
package main
