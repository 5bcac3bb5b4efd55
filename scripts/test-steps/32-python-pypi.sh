#!/usr/bin/env bash
# The Python conformance suite (tests/python) again, against current PyTorch: torch 2.15 from PyPI, in .venv-pypi.
# Hosts that need .venv-pypi have steps of their own. A run that collects no test (pytest exit code 5) fails the step.
set -euo pipefail
cd "$(dirname "$0")/../.."
t=$SECONDS
bash scripts/pypi-venv.sh
echo "32-python-pypi: .venv-pypi ready in $((SECONDS - t)) s"
py="$PWD/.venv-pypi/bin/python"
cd tests/python
set +e
$py -m pytest -q -p no:cacheprovider .
rc=$?
set -e
[ "$rc" -eq 5 ] && { echo "32-python-pypi: pytest collected no tests" >&2; exit 1; }
exit "$rc"
