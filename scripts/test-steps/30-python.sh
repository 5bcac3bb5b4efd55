#!/usr/bin/env bash
# The Python package: pip-installs poolkit into .venv from this checkout, then runs the conformance tests against
# PyTorch and ONNX Runtime. Any failure, and a run that collects no test (pytest exit code 5), fails the step.
set -euo pipefail
cd "$(dirname "$0")/../.."
py="$PWD/.venv/bin/python"
$py -m pip install -q --disable-pip-version-check --no-cache-dir --no-build-isolation --no-deps .
cd tests/python
set +e
$py -m pytest -q -p no:cacheprovider .
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "30-python: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
