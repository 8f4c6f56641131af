#!/usr/bin/env bash
# The test control plane of kube/controlplane (docs/kubernetes.md), for people:
#   build  build kube-apiserver, etcd and kwok once per machine (~15 min cold), print their folder
#   up     start etcd + kube-apiserver + KWOK on 127.0.0.1 in the background (NODES=n adds GPU nodes)
#   down   stop them
# State lives in $STATE (default /tmp/brigade-k8s); the binaries in the cache of docs/kubernetes.md.
set -euo pipefail
cd "$(dirname "$0")/../kube"
STATE=${STATE:-${TMPDIR:-/tmp}/brigade-k8s}
pid_of() { cat "$STATE.pid" 2>/dev/null || true; }
case "${1:-}" in
build) exec go run ./cmd/brigade-k8s-env build ;;
up)
  p=$(pid_of)
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then echo "export KUBECONFIG=$STATE/kubeconfig"; exit 0; fi
  go run ./cmd/brigade-k8s-env build >/dev/null
  go build -o "$STATE.bin" ./cmd/brigade-k8s-env
  rm -rf "$STATE"
  nohup "$STATE.bin" up -dir "$STATE" -nodes "${NODES:-0}" >"$STATE.log" 2>&1 &
  echo $! >"$STATE.pid"
  for _ in $(seq 1200); do
    [ -f "$STATE/ready" ] && { echo "export KUBECONFIG=$STATE/kubeconfig"; exit 0; }
    kill -0 "$!" 2>/dev/null || { cat "$STATE.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "not ready after 120 s; see $STATE.log" >&2; exit 1 ;;
down)
  p=$(pid_of); [ -n "$p" ] || exit 0
  kill "$p" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  rm -f "$STATE.pid" "$STATE.bin" ;;
*) echo "usage: $0 build|up|down" >&2; exit 2 ;;
esac
