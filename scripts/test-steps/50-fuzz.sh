#!/usr/bin/env bash
# The libFuzzer targets (clang, AddressSanitizer + UndefinedBehaviorSanitizer), each run for a short fixed time
# from the seed corpus in fuzz/corpus/. New inputs go to a scratch directory, not the repository.
set -euo pipefail
seconds=${POOLKIT_FUZZ_SECONDS:-30}
# -O1 and line tables only, as step 20: for build time.
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DPOOLKIT_BUILD_FUZZERS=ON \
  -DPOOLKIT_BUILD_TESTS=OFF -DPOOLKIT_BUILD_TOOLS=OFF -DPOOLKIT_WITH_CUDA=OFF -DPOOLKIT_SIMD_NATIVE_ONLY=ON >/dev/null
cmake --build build/fuzz --target fuzz_geometry fuzz_ops
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in fuzz_geometry fuzz_ops; do
  mkdir -p "$scratch/$target"
  build/fuzz/fuzz/$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$scratch/$target-" "$scratch/$target" "fuzz/corpus/$target" 2>"$scratch/$target.log" || {
    tail -n 60 "$scratch/$target.log"
    echo "$target found a failure; the input is printed above (Base64)" >&2
    exit 1
  }
  grep -E 'stat::number_of_executed_units|Done ' "$scratch/$target.log" | sed "s/^/$target: /"
done
