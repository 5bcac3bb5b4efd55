#!/usr/bin/env bash
# poolkit installs, and another CMake project finds and uses it (the README's C++ example).
set -euo pipefail
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build/release --prefix "$prefix" >/dev/null
rm -rf build/consumer
cmake -S examples/consumer -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/consumer >/dev/null
build/consumer/example
