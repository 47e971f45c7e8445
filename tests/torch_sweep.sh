#!/bin/sh
# ddpsim_torch sweep on 2 processes (gloo, 8 B to 4 MiB: past 64 KiB the bytes term outgrows the noise), read back by
# `ddpsim calibrate --measured`: the sweep file is ddpsim-real's format.
# Exits 77 (ctest: skipped) without Debian's torch.
# Usage: torch_sweep.sh DDPSIM_BINARY WORK_DIR
set -eu
ddpsim=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import torch" 2>/dev/null || { echo "SKIPPED: torch is not installed"; exit 77; }
mkdir -p "$work"
PYTHONPATH="$root/python" /usr/bin/python3 -m ddpsim_torch sweep --world-size 2 --max-bytes 4194304 --iters 5 --out "$work/sweep_w2.json"
"$ddpsim" calibrate --measured "$work/sweep_w2.json"
