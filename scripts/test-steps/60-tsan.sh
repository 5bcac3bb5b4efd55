#!/usr/bin/env bash
# Thread safety under ThreadSanitizer, with the fast path's own OpenMP threads on: built with clang against LLVM's
# OpenMP runtime, whose Archer tool tells TSan about OpenMP's barriers and tasks (so only real races are reported).
# Runs the concurrent-callers tests, the determinism tests across 1, 2 and 8 threads and the seed shape.
set -euo pipefail
# -O1 and line tables only, as step 20: for build time.
CC=clang CXX=clang++ cmake -S . -B build/tsan-clang -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DPOOLKIT_SANITIZE=thread \
  -DPOOLKIT_BUILD_TOOLS=OFF -DPOOLKIT_BUILD_PYTHON=OFF -DPOOLKIT_WITH_CUDA=OFF -DPOOLKIT_SIMD_NATIVE_ONLY=ON >/dev/null
cmake --build build/tsan-clang --target poolkit_thread_tests
archer=$(ls /usr/lib/llvm-*/lib/libarcher.so | sort -V | tail -1)
OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES="$archer" \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1" \
  build/tsan-clang/tests/poolkit_thread_tests --gtest_filter='ReliabilityThreads*:ReliabilityDeterminism*:CpuFast.SeedShape*'
