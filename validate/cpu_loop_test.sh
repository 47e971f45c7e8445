#!/usr/bin/env bash
# Predict before measuring, on CPUs: calibrate on a 1-rank run of ddpsim-real
# and all-reduce sweeps at W = 1 and 2, with the contention pair the overlap
# micro-benchmark measures at W = 2 (ddpsim-real overlap: compute and an
# all-reduce alone and at once, not the training run), predict W = 1 and 2 for
# scenarios/real_mlp_cpu.yaml, then measure W = 2 and compare. Prints the
# errors every run and whether they meet the 5 % target (docs/validation.md):
# a measurement on 2 shared cores, reported, not gated (-35 % has been seen
# while the machine was slow). What fails it: a broken pipeline, and the
# calibration's last-known-good rule (accepted, then rejected and kept).
# With RATE, the W = 2 sweep and run are on an emulated network, each rank a
# host behind a RATE link (validate/network_mpirun.sh; skipped without one).
# Usage: cpu_loop_test.sh DDPSIM_REAL DDPSIM OUT_DIR [TARGET_PCT] [RATE]
set -euo pipefail
real=$1 ddpsim=$2 out=$3 target=${4:-5} NETWORK=${5:-}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/validate/network_mpirun.sh"
network_or_skip
rm -rf "$out" && mkdir -p "$out"
model=(--widths 64,512,512,1 --dataset-size 8192 --batch-size 64 --max-steps 20 --bucket-cap-mb 0.5 --first-bucket-mb 0.1)
# 1. Measure the cheap things: one rank, and the collectives.
ranks 1 train "${model[@]}" --json "$out/w1" > /dev/null
ranks 1 allreduce-sweep "${sweep_sizes[@]}" --iters 5 --json "$out/sweep_w1.json" > /dev/null
ranks 2 allreduce-sweep "${sweep_sizes[@]}" --iters 5 --json "$out/sweep_w2.json" > /dev/null
# Compute and an all-reduce alone and at once, at the buckets' sizes: the contention pair.
ranks 2 overlap --mb 0.1 0.5 --json "$out/overlap_w2.json" | grep -E "^overlap:"
# 2. Calibrate.
"$ddpsim" calibrate --measured "$out/w1.rank0.json" "$out/sweep_w1.json" "$out/sweep_w2.json" \
  --overlap "$out/overlap_w2.json" --out "$out/calibration.yaml" \
  | grep -E "^# (least|note)|^  [a-zA-Z_]+:|layers\.[0-9]+,"
# 3. Measure W = 2 (the prediction did not use it) and compare.
ranks 2 train "${model[@]}" --json "$out/w2" > /dev/null
"$ddpsim" validate --scenario "$root/scenarios/real_mlp_cpu.yaml" --calibration "$out/calibration.yaml" \
  --measured "$out/w1" "$out/w2" --target-pct "$target" --report "$out/report" | tee "$out/validate.log"
without_overlap "$root/scenarios/real_mlp_cpu.yaml" "$out/w1" "$out/w2"
# 4. The last known-good rule: a new calibration replaces the file only if it
# predicts the held-out W = 2 run. Within 1e6 % (any finite prediction): accepted.
# Within 0.001 % (which no measurement here meets): rejected, the file stays byte for byte.
"$ddpsim" calibrate --measured "$out/w1.rank0.json" "$out/sweep_w1.json" "$out/sweep_w2.json" --out "$out/good.yaml" \
  --check-scenario "$root/scenarios/real_mlp_cpu.yaml" --check-measured "$out/w2" --max-error-pct 1e6 | grep -E "^largest|^accepted"
before=$(sha256sum < "$out/good.yaml")
set +e
"$ddpsim" calibrate --measured "$out/w1.rank0.json" "$out/sweep_w1.json" "$out/sweep_w2.json" --out "$out/good.yaml" \
  --check-scenario "$root/scenarios/real_mlp_cpu.yaml" --check-measured "$out/w2" --max-error-pct 0.001 > "$out/reject.log"
rc=$?
set -e
grep -E "^rejected" "$out/reject.log"
[ "$rc" -eq 3 ] || { echo "FAILED: a rejected calibration exited $rc, not 3"; exit 1; }
[ "$(sha256sum < "$out/good.yaml")" = "$before" ] || { echo "FAILED: the last known-good calibration changed"; exit 1; }
echo "last known-good calibration kept"
