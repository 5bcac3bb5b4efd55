#!/usr/bin/env bash
# Builds poolkit and runs its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release --target poolkit_cli
build/release/tools/poolkit demo
