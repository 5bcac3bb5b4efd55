#!/usr/bin/env bash
# The standing list of planted bugs (tests/mutants/): each applied alone in a scratch copy of the working tree,
# rebuilt incrementally (dev build), and the suite it names must fail. Usage: scripts/mutants.sh [NAME...]
# Takes minutes (the first run builds the scratch copy in full); not part of .ci/run. Exits 1 if any is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 tests/mutants/run.py "$@"
