#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build with warnings as
# errors, run every test; then the same tests under ASan and UBSan, a build
# without SimGrid, and the fuzz targets (clang, libFuzzer) for 20 s each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build -DDDPSIM_WERROR=ON
# Each ctest's output is kept: a test that reports "Not Run" while what it needs
# (torch, Chromium, network namespaces, MPI, a GPU) is installed fails the run
# (scripts/check_not_run.sh); a machine without them still skips those tests.
ctest_checked() {  # ctest_checked BUILD_DIR [ctest options]
  local dir=$1
  shift
  local log="$dir/ctest.log"
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  scripts/check_not_run.sh "$dir" "$log" || rc=1
  return "$rc"
}
ctest_checked build
# The CPU prediction check's errors, printed every run (docs/validation.md).
if [ -f build/validate/out/cpu_loop/validate.log ]; then
  echo "validate.cpu_loop: W = 2 predicted from W = 1 and the sweeps, against its measurement:"
  cat build/validate/out/cpu_loop/validate.log
fi
if [ -f build/validate/out/cpu_fsdp/validate.log ]; then
  echo "validate.cpu_fsdp: FSDP's step time and peak memory at W = 1 and 2, predicted against measured:"
  cat build/validate/out/cpu_fsdp/validate.log
fi
for t in loop fsdp; do
  if [ -f "build/validate/out/cpu_${t}_network/validate.log" ]; then
    echo "validate.cpu_${t}_network: the same with the W = 2 sweep and run on a switch of two 1 Gbit/s hosts:"
    cat "build/validate/out/cpu_${t}_network/validate.log"
  fi
done
if [ -f build/validate/out/mpi_cluster/validate.log ]; then
  echo "validate.mpi_cluster: ddpsim-real on switches of 2 and 4 hosts at 100 Mbit/s, and 8 on 2 nodes x 4:"
  cat build/validate/out/mpi_cluster/validate.log build/validate/out/mpi_cluster/two_level.log
fi
# The sanitizer and no-SimGrid builds leave out the tests labelled
# "measurement" (oracle.torch_*, validate.cpu_*, network.emulated): they time real PyTorch and
# MPI training jobs, which the first build has just done; what they call of
# ddpsim, the other tests run under the sanitizers too. That is 3 to 4 of
# CI's 45 minutes. The Debian package (label "package") and the HTML report in
# Chromium (label "browser") are checked once, from the first build.
BUILD_TYPE=Debug scripts/build.sh build-asan -DDDPSIM_SANITIZE=ON
ctest_checked build-asan -LE "measurement|package|browser"
# Without SimGrid (-DDDPSIM_SIMGRID=OFF): everything but the SimGrid engine
# builds and passes, and `--engine simgrid` is refused with the way to get it.
scripts/build.sh build-nosimgrid -DDDPSIM_SIMGRID=OFF -DDDPSIM_WERROR=ON
ctest_checked build-nosimgrid -LE "measurement|package|browser"
# The readers of users' files under libFuzzer (fuzz/CMakeLists.txt), 20 s each.
scripts/fuzz.sh build-fuzz 20
