#!/usr/bin/env bash
# The libFuzzer targets (clang, AddressSanitizer + UndefinedBehaviorSanitizer, built by step 20), each run for a
# short fixed time from the seed corpus in fuzz/corpus/. New inputs go to a scratch directory, not the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${POOLKIT_FUZZ_SECONDS:-30}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in fuzz_geometry fuzz_ops; do
  [ -x "build/asan/fuzz/$target" ] || { echo "50-fuzz: build/asan/fuzz/$target is missing: step 20 builds it" >&2; exit 1; }
  mkdir -p "$scratch/$target"
  build/asan/fuzz/$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$scratch/$target-" "$scratch/$target" "fuzz/corpus/$target" 2>"$scratch/$target.log" || {
    tail -n 60 "$scratch/$target.log"
    echo "$target found a failure; the input is printed above (Base64)" >&2
    exit 1
  }
  grep -E 'stat::number_of_executed_units|Done ' "$scratch/$target.log" | sed "s/^/$target: /"
done
