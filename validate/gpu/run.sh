#!/usr/bin/env bash
# The GPU procedure: build with CUDA and NCCL, check the GPU path against the
# CPU one, time NCCL all-reduces and the trainer at W = 1, 2, 4 ... up to the
# number of GPUs given, print the efficiency table, then calibrate the
# simulator on W = 1 and the sweeps and compare its predictions for
# scenarios/real_mlp_gpu.yaml with every measured world size.
#   validate/gpu/run.sh GPUS [OUT_DIR]     e.g. validate/gpu/run.sh 1, validate/gpu/run.sh 8
# Needs: Debian 12 (scripts/setup.sh), CUDA with NCCL in /usr/local/cuda, GPUS visible GPUs.
set -euo pipefail
cd "$(dirname "$0")/../.."
gpus=${1:?usage: validate/gpu/run.sh GPUS [OUT_DIR]}
out=${2:-validate/gpu/results}
mkdir -p "$out"
scripts/setup.sh
scripts/build.sh build -DDDPSIM_WERROR=ON
bin=build/real_backend/ddpsim-real
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
"$bin" gpu-info
ctest --test-dir build -R '^real\.gpu$' --output-on-failure
# The same MLP on every world size: weak scaling, 512 examples per GPU per step.
model=(--widths 1024,4096,4096,4096,1024 --dataset-size 262144 --batch-size 512 --max-steps 50 --device gpu)
prefixes=()
for ((w = 1; w <= gpus; w *= 2)); do
  mpirun -np "$w" "$bin" allreduce-sweep --device gpu --max-bytes $((256 << 20)) --iters 20 --json "$out/sweep_w$w.json" \
    | tee "$out/sweep_w$w.txt"
  mpirun -np "$w" "$bin" train "${model[@]}" --json "$out/train_w$w"
  prefixes+=("$out/train_w$w")
done
"$bin" report "${prefixes[@]}" | tee "$out/efficiency.txt"
# The cross-check: calibrate on W = 1 and the sweeps, predict every world size, compare.
sweeps=()
for ((w = 1; w <= gpus; w *= 2)); do sweeps+=("$out/sweep_w$w.json"); done
build/cli/ddpsim calibrate --measured "$out/train_w1.rank0.json" "${sweeps[@]}" --out "$out/calibration.yaml" \
  | grep -E "^# (least|model|note)|^  [a-zA-Z_]+:"
build/cli/ddpsim validate --scenario scenarios/real_mlp_gpu.yaml --calibration "$out/calibration.yaml" \
  --measured "${prefixes[@]}" --report "$out/report" | tee "$out/validation.txt"
