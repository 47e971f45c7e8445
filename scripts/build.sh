#!/usr/bin/env bash
# Configures and builds ddpsim: scripts/build.sh BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
# ccache, where installed (scripts/setup.sh does): the builds of scripts/test.sh
# share most objects (the no-SimGrid build differs in netsim/ alone: 42 s
# instead of a full build's 8 to 9 minutes on 2 cores). Paths hashed relative
# to the checkout, the build folder's name left out, so build/ and
# build-nosimgrid/ hit, and so does a fresh clone of the same sources (CI's):
# the cache is machine-wide, /var/cache/ddpsim/ccache, unless CCACHE_DIR says
# otherwise (.ccache/ in the checkout where that folder is not writable).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  cache="${CCACHE_DIR:-/var/cache/ddpsim/ccache}"
  if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then cache="$PWD/.ccache"; fi
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_DIR="$cache"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
