#!/usr/bin/env bash
# FSDP predicted, then measured, on CPUs: calibrate on a 1-rank run of
# ddpsim-real, all-reduce sweeps at W = 1 and 2 and the overlap
# micro-benchmark at W = 2 (as cpu_loop_test.sh),
# predict scenarios/real_mlp_cpu_fsdp.yaml, measure `train --strategy fsdp`
# (FULL_SHARD) at W = 1 and 2, and compare step time and peak memory per
# rank. Prints every error. Peak memory is gated at its target (1 %); step
# time is reported against its target (5 %), not gated: 2 shared cores make
# it a measurement (+97 % was seen while a compiler ran beside it).
# With RATE, the W = 2 sweep and runs are on an emulated network, each rank a
# host behind a RATE link (validate/network_mpirun.sh; skipped without one).
# Usage: cpu_fsdp_test.sh DDPSIM_REAL DDPSIM OUT_DIR [TARGET_PCT] [RATE]
set -euo pipefail
real=$1 ddpsim=$2 out=$3 target=${4:-5} NETWORK=${5:-}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/validate/network_mpirun.sh"
network_or_skip
rm -rf "$out" && mkdir -p "$out"
model=(--widths 64,512,512,1 --dataset-size 8192 --batch-size 64 --max-steps 20)
# 1. The cheap measurements: one rank, and the collectives.
ranks 1 train "${model[@]}" --json "$out/w1" > /dev/null
ranks 1 allreduce-sweep "${sweep_sizes[@]}" --iters 5 --json "$out/sweep_w1.json" > /dev/null
ranks 2 allreduce-sweep "${sweep_sizes[@]}" --iters 5 --json "$out/sweep_w2.json" > /dev/null
# Compute and an all-reduce alone and at once, at the buckets' sizes: the contention pair.
ranks 2 overlap --mb 0.1 0.5 --json "$out/overlap_w2.json" | grep -E "^overlap:"
"$ddpsim" calibrate --measured "$out/w1.rank0.json" "$out/sweep_w1.json" "$out/sweep_w2.json" \
  --overlap "$out/overlap_w2.json" --out "$out/calibration.yaml" \
  | grep -E "^  [a-zA-Z_]+:"
# 2. FSDP, measured at W = 1 and 2.
for w in 1 2; do
  ranks $w train "${model[@]}" --strategy fsdp --json "$out/fsdp_w$w" > /dev/null
done
# 3. Compare.
"$ddpsim" validate --scenario "$root/scenarios/real_mlp_cpu_fsdp.yaml" --calibration "$out/calibration.yaml" \
  --measured "$out/fsdp_w1" "$out/fsdp_w2" --target-pct "$target" --report "$out/report" | tee "$out/validate.log"
without_overlap "$root/scenarios/real_mlp_cpu_fsdp.yaml" "$out/fsdp_w1" "$out/fsdp_w2"
grep -q "W = 2: peak memory per rank measured" "$out/validate.log" || { echo "FAILED: no memory comparison"; exit 1; }
# Memory is counted, not timed: the model must be within 1 % of it.
awk '/peak memory per rank measured/ { e = $(NF - 1); if (e < 0) e = -e; if (e > 1) bad = 1 }
     END { if (bad) { print "FAILED: a peak memory error above 1 %"; exit 1 } print "peak memory within 1 %" }' "$out/validate.log"
# 4. A run of another program is refused, located at the scenario's `parallelism`.
set +e
"$ddpsim" validate --scenario "$root/scenarios/real_mlp_cpu_fsdp.yaml" --measured "$out/w1" > "$out/refused.log" 2>&1
rc=$?
set -e
grep "key 'parallelism'" "$out/refused.log"
[ "$rc" -eq 2 ] || { echo "FAILED: validating a DDP run against an FSDP scenario exited $rc, not 2"; exit 1; }
