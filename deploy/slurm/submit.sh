#!/bin/bash
# Submits deploy/slurm/sweep.sbatch as an array of SHARDS tasks and, after
# it, a merge job (--dependency=afterok) that writes $OUT/merged. Prints the
# two job ids: "ARRAY_ID MERGE_ID".
#
#   SHARDS=4 GRID=examples/sweep.yaml OUT=results BRIGADE=brigade deploy/slurm/submit.sh [sbatch options...]
set -euo pipefail
SHARDS=${SHARDS:-4}
export GRID=${GRID:-examples/sweep.yaml}
export OUT=${OUT:-results}
export BRIGADE=${BRIGADE:-brigade}
dir=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --export=ALL --array=0-$((SHARDS - 1)) "$@" "$dir/sweep.sbatch")
array=${array%%;*}
shards=()
for ((i = 0; i < SHARDS; i++)); do shards+=("$OUT/shard-$i"); done
merge=$(sbatch --parsable --export=ALL --job-name=brigade-sweep-merge \
  --dependency=afterok:"$array" --output=slurm-%j.out "$@" \
  --wrap "exec $(printf '%q ' "$BRIGADE" sweep merge --out "$OUT/merged" "${shards[@]}")")
echo "${array} ${merge%%;*}"
