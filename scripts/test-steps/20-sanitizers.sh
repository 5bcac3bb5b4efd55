#!/usr/bin/env bash
# The GoogleTest suite again under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOLKIT_SANITIZE=address,undefined \
  -DPOOLKIT_WITH_CUDA=OFF -DPOOLKIT_SIMD_NATIVE_ONLY=ON >/dev/null
cmake --build build/asan
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/asan --output-on-failure -j2
