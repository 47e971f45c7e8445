#!/usr/bin/env bash
# Installs what ddpsim builds and tests with, only what is missing:
# Debian 12's packages, then the Python environment (python/requirements.txt:
# torch, torchvision, pytest, the chart libraries) at the machine-wide path
# scripts/venv.sh prints. Idempotent; needs root (or sudo) only when a Debian
# package is missing or the environment's root folder is not writable.
# The first run on a fresh machine downloads about 5.5 GB for torch (PyPI's
# CUDA build with its nvidia-* wheels); later runs, and other clones, reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake g++ make pkg-config
  libyaml-cpp-dev libeigen3-dev doctest-dev libcli11-dev
  nlohmann-json3-dev libfmt-dev libbenchmark-dev libssl-dev
  openmpi-bin libopenmpi-dev libsimgrid-dev
  clang libclang-rt-14-dev
  python3 python3-venv
  time iproute2 dpkg-dev file ccache
  chromium
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python environment: made with Debian's interpreter, complete when its
# marker holds the pins it was made from (a half-made one is made again).
venv="$(scripts/venv.sh)"
if ! cmp -s python/requirements.txt "$venv/.ddpsim-requirements" 2>/dev/null; then
  echo "setup: making $venv (python/requirements.txt; the first time downloads about 5.5 GB)"
  parent="$(dirname "$venv")"
  if ! mkdir -p "$parent" 2>/dev/null || [ ! -w "$parent" ]; then
    $sudo mkdir -p "$parent" && $sudo chown "$(id -u):$(id -g)" "$parent"
  fi
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --no-input -q --disable-pip-version-check -r python/requirements.txt
  cp python/requirements.txt "$venv/.ddpsim-requirements"
fi
