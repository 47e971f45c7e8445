#!/usr/bin/env bash
# python.wheel: `pip install` of ddpsim as a user gets it. The wheel
# (pyproject.toml, scikit-build-core and nanobind) is built offline from the
# checkout (--no-build-isolation: the pins of python/requirements.txt; its
# build folder build-wheel/, beside build/, so ccache reuses the build's
# objects: the same generator and flags), named with the project's version. A fresh virtual environment
# installs it with no index; torch, pandas and Jupyter's kernel come from the
# setup environment through a .pth file (what "a user's environment that has
# torch" is here), never the source tree: PYTHONPATH unset, run from a folder
# outside the checkout, the notebook and its test copied there. Checked:
# `import ddpsim` is the installed one; the installed `ddpsim` command and
# ddpsim.run give the build's output byte for byte on an installed scenario,
# on the analytic engine and on SimGrid's module from the wheel; the example
# notebook (python/examples/predict.ipynb) runs end to end.
# Skips (77) without the setup environment's scikit-build-core, nanobind,
# torch or nbclient. Usage: python_wheel.sh SOURCE_DIR WORK_DIR VERSION PYTHON
set -euo pipefail
src="$1"; work="$2"; version="$3"; py="$4"
"$py" -c 'import scikit_build_core, nanobind, torch, nbclient, pandas' 2>/dev/null ||
  { echo "SKIPPED: no scikit-build-core, nanobind, torch, nbclient or pandas for $py (scripts/setup.sh)"; exit 77; }
rm -rf "$work"; mkdir -p "$work/run"
trap 'rm -rf "$work/venv" "$work/run"' EXIT
unset PYTHONPATH DDPSIM_SIMGRID_MODULE DDPSIM_VEGA_DIR
# The build's flags (scripts/test.sh builds build/ with warnings as errors), through ccache where installed.
cmake_args="-DDDPSIM_WERROR=ON"
if command -v ccache >/dev/null 2>&1; then
  cache="${CCACHE_DIR:-/var/cache/ddpsim/ccache}"
  if ! mkdir -p "$cache" 2>/dev/null || [ ! -w "$cache" ]; then cache="$src/.ccache"; fi
  export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=true CCACHE_DIR="$cache"
  cmake_args="$cmake_args -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
SKBUILD_BUILD_DIR="$src/build-wheel" CMAKE_GENERATOR="Unix Makefiles" CMAKE_ARGS="$cmake_args" "$py" -m pip wheel --no-build-isolation --no-deps --no-index -q -w "$work/wheels" \
  "$src" > "$work/wheel.log" 2>&1 || { tail -40 "$work/wheel.log"; exit 1; }
wheel=$(ls "$work"/wheels/ddpsim-"$version"-*.whl 2>/dev/null || true)
[ -n "$wheel" ] || { echo "FAIL: no ddpsim-$version wheel (found: $(ls "$work/wheels"))"; exit 1; }
"$py" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["ddpsim/__init__.py", "ddpsim/torch.py", "ddpsim_torch/profile.py", "ddpsim/_core", "/scripts/ddpsim",
        "/data/lib/ddpsim/libddpsim_simgrid.so", "/data/share/ddpsim/scenarios/scaling_lab.yaml"]
missing = [n for n in need if not any(n in x for x in names)]
if missing:
    sys.exit("FAIL: the wheel lacks " + ", ".join(missing))
PY
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --no-deps -q --disable-pip-version-check "$wheel"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/setup_environment.pth"
cp "$src/python/examples/predict.ipynb" "$src/python/tests/api/test_notebook.py" "$work/run/"
cd "$work/run"
venv_py="$work/venv/bin/python"
"$venv_py" - "$work/venv" <<'PY'
import os, sys
import ddpsim
assert ddpsim.__file__.startswith(sys.argv[1]), ddpsim.__file__
assert os.environ["DDPSIM_SIMGRID_MODULE"].startswith(sys.argv[1]), os.environ.get("DDPSIM_SIMGRID_MODULE")
PY
scenario="$work/venv/share/ddpsim/scenarios/scaling_lab.yaml"
for engine in analytic simgrid; do
  "$work/venv/bin/ddpsim" run "$scenario" --engine "$engine" --json "installed_$engine.json" > /dev/null
  "$src/build/cli/ddpsim" run "$scenario" --engine "$engine" --json "build_$engine.json" > /dev/null
  "$venv_py" -c "import ddpsim, sys; sys.stdout.write(ddpsim.run(sys.argv[1], engine=sys.argv[2]).json())" \
    "$scenario" "$engine" > "api_$engine.json"
  # Byte for byte but the commit each build recorded at its configure (provenance.git_commit): the
  # wheel's and build/'s differ when the tree changed between the two (CI's clean clone: they agree).
  for f in installed api build; do grep -v '"git_commit":' "${f}_$engine.json" > "${f}_$engine.cmp"; done
  cmp "installed_$engine.cmp" "build_$engine.cmp" && cmp "api_$engine.cmp" "build_$engine.cmp" ||
    { echo "FAIL: the installed command or API differs from the build's ($engine)"; exit 1; }
done
DDPSIM_NOTEBOOK="$work/run/predict.ipynb" "$venv_py" -m pytest -q -p no:cacheprovider test_notebook.py > notebook.log 2>&1 ||
  { tail -40 notebook.log; echo "FAIL: the example notebook on the installed wheel"; exit 1; }
echo "wheel ok: ${wheel##*/} ($(du -k "$wheel" | cut -f1) KiB) in a fresh environment: the command and the API byte-identical to the build on both engines; $(tail -1 notebook.log)"
