#!/usr/bin/env bash
# ddpsim run split over MPI processes: bench/sweep_fat_tree.yaml (SimGrid,
# 512 to 8,192 GPUs) with one process (--threads 1) and under `mpirun -np NP`
# (--threads 1 each), the median wall time of REPEAT runs of each, and a
# check that the two print the same report and JSON, byte for byte.
#   bench/run_mpi.sh [DDPSIM] [NP] [REPEAT]
set -euo pipefail
ddpsim=${1:-build/cli/ddpsim} np=${2:-2} repeat=${3:-3}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(run bench/sweep_fat_tree.yaml --threads 1)
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( (repeat + 1) / 2 ))p"; }
time_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
one=() many=()
for ((i = 0; i < repeat; i++)); do
  one+=("$(time_ms "$ddpsim" "${args[@]}" --json "$work/one.json")")
  many+=("$(time_ms mpirun --oversubscribe -np "$np" "$ddpsim" "${args[@]}" --json "$work/many.json")")
done
"$ddpsim" "${args[@]}" > "$work/one.txt"
mpirun --oversubscribe -np "$np" "$ddpsim" "${args[@]}" > "$work/many.txt"
cmp -s "$work/one.txt" "$work/many.txt" && cmp -s "$work/one.json" "$work/many.json" || { echo "FAILED: outputs differ"; exit 1; }
echo "sweep_fat_tree: one process $(median "${one[@]}") ms, mpirun -np ${np} $(median "${many[@]}") ms" \
     "(median of ${repeat}); the same text and JSON"
