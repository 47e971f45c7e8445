#!/usr/bin/env bash
# The one-GPU procedure of validate/gpu/run.sh, from a bundle made by
# validate/gpu/bundle.sh (no build on the GPU machine): gpu-info and the
# real.gpu checks (GPU replica vs CPU replica, NCCL sweep, the large MLP),
# the 256 MiB sweep and 50 steps of the large MLP at W = 1, then calibrate
# and validate scenarios/real_mlp_gpu.yaml on them. One process per run, MPI
# as a singleton (ess_singleton_isolated: no mpirun, no orted).
#   validate/gpu/device_w1.sh BUNDLE OUT_DIR
# Its output on an H200 is in validate/gpu/h200_w1/.
set -uo pipefail
G=$(cd "${1:?usage: device_w1.sh BUNDLE OUT_DIR}" && pwd) O=${2:?usage: device_w1.sh BUNDLE OUT_DIR}
mkdir -p "$O" /tmp/gpu
exec > >(tee "$O/log.txt") 2>&1
date; uname -a; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
cuda_dirs=$(find / -xdev \( -name 'libnccl.so.2' -o -name 'libcublas.so.13' -o -name 'libcublasLt.so.13' -o -name 'libcudart.so.13' \) \
  -not -path "$G/*" 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')
echo "cuda library dirs: $cuda_dirs"
export LD_LIBRARY_PATH=$G/lib:${cuda_dirs}$G/cudart
export OPAL_PREFIX=$G/mpi OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 NCCL_DEBUG=WARN
ldd "$G/ddpsim-real" | grep -E "not found|nccl|cublas|cudart|mpi.so"
echo "=== gpu_test.sh"
time bash real_backend/gpu_test.sh "$G/ddpsim-real" /tmp/gpu; echo "gpu_test rc=$?"
cp /tmp/gpu/sweep_nccl_w1.json "$O/" 2>/dev/null
echo "=== run.sh at W = 1"
time "$G/ddpsim-real" allreduce-sweep --device gpu --max-bytes $((256 << 20)) --iters 20 --json "$O/sweep_w1.json"
time "$G/ddpsim-real" train --widths 1024,4096,4096,4096,1024 --dataset-size 262144 --batch-size 512 --max-steps 50 \
  --device gpu --json /tmp/gpu/train_w1
cp /tmp/gpu/train_w1.rank0.json "$O/"
"$G/ddpsim-real" report /tmp/gpu/train_w1
"$G/ddpsim" calibrate --measured /tmp/gpu/train_w1.rank0.json "$O/sweep_w1.json" --out "$O/calibration.yaml"
"$G/ddpsim" validate --scenario scenarios/real_mlp_gpu.yaml --calibration "$O/calibration.yaml" --measured /tmp/gpu/train_w1 \
  --report /tmp/gpu/report
cp /tmp/gpu/report/report.md "$O/" 2>/dev/null
echo "=== done"; date
