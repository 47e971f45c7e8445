#!/usr/bin/env bash
# The one runner for a test that checks a command's exit code and its output
# together (cmake/ddpsim_test.cmake registers every such test through it).
#
#   expect.sh [--rc N[,N...]] [--regex ERE] [--not-regex ERE] [--skip CODE] -- COMMAND [ARG...]
#
# Runs COMMAND with stdout and stderr together (printed as they come), then
# passes only when its exit code is N (default 0; or any N of a list), the output matches ERE
# (POSIX extended, over the whole output: '.' matches a newline, ^ and $
# are its start and end, as in CMake's regexes) and does not match the
# --not-regex. With --skip CODE, an exit code CODE is passed on (ctest's
# SKIP_RETURN_CODE): the test did not run.
set -uo pipefail
want=0 regex="" has_regex=0 not_regex="" has_not=0 skip=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rc) want=$2; shift 2 ;;
    --regex) regex=$2; has_regex=1; shift 2 ;;
    --not-regex) not_regex=$2; has_not=1; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect.sh: no command" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ -n "$skip" ] && [ "$rc" = "$skip" ]; then
  echo "expect.sh: not run (exit $rc): a prerequisite is missing"
  exit "$skip"
fi
out=$(cat "$log"; printf x)
out=${out%x}
fail=0
if [[ ",$want," != *",$rc,"* ]]; then
  echo "expect.sh: FAILED: exit code $rc, expected $want"
  fail=1
fi
if [ "$has_regex" = 1 ] && ! [[ $out =~ $regex ]]; then
  echo "expect.sh: FAILED: the output does not match: $regex"
  fail=1
fi
if [ "$has_not" = 1 ] && [[ $out =~ $not_regex ]]; then
  echo "expect.sh: FAILED: the output matches what it must not: $not_regex (${BASH_REMATCH[0]})"
  fail=1
fi
[ "$fail" = 0 ] && echo "expect.sh: ok (exit $rc)"
exit "$fail"
