#!/usr/bin/env bash
# Prints the Python interpreter ddpsim's scripts and tests run:
# $DDPSIM_PYTHON when set, else the environment scripts/setup.sh made
# (scripts/venv.sh), else Debian's /usr/bin/python3 (no torch: the steps that
# need it skip).
set -euo pipefail
if [ -n "${DDPSIM_PYTHON:-}" ]; then echo "$DDPSIM_PYTHON"; exit 0; fi
venv="$("$(dirname "$0")/venv.sh")"
if [ -f "$venv/.ddpsim-requirements" ]; then echo "$venv/bin/python"; else echo /usr/bin/python3; fi
