#!/usr/bin/env bash
# Builds the documentation site into docs/_build/html, every warning an error. Runs in .venv-pypi (Sphinx, furo and
# myst-parser pinned in scripts/requirements-pypi.txt), where poolkit must be importable: pip-installed there by
# scripts/pypi-venv.sh, or a build tree on PYTHONPATH. POOLKIT_DOCS_PYTHON picks another interpreter.
# Extra arguments go to sphinx-build (e.g. -b doctest to run every code example of the site).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${POOLKIT_DOCS_PYTHON:-$PWD/.venv-pypi/bin/python}
builder=html
[ "${1:-}" = "-b" ] && { builder=$2; shift 2; }
"$py" -m sphinx -q -W --keep-going -b "$builder" -d docs/_build/doctrees docs "docs/_build/$builder" "$@"
echo "docs/_build/$builder"
