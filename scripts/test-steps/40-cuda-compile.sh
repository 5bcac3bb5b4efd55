#!/usr/bin/env bash
# Compiles the CUDA backend (narrowed to sm_90 for time; the default list is checked by
# scripts/check-cuda-fatbin.sh), its GPU test binary and the GPU benchmarks, without running them (CI has no GPU;
# scripts/gpu-check.sh runs them). Skips when no nvcc is installed. The library's CPU files compile with step 10's
# flags, so under scripts/test.sh the compiler cache hands them over from step 10.
set -euo pipefail
nvcc=$(command -v nvcc || true)
[[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
if [[ -z "$nvcc" ]]; then
  echo "40-cuda-compile: SKIPPED: no nvcc found (on PATH or /usr/local/cuda/bin); the CUDA backend was not compiled"
  exit 0
fi
cmake -S . -B build/cuda-ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=ON \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DPOOLKIT_CUDA_ARCHITECTURES=90 -DPOOLKIT_BUILD_TOOLS=OFF >/dev/null
targets=(poolkit poolkit_cuda_tests poolkit_gpu_bench)
grep -q '^build cudnn_pool_bench' build/cuda-ci/build.ninja && targets+=(cudnn_pool_bench)
cmake --build build/cuda-ci -j2 --target "${targets[@]}"
echo "40-cuda-compile: built ${targets[*]} for sm_90 with $nvcc (not run: no GPU here)"
