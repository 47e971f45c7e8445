#!/usr/bin/env bash
# The seed's 1/2/4-worker efficiency report on CPUs: trains the same MLP with
# ddpsim-real at W = 1, 2 and 4 (weak scaling: a fixed batch per rank) and
# prints step time, throughput, speedup and scaling efficiency.
#   scripts/efficiency_report.sh [ddpsim-real train options, replacing the defaults]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${DDPSIM_REAL:-build/real_backend/ddpsim-real}  # ctest points DDPSIM_REAL at its own build
[ -x "$bin" ] || { echo "build first: scripts/build.sh build (needs OpenMPI)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# With no options, a 64-512-512-1 MLP, batch 64 per rank, 12 steps.
if [ $# -eq 0 ]; then args=(--widths 64,512,512,1 --dataset-size 8192 --batch-size 64 --max-steps 12); else args=("$@"); fi
for w in 1 2 4; do
  mpirun --oversubscribe -np "$w" "$bin" train "${args[@]}" --json "$out/w$w" >/dev/null
done
"$bin" report "$out/w1" "$out/w2" "$out/w4"
