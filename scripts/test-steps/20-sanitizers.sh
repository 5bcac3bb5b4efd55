#!/usr/bin/env bash
# The GoogleTest suite again under AddressSanitizer and UndefinedBehaviorSanitizer, built with clang (whose
# -fsanitize=undefined also checks float-to-integer conversions). The same build holds the libFuzzer targets that
# step 50 runs: one sanitized compile of the library, instrumented for the fuzzers' coverage too.
set -euo pipefail
cd "$(dirname "$0")/../.."
# -O1 and line tables only (-g1): the reports keep their functions and lines at half the build time of -O2 -g.
CC=clang CXX=clang++ cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DPOOLKIT_SANITIZE=address,undefined \
  -DPOOLKIT_BUILD_FUZZERS=ON -DPOOLKIT_WITH_CUDA=OFF -DPOOLKIT_SIMD_NATIVE_ONLY=ON >/dev/null
cmake --build build/asan
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
  ctest --test-dir build/asan --output-on-failure -j2
