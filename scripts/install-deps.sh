#!/usr/bin/env bash
# Installs what poolkit's build, tests and benchmarks need on a fresh Debian 12 machine; quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(build-essential ccache cmake ninja-build clang libclang-rt-14-dev libgtest-dev libbenchmark-dev libhwy-dev
      libomp-dev python3 python3-dev python3-venv python3-pip python3-numpy python3-torch python3-matplotlib python3-pytest
      python3-hypothesis)
missing=()
for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A virtual environment over Debian's python3, so Debian's torch and numpy 1.24 are seen (numpy 2 breaks that torch).
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
if [ -f scripts/python-requirements.txt ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir -r scripts/python-requirements.txt
fi
