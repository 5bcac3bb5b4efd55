#!/usr/bin/env bash
# The C++ library, the command-line program and the GoogleTest suite, in a release build.
set -euo pipefail
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release
ctest --test-dir build/release --output-on-failure -j2
build/release/tools/poolkit demo >/dev/null
