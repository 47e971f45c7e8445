#!/bin/sh
# ddpsim_torch sweep on 2 processes (gloo, 8 B to 4 MiB: past 64 KiB the bytes term outgrows the noise), read back by
# `ddpsim calibrate --measured`: the sweep file is ddpsim-real's format; and ddpsim_torch's own fit (profile
# --collective) must print calibrate's numbers.
# Exits 77 (ctest: skipped) without torch (scripts/python.sh names the interpreter).
# Usage: torch_sweep.sh DDPSIM_BINARY WORK_DIR
set -eu
ddpsim=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
python=$("$root/scripts/python.sh")
[ -x "$python" ] && "$python" -c "import torch" 2>/dev/null || { echo "SKIPPED: torch is not installed"; exit 77; }
mkdir -p "$work"
PYTHONPATH="$root/python" "$python" -m ddpsim_torch sweep --world-size 2 --max-bytes 4194304 --iters 5 --out "$work/sweep_w2.json"
out=$("$ddpsim" calibrate --measured "$work/sweep_w2.json")
echo "$out"
# profile --collective fits in Python (ddpsim_torch/fit.py): it must give calibrate's numbers.
cal=$(echo "$out" | grep -E '^  (latency_us|bandwidth_GBps|launch_overhead_us):' | sed 's/^  //')
py=$(PYTHONPATH="$root/python" "$python" -c "
import sys
from ddpsim_torch import fit
f = fit.fit_sweep(sys.argv[1])
print(f'latency_us: {f[\"latency_us\"]:.6g}\nbandwidth_GBps: {f[\"bandwidth_GBps\"]:.6g}\nlaunch_overhead_us: {f[\"launch_overhead_us\"]:.6g}')
" "$work/sweep_w2.json")
if [ "$py" = "$cal" ]; then echo "ddpsim_torch's fit agrees with ddpsim calibrate"; else printf 'FIT DIFFERS:\n%s\n%s\n' "$py" "$cal"; exit 1; fi
