#!/usr/bin/env bash
# The documentation site: built with every warning an error (scripts/build-docs.sh), then every code example on it
# run as a doctest, in .venv-pypi against the poolkit installed there (scripts/pypi-venv.sh, run by step 32).
set -euo pipefail
cd "$(dirname "$0")/../.."
t=$SECONDS
"${POOLKIT_DOCS_PYTHON:-.venv-pypi/bin/python}" -c 'import poolkit, sphinx, furo, myst_parser' 2>/dev/null ||
  bash scripts/pypi-venv.sh
bash scripts/build-docs.sh
bash scripts/build-docs.sh -b doctest
grep -E '^ +[0-9]+ tests$' docs/_build/doctest/output.txt | sed 's/^ */38-docs: doctest: /'
echo "38-docs: passed in $((SECONDS - t)) s"
