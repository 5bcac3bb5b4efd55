#pragma once
// Index arithmetic of the CUDA kernels: host/device inline functions that compile without CUDA, so the CPU test
// suite (tests/cpp/cuda_indexing_test.cpp) checks them against the reference semantics. I is the index type of a
// launch: int32_t when every count and offset fits (see fits_int32), else int64_t.
#include <cstdint>
#include <cstring>

#include "poolkit/axis.hpp"
#include "poolkit/dtype.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cuda::detail {

// ---- Element types ----
template <class A> POOLKIT_HD inline A neg_inf();
template <> POOLKIT_HD inline float neg_inf<float>() { return poolkit::detail::bits_float(0xff800000u); }
template <> POOLKIT_HD inline double neg_inf<double>() {
  uint64_t u = 0xfff0000000000000ull;
  double d;
  memcpy(&d, &u, 8);
  return d;
}
template <class A> POOLKIT_HD inline bool is_nan(A v) { return v != v; }

// 16 bytes of T, loaded or stored as one vector.
template <class T>
struct alignas(16) Vec16 {
  static constexpr int n = 16 / int(sizeof(T));
  T v[n];
};

// ---- Strided (N, C, T, H, W) views; the spatial rank padded to 3 with leading unit axes ----
template <class T, class I>
struct View5 {
  T* p = nullptr;
  I s[5] = {0, 0, 0, 0, 0};
  POOLKIT_HD T& at(I n, I c, I a, I b, I d) const { return p[n * s[0] + c * s[1] + a * s[2] + b * s[3] + d * s[4]]; }
};

template <class T, class I>
View5<T, I> view5(const TensorView& t) {
  View5<T, I> v;
  v.p = static_cast<T*>(t.data);
  if (t.rank() == 0) return v;
  int shift = 5 - t.rank();
  v.s[0] = I(t.strides[0]);
  v.s[1] = I(t.strides[1]);
  for (int i = 2; i < t.rank(); ++i) v.s[i + shift] = I(t.strides[i]);
  return v;
}

// The spatial sizes of a (N, C, spatial...) tensor as three, unit sizes in front.
struct Sizes3 {
  int64_t v[3] = {1, 1, 1};
};
inline Sizes3 spatial3(const TensorView& t) {
  Sizes3 s;
  for (int i = 2; i < t.rank(); ++i) s.v[i + 3 - t.rank()] = t.shape[i];
  return s;
}

template <class I>
void copy3(I* dst, const Sizes3& s) {
  for (int i = 0; i < 3; ++i) dst[i] = I(s.v[i]);
}

// The geometry with three axes, unit axes in front (as the reference's as3d).
inline Geometry pad3(const Geometry& g) {
  Geometry r;
  r.rank = 3;
  for (int i = 0; i < g.rank; ++i) r.axes[i + 3 - g.rank] = g.axes[i];
  return r;
}

// True when every element count and offset of the launch stays below 2^30, so int32 arithmetic cannot overflow
// (the grid-stride loop adds at most 2^28 past a valid index).
inline bool fits_int32(int64_t total, const TensorView* const* tensors, int count) {
  const int64_t lim = int64_t(1) << 30;
  if (total >= lim) return false;
  for (int k = 0; k < count; ++k) {
    const TensorView& t = *tensors[k];
    if (t.rank() == 0) continue;
    int64_t span = 0;
    for (int i = 0; i < t.rank(); ++i) {
      int64_t st = t.strides[i] < 0 ? -t.strides[i] : t.strides[i];
      if (t.shape[i] > 0) span += (t.shape[i] - 1) * st;
      if (t.shape[i] >= lim || st >= lim || span >= lim) return false;
    }
  }
  return true;
}

// ---- Thread index -> (n, c, o0, o1, o2) ----
// Threads walk the tensor they write in its memory order so neighbouring threads touch neighbouring cells:
// (n, c, o0, o1, o2) row-major for channels-first, (n, o0, o1, o2, c) for channels-last.
template <class I>
struct Idx5 {
  I n, c, a, b, d;
};

template <class I>
POOLKIT_HD inline Idx5<I> decompose(I flat, I C, I A, I B, I D, bool channels_last) {
  Idx5<I> r;
  if (channels_last) {
    r.c = flat % C; flat /= C;
    r.d = flat % D; flat /= D;
    r.b = flat % B; flat /= B;
    r.a = flat % A;
    r.n = flat / A;
  } else {
    r.d = flat % D; flat /= D;
    r.b = flat % B; flat /= B;
    r.a = flat % A; flat /= A;
    r.c = flat % C;
    r.n = flat / C;
  }
  return r;
}

// Whether threads should walk t in channels-last order: its channel stride is the smallest non-unit one.
inline bool walks_channels_last(const TensorView& t) {
  if (t.rank() < 3 || t.shape[1] <= 1 || t.strides[1] != 1) return false;
  for (int i = 2; i < t.rank(); ++i)
    if (t.shape[i] > 1 && t.strides[i] <= 1) return false;
  return true;
}

// ---- Window arithmetic in the launch's index type ----
// Taps [first, last) of window o that land inside the input, and the position of tap 0: Axis::valid_taps and
// Axis::origin, without 64-bit division on the common undilated regular axis.
template <class I>
struct Taps {
  I origin, first, last, step;
};

template <class I>
POOLKIT_HD inline Taps<I> taps_of(const Axis& ax, I o) {
  if (ax.kind == AxisKind::Regular && ax.dilation == 1) {
    I org = o * I(ax.stride) - I(ax.pad_lo);
    I first = org < 0 ? -org : I(0);
    I last = I(ax.in) - org;
    if (last > I(ax.kernel)) last = I(ax.kernel);
    if (last < 0) last = 0;
    if (first > last) first = last;
    return {org, first, last, I(1)};
  }
  Range r = ax.valid_taps(o);
  return {I(ax.origin(o)), I(r.begin), I(r.end), I(ax.step())};
}

// The outputs whose windows may read input position i (Axis::covering); `exact` tells whether every output of
// the range reads i (else check tap_at).
template <class I>
struct Cover {
  I begin, end;
  bool exact;
};

template <class I>
POOLKIT_HD inline Cover<I> cover_of(const Axis& ax, I i) {
  if (ax.kind == AxisKind::Regular && ax.dilation == 1) {
    I hi = i + I(ax.pad_lo);
    I lo = hi - I(ax.kernel - 1);
    I s = I(ax.stride);
    I b = lo <= 0 ? I(0) : (lo + s - 1) / s;
    I e = hi < 0 ? I(0) : hi / s + 1;
    if (e > I(ax.out)) e = I(ax.out);
    if (b > e) b = e;
    return {b, e, true};
  }
  Range r = ax.covering(i);
  return {I(r.begin), I(r.end), false};
}

// Axis::divisor, without 64-bit division on the undilated regular axis.
template <class I>
POOLKIT_HD inline I divisor_of(const Axis& ax, I o, bool include_pad) {
  if (ax.kind != AxisKind::Regular || ax.dilation != 1) return I(ax.divisor(o, include_pad));
  if (!include_pad) {
    Taps<I> t = taps_of<I>(ax, o);
    return t.last - t.first;
  }
  I lim = I(ax.in) + I(ax.pad_hi) - (o * I(ax.stride) - I(ax.pad_lo));  // taps before the end of the padding
  if (lim < 0) lim = 0;
  return lim < I(ax.kernel) ? lim : I(ax.kernel);
}

// Whether window o reads input position i; `exact` ranges skip the check.
template <class I>
POOLKIT_HD inline bool reads(const Axis& ax, const Cover<I>& cv, I o, I i) {
  return cv.exact || ax.tap_at(o, i) >= 0;
}

// Flat index of a cell in its (n, c) plane, and the window-local tap of taps (j0, j1, j2).
template <class I>
POOLKIT_HD inline I plane_flat(const Geometry& g3, I t, I h, I w) {
  return (t * I(g3.axes[1].in) + h) * I(g3.axes[2].in) + w;
}
template <class I>
POOLKIT_HD inline I local_tap(const Geometry& g3, I j0, I j1, I j2) {
  return (j0 * I(g3.axes[1].kernel) + j1) * I(g3.axes[2].kernel) + j2;
}

// A geometry whose fractional axes take the samples of one plane (3 values in axis order; may be null).
POOLKIT_HD inline Geometry plane_geometry(const Geometry& g3, const double* samples, int64_t plane) {
  Geometry g = g3;
  if (samples)
    for (int i = 0; i < 3; ++i) g.axes[i].sample = samples[plane * 3 + i];
  return g;
}

// ---- Argmax storage ----
struct ArgmaxView {
  void* p = nullptr;
  DType dtype = DType::i64;
  int64_t s[5] = {0, 0, 0, 0, 0};
};

inline ArgmaxView argmax_view(const TensorView& t) {
  ArgmaxView a;
  a.p = t.data;
  a.dtype = t.dtype;
  View5<char, int64_t> v = view5<char, int64_t>(t);
  for (int i = 0; i < 5; ++i) a.s[i] = v.s[i];
  return a;
}

template <class I>
POOLKIT_HD inline I argmax_offset(const ArgmaxView& a, I n, I c, I o0, I o1, I o2) {
  return n * I(a.s[0]) + c * I(a.s[1]) + o0 * I(a.s[2]) + o1 * I(a.s[3]) + o2 * I(a.s[4]);
}

template <class I>
POOLKIT_HD inline void store_argmax(const ArgmaxView& a, I off, int64_t v) {
  switch (a.dtype) {
    case DType::i64: static_cast<int64_t*>(a.p)[off] = v; return;
    case DType::i32: static_cast<int32_t*>(a.p)[off] = int32_t(v); return;
    case DType::i16: static_cast<int16_t*>(a.p)[off] = int16_t(v); return;
    default: static_cast<uint8_t*>(a.p)[off] = uint8_t(v); return;
  }
}

template <class I>
POOLKIT_HD inline int64_t load_argmax(const ArgmaxView& a, I off) {
  switch (a.dtype) {
    case DType::i64: return static_cast<const int64_t*>(a.p)[off];
    case DType::i32: return static_cast<const int32_t*>(a.p)[off];
    case DType::i16: return static_cast<const int16_t*>(a.p)[off];
    default: return static_cast<const uint8_t*>(a.p)[off];
  }
}

// The plane-flat cell named by a stored argmax v of window (o0, o1, o2): v is plane-flat (int64) or window-local
// (the compact forms). -1 when v does not name a cell inside that window (as the reference's plane_argmax).
template <class I>
POOLKIT_HD inline I argmax_cell(const Geometry& g3, bool flat_form, int64_t v, I o0, I o1, I o2) {
  I o[3] = {o0, o1, o2};
  int64_t pos[3];
  if (v < 0) return -1;
  if (flat_form) {
    int64_t in1 = g3.axes[1].in, in2 = g3.axes[2].in;
    if (v >= g3.axes[0].in * in1 * in2) return -1;
    pos[2] = v % in2;
    pos[1] = (v / in2) % in1;
    pos[0] = v / (in2 * in1);
  } else {
    int64_t rest = v;
    for (int i = 2; i >= 0; --i) {
      int64_t k = g3.axes[i].kernel;
      int64_t j = rest % k;
      rest /= k;
      pos[i] = g3.axes[i].position(o[i], j);
    }
    if (rest != 0) return -1;
  }
  for (int i = 0; i < 3; ++i) {
    if (pos[i] < 0 || pos[i] >= g3.axes[i].in) return -1;
    Taps<I> t = taps_of<I>(g3.axes[i], o[i]);
    int64_t j = g3.axes[i].tap_at(o[i], pos[i]);
    if (j < t.first || j >= t.last) return -1;
  }
  return plane_flat<I>(g3, I(pos[0]), I(pos[1]), I(pos[2]));
}

// ---- The tiled fast path ----
// Windows that tile the last axis exactly (kernel == stride == 2, no padding or dilation, in == 2 * out) on
// contiguous channels-first tensors: one thread makes Vec16<T>::n neighbouring outputs from two 16-byte loads
// per input row. `align` is the byte alignment of the base pointers.
inline bool tiled2_eligible(const Geometry& g3, const TensorView& x, const TensorView& y, int elem_size) {
  const Axis& w = g3.axes[2];
  if (w.kind != AxisKind::Regular || w.kernel != 2 || w.stride != 2 || w.dilation != 1 || w.pad_lo != 0 ||
      w.pad_hi != 0 || w.in != 2 * w.out)
    return false;
  if (!x.is_contiguous() || !y.is_contiguous()) return false;
  int64_t v = 16 / elem_size;
  if (w.out % v != 0) return false;
  return reinterpret_cast<uintptr_t>(x.data) % 16 == 0 && reinterpret_cast<uintptr_t>(y.data) % 16 == 0;
}

}  // namespace poolkit::cuda::detail
