// window_sums.hpp: a pass takes k planes (k the lanes of a full vector: 16 float32 with AVX-512), their cells
// k at a time as a k x k tile transposed in registers (transpose-inl.h) and stored as k columns of a
// channels-last block of the pass in the first-level cache, one vector a column; each output's window is then
// summed from the block's columns in its tap order, divided, and the outputs go back through the same
// transpose, k outputs of the k planes at once, straight into the planes' outputs.
#include "window_sums.hpp"

#include <algorithm>
#include <cstdint>

#include "prefetch.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_window_sums.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
void window_sums(const WindowSumsJob& j) {
  const T* x = static_cast<const T*>(j.x);
  T* y = static_cast<T*>(j.y);
  const int64_t *const tap = j.tap, *const first = j.first, *const divisor = j.divisor;
#if HWY_TARGET == HWY_SCALAR
  for (int64_t p = 0; p < j.planes; ++p, x += j.x_plane, y += j.y_plane)
    for (int64_t o = 0; o < j.outputs; ++o) {
      T sum = T(0);
      for (int64_t t = first[o]; t < first[o + 1]; ++t) sum += x[tap[t]];
      y[o] = sum / T(divisor[o]);
    }
#else
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  constexpr int64_t k = int64_t(hn::MaxLanes(d));
  const int64_t cells = j.cells, outputs = j.outputs;
  T* block = static_cast<T*>(j.block);      // cells x k
  T* out = block + cells * k;                // outputs x k
  const int64_t ahead_bytes = j.x_plane == cells ? k * cells * int64_t(sizeof(T)) : 0;
  for (int64_t p0 = 0; p0 < j.planes; p0 += k) {
    // the planes of the pass after next into the outer caches
    if (p0 + 2 * k < j.planes)
      for (int64_t b = 0; b < ahead_bytes; b += 64)
        prefetch_far(reinterpret_cast<const char*>(x + (p0 + 2 * k) * cells) + b);
    const T* row[k];  // planes past the end repeat the last one (their outputs are not stored)
    for (int64_t i = 0; i < k; ++i) row[i] = x + std::min(p0 + i, j.planes - 1) * j.x_plane;
    // the block, k cells at a time (the last tile may overlap the one before, storing the same values)
    for (int64_t c0 = 0; c0 < cells; c0 += k) {
      const int64_t c = std::min(c0, cells - k);
      V r[k];
#pragma GCC unroll 16
      for (int64_t i = 0; i < k; ++i) r[i] = hn::LoadU(d, row[i] + c);
      transpose_tile(d, r);
#pragma GCC unroll 16
      for (int64_t i = 0; i < k; ++i) hn::Store(r[i], d, block + (c + i) * k);
    }
    for (int64_t o = 0; o < outputs; ++o) {
      V sum = hn::Zero(d);
      for (int64_t t = first[o]; t < first[o + 1]; ++t) sum = hn::Add(sum, hn::Load(d, block + tap[t] * k));
      hn::Store(hn::Div(sum, hn::Set(d, T(divisor[o]))), d, out + o * k);
    }
    const int64_t n = std::min(k, j.planes - p0);
    for (int64_t o0 = 0; o0 < outputs; o0 += k) {
      const int64_t o = std::min(o0, outputs - k);
      V r[k];
#pragma GCC unroll 16
      for (int64_t i = 0; i < k; ++i) r[i] = hn::Load(d, out + (o + i) * k);
      transpose_tile(d, r);
#pragma GCC unroll 16
      for (int64_t i = 0; i < k; ++i)
        if (i < n) hn::StoreU(r[i], d, y + (p0 + i) * j.y_plane + o);
    }
  }
#endif
}

void WindowSumsF32(const WindowSumsJob& j) { window_sums<float>(j); }
void WindowSumsF64(const WindowSumsJob& j) { window_sums<double>(j); }
size_t VectorBytes() { return hn::Lanes(hn::ScalableTag<uint8_t>()); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {

HWY_EXPORT(WindowSumsF32);
HWY_EXPORT(WindowSumsF64);
HWY_EXPORT(VectorBytes);

bool window_sums_forward(const WindowSums& w) {
  const bool f32 = w.dtype == DType::f32;
  const int64_t esize = f32 ? 4 : 8, k = std::max<int64_t>(1, int64_t(HWY_DYNAMIC_DISPATCH(VectorBytes)()) / esize);  // (1: scalar)
  if ((!f32 && w.dtype != DType::f64) || w.cells < k || w.outputs < k || int64_t(w.first.size()) != w.outputs + 1 ||
      int64_t(w.divisor.size()) != w.outputs)
    return false;
  const int64_t chunk = std::max<int64_t>(1, 8192 / (w.cells * k)) * k, chunks = (w.planes + chunk - 1) / chunk;
  auto kernel = f32 ? HWY_DYNAMIC_DISPATCH(WindowSumsF32) : HWY_DYNAMIC_DISPATCH(WindowSumsF64);
  return parallel_for(chunks, w.work, [&](int64_t i) {
    thread_local std::vector<uint64_t> block;  // 8-byte words, aligned below to 64 bytes
    block.resize(size_t((w.cells + w.outputs) * k * esize / 8 + 8));
    const int64_t p0 = i * chunk;
    WindowSumsJob j;
    j.x = w.x + p0 * w.x_plane * esize, j.y = w.y + p0 * w.y_plane * esize;
    j.planes = std::min(chunk, w.planes - p0), j.x_plane = w.x_plane, j.y_plane = w.y_plane;
    j.cells = w.cells, j.outputs = w.outputs;
    j.tap = w.tap.data(), j.first = w.first.data(), j.divisor = w.divisor.data();
    j.block = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(block.data()) + 63) & ~uintptr_t(63));
    kernel(j);
    return true;
  });
}

}  // namespace poolkit::cpu
#endif
