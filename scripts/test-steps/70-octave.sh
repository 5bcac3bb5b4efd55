#!/usr/bin/env bash
# poolkit's MATLAB interface (matlab/), tested in GNU Octave: installs Octave where it is missing
# (scripts/install-octave.sh), builds the MEX with matlab/build.m (against step 10's build/release library), then
# runs tests/matlab. Any failing test, or a run that tests nothing, fails the step.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
bash scripts/install-octave.sh
mkdir -p build
quiet() { grep -v "ignoring const execution_exception" "$1" || true; }  # Octave 7's harmless line at exit
rm -f matlab/+poolkit/pkmex.mex matlab/+poolkit/pkmex.oct matlab/+poolkit/pkmex_mex.mex
rc=0
octave-cli --eval "run('matlab/build.m')" > build/octave-build.log 2>&1 || rc=$?
quiet build/octave-build.log
if [ "$rc" -ne 0 ] || [ ! -f matlab/+poolkit/pkmex.oct ] || [ ! -f matlab/+poolkit/pkmex_mex.mex ]; then
  echo "70-octave: matlab/build.m failed" >&2
  exit 1
fi
octave-cli tests/matlab/run_tests.m > build/octave-tests.log 2>&1 || rc=$?
quiet build/octave-tests.log
grep -Eq '^[1-9][0-9]* passed, 0 failed$' build/octave-tests.log || rc=1
echo "70-octave: $((SECONDS - start)) s"
exit "$rc"
