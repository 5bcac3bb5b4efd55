#!/usr/bin/env bash
# Runs every test of poolkit: installs what is missing, then each step of scripts/test-steps/ in order.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Every step's temporary files (inductor's kernels and headers, torch's compiler dirs, build scratch) under one temp
# dir removed at the end: nothing stays behind in /tmp.
export TMPDIR
TMPDIR=$(mktemp -d)
trap 'rm -rf "$TMPDIR"' EXIT
start=$SECONDS
for step in scripts/test-steps/*.sh; do
  echo "=== $(basename "$step")"
  t=$SECONDS
  bash "$step"
  echo "=== $(basename "$step") passed in $((SECONDS - t)) s"
done
echo "=== all test steps passed in $((SECONDS - start)) s"
