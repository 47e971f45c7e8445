#!/usr/bin/env bash
# CI knows what its machine can run: after ctest, fail when a test reported
# "Not Run" (exit 77, skipped) although every prerequisite it names is
# installed here. A test's prerequisites are its needs_<what> labels
# (cmake/ddpsim_test.cmake); a skipped test with none is always unexpected.
#
#   scripts/check_not_run.sh BUILD_DIR CTEST_LOG
#
# CTEST_LOG is ctest's output. On a developer's machine without torch,
# Chromium, network namespaces or a GPU the same tests skip and this passes.
set -uo pipefail
build=$1 log=$2
root=$(cd "$(dirname "$0")/.." && pwd)
have() {  # have <what>: 0 when this machine has the prerequisite
  case "$1" in
    torch) py=$("$root/scripts/python.sh") && "$py" -c 'import torch' 2>/dev/null ;;
    chromium) command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ;;
    netns)
      [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v tc >/dev/null || return 1
      local ns="ddpsim-probe-$$"
      ip netns add "$ns" 2>/dev/null || return 1
      ip netns delete "$ns" 2>/dev/null
      return 0 ;;
    mpi) command -v mpirun >/dev/null 2>&1 ;;
    gpu) command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU ;;
    *) return 1 ;;
  esac
}
skipped=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*\*\*\*\(Skipped\|Not Run\).*/\1/p' "$log" | sort -u)
bad=0
for t in $skipped; do
  labels=$(ctest --test-dir "$build" -N -V -R "^${t//./\\.}\$" 2>/dev/null | sed -n 's/^ *Labels: *//p' | tr ' ' '\n' | sed -n 's/^needs_//p')
  if [ -z "$labels" ]; then
    echo "check_not_run: $t was not run, and it names no prerequisite (needs_<what> label): unexpected"
    bad=1
    continue
  fi
  missing=""
  for need in $labels; do have "$need" || missing="$missing $need"; done
  if [ -z "$missing" ]; then
    echo "check_not_run: $t was not run, though what it needs ($(echo $labels)) is installed here"
    bad=1
  else
    echo "check_not_run: $t not run: this machine has no$missing"
  fi
done
[ "$bad" = 0 ] && echo "check_not_run: every test whose prerequisites are installed ran"
exit "$bad"
