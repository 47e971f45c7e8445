#!/usr/bin/env bash
# Walks README.md's table of exit codes: each row's example command, run from
# the repository root with this build's ddpsim, exits with the row's code, and
# the table's codes are those cli/exit_codes.hpp declares, in order.
#   tests/exit_codes.sh ROOT DDPSIM
set -uo pipefail
root=$1 ddpsim=$2
cd "$root" || exit 1
table=$(sed -n '/^## Exit codes/,/^## /p' README.md | grep -E '^\| [0-9]+ \|')
[ -n "$table" ] || { echo "exit_codes: README.md has no '## Exit codes' table"; exit 1; }
declared=$(sed -n 's/^inline constexpr int kExit[A-Za-z]* = \([0-9]*\);/\1/p' cli/exit_codes.hpp | tr '\n' ' ')
documented=$(printf '%s\n' "$table" | sed -E 's/^\| ([0-9]+) \|.*/\1/' | tr '\n' ' ')
if [ "$declared" != "$documented" ]; then
  echo "exit_codes: cli/exit_codes.hpp declares $declared; README.md's table has $documented"
  exit 1
fi
fail=0
while IFS= read -r row; do
  code=$(sed -E 's/^\| ([0-9]+) \|.*/\1/' <<<"$row")
  example=$(sed -E 's/.*\| `([^`]*)` \|$/\1/' <<<"$row")
  [ "$example" != "$row" ] || { echo "exit_codes: row $code has no example command"; fail=1; continue; }
  # "ddpsim" in the example is this build's binary; NAME=value before it is the environment.
  read -r -a words <<<"$example"
  cmd=()
  for w in "${words[@]}"; do [ "$w" = ddpsim ] && cmd+=("$ddpsim") || cmd+=("$w"); done
  out=$(env "${cmd[@]}" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" = "$code" ]; then
    echo "exit_codes: $code ok: $example"
  else
    echo "exit_codes: FAILED: $example exited $rc, README says $code"
    echo "$out" | head -5
    fail=1
  fi
  case "$code" in  # the message's form for the failures
    1) grep -q "^ddpsim: internal error: .*This is a bug in ddpsim" <<<"$(tr '\n' ' ' <<<"$out")" || { echo "exit_codes: FAILED: code 1's message: $out"; fail=1; } ;;
    2) grep -q "^ddpsim: error: " <<<"$out" || { echo "exit_codes: FAILED: code 2's message: $out"; fail=1; } ;;
  esac
done <<<"$table"
[ "$fail" = 0 ] && echo "exit_codes: README's table matches"
exit "$fail"
