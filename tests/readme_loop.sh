#!/usr/bin/env bash
# Runs a command block of README.md as written: the lines between
# "<!-- readme-loop: NAME -->" and "<!-- end readme-loop -->", their 4-space
# indentation removed, in a scratch folder where build/, scenarios/ and
# scripts/ are this build's and this tree's. Every command must succeed
# (bash -e): a file a command reads that nothing before it makes fails it.
#   tests/readme_loop.sh ROOT BUILD_DIR NAME WORK_DIR
set -euo pipefail
root=$1 build=$2 name=$3 work=$4
block=$(sed -n "/^<!-- readme-loop: $name -->\$/,/^<!-- end readme-loop -->\$/p" "$root/README.md" | sed '1d;$d')
[ -n "$block" ] || { echo "readme_loop: README.md has no block '$name'"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
ln -s "$build" "$work/build"
ln -s "$root/scenarios" "$work/scenarios"
ln -s "$root/scripts" "$work/scripts"
printf '%s\n' "$block" | sed 's/^    //' > "$work/loop.sh"
cd "$work"
bash -euo pipefail loop.sh
echo "readme_loop: $name ran as written"
