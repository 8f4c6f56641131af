#!/usr/bin/env bash
# The prepared GPU check of brigade live (docs/live.md, "GPU check").
#
#   scripts/gpu-check.sh build DIR   # here, with Go: the binary, job files, PyTorch job
#   scripts/gpu-check.sh run DIR     # on the GPU machine (no Go needed): the check
#
# run: brigade gpus; then the same 12 real PyTorch jobs (matrix-multiply
# bursts of known lengths, four pairs of them sharing the GPU with
# gpu_milli: 500) under brigade live with fcfs, then sjf, each with its own
# state, logs and results folder; then, for each, two replays in brigade
# sim and brigade fidelity of each against the live run:
#   replay  sim --replay LIVE (the measured durations, start-up included)
#           --gpu-sharing processor
#   model   sim --replay of LIVE with each job's duration replaced by its
#           nominal compute time, --startup-delay = the median PyTorch
#           start-up measured in the jobs' logs, --gpu-sharing processor
# Everything goes under $OUT (default ./gpu-check-out): summary.txt, and
# gpu-check.tar.gz with every folder, log and table.
#
# BRIGADE_GPU_CHECK_FAKE=1 run: --gpus-fake 1 and a shell stand-in for
# python (sleeps a tenth of the lengths), so the whole pipeline runs on a
# machine without a GPU (CI does this).
#
# It never changes GPU settings: it runs brigade gpus and brigade live
# (read-only NVML queries), and PyTorch jobs; no nvidia-smi, no MIG, no
# reset.
set -euo pipefail

usage() { echo "usage: $0 build DIR | run DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
mode=$1
dir=$2

# The jobs: name, compute seconds, GPU request. Whole-GPU jobs run one at
# a time on the one GPU; the "h" jobs take half of it (two at a time).
JOBS="
w1 6 gpus:1
w2 3 gpus:1
h1 4 gpu_milli:500
h2 4 gpu_milli:500
w3 5 gpus:1
h3 3 gpu_milli:500
h4 5 gpu_milli:500
w4 2 gpus:1
w5 4 gpus:1
h5 2 gpu_milli:500
h6 6 gpu_milli:500
w6 3 gpus:1
"

case $mode in
build)
  here=$(cd "$(dirname "$0")/.." && pwd)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  (cd "$here" && CGO_ENABLED=1 GOOS=linux GOARCH=amd64 CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}" \
    go build -trimpath -ldflags "-s -w" -o "$dir/brigade" ./cmd/brigade)
  cp "$0" "$dir/gpu-check.sh"
  chmod +x "$dir/gpu-check.sh"
  # The PyTorch job: start-up (import, CUDA context, operands) measured
  # from the process's own start time, then 8192x8192 fp16 matmuls for the
  # given wall-clock seconds.
  cat >"$dir/mm.py" <<'EOF'
import os, sys, time

def process_start():
    with open("/proc/self/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    ticks = int(st[19])
    with open("/proc/stat") as f:
        btime = next(int(l.split()[1]) for l in f if l.startswith("btime"))
    return btime + ticks / os.sysconf("SC_CLK_TCK")

t0 = process_start()
secs = float(sys.argv[1])
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
(a @ b).sum().item()
torch.cuda.synchronize()
t1 = time.time()
print(f"startup_s={t1 - t0:.3f} device={torch.cuda.get_device_name(0)} visible={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
n = 0
while time.time() - t1 < secs:
    for _ in range(4):
        c = a @ b
    torch.cuda.synchronize()
    n += 4
el = time.time() - t1
print(f"compute_s={el:.3f} matmuls={n} tflops={n * 2 * 8192**3 / el / 1e12:.1f}", flush=True)
EOF
  # The stand-in for BRIGADE_GPU_CHECK_FAKE=1: a tenth of every length.
  cat >"$dir/fake-mm.sh" <<'EOF'
#!/bin/sh
sleep 0.3
echo "startup_s=0.300 device=fake visible=$CUDA_VISIBLE_DEVICES"
sleep "$(awk "BEGIN{print $1/10}")"
echo "compute_s=$(awk "BEGIN{print $1/10}") matmuls=0 tflops=0"
EOF
  chmod +x "$dir/fake-mm.sh"
  for kind in real fake; do
    f="$dir/jobs-$kind.yaml"
    echo "jobs:" >"$f"
    echo "$JOBS" | while read -r name secs req; do
      [ -n "$name" ] || continue
      if [ $kind = real ]; then
        cmd="exec python3 \"\$GPU_CHECK_DIR/mm.py\" $secs"
        est=$((secs + 4))
      else
        cmd="exec \"\$GPU_CHECK_DIR/fake-mm.sh\" $secs"
        est=$(awk "BEGIN{print $secs/10 + 0.3}")
      fi
      printf '  - {name: %s, command: %s, shell: true, %s, estimate: %ss}\n' \
        "$name" "'$cmd'" "${req/:/: }" "$est" >>"$f"
    done
  done
  echo "$JOBS" | awk 'NF==3{print $1","$2}' | sed '1i name,compute_s' >"$dir/nominal.csv"
  echo "built $dir: brigade ($(du -h "$dir/brigade" | cut -f1)), mm.py, fake-mm.sh, jobs-real.yaml, jobs-fake.yaml, nominal.csv"
  ;;
run)
  t_start=$(date +%s)
  dir=$(cd "$dir" && pwd)
  export GPU_CHECK_DIR=$dir
  out=${OUT:-./gpu-check-out}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  work=$(mktemp -d)
  # Whatever happens (a failed step, the time limit), what was gathered is
  # kept under $OUT: device time is too scarce to lose a partial run.
  save() {
    [ -f "$work/summary.txt" ] && cp "$work/summary.txt" "$out/summary.txt"
    (cd "$work" && tar czf "$out/gpu-check.tar.gz" . 2>/dev/null) || true
    rm -rf "$work"
  }
  trap save EXIT
  B=$dir/brigade
  fake=${BRIGADE_GPU_CHECK_FAKE:-0}
  if [ "$fake" = 1 ]; then
    gpus=(--gpus-fake 1)
    jobs=$dir/jobs-fake.yaml
    scale=10
  else
    gpus=()
    jobs=$dir/jobs-real.yaml
    scale=1
  fi
  sum=$work/summary.txt
  {
    echo "brigade GPU check ($([ "$fake" = 1 ] && echo "FAKE: --gpus-fake 1, sleep stand-in" || echo real)), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo
    echo "== brigade gpus"
  } >"$sum"
  "$B" gpus >>"$sum" 2>&1 || echo "(brigade gpus failed: exit $?)" >>"$sum"
  for pol in fcfs sjf; do
    p=$work/$pol
    mkdir -p "$p"
    t0=$(date +%s.%N)
    timeout 200 "$B" live --jobs "$jobs" --policy "$pol" "${gpus[@]}" --state "$p/state.db" --logs "$p/logs" \
      --out "$p/live" --tick 200ms --exit-when-done >"$p/live.txt" 2>&1 ||
      { { echo "live $pol failed:"; cat "$p/live.txt"; } | tee -a "$sum"; exit 1; }
    t1=$(date +%s.%N)
    # Start-up measured by the jobs themselves.
    startup=$(cat "$p"/logs/*.log | sed -n 's/^startup_s=\([0-9.]*\).*/\1/p' | sort -n |
      awk '{v[NR]=$1} END{if(NR==0){print "0 0 0"; exit} print v[1], v[int((NR+1)/2)], v[NR]}')
    read -r su_min su_med su_max <<<"$startup"
    "$B" sim --replay "$p/live" --policy "$pol" --gpu-sharing processor --out "$p/replay" --quiet --no-plots >"$p/replay.txt"
    "$B" fidelity "$p/live" "$p/replay" >"$p/fidelity-replay.txt"
    # The model: nominal compute times (a tenth in fake mode) plus the
    # measured median start-up.
    mkdir -p "$p/model-in"
    cp "$p/live/jobs.csv" "$p/live/estimates.csv" "$p/live/run.json" "$p/live/cluster.yaml" "$p/model-in/"
    python3 - "$p/model-in/jobs.csv" "$dir/nominal.csv" "$scale" <<'EOF'
import csv, sys
path, nominal, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
nom = {r["name"]: float(r["compute_s"]) / scale for r in csv.DictReader(open(nominal))}
rows = list(csv.DictReader(open(path)))
with open(path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys())
    w.writeheader()
    for r in rows:
        r["run_s"], r["lost_s"], r["attempts"] = f"{nom[r['name']]:.6f}", "0", "1"
        w.writerow(r)
EOF
    "$B" sim --replay "$p/model-in" --policy "$pol" --startup-delay "$su_med" --gpu-sharing processor \
      --out "$p/model" --quiet --no-plots >"$p/model.txt"
    "$B" fidelity "$p/live" "$p/model" >"$p/fidelity-model.txt"
    {
      echo
      echo "== $pol: brigade live ($(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s wall)"
      cat "$p/live.txt"
      echo "PyTorch start-up measured by the jobs (s): min $su_min, median $su_med, max $su_max"
      echo "-- replay: measured durations (start-up included), --gpu-sharing processor"
      cat "$p/fidelity-replay.txt"
      echo "-- model: nominal compute times, --startup-delay $su_med, --gpu-sharing processor"
      cat "$p/fidelity-model.txt"
    } >>"$sum"
  done
  echo >>"$sum"
  echo "total $(($(date +%s) - t_start)) s" >>"$sum"
  cat "$sum"
  ;;
*) usage ;;
esac
