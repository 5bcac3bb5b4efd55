#!/usr/bin/env bash
# One command on a machine with an NVIDIA GPU: builds poolkit with CUDA for this GPU, runs the CUDA tests against the
# CPU reference, compute-sanitizer memcheck and racecheck on a reduced suite, poolkit.torch's conformance tests on
# CUDA tensors against PyTorch CUDA, checks the default build's fatbin, then benchmarks every case of BENCH_CASES.md
# against PyTorch CUDA, cuDNN and a device-to-device copy, and writes bench/RESULTS-gpu.md.
# Every step runs even when one before it failed; the summary at the end lists each step's result and time, and the
# exit code is 1 when any failed. Logs: $GPU_CHECK_LOGS (default build/cuda-gpu/logs).
# Options: GPU_ARCH=90 (default: the GPU's own, from nvidia-smi), SKIP_BENCH=1, SKIP_TORCH=1, SKIP_FATBIN=1,
# PYTHON=python3 (the Python with CUDA-enabled PyTorch and nanobind, for poolkit.torch's tests and the PyTorch
# benchmark).
# Highway and GoogleTest are found through CMake's usual search (CMAKE_PREFIX_PATH names an unpacked prefix).
set -uo pipefail
cd "$(dirname "$0")/.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x "$nvcc" ]] || { echo "gpu-check: no nvcc" >&2; exit 1; }
nvidia-smi -L || { echo "gpu-check: no GPU visible" >&2; exit 1; }
arch=${GPU_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
build=build/cuda-gpu
logs=${GPU_CHECK_LOGS:-$build/logs}
py=${PYTHON:-python3}
jobs=$(( $(nproc) > 16 ? 16 : $(nproc) ))
mkdir -p "$logs"
: >"$logs/summary.txt"
note() { echo "$*" >>"$logs/summary.txt"; }

# step NAME LIMIT_S COMMAND...: runs the program (stopped after LIMIT_S seconds) with its output in $logs/NAME.log
# and on the terminal, and notes its result and time in the summary. Steps may run in the background (step ... &).
step() {
  local name=$1 limit=$2 t=$SECONDS rc
  shift 2
  echo "=== $name"
  timeout "$limit" "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  local result=pass
  [[ $rc == 0 ]] || result="FAIL ($rc$([[ $rc == 124 ]] && echo ": over ${limit} s"))"
  note "$name: $result in $((SECONDS - t)) s"
  return "$rc"
}

torch_cuda=0
[[ "${SKIP_TORCH:-}" != 1 ]] && $py -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null &&
  torch_cuda=1
python_args=()
if [[ $torch_cuda == 1 ]] && $py -m nanobind --cmake_dir >/dev/null 2>&1; then
  python_args=(-DPOOLKIT_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v "$py")")
fi
# cuDNN: the toolkit's, else the one PyTorch's wheels bring (nvidia-cudnn-*).
cudnn_args=()
cudnn_dir=$($py -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null || true)
if [[ -n "$cudnn_dir" && -f "$cudnn_dir/include/cudnn.h" ]]; then
  lib=$(ls "$cudnn_dir"/lib/libcudnn.so* 2>/dev/null | head -1)
  [[ -n "$lib" ]] && cudnn_args=(-DCUDNN_INCLUDE_DIR="$cudnn_dir/include" -DCUDNN_LIBRARY="$lib")
fi

# The CPU kernels for this machine alone (the CPU suite is CI's); the targets this script runs.
targets=(poolkit_cuda_tests poolkit_gpu_bench)
[[ ${#cudnn_args[@]} -gt 0 ]] && targets+=(cudnn_pool_bench)
[[ ${#python_args[@]} -gt 0 ]] && targets+=(_core)
{ step configure 120 cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DPOOLKIT_SIMD_NATIVE_ONLY=ON -DPOOLKIT_WERROR=OFF \
    "${python_args[@]}" "${cudnn_args[@]}" >/dev/null &&
  # poolkit.torch's C++ kernels, where CMake found a PyTorch to build them against
  { ! grep -q '_cpu_kernels' $build/build.ninja || targets+=(_cpu_kernels); } &&
  step build 600 cmake --build $build -j"$jobs" --target "${targets[@]}"; } || { cat "$logs/summary.txt"; exit 1; }

# Correctness first, the checks side by side (none of them is timed): the fatbin check compiles the CUDA objects
# for every default architecture; poolkit.torch's conformance tests run with their tensors on the GPU, against
# PyTorch (its CPU kernels where PyTorch CUDA's are unordered or wrong: tests/python/oracle.py); the CUDA tests,
# then compute-sanitizer over the reduced suite.
# (It needs no GPU: SKIP_FATBIN=1 leaves it to a run elsewhere, as on an H100 whose 16 cores took over 300 s for it.)
[[ "${SKIP_FATBIN:-}" == 1 ]] || step fatbin 600 bash scripts/check-cuda-fatbin.sh >/dev/null &
if [[ ${#python_args[@]} -gt 0 ]]; then
  step torch-cuda-tests 300 env PYTHONPATH="$PWD/$build/python" POOLKIT_TEST_DEVICE=cuda \
    $py -m pytest -q -p no:cacheprovider -n 4 --maxfail=40 \
    tests/python/test_torch_max.py tests/python/test_torch_avg_lp.py tests/python/test_torch_fractional_unpool.py \
    tests/python/test_torch_data_format.py tests/torch2/test_compile.py tests/torch2/test_double_backward.py \
    tests/torch2/test_export_errors.py tests/torch2/test_opcheck.py >/dev/null &
else
  note "torch-cuda-tests: FAIL (not run: no CUDA PyTorch with nanobind in $py)"
fi
step cuda-tests 120 $build/tests/cuda/poolkit_cuda_tests
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  step "sanitizer-$tool" 200 env POOLKIT_CUDA_TESTS_REDUCED=1 "$sanitizer" --tool $tool --error-exitcode 1 \
    $build/tests/cuda/poolkit_cuda_tests --gtest_brief=1
done
echo "=== waiting for the fatbin check and the torch tests"
wait
tail -3 "$logs/fatbin.log" "$logs/torch-cuda-tests.log" 2>/dev/null

if [[ "${SKIP_BENCH:-}" != 1 ]]; then
  out=$logs
  step bench-poolkit 200 sh -c "$build/bench/gpu/poolkit_gpu_bench > $out/poolkit.csv"
  if [[ -x $build/bench/gpu/cudnn_pool_bench ]]; then
    step bench-cudnn 120 sh -c "$build/bench/gpu/cudnn_pool_bench > $out/cudnn.csv"
  else
    note "bench-cudnn: not built (no cuDNN): cuDNN column left empty"
  fi
  if [[ $torch_cuda == 1 ]]; then
    step bench-torch 120 sh -c "$py bench/gpu/torch_pool_bench.py > $out/torch.csv"
  else
    note "bench-torch: no CUDA-enabled PyTorch: PyTorch column left empty"
  fi
  step report 30 $py bench/gpu/report.py bench/RESULTS-gpu.md "$device (sm_$arch)" "$out"/poolkit.csv "$out"/cudnn.csv \
    "$out"/torch.csv
fi

echo "=== gpu-check summary ($device, sm_$arch)"
cat "$logs/summary.txt"
! grep -q FAIL "$logs/summary.txt"
