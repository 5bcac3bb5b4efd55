#!/usr/bin/env bash
# One command on a machine with an NVIDIA GPU: builds poolkit with CUDA for this GPU, runs the CUDA tests against the
# CPU reference, compute-sanitizer memcheck and racecheck on a reduced suite, then benchmarks every case of
# BENCH_CASES.md against PyTorch CUDA, cuDNN and a device-to-device copy, and writes bench/RESULTS-gpu.md.
# Options: GPU_ARCH=90 (default: the GPU's own, from nvidia-smi), SKIP_BENCH=1, SKIP_TORCH=1.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x "$nvcc" ]] || { echo "gpu-check: no nvcc" >&2; exit 1; }
nvidia-smi -L || { echo "gpu-check: no GPU visible" >&2; exit 1; }
arch=${GPU_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
build=build/cuda-gpu
jobs=$(( $(nproc) > 8 ? 8 : $(nproc) ))

echo "=== build (sm_$arch)"
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" >/dev/null
cmake --build $build -j"$jobs"

echo "=== the default build's fatbin holds every architecture of the default list"
bash scripts/check-cuda-fatbin.sh

echo "=== CPU suite (includes the kernels' index arithmetic on the host)"
ctest --test-dir $build --output-on-failure -j"$jobs"

echo "=== CUDA tests against the CPU reference"
$build/tests/cuda/poolkit_cuda_tests

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x "$sanitizer" ]]; then
  for tool in memcheck racecheck; do
    echo "=== compute-sanitizer $tool (reduced suite)"
    POOLKIT_CUDA_TESTS_REDUCED=1 "$sanitizer" --tool $tool --error-exitcode 1 \
      $build/tests/cuda/poolkit_cuda_tests --gtest_brief=1
  done
else
  echo "gpu-check: compute-sanitizer not found" >&2
  exit 1
fi

[[ "${SKIP_BENCH:-}" == 1 ]] && exit 0
echo "=== benchmarks"
out=$(mktemp -d)
$build/bench/gpu/poolkit_gpu_bench | tee "$out/poolkit.csv"
if [[ -x $build/bench/gpu/cudnn_pool_bench ]]; then
  $build/bench/gpu/cudnn_pool_bench | tee "$out/cudnn.csv"
else
  echo "gpu-check: cudnn_pool_bench not built (no cuDNN): cuDNN column left empty" >&2
fi
py=python3
[[ -x .venv/bin/python ]] && py=.venv/bin/python
if [[ "${SKIP_TORCH:-}" != 1 ]] && $py -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  $py bench/gpu/torch_pool_bench.py | tee "$out/torch.csv"
else
  echo "gpu-check: no CUDA-enabled PyTorch: PyTorch column left empty" >&2
fi
$py bench/gpu/report.py bench/RESULTS-gpu.md "$device (sm_$arch)" "$out"/poolkit.csv "$out"/cudnn.csv "$out"/torch.csv
