#!/usr/bin/env bash
# The PyTorch side of the one-GPU procedure, on the device's own torch (2.11 with CUDA 13 on the lent
# H100/H200; any torch 2.x): the recipes profiled with CUDA events, a torch.profiler trace with
# ProfilerActivity.CUDA imported into the scenario, and PyTorch's estimators (RuntimeEstimator in both
# modes, MemTracker) beside ddpsim's memory. One prepared script, about 3 minutes:
#   validate/gpu/torch_w1.sh DDPSIM OUT_DIR          on the GPU machine (DDPSIM: a ddpsim binary)
#   validate/gpu/torch_w1.sh DDPSIM OUT_DIR --cpu    the same steps on the CPU: ctest gpu.torch_w1_on_cpu runs
#                                                    it, so that the script is known to work before a GPU is lent
# The interpreter: $DDPSIM_PYTHON, else the first python3 on PATH (the device's torch).
set -uo pipefail
ddpsim=${1:?usage: torch_w1.sh DDPSIM OUT_DIR [--cpu]} out=${2:?usage: torch_w1.sh DDPSIM OUT_DIR [--cpu]}
device=cuda trace_flags=(--schedule --cuda)
if [ "${3:-}" = --cpu ]; then device=cpu trace_flags=(--schedule); fi
mkdir -p "$out"
ddpsim=$(realpath "$ddpsim") out=$(realpath "$out")
cd "$(dirname "$0")/../.."
py=${DDPSIM_PYTHON:-$(command -v python3)}
export DDPSIM_PYTHON=$py PYTHONPATH=$PWD/python
failed=0
step() {  # NAME COMMAND...: runs it, its output into the log, and counts a failure
  echo "=== $1"; shift
  if ! "$@"; then echo "FAILED: $*"; failed=$((failed + 1)); fi
}
exec > >(tee "$out/log.txt") 2>&1
date
step "torch" "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'device', \
torch.cuda.get_device_name() if torch.cuda.is_available() else 'none')"
for r in mlp cnn; do
  step "profile $r on $device" "$ddpsim" profile "python/recipes/$r.py" --device "$device" --steps 20 --warmup 5 \
    --world-size 1,2,8 --out "$out/$r.yaml"
  step "memory $r" "$ddpsim" memory "$out/$r.yaml"
  step "run $r" "$ddpsim" run "$out/$r.yaml"
done
step "trace cnn (${trace_flags[*]})" "$py" tests/traces/make_trace.py python/recipes/cnn.py "$out/cnn_trace.json" "${trace_flags[@]}"
step "import-trace cnn" "$ddpsim" import-trace "$out/cnn_trace.json" --scenario "$out/cnn.yaml" --out "$out/cnn_traced.yaml"
step "estimators" "$py" scripts/estimators.py "$ddpsim" "$out/estimators" --recipes mlp,cnn --json "$out/estimators.json"
date
echo "torch_w1: $failed step(s) failed"
[ "$failed" -eq 0 ]
