#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the default
# scenario (or the one given), printing the scaling table.
#   scripts/run.sh [SCENARIO.yaml] [ddpsim run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build >/dev/null
exec build/cli/ddpsim run "${1:-scenarios/scaling_lab.yaml}" "${@:2}"
