#!/usr/bin/env bash
# The thread-safety tests under ThreadSanitizer: many std::threads calling the operators at once. The fast path's
# own OpenMP threads are limited to one here (libgomp is not instrumented, so its barriers would be reported).
set -euo pipefail
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOOLKIT_SANITIZE=thread \
  -DPOOLKIT_BUILD_TOOLS=OFF -DPOOLKIT_WITH_CUDA=OFF >/dev/null
cmake --build build/tsan --target poolkit_tests
OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  build/tsan/tests/poolkit_tests --gtest_filter='ReliabilityThreads*'
