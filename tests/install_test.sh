#!/usr/bin/env bash
# install.prefix and package.deb: ddpsim installed into a fresh prefix, run from
# outside the source and build trees. It simulates a shipped scenario (with the
# SimGrid engine where the build has it, from lib/ddpsim), writes its HTML
# report (with charts where the build fetched their libraries) and, where
# Debian's interpreter has torch, profiles a shipped recipe with the installed package.
#   install_test.sh cmake BUILD_DIR WORK_DIR HAVE_SIMGRID(0|1)
#     cmake --install BUILD_DIR --prefix WORK_DIR/prefix
#   install_test.sh deb BUILD_DIR WORK_DIR HAVE_SIMGRID(0|1) VERSION
#     cpack -G DEB builds ddpsim_VERSION_amd64.deb; its Depends must be installed
#     packages here (what dpkg -i checks), and it is extracted (dpkg-deb -x) into
#     WORK_DIR/root, the programs then run from WORK_DIR/root/usr.
set -euo pipefail
mode="$1"; build="$2"; work="$3"; simgrid="$4"
rm -rf "$work"; mkdir -p "$work/elsewhere"
fail() { echo "FAIL: $*"; exit 1; }

if [ "$mode" = cmake ]; then
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  p="$work/prefix"
elif [ "$mode" = deb ]; then
  version="$5"
  (cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
  deb="$work/pkg/ddpsim_${version}_amd64.deb"
  [ -f "$deb" ] || fail "no $deb: $(ls "$work/pkg")"
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "Depends: $depends"
  need=(python3 openmpi-bin libyaml-cpp libfmt libopenmpi)
  if [ "$simgrid" = 1 ]; then need+=(libsimgrid); fi
  for n in "${need[@]}"; do
    grep -q "\b$n" <<<"$depends" || fail "Depends lacks $n"
  done
  # Each dependency (alternatives: any one) installed here, as dpkg -i would require.
  IFS=',' read -ra deps <<<"$depends"
  for d in "${deps[@]}"; do
    ok=0
    IFS='|' read -ra alts <<<"$d"
    for a in "${alts[@]}"; do
      name=$(awk '{print $1}' <<<"$a")
      if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then ok=1; fi
    done
    [ $ok = 1 ] || fail "dependency $d is not an installed package"
  done
  dpkg-deb -x "$deb" "$work/root"
  p="$work/root/usr"
else
  fail "mode $mode: expected cmake or deb"
fi

for f in bin/ddpsim share/ddpsim/python/ddpsim_torch/__main__.py share/ddpsim/python/recipes/mlp.py \
         share/ddpsim/scenarios/scaling_lab.yaml share/doc/ddpsim/README.md; do
  [ -e "$p/$f" ] || fail "$f not installed"
done
cd "$work/elsewhere"
"$p/bin/ddpsim" run "$p/share/ddpsim/scenarios/scaling_lab.yaml" | grep -q "^workers" || fail "run"
if [ "$simgrid" = 1 ]; then
  [ -e "$p/lib/ddpsim/libddpsim_simgrid.so" ] || fail "the SimGrid module not installed"
  "$p/bin/ddpsim" run "$p/share/ddpsim/scenarios/resnet50_node8.yaml" --engine simgrid >/dev/null
fi
# The HTML report, its chart libraries read from P/share/ddpsim/vega when the build fetched them.
DDPSIM_VEGA_DIR= "$p/bin/ddpsim" report "$p/share/ddpsim/scenarios/scaling_lab.yaml" --html lab.html >/dev/null
if [ -e "$build/share/ddpsim/vega/vega-bundle.js" ]; then
  [ -e "$p/share/ddpsim/vega/vega-bundle.js" ] || fail "the chart libraries not installed"
  grep -q 'data-charts-expected="[1-9]' lab.html || fail "the installed report drew no chart"
fi
python=$("$(dirname "$0")/../scripts/python.sh")
if "$python" -c 'import torch' 2>/dev/null; then
  out=$(env -u PYTHONPATH -u DDPSIM_PYTHONPATH "$p/bin/ddpsim" profile "$p/share/ddpsim/python/recipes/mlp.py" \
        --out mlp.yaml --steps 2 --warmup 1 --bare)
  echo "$out"
  "$p/bin/ddpsim" check mlp.yaml >/dev/null
  # The installed package, not the source tree's: its path in the profile's header.
  grep -q "$p/share/ddpsim/python/recipes/mlp.py" mlp.yaml || fail "not the installed recipe"
else
  echo "no torch for $python: the profile step is left out"
fi
echo "install ok ($mode): $p"
