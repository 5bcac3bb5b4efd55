#!/usr/bin/env bash
# The self-contained wheel (scripts/build-wheel.sh) installed where nothing else is: a fresh venv without system site
# packages, run with an empty environment whose PATH is the venv alone (no compiler). Checks that the extension needs
# only the system's C/C++ runtime (Highway linked in, OpenMP bundled in the wheel), that the wheel's version,
# poolkit.__version__ and `poolkit --version` agree, then runs the test files of tests/python that need no torch.
set -euo pipefail
cd "$(dirname "$0")/../.."
t=$SECONDS
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
wheel=$(bash scripts/build-wheel.sh | tail -1)
echo "36-wheel: $(basename "$wheel") built and repaired in $((SECONDS - t)) s"

venv=$PWD/build/wheel/venv
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
numpy=$(grep '^numpy==' scripts/requirements-pypi.txt)
pytest=$(grep '^pytest==' scripts/requirements-pypi.txt)
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir "$wheel" "$numpy" "$pytest"
run() { env -i HOME="$venv" PATH="$venv/bin" "$@"; }
run /bin/sh -c 'for c in cc gcc g++ c++ clang; do command -v $c && exit 1; done; exit 0' ||
  { echo "36-wheel: a compiler is on the test PATH" >&2; exit 1; }

# The extension's dependencies: the system C/C++ runtime, or a library inside the installed wheel.
core=$(run python -c 'import poolkit._core as c; print(c.__file__)')
site=$(dirname "$(dirname "$core")")
ldd "$core" | awk '{print $1, $3}' | while read -r lib path; do
  case "$lib" in
    linux-vdso.so.*|/lib64/ld-linux-x86-64.so.*|libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    *) [[ "$path" == "$site"/* ]] || { echo "36-wheel: $core needs $lib ($path) from outside the wheel" >&2; exit 1; } ;;
  esac
done
if ldd "$core" | grep -i hwy; then echo "36-wheel: Highway is not linked in" >&2; exit 1; fi
echo "36-wheel: the extension needs:"; ldd "$core" | sed 's/^/    /'

version=$(run python -c 'import poolkit; print(poolkit.__version__)')
[[ "$(basename "$wheel")" == poolkit-"$version"-* ]] || { echo "36-wheel: wheel $wheel is not version $version" >&2; exit 1; }
if [ -x build/release/tools/poolkit ]; then
  [ "$(build/release/tools/poolkit --version)" = "poolkit $version" ] ||
    { echo "36-wheel: poolkit --version says '$(build/release/tools/poolkit --version)', the package $version" >&2; exit 1; }
fi

# The NumPy part of the suite, against the installed wheel (numpy and pytest alone): the test files that import
# neither torch (nor the torch-based oracle or test_onnx) nor onnx or matplotlib (bench/charts.py), less the README's
# example, which uses torch.
cd tests/python
numpy_tests=$(grep -L -E '^\s*(import|from) (torch|oracle|test_onnx|onnx|charts)\b|poolkit\.torch' test_*.py |
              grep -v '^test_readme_example.py$')
echo "36-wheel: running" $numpy_tests
run python -m pytest -q -p no:cacheprovider $numpy_tests
run python -c 'import poolkit, sys; assert poolkit.__file__.startswith(sys.prefix), poolkit.__file__'
echo "36-wheel: passed in $((SECONDS - t)) s"
