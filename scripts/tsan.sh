#!/usr/bin/env bash
# ThreadSanitizer over the tests that run the engine on several threads
# (rank-major sweeps: sim/engine_test.cpp, exec/ddp_job_test.cpp). Not in
# scripts/test.sh: the instrumented build takes minutes on 2 cores.
#   scripts/tsan.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-tsan}"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSIM_SIMGRID=OFF -DDDPSIM_BENCH=OFF \
  -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build "$dir" -j "$(nproc)" --target sim_test exec_test
export TSAN_OPTIONS=halt_on_error=1
"$dir/sim/sim_test" -tc='rank-major*'
"$dir/exec/exec_test" -tc='a jitter job*,a lockstep job*'
