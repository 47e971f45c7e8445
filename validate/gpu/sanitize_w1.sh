#!/usr/bin/env bash
# CUDA's compute-sanitizer over the GPU path at W = 1, from a bundle made by
# validate/gpu/bundle.sh (environment as validate/gpu/device_w1.sh):
# memcheck (out-of-bounds and misaligned accesses, leaks of device memory)
# and racecheck (shared-memory races) on a 3-step training run, memcheck on
# an NCCL all-reduce sweep. Exit status: the number of checks that failed.
#   validate/gpu/sanitize_w1.sh BUNDLE OUT_DIR
set -uo pipefail
G=$(cd "${1:?usage: sanitize_w1.sh BUNDLE OUT_DIR}" && pwd) O=${2:?usage: sanitize_w1.sh BUNDLE OUT_DIR}
mkdir -p "$O"
exec > >(tee "$O/sanitize.txt") 2>&1
cuda_dirs=$(find / -xdev \( -name 'libnccl.so.2' -o -name 'libcublas.so.13' -o -name 'libcublasLt.so.13' -o -name 'libcudart.so.13' \) \
  -not -path "$G/*" 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH=$G/lib:${cuda_dirs}$G/cudart
export OPAL_PREFIX=$G/mpi OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mca_base_component_show_load_errors=0 NCCL_DEBUG=WARN
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
"$cs" --version | tail -1
train=(train --device gpu --dataset-size 256 --batch-size 32 --max-steps 3 --widths 16,256,256,1 --bucket-cap-mb 0.1
       --first-bucket-mb 0.05)
failed=0
echo "=== memcheck: ${train[*]}"
"$cs" --tool memcheck --leak-check full --error-exitcode 9 "$G/ddpsim-real" "${train[@]}" \
  || { echo "memcheck FAILED"; failed=$((failed + 1)); }
echo "=== racecheck: ${train[*]}"
"$cs" --tool racecheck --error-exitcode 9 "$G/ddpsim-real" "${train[@]}" || { echo "racecheck FAILED"; failed=$((failed + 1)); }
echo "=== memcheck: allreduce-sweep to 1 MiB"
"$cs" --tool memcheck --error-exitcode 9 "$G/ddpsim-real" allreduce-sweep --device gpu --max-bytes $((1 << 20)) --iters 2 \
  || { echo "memcheck sweep FAILED"; failed=$((failed + 1)); }
echo "=== $failed check(s) failed"
exit "$failed"
