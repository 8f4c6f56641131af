#!/usr/bin/env bash
# CI: run deploy/slurm/sweep.sbatch as a real Slurm job array on a throwaway
# single-node Slurm (Debian's slurm-wlm and munge, installed when absent),
# merge the shards with the dependent merge job from deploy/slurm/submit.sh,
# and check the merged runs.csv, runs.parquet and summary.csv equal an
# unsharded `brigade sweep` byte for byte. Every daemon it starts is stopped
# on exit. Fails loudly (non-zero, with the daemons' logs) when Slurm cannot
# start or the job does not finish in time.
#
#   ci/slurm-check.sh [GRID]      (default: ci/sweep-ci.yaml; SHARDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
grid=${1:-ci/sweep-ci.yaml}
shards=${SHARDS:-3}
timeout_s=${SLURM_CHECK_TIMEOUT:-300}
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"

fail() { echo "slurm: FAILED: $*" >&2; exit 1; }

sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 ||
  ! command -v sbatch >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  echo "slurm: installing slurm-wlm and munge"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null ||
    fail "apt-get install slurm-wlm munge did not work"
fi
# slurmd runs the jobs as the submitting user; a single-node Slurm as a
# normal user needs root for the daemons.
[ "$(id -u)" = 0 ] || fail "the daemons need root here (run as root, e.g. in the CI container)"

work=$(mktemp -d /tmp/brigade-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  local rc=$?
  set +e
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user="$(id -un)" 2>/dev/null
  # Stop only the daemons this script started, by their pids, newest first.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if [ "$rc" != 0 ]; then
    for f in "$work"/log/*.log "$work"/run/slurm-*.out; do
      [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$work"/{state,spool,log,munge,sock,run}

# munged on a private socket, key and state, so a munged already running on
# the machine is left alone.
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
chmod 755 "$work/sock"
sock=$work/sock/munge.socket
munged --force --socket="$sock" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
  --seed-file="$work/munge/munge.seed" || fail "munged did not start"
pids+=("$(cat "$work/munge/munged.pid")")

host=$(hostname -s)
ncpu=$(nproc)
port=$((20000 + RANDOM % 20000))
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=brigadeci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpu State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

t0=$(date +%s)
slurmctld -i || fail "slurmctld did not start"
for _ in $(seq 50); do [ -s "$work/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmctld.pid")")
slurmd || fail "slurmd did not start"
for _ in $(seq 50); do [ -s "$work/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$work/slurmd.pid")")
ok=
for _ in $(seq 100); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n1 || true)
  case "$state" in idle | mixed | allocated) ok=1; break ;; esac
  sleep 0.2
done
[ -n "$ok" ] || fail "the node did not come up (state: ${state:-none})"
echo "slurm: single-node Slurm $(sinfo -V | cut -d' ' -f2) up on $host ($ncpu CPUs) in $(($(date +%s) - t0))s"

# The binary the jobs run, and the unsharded reference run.
go build -o "$work/brigade" ./cmd/brigade
cp "$grid" "$work/run/grid.yaml"
env -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID -u BRIGADE_SHARDS \
  "$work/brigade" sweep --quiet "$work/run/grid.yaml" --out "$work/run/whole" >/dev/null ||
  fail "unsharded brigade sweep failed"

cd "$work/run"
t1=$(date +%s)
read -r array merge < <(SHARDS=$shards GRID=grid.yaml OUT=results BRIGADE="$work/brigade" \
  "$root/deploy/slurm/submit.sh")
[ -n "${merge:-}" ] || fail "sbatch did not submit the array and the merge job"
echo "slurm: submitted array job $array ($shards tasks) and merge job $merge (afterok)"
while squeue -h -j "$array,$merge" -o '%i' 2>/dev/null | grep -q .; do
  [ $(($(date +%s) - t1)) -lt "$timeout_s" ] || { squeue; fail "jobs not done after ${timeout_s}s"; }
  sleep 1
done
# Every array task and the merge must have COMPLETED (exit 0:0).
states=$(scontrol -o show job "$array" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' ')
mstate=$(scontrol -o show job "$merge" | grep -o 'JobState=[A-Z_]*')
echo "slurm: array tasks:$states; merge: $mstate"
ntask=$(scontrol -o show job "$array" | grep -c 'JobState=COMPLETED' || true)
[ "$ntask" = "$shards" ] || fail "$ntask of $shards array tasks completed"
[ "$mstate" = JobState=COMPLETED ] || fail "merge job: $mstate"
# Each task ran only its part: shard row counts add up to the whole table's.
whole_rows=$(($(wc -l <whole/runs.csv) - 1))
sum=0
for i in $(seq 0 $((shards - 1))); do
  [ -f "results/shard-$i/runs.csv" ] || fail "results/shard-$i/runs.csv missing"
  rows=$(($(wc -l <"results/shard-$i/runs.csv") - 1))
  [ "$rows" -lt "$whole_rows" ] || fail "shard $i has $rows rows of $whole_rows: not sharded"
  sum=$((sum + rows))
done
[ "$sum" = "$whole_rows" ] || fail "shards hold $sum rows, the unsharded run $whole_rows"
echo "slurm: shards hold $sum rows between them, as the unsharded run"
for f in runs.csv runs.parquet summary.csv; do
  cmp "whole/$f" "results/merged/$f" || fail "merged $f differs from the unsharded run"
done
echo "slurm: $shards-task job array merged equals the unsharded sweep byte for byte (runs.csv, runs.parquet, summary.csv) in $(($(date +%s) - t1))s"
