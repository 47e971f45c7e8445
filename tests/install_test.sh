#!/usr/bin/env bash
# install.prefix: cmake --install into a fresh prefix; the installed ddpsim, run
# from outside the source and build trees, simulates a shipped scenario (with the
# SimGrid engine where the build has it, from lib/ddpsim) and, where Debian's
# interpreter has torch, profiles a shipped recipe with the installed package.
# Usage: install_test.sh BUILD_DIR WORK_DIR HAVE_SIMGRID(0|1)
set -euo pipefail
build="$1"; work="$2"; simgrid="$3"
rm -rf "$work"; mkdir -p "$work/elsewhere"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
p="$work/prefix"
for f in bin/ddpsim share/ddpsim/python/ddpsim_torch/__main__.py share/ddpsim/python/recipes/mlp.py \
         share/ddpsim/scenarios/scaling_lab.yaml share/doc/ddpsim/README.md; do
  [ -e "$p/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
cd "$work/elsewhere"
"$p/bin/ddpsim" run "$p/share/ddpsim/scenarios/scaling_lab.yaml" | grep -q "^workers" || { echo "FAIL: run"; exit 1; }
if [ "$simgrid" = 1 ]; then
  [ -e "$p/lib/ddpsim/libddpsim_simgrid.so" ] || { echo "FAIL: the SimGrid module not installed"; exit 1; }
  "$p/bin/ddpsim" run "$p/share/ddpsim/scenarios/resnet50_node8.yaml" --engine simgrid >/dev/null
fi
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  out=$(env -u PYTHONPATH -u DDPSIM_PYTHONPATH "$p/bin/ddpsim" profile "$p/share/ddpsim/python/recipes/mlp.py" \
        --out mlp.yaml --steps 2 --warmup 1 --bare)
  echo "$out"
  "$p/bin/ddpsim" check mlp.yaml >/dev/null
  # The installed package, not the source tree's: its path in the profile's header.
  grep -q "share/ddpsim/python/recipes/mlp.py" mlp.yaml || { echo "FAIL: not the installed recipe"; exit 1; }
fi
echo "install ok: $p"
