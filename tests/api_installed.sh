#!/usr/bin/env bash
# api.installed: the public C++ API as a user outside the repository gets it.
# cmake --install into a fresh prefix; the installed include/ holds
# include/ddpsim/ddpsim.hpp and nothing else of ddpsim's; libddpsim.so
# exports the API's symbols only; tests/api_example.cpp, compiled against the
# prefix alone, prints a shipped scenario's run byte for byte as
# `ddpsim run --json` does, and a bad scenario gives ddpsim::Error with its
# exit code and location.
# Usage: api_installed.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src="$1"; build="$2"; work="$3"
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work/prefix"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
headers=$(cd "$work/prefix/include" && find . -type f | sort)
[ "$headers" = "./ddpsim/ddpsim.hpp" ] || { echo "FAIL: installed headers: $headers"; exit 1; }
lib="$work/prefix/lib/libddpsim.so"
[ -e "$lib" ] || { echo "FAIL: no $lib"; exit 1; }
# Every exported ddpsim symbol is the API's: none of the rooms' namespaces (ddpsim::scenarios::, ...).
# (The symbol list is written to a file first: grep -q closing a pipe early would fail it under pipefail.)
nm -D --defined-only "$lib" | c++filt > "$work/exports.txt"
private=$(grep -E 'ddpsim::[a-z_]+::' "$work/exports.txt" | grep -vE 'ddpsim::(Error|Scenario|Sweep|MemoryReport)::' || true)
[ -z "$private" ] || { echo "FAIL: libddpsim.so exports private symbols:"; echo "$private" | head -5; exit 1; }
grep -q 'ddpsim::run(ddpsim::Scenario const&, ddpsim::RunOptions const&)' "$work/exports.txt" ||
  { echo "FAIL: libddpsim.so does not export ddpsim::run"; exit 1; }
# Compiled against the prefix only: no source tree on the include path.
c++ -std=c++20 -Wall -Wextra -Wpedantic -Werror -I "$work/prefix/include" "$src/tests/api_example.cpp" \
  -L "$work/prefix/lib" -lddpsim -Wl,-rpath,"$work/prefix/lib" -o "$work/api_example"
scenario="$src/scenarios/scaling_lab.yaml"
"$work/api_example" "$scenario" > "$work/api.out"
"$build/cli/ddpsim" run "$scenario" --json "$work/cli.json" > /dev/null
rows=$(grep -c '^row W=' "$work/api.out")
grep -v '^row W=' "$work/api.out" > "$work/api.json"
cmp "$work/api.json" "$work/cli.json" || { echo "FAIL: the API's JSON differs from ddpsim run --json"; exit 1; }
printf 'name: bad\nworld_size: [2]\ntraining: {iterations: -1}\n' > "$work/bad.yaml"
rc=0
"$work/api_example" "$work/bad.yaml" 2> "$work/bad.err" || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: a bad scenario exited $rc, expected 2"; cat "$work/bad.err"; exit 1; }
grep -q "error 2 at $work/bad.yaml:3:.* key training.iterations" "$work/bad.err" ||
  { echo "FAIL: the error lacks its location:"; cat "$work/bad.err"; exit 1; }
echo "api installed ok: $rows rows byte-identical to ddpsim run --json; include/ddpsim/ddpsim.hpp only; API symbols only"
