#pragma once
// Device copies of host test tensors: same shape, strides and bytes, in cudaMalloc'd memory.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "test_util.hpp"

namespace poolkit::test {

inline void cuda_ok(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + cudaGetErrorString(e));
}

// Bytes spanned by a view with non-negative strides.
inline size_t span_bytes(const TensorView& t) {
  int64_t last = 0;
  for (int i = 0; i < t.rank(); ++i) last += (t.shape[i] - 1) * t.strides[i];
  return size_t(t.numel() ? last + 1 : 1) * size_t(dtype_size(t.dtype));
}

struct DeviceTensor {
  std::shared_ptr<void> mem;
  TensorView view;
  operator const TensorView&() const { return view; }
};

// A device tensor holding the bytes of host tensor h.
inline DeviceTensor to_device(const TensorView& h) {
  size_t bytes = span_bytes(h);
  void* p = nullptr;
  cuda_ok(cudaMalloc(&p, bytes));
  DeviceTensor d{std::shared_ptr<void>(p, [](void* q) { cudaFree(q); }), h};
  d.view.data = p;
  d.view.device = Device::CUDA;
  cuda_ok(cudaMemcpy(p, h.data, bytes, cudaMemcpyHostToDevice));
  return d;
}

// A device tensor of the given shape and layout, every byte 0xff (NaN for floats): outputs start poisoned.
inline DeviceTensor poisoned(DType dt, const Shape& s, Layout layout = Layout::ChannelsFirst) {
  Tensor h(dt, s, layout);
  DeviceTensor d = to_device(h);
  cuda_ok(cudaMemset(d.view.data, 0xff, span_bytes(d.view)));
  return d;
}

inline Tensor to_host(const DeviceTensor& d, Layout layout = Layout::ChannelsFirst) {
  Tensor h(d.view.dtype, d.view.shape, layout);
  cuda_ok(cudaDeviceSynchronize());
  cuda_ok(cudaMemcpy(h.view().data, d.view.data, span_bytes(d.view), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace poolkit::test
