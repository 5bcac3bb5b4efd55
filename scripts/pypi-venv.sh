#!/usr/bin/env bash
# Makes .venv-pypi (torch 2.15, torchvision, JAX, Keras from PyPI; see requirements-pypi.txt) if it is missing or
# out of date, and installs poolkit from this checkout into it. Quick when all is there. With --requirements-only,
# the packages alone (scripts/test.sh fetches them beside the C++ steps). Holds a lock, so a second call waits for
# the first and then finds the packages in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
exec 9>build/pypi-venv.lock
flock 9
if [ ! -x .venv-pypi/bin/python ]; then
  /usr/bin/python3 -m venv .venv-pypi
fi
py=.venv-pypi/bin/python
pip=(-m pip install -q --disable-pip-version-check --no-cache-dir)
if ! cmp -s scripts/requirements-pypi.txt .venv-pypi/requirements-installed.txt; then
  $py "${pip[@]}" -r scripts/requirements-pypi.txt
  # torchvision's own pins would pull another torch: its one dependency we need (pillow) comes with matplotlib.
  $py "${pip[@]}" --no-deps torchvision==0.29.2
  cp scripts/requirements-pypi.txt .venv-pypi/requirements-installed.txt
fi
[ "${1:-}" = --requirements-only ] && exit 0
# (its build tree is the wheel's too, scripts/build-wheel.sh, which turns poolkit.torch's C++ kernels off)
$py "${pip[@]}" --no-build-isolation --no-deps --config-settings=cmake.define.POOLKIT_TORCH_OPS=ON .
