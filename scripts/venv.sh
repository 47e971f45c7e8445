#!/usr/bin/env bash
# Prints the path of the Python environment scripts/setup.sh makes:
# $DDPSIM_VENV_ROOT (default /opt/ddpsim)/venv-torch<pin>-<hash>, the hash the
# first 12 hex digits of python/requirements.txt's SHA-256. One machine-wide
# path per set of pins: a fresh clone finds the environment an earlier one
# made. CMake runs this too (tests/, cli/), so both agree on the interpreter.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
req="$root/python/requirements.txt"
torch="$(sed -n 's/^torch==//p' "$req")"
hash="$(sha256sum "$req" | cut -c1-12)"
echo "${DDPSIM_VENV_ROOT:-/opt/ddpsim}/venv-torch${torch}-${hash}"
