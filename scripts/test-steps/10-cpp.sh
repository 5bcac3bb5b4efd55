#!/usr/bin/env bash
# The C++ library, the command-line program and the GoogleTest suite, in a release build.
set -euo pipefail
# CUDA is compiled by its own step (40); this build is the CPU library CI tests and installs.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=OFF >/dev/null
cmake --build build/release
ctest --test-dir build/release --output-on-failure -j2
build/release/tools/poolkit demo >/dev/null
