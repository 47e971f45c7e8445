#!/usr/bin/env bash
# Configures and builds ddpsim: scripts/build.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
# ccache, where installed: the builds of scripts/test.sh share most objects
# (the no-SimGrid build differs in netsim/ alone). Paths hashed relative to the
# checkout, the build folder's name left out, so build/ and build-nosimgrid/ hit.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
