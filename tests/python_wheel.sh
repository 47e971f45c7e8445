#!/usr/bin/env bash
# python.wheel: python/ builds as a wheel offline (pip, --no-build-isolation: the setuptools
# installed, no index), named with the project's version, holding the package; built from a
# copy, so the source tree gets no build leftovers. Skips (77) without pip or setuptools.
# Usage: python_wheel.sh SOURCE_DIR WORK_DIR VERSION
set -euo pipefail
src="$1"; work="$2"; version="$3"
py="$("$src/scripts/python.sh")"
"$py" -c 'import setuptools, pip' 2>/dev/null || { echo "SKIPPED: no pip or setuptools for $py"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
cp -r "$src/python" "$work/python"
"$py" -m pip wheel --no-build-isolation --no-deps --no-index -q -w "$work/wheels" "$work/python"
wheel="$work/wheels/ddpsim_torch-$version-py3-none-any.whl"
[ -f "$wheel" ] || { echo "FAIL: no $wheel (found: $(ls "$work/wheels"))"; exit 1; }
"$py" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["ddpsim_torch/__main__.py", "ddpsim_torch/hooks.py", "ddpsim_torch/profile.py"]
missing = [n for n in need if n not in names]
print("FAIL: the wheel lacks " + ", ".join(missing) if missing else "wheel ok: " + sys.argv[1].rsplit("/", 1)[-1])
sys.exit(1 if missing else 0)
PY
