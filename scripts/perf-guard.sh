#!/usr/bin/env bash
# The speed regression guard (docs/speed.md): small cases of the
# benchmarks of every stage of brigade sim, each timed as a RATIO to
# BenchmarkCalibrate (runner) measured in the same run, so that the speed
# of the machine cancels out. Each benchmark runs COUNT times (default 3)
# and keeps its least time, the run least disturbed by anything else on
# the machine. A case fails only when its ratio is over FACTOR (default
# 2) times the ratio committed in bench/baseline.txt: a large regression,
# never noise. About half a minute on two cores.
#
#   scripts/perf-guard.sh            # compare with bench/baseline.txt
#   scripts/perf-guard.sh --update   # measure and rewrite the baseline
#
# Refresh the baseline (and commit it, saying why) when a change makes a
# case faster for good, or slower on purpose: run --update on an idle
# machine, twice, and keep the second.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
baseline=bench/baseline.txt
factor=${FACTOR:-2}
count=${COUNT:-3}
update=0
[ "${1:-}" = --update ] && update=1

# package, -bench pattern, -benchtime (separated by spaces): the cases.
cases=(
  "./runner ^BenchmarkCalibrate$ 20x"
  "./sim ^BenchmarkEngine$/^fcfs$/^gpus=1000$/^jobs=10000$/^load=0.9$ 5x"
  "./sim ^BenchmarkEngine$/^fair$/^gpus=1000$/^jobs=10000$/^load=20$ 3x"
  "./workloads ^BenchmarkRead$/^(philly|brigade)-synthetic$ 10x"
  "./results ^BenchmarkWrite$/^jobs=20000$/^policies=1$ 5x"
  "./report ^BenchmarkWritePlots$/^jobs=20000$/^policies=1$ 2x"
  "./cmd/brigade ^BenchmarkSim$/^(default|philly-synthetic)$ 2x"
)
raw=$(mktemp)
# The benchmarks write their files into a memory-backed folder where there
# is one, so that disk latency (fsync) does not enter the ratios.
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  shm=$(mktemp -d /dev/shm/perf-guard.XXXXXX)
  export TMPDIR=$shm
fi
trap 'rm -f "$raw"; [ -z "$shm" ] || rm -rf "$shm"' EXIT
t0=$(date +%s)
for c in "${cases[@]}"; do
  read -r pkg pattern benchtime <<<"$c"
  go test -run '^$' -bench "$pattern" -benchtime "$benchtime" -count "$count" "$pkg" >>"$raw" 2>&1 ||
    { cat "$raw"; echo "perf-guard: go test -bench failed in $pkg"; exit 1; }
done
# name (without the -GOMAXPROCS suffix) and its least ns/op.
measured=$(awk '/^Benchmark.* ns\/op/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") v = $i + 0
    if (!(name in best) || v < best[name]) best[name] = v
  } END { for (n in best) print n, best[n] }' "$raw" | sort)
cal=$(awk '$1 == "BenchmarkCalibrate" {print $2}' <<<"$measured")
[ -n "$cal" ] || { cat "$raw"; echo "perf-guard: no calibration measured"; exit 1; }
ratios=$(awk -v cal="$cal" '$1 != "BenchmarkCalibrate" {printf "%s %.4f\n", $1, $2 / cal}' <<<"$measured")
if [ "$update" = 1 ]; then
  {
    echo "# scripts/perf-guard.sh baseline: each case's least ns/op over BenchmarkCalibrate's"
    echo "# in the same run. Refresh with scripts/perf-guard.sh --update (docs/speed.md)."
    echo "$ratios"
  } >"$baseline"
  echo "perf-guard: wrote $baseline ($(wc -l <<<"$ratios") cases, calibration $cal ns/op)"
  exit 0
fi
[ -f "$baseline" ] || { echo "perf-guard: no $baseline; run scripts/perf-guard.sh --update"; exit 1; }
fail=0 n=0
printf '%-72s %9s %9s %7s\n' case ratio baseline "x base"
while read -r name ratio; do
  base=$(awk -v n="$name" '$1 == n {print $2}' "$baseline")
  if [ -z "$base" ]; then
    printf '%-72s %9s %9s %7s\n' "$name" "$ratio" "-" "new"
    continue
  fi
  x=$(awk -v r="$ratio" -v b="$base" 'BEGIN{printf "%.2f", r / b}')
  mark=
  if awk -v x="$x" -v f="$factor" 'BEGIN{exit !(x > f)}'; then mark="  REGRESSION (over ${factor}x)"; fail=1; fi
  printf '%-72s %9s %9s %6sx%s\n' "$name" "$ratio" "$base" "$x" "$mark"
  n=$((n + 1))
done <<<"$ratios"
while read -r name _; do
  case $name in '#'* | '') continue ;; esac
  grep -q "^$name " <<<"$ratios" || { echo "perf-guard: $name is in $baseline but was not measured"; fail=1; }
done <"$baseline"
echo "perf-guard: $n cases against $baseline, calibration $cal ns/op, $(($(date +%s) - t0)) s"
[ "$fail" = 0 ] || { echo "perf-guard: FAILED: a case is over ${factor}x its baseline ratio"; exit 1; }
echo "perf-guard: ok"
