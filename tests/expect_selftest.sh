#!/usr/bin/env bash
# tests/expect.sh must fail what the registrations it replaced let pass:
# planted failures of each kind, each of which ctest used to report as passed.
#   tests/expect_selftest.sh  (prints one line a case; exit 0 when every planted failure is caught)
set -uo pipefail
expect="$(dirname "$0")/expect.sh"
fail=0
caught() {  # caught WHAT ARGS...: expect.sh with ARGS must exit non-zero (and not 77)
  local what=$1
  shift
  bash "$expect" "$@" >/dev/null 2>&1
  local rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    echo "caught: $what (exit $rc)"
  else
    echo "MISSED: $what (exit $rc)"
    fail=1
  fi
}
# pytest printing "N passed" beside a failure (PASS_REGULAR_EXPRESSION "[0-9]+ passed" passed it).
caught "a failing pytest case" --regex "[0-9]+ passed" -- sh -c 'echo "1 failed, 5 passed in 0.1s"; exit 1'
# A refusal that crashes after printing its message (a message-only regex passed it).
caught "a crashing refusal" --rc 2 --regex "--sharding needs --strategy fsdp" -- \
  sh -c 'echo "ddpsim-real: error: --sharding needs --strategy fsdp"; kill -SEGV $$'
# WILL_FAIL passed any non-zero exit, a crash included.
caught "a crash where a difference (exit 1) is expected" --rc 1 --regex "DIFFERENT" -- sh -c 'kill -ABRT $$'
# The right code with the wrong message.
caught "a refusal with another message" --rc 2 --regex "expected an all_reduce sweep" -- sh -c 'echo "other"; exit 2'
# A skip (77) from a test that names no prerequisite.
caught "exit 77 without --skip" -- sh -c 'exit 77'
# What must not be printed, printed (FAIL_REGULAR_EXPRESSION).
caught "a FAIL line beside the pass line" --regex "screenshot ok" --not-regex "FAIL" -- sh -c 'echo "FAIL: chart 2"; echo "screenshot ok"'
# And what should pass, passes.
if bash "$expect" --rc 2 --regex "^ddpsim: error: x" -- sh -c 'echo "ddpsim: error: x"; exit 2' >/dev/null; then
  echo "passed: a refusal with its code and message"
else
  echo "WRONG: a correct refusal failed"
  fail=1
fi
[ "$fail" = 0 ] && echo "every planted failure caught"
exit "$fail"
