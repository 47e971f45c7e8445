#!/usr/bin/env bash
# Where W = 2's compute goes on this machine, unshaped (docs/validation.md,
# "Where W = 2's compute goes"): ResNet-18 (python/recipes/cnn.py) profiled
# alone and beside a second process, under real DDP at W = 1 and 2 (gloo);
# a 256 MB copy alone and beside another (memory bandwidth); ddpsim-real's
# validate.cpu_loop model at W = 1 and 2 with Open MPI polling or yielding.
# Usage: scripts/where_compute_goes.sh [BUILD_DIR] [OUT_DIR] [ROUNDS]   (about 2 minutes a round)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} out=${2:-/tmp/where_compute_goes} rounds=${3:-2}
export PYTHONPATH=$PWD/python MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
py="$(scripts/python.sh)" recipe=$PWD/python/recipes/cnn.py
mkdir -p "$out"
medians() {  # FILE KEYS...: the medians of the steps after the first
  $py - "$@" <<'PY'
import json, statistics, sys
steps = json.load(open(sys.argv[1]))["steps"][1:]
print(" ".join(f"{k} {statistics.median(s[k] for s in steps):.3f}" for k in sys.argv[2:]))
PY
}
copy='import numpy as np, time
a = np.ones(32 << 20); b = np.empty_like(a)
t = time.perf_counter()
for _ in range(10): np.copyto(b, a)
print("%.1f GB/s" % (10 * a.nbytes * 2 / (time.perf_counter() - t) / 1e9))'
for round in $(seq "$rounds"); do
  echo "== round $round"
  $py -m ddpsim_torch profile "$recipe" --out "$out/alone.yaml" --bare | sed 's/^/profile alone: /'
  $py -m ddpsim_torch profile "$recipe" --out "$out/corun.yaml" --bare --ranks-per-host 2 | sed 's/^/profile beside a second process: /'
  $py -m ddpsim_torch measure "$recipe" --world-size 1 --steps 20 --out "$out/w1" > /dev/null
  echo "DDP W = 1: $(medians "$out/w1.rank0.json" forward_compute_ms backward_compute_ms step_ms)"
  $py -m ddpsim_torch measure "$recipe" --world-size 2 --steps 20 --out "$out/w2" > /dev/null
  for r in 0 1; do
    echo "DDP W = 2, rank $r: $(medians "$out/w2.rank$r.json" forward_compute_ms backward_compute_ms collective_ms step_ms)"
  done
  echo "copy alone: $($py -c "$copy")"
  $py -c "$copy" > /dev/null &
  echo "copy beside another: $($py -c "$copy")"
  wait
  for yield in 0 1; do
    for np in 1 2; do
      OMPI_MCA_mpi_yield_when_idle=$yield mpirun --oversubscribe -np $np "$build/real_backend/ddpsim-real" train \
        --widths 64,512,512,1 --dataset-size 8192 --batch-size 64 --max-steps 20 --bucket-cap-mb 0.5 \
        --first-bucket-mb 0.1 --json "$out/mpi" > /dev/null
      echo "ddpsim-real W = $np, mpi_yield_when_idle $yield: $(medians "$out/mpi.rank0.json" compute_ms step_ms)"
    done
  done
done
