#!/usr/bin/env bash
# Builds poolkit and runs its main job: the worked examples, then the seed case of shared/BENCH_CASES.md
# (max and average pooling, forward and backward, with and without indices) against a plain memory copy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target poolkit_cli
build/release/tools/poolkit demo
build/release/tools/poolkit bench --case seed
