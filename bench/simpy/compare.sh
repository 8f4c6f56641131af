#!/usr/bin/env bash
# Replays one Philly trace twice, in the SimPy model (fcfs.py) and in
# Brigade on the same model (pool512.yaml, strict fcfs, first fit), and
# prints CPU times, their ratios and both mean waits. Each side runs
# REPS times (default 3) and keeps its least CPU time, the one least
# disturbed by whatever else the machine ran. Exits 1 when the means
# differ or a ratio is below its target (whole command 6x, engine 50x).
#
#   bench/simpy/compare.sh [TRACE]   # default ../shared/traces/philly-pollux/philly.csv
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
trace=${1:-$root/../shared/traces/philly-pollux/philly.csv}
reps=${REPS:-3}
python=${PYTHON:-/usr/bin/python3}
export CGO_CFLAGS="${CGO_CFLAGS:--Wno-deprecated-declarations}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/brigade" ./cmd/brigade)

# cpu CMD...: runs CMD with its output in $tmp/out and prints its CPU
# seconds (user + system, children included).
cpu() {
  local t
  t=$( { TIMEFORMAT='%3U %3S'; time "$@" >"$tmp/out" 2>"$tmp/err"; } 2>&1 ) || { cat "$tmp/err" >&2; exit 1; }
  awk '{printf "%.3f", $1 + $2}' <<<"$t"
}
least() { tr ' ' '\n' | grep . | sort -g | head -1; }
# column_of NAME FILE: the cell under the header NAME in the first row of
# brigade bench's table in FILE; fails when there is no such column.
column_of() {
  awk -F '  +' -v name="$1" '
    { sub(/^ +/, "") }
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) col = i; if (!col) exit 1; next }
    NR == 2 { print $col; exit }' "$2" || { echo "compare.sh: no column \"$1\" in brigade bench's table" >&2; exit 1; }
}

simpy_whole= simpy_sim= brigade_whole= brigade_engine=
for _ in $(seq "$reps"); do
  simpy_whole+=" $(cpu "$python" "$here/fcfs.py" "$trace")"
  simpy_sim+=" $(sed -n 's/.*simulate \([0-9.]*\) s CPU.*/\1/p' "$tmp/out")"
  simpy_mean=$(sed -n 's/^mean wait \([0-9.]*\) s$/\1/p' "$tmp/out")
  simpy_jobs=$(sed -n 's/^jobs //p' "$tmp/out")
  rm -rf "$tmp/run"
  brigade_whole+=" $(cpu "$tmp/brigade" sim --trace "$trace" --cluster "$here/pool512.yaml" --policy fcfs --quiet --out "$tmp/run")"
  "$tmp/brigade" bench --trace "$trace" --cluster "$here/pool512.yaml" --policy fcfs --quiet >"$tmp/bench"
  # The event loop alone: the "cpu s" column of brigade bench, found by
  # its header (columns are two or more spaces apart; a cell may hold one).
  brigade_engine+=" $(column_of "cpu s" "$tmp/bench")"
done
brigade_mean=$("$python" -c 'import json,sys; print("%.6f" % json.load(open(sys.argv[1]))[0]["wait_s"]["mean"])' "$tmp/run/summary.json")
sw=$(least <<<"$simpy_whole"); ss=$(least <<<"$simpy_sim")
bw=$(least <<<"$brigade_whole"); be=$(least <<<"$brigade_engine")
echo "trace: $trace, $simpy_jobs jobs on one pool of 512 GPUs, strict FCFS (least of $reps runs)"
printf '%-22s %9s %9s %7s %7s\n' "" SimPy Brigade ratio target
printf '%-22s %8ss %8ss %6.1fx %6sx\n' "whole command, CPU" "$sw" "$bw" "$(awk -v a="$sw" -v b="$bw" 'BEGIN{print a/b}')" 6
printf '%-22s %8ss %8ss %6.1fx %6sx\n' "engine alone" "$ss" "$be" "$(awk -v a="$ss" -v b="$be" 'BEGIN{print a/b}')" 50
echo "(engine alone: SimPy's env.run() and Brigade's event loop, in CPU seconds as each times them)"
echo "mean wait: SimPy $simpy_mean s, Brigade $brigade_mean s"
ok=1
[ "$simpy_mean" = "$brigade_mean" ] || { echo "FAIL: the mean waits differ"; ok=0; }
awk -v a="$sw" -v b="$bw" 'BEGIN{exit !(a >= 6*b)}' || { echo "below target: whole command under 6x"; ok=0; }
awk -v a="$ss" -v b="$be" 'BEGIN{exit !(a >= 50*b)}' || { echo "below target: engine under 50x"; ok=0; }
[ "$ok" = 1 ] && echo "ok: equal means, both targets met"
[ "$ok" = 1 ]
