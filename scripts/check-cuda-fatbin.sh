#!/usr/bin/env bash
# Builds the CUDA kernels with the default architecture list of src/cuda/CMakeLists.txt (or checks BUILD_DIR, an
# existing CUDA build) and checks with cuobjdump that every object holds machine code (ELF) for each real
# architecture asked for and PTX for each virtual one, and nothing else.
# Usage: scripts/check-cuda-fatbin.sh [BUILD_DIR]   (default: build/cuda-fatbin, configured here with defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[[ -x "$nvcc" ]] || { echo "check-cuda-fatbin: no nvcc (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
# cuobjdump: the toolkit's own, else the copy PyTorch's Triton ships in .venv-pypi.
cuobjdump=$(command -v cuobjdump || true)
[[ -z "$cuobjdump" && -x /usr/local/cuda/bin/cuobjdump ]] && cuobjdump=/usr/local/cuda/bin/cuobjdump
[[ -z "$cuobjdump" ]] && cuobjdump=$(find .venv-pypi -path '*nvidia/bin/cuobjdump' -type f 2>/dev/null | head -1 || true)
[[ -x "$cuobjdump" ]] || { echo "check-cuda-fatbin: no cuobjdump (install the CUDA toolkit's, or run scripts/pypi-venv.sh)" >&2; exit 1; }

build=${1:-build/cuda-fatbin}
if [[ -z "${1:-}" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOOLKIT_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DPOOLKIT_SIMD_NATIVE_ONLY=ON -DPOOLKIT_BUILD_TESTS=OFF -DPOOLKIT_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target poolkit_cuda
fi
# What the build asked for: CMake's own CMAKE_CUDA_ARCHITECTURES when given, else poolkit's default list.
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -z "$archs" ]] && archs=$(sed -n 's/^POOLKIT_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n "$archs" ]] || { echo "check-cuda-fatbin: no CUDA architectures in $build/CMakeCache.txt" >&2; exit 1; }
echo "check-cuda-fatbin: asked for $archs (from $build/CMakeCache.txt)"
want_elf=() want_ptx=()
for a in ${archs//;/ }; do
  n=${a%%-*}
  case "$a" in
    *-real) want_elf+=("sm_$n") ;;
    *-virtual) want_ptx+=("sm_$n") ;;
    *) want_elf+=("sm_$n"); want_ptx+=("sm_$n") ;;
  esac
done
want_elf_s=$(printf '%s\n' "${want_elf[@]}" | sort -u | tr '\n' ' ')
want_ptx_s=$(printf '%s\n' "${want_ptx[@]+"${want_ptx[@]}"}" | sed '/^$/d' | sort -u | tr '\n' ' ')
objs=$(find "$build/src/cuda" -name '*.cu.o' | sort)
[[ -n "$objs" ]] || { echo "check-cuda-fatbin: no CUDA objects under $build/src/cuda" >&2; exit 1; }
bad=0
for o in $objs; do
  elf=$("$cuobjdump" --list-elf "$o" | grep -o 'sm_[0-9]*[a-z]*' | sort -u | tr '\n' ' ')
  ptx=$("$cuobjdump" --list-ptx "$o" 2>/dev/null | grep -o 'sm_[0-9]*[a-z]*' | sort -u | tr '\n' ' ')
  if [[ "$elf" != "$want_elf_s" || "$ptx" != "$want_ptx_s" ]]; then
    echo "check-cuda-fatbin: $(basename "$o"): ELF [$elf] PTX [$ptx], expected ELF [$want_elf_s] PTX [$want_ptx_s]" >&2
    bad=1
  else
    echo "  $(basename "$o"): ELF $elf| PTX $ptx"
  fi
done
[[ $bad == 0 ]] && echo "check-cuda-fatbin: every object holds the asked architectures"
exit $bad
