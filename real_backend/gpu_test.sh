#!/usr/bin/env bash
# The GPU checks, on one GPU (exit 77, reported as skipped, without one):
#  1. the GPU replica (cuBLAS + kernels, NCCL transport at W = 1) trains the
#     same 4 steps as the CPU replica: parameters equal within 1e-4 relative;
#  2. timings of the NCCL path at W = 1: an all-reduce sweep to 64 MiB and the
#     per-step JSON of a larger MLP.
# Usage: gpu_test.sh DDPSIM_REAL OUT_DIR
set -euo pipefail
bin=$1 out=$2
"$bin" gpu-info || exit $?
rm -rf "$out" && mkdir -p "$out"
common=(train --dataset-size 256 --batch-size 32 --max-steps 4 --widths 16,256,256,1 --bucket-cap-mb 0.1 --first-bucket-mb 0.05)
"$bin" "${common[@]}" --device cpu --params "$out/cpu.bin"
"$bin" "${common[@]}" --device gpu --params "$out/gpu.bin" --json "$out/gpu"
"$bin" compare "$out/cpu.bin" "$out/gpu.bin" --rtol 1e-4
"$bin" allreduce-sweep --device gpu --max-bytes $((64 << 20)) --iters 20 --json "$out/sweep_nccl_w1.json"
"$bin" train --device gpu --dataset-size 65536 --batch-size 512 --max-steps 50 --widths 1024,4096,4096,4096,1024 \
  --json "$out/mlp_large"
"$bin" report "$out/mlp_large"
