#pragma once
// What the fast CPU drivers share: tensors seen as strided (N, C, T, H, W) views, geometries as three axes,
// per-axis window tables computed once from axis.hpp, argmax forms, and the thread loop.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "kernels.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"
#include "poolkit/threads.hpp"

namespace poolkit::cpu {

// Outputs beyond half the L3 are not read back soon: their stores go past the cache (streaming stores; see
// simd_forward for the input's share). Tests lower the threshold to reach those paths on small tensors.
inline std::atomic<int64_t> stream_threshold_bytes{int64_t(16) << 20};
inline bool past_cache(int64_t bytes) { return bytes > stream_threshold_bytes.load(std::memory_order_relaxed); }
// Whether the page holding p was never written (a fresh mapping: the kernel zeroes each page on its first write,
// leaving its lines in the cache, where ordinary stores then find them and streaming stores must evict them).
bool untouched_page(const void* p);

// An axis the 3x3 stride-2 kernels of channels-first planes take (kernels_k3s2*.cpp): windows of 3 taps, stride 2,
// dilation 1, padding 0 or 1 before it (the last bound holds for every geometry poolkit builds: its last window
// reads a cell; k3s2_layout counts on it).
inline bool k3s2_axis(const Axis& a) {
  return a.kind == AxisKind::Regular && a.kernel == 3 && a.stride == 2 && a.dilation == 1 &&
         (a.pad_lo == 0 || a.pad_lo == 1) && a.out <= (a.in + a.pad_lo + 1) / 2;
}

inline Geometry as3d(const Geometry& g) {
  Geometry r;
  r.rank = 3;
  for (int i = 0; i < g.rank; ++i) r.axes[i + 3 - g.rank] = g.axes[i];
  return r;
}

// A tensor as (N, C, T, H, W) with element strides; unit spatial axes in front get stride 0.
struct View5 {
  char* data = nullptr;
  int esize = 0;
  int64_t s[5] = {0, 0, 0, 0, 0};
  View5() = default;
  explicit View5(const TensorView& t) : data(static_cast<char*>(t.data)), esize(dtype_size(t.dtype)) {
    s[0] = t.strides[0];
    s[1] = t.strides[1];
    for (int i = 2; i < t.rank(); ++i) s[i + 5 - t.rank()] = t.strides[i];
  }
  bool defined() const { return data != nullptr; }
  int64_t offset(int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) const {
    return n * s[0] + c * s[1] + a * s[2] + b * s[3] + d * s[4];
  }
  template <class T> T* at(int64_t off) const { return reinterpret_cast<T*>(data + off * esize); }
  bool same_strides(const View5& o) const {
    for (int i = 0; i < 5; ++i) if (s[i] != o.s[i]) return false;
    return true;
  }
};

// The element step between consecutive planes p = n * C + c of v (channels-first planes), or -1 when they are
// not evenly spaced.
inline int64_t plane_step(const View5& v, int64_t N, int64_t C) {
  if (C == 1) return v.s[0];
  return N == 1 || v.s[0] == C * v.s[1] ? v.s[1] : -1;
}

// Are the cells of a (T, H, W) plane of v at offsets 0, 1, 2, ... from its first?
inline bool cells_in_a_row(const View5& v, int64_t T, int64_t H, int64_t W) {
  return v.s[4] == 1 && (H == 1 || v.s[3] == W) && (T == 1 || v.s[2] == H * W);
}

inline bool non_negative_strides(const TensorView& t) {
  for (int i = 0; i < t.rank(); ++i) if (t.strides[i] < 0) return false;
  return true;
}
// Offset of the last element (strides non-negative).
inline int64_t extent(const TensorView& t) {
  int64_t e = 0;
  for (int i = 0; i < t.rank(); ++i) e += (t.shape[i] - 1) * t.strides[i];
  return e;
}

// Per output of one axis: the origin, the valid taps [first, last), and the range of outputs whose window is
// whole (every tap inside, as many taps as the kernel) for a Regular axis.
struct AxisTable {
  Axis axis;
  std::vector<int64_t> origin, first, last;
  int64_t full_begin = 0, full_end = 0;
  explicit AxisTable(const Axis& a) : axis(a) {
    origin.resize(a.out);
    first.resize(a.out);
    last.resize(a.out);
    bool seen = false;
    for (int64_t o = 0; o < a.out; ++o) {
      Range r = a.valid_taps(o);
      origin[o] = a.origin(o);
      first[o] = r.begin;
      last[o] = r.end;
      bool full = a.kind == AxisKind::Regular && r.begin == 0 && r.end == a.kernel;
      if (full && !seen) full_begin = o, seen = true;
      if (full) full_end = o + 1;
    }
  }
  int64_t pos(int64_t o, int64_t j) const { return origin[o] + j * axis.step(); }
};

struct Tables {
  AxisTable t, h, w;
  explicit Tables(const Geometry& g3) : t(g3.axes[0]), h(g3.axes[1]), w(g3.axes[2]) {}
  int64_t local(int64_t jt, int64_t jh, int64_t jw) const {
    return (jt * h.axis.kernel + jh) * w.axis.kernel + jw;
  }
  int64_t flat(int64_t t_, int64_t h_, int64_t w_) const { return (t_ * h.axis.in + h_) * w.axis.in + w_; }
};

inline IndexForm index_form(const TensorView& am) {
  if (!am.data) return IndexForm::None;
  switch (am.dtype) {
    case DType::u8: return IndexForm::U8;
    case DType::i16: return IndexForm::I16;
    case DType::i32: return IndexForm::I32;
    case DType::i64: return IndexForm::I64;
    default: return IndexForm::None;
  }
}

// Runs f(i) for i in [0, n) on poolkit's threads; f returns false to report a failure (then the call does).
// `elements` (cells read and written in all) keeps small jobs on the calling thread, where waking others
// would cost more than the work.
template <class F>
bool parallel_for(int64_t n, int64_t elements, F&& f) {
  bool ok = true;
  // inside another parallel_for (blocks of a 16-bit tensor) the work stays on the thread that has it
  int threads = elements < (int64_t(1) << 16) || omp_in_parallel() ? 1 : num_threads();
  const int64_t grain = std::max<int64_t>(1, n / (int64_t(threads) * 32));  // dynamic: a preempted thread must not hold up the rest
#pragma omp parallel for num_threads(threads) schedule(dynamic, grain) reduction(&& : ok) if (threads > 1)
  for (int64_t i = 0; i < n; ++i) ok = f(i) && ok;
  return ok;
}

}  // namespace poolkit::cpu
