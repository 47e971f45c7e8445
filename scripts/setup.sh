#!/usr/bin/env bash
# Installs the Debian 12 packages ddpsim builds with, only those missing.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libyaml-cpp-dev libeigen3-dev doctest-dev libcli11-dev
  nlohmann-json3-dev libfmt-dev libbenchmark-dev libssl-dev
  openmpi-bin libopenmpi-dev libsimgrid-dev
  clang libclang-rt-14-dev
  python3-torch python3-torchvision python3-pytest python3-pip python3-setuptools
  time iproute2 dpkg-dev file ccache
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# npm fetches the HTML report's chart libraries at build time (report/vega);
# a machine may have it outside Debian's packages (NodeSource's nodejs).
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
