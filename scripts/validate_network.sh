#!/usr/bin/env bash
# The full matrix of ddpsim against real DistributedDataParallel on an emulated
# cluster network (docs/emulated-network.md, docs/validation.md "On an emulated
# network"): the four recipes of python/recipes/ at W = 2, at 1 Gbit/s and at
# each recipe's own rate where communication takes as long as compute, bucket
# caps 1 and 25 MB, three alternations of profile and measurement each; and
# ResNet-18 with one rank's link at a quarter. As root; about 12 minutes on the
# 2-core development machine. ctest's oracle.torch_ddp_network runs a subset.
# Usage: scripts/validate_network.sh [BUILD_DIR] [OUT_DIR] [extra tests/torch_ddp_network.py options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} out=${2:-/tmp/ddpsim_network}
shift $(( $# > 2 ? 2 : $# ))
cmake --build "$build" --target ddpsim ddpsim_netbind >/dev/null
export DDPSIM_NETBIND="$PWD/$build/netemu/libddpsim_netbind.so"
exec "$(scripts/python.sh)" tests/torch_ddp_network.py "$build/cli/ddpsim" "$out" --recipes mlp,cnn,transformer,embedding \
  --rates 1gbit,eq --caps 1,25 --alternations 3 --slow-rank --json "$out/rows.json" "$@"
