#pragma once
// Launch machinery shared by the CUDA operators: the grid-stride kernel that runs a per-thread functor, error
// checks, the device error flag, stream-ordered scratch memory and the dtype / index-type switches.
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "indexing.hpp"
#include "poolkit/error.hpp"
#include "stream.hpp"

namespace poolkit::cuda::detail {

inline cudaStream_t stream() { return static_cast<cudaStream_t>(current_stream()); }

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("poolkit: CUDA ") + what + ": " + cudaGetErrorString(e));
}

template <class F, class I>
__global__ void __launch_bounds__(256) each_index(F f, I total) {
  for (I i = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); i < total; i += I(gridDim.x) * I(blockDim.x)) f(i);
}

template <class F, class I>
void launch(const F& f, I total) {
  if (total <= 0) return;
  constexpr int block = 256;
  int64_t blocks = (int64_t(total) + block - 1) / block;
  if (blocks > (int64_t(1) << 20)) blocks = int64_t(1) << 20;
  each_index<F, I><<<unsigned(blocks), block, 0, stream()>>>(f, total);
  check(cudaGetLastError(), "kernel launch");
}

// launch() for the fast kernels' run(functor, threads) (fast_kernels.hpp), and their zero(dense tensor).
inline auto launch_fast() {
  return [](const auto& f, int64_t threads) { launch(f, int32_t(threads)); };
}
inline void zero_dense(const TensorView& t) {
  check(cudaMemsetAsync(t.data, 0, size_t(t.numel()) * size_t(dtype_size(t.dtype)), stream()), "cudaMemsetAsync");
}

// Device memory freed at the end of the scope, in stream order.
struct Scratch {
  void* p = nullptr;
  explicit Scratch(size_t bytes) { check(cudaMallocAsync(&p, bytes ? bytes : 1, stream()), "cudaMallocAsync"); }
  ~Scratch() { cudaFreeAsync(p, stream()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T> T* as() const { return static_cast<T*>(p); }
};

// A flag set by kernels that find bad indices; raised() waits for the stream and reads it. It lives in pinned host
// memory that the kernels write through (one int per host thread, reused: each flag waits for the stream before
// it is gone, in raised() or else, when a call ends early, in its destructor, so no kernel of one call writes the
// next call's flag), so a call costs no allocation, memset or copy; device memory where host memory can't be mapped.
struct ErrorFlag {
  std::unique_ptr<Scratch> device;
  int* host = nullptr;
  int* dev = nullptr;
  mutable bool waited = false;

  ErrorFlag(const ErrorFlag&) = delete;
  ErrorFlag& operator=(const ErrorFlag&) = delete;
  ~ErrorFlag() {
    if (host && !waited) cudaStreamSynchronize(stream());  // (an error here is the call's own, already thrown)
  }

  ErrorFlag() {
    struct Mapped {
      int* host = nullptr;
      int* dev = nullptr;
      Mapped() {
        if (cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
            cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
          if (host) cudaFreeHost(host);
          host = dev = nullptr;
          cudaGetLastError();  // clear it
        }
      }
      ~Mapped() {
        if (host) cudaFreeHost(host);
      }
    };
    thread_local Mapped mapped;
    if (mapped.host) {
      host = mapped.host;
      dev = mapped.dev;
      *host = 0;
      return;
    }
    device = std::make_unique<Scratch>(sizeof(int));
    dev = device->as<int>();
    check(cudaMemsetAsync(dev, 0, sizeof(int), stream()), "cudaMemsetAsync");
  }
  int* get() const { return dev; }
  bool raised() const {
    int h = 0;
    if (!host) check(cudaMemcpyAsync(&h, dev, sizeof(int), cudaMemcpyDeviceToHost, stream()), "cudaMemcpyAsync");
    waited = true;
    check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
    return (host ? *static_cast<volatile int*>(host) : h) != 0;
  }
};

// Calls f(T{}, I{}) for the floating dtype and the narrowest safe index type.
template <class F>
void with_types(DType dtype, bool int32, F&& f) {
  auto idx = [&](auto t) {
    if (int32) f(t, int32_t{}); else f(t, int64_t{});
  };
  switch (dtype) {
    case DType::f32: idx(float{}); return;
    case DType::f64: idx(double{}); return;
    case DType::bf16: idx(bfloat16{}); return;
    case DType::f16: idx(float16{}); return;
    default: fail("x", std::string("unsupported dtype ") + dtype_name(dtype), ErrorKind::Type);
  }
}

}  // namespace poolkit::cuda::detail
