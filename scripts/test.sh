#!/usr/bin/env bash
# Runs every test of poolkit: installs what is missing, then each step of scripts/test-steps/ in order.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Every step's temporary files (inductor's kernels and headers, torch's compiler dirs, build scratch) under one temp
# dir removed at the end: nothing stays behind in /tmp.
export TMPDIR
TMPDIR=$(mktemp -d)
# What only later steps need, installed beside the C++ steps (mostly downloads: .venv-pypi's 5.5 GB, Octave's
# packages). Both scripts hold a lock, so the steps' own calls wait for them and then find all in place; a failure
# shows again in the step that calls the script.
mkdir -p build
setsid bash -c 'bash scripts/pypi-venv.sh --requirements-only && bash scripts/install-octave.sh &&
  echo "background installs: done in $SECONDS s"' > build/background-installs.log 2>&1 &
background=$!  # its own process group, ended with the run (errexit holds in the trap: a group already gone is fine)
trap 'kill -- -"$background" 2>/dev/null || true; rm -rf "$TMPDIR"' EXIT
# The release build (step 10) and the Python package's (step 30's pip install) compile the library with the same
# flags: ccache, its store inside the tree, hands step 30 step 10's objects. Both builds name the compiler alike
# (scikit-build-core would take Python's x86_64-linux-gnu-g++, and ccache hashes the name); -Werror, step 10's
# alone, changes no object.
export CC=gcc CXX=g++ CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache \
  CCACHE_DIR="$PWD/build/ccache" CCACHE_IGNOREOPTIONS=-Werror
start=$SECONDS
for step in scripts/test-steps/*.sh; do
  echo "=== $(basename "$step")"
  t=$SECONDS
  bash "$step"
  echo "=== $(basename "$step") passed in $((SECONDS - t)) s"
done
echo "=== all test steps passed in $((SECONDS - start)) s"
tail -n 1 build/background-installs.log
