#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in BUILD_DIR (default
# build-fuzz) and runs each for SECONDS (default 20) under ctest:
#   scripts/fuzz.sh [BUILD_DIR] [SECONDS]
# A finding is left in BUILD_DIR/fuzz/findings/; reproduce it with
#   BUILD_DIR/fuzz/fuzz_<target> BUILD_DIR/fuzz/findings/<target>-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-fuzz}"
seconds="${2:-20}"
CXX=clang++ CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSIM_FUZZ=ON -DDDPSIM_SIMGRID=OFF \
  -DDDPSIM_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build "$dir" -j "$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
