#pragma once
// Helpers shared by the reference operators: every geometry is seen as three axes (unit axes in front), every
// tensor as a strided (N, C, T, H, W) view, every dtype through one switch.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "poolkit/error.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::ref::detail {

inline Geometry as3d(const Geometry& g) {
  Geometry r;
  r.rank = 3;
  int shift = 3 - g.rank;
  for (int i = 0; i < g.rank; ++i) r.axes[i + shift] = g.axes[i];
  return r;  // the leading axes keep Axis's defaults: in = out = kernel = 1
}

// A strided 5-D view (spatial rank padded to 3 with stride-0 axes).
template <class T>
struct View5 {
  T* data;
  int64_t n, c;
  int64_t s[5];
  View5(const TensorView& t) : data(static_cast<T*>(t.data)), n(t.shape[0]), c(t.shape[1]) {
    if (t.device != Device::CPU) fail("x", "the reference implementation reads host memory only");
    int shift = 5 - t.rank();
    for (int i = 0; i < 5; ++i) s[i] = 0;
    s[0] = t.strides[0];
    s[1] = t.strides[1];
    for (int i = 2; i < t.rank(); ++i) s[i + shift] = t.strides[i];
  }
  T& at(int64_t in, int64_t ic, int64_t a, int64_t b, int64_t d) const {
    return data[in * s[0] + ic * s[1] + a * s[2] + b * s[3] + d * s[4]];
  }
};

// The spatial sizes of a (N, C, spatial...) tensor as three, unit sizes in front.
inline std::array<int64_t, 3> spatial3(const TensorView& t) {
  std::array<int64_t, 3> s{1, 1, 1};
  for (int i = 2; i < t.rank(); ++i) s[i + 3 - t.rank()] = t.shape[i];
  return s;
}

template <class T> inline bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) return false;
  else return std::isnan(float(v));
}

// Where a running max starts: -inf, or the lowest integer (the first cell read replaces it in either case).
template <class A> constexpr A lowest() {
  if constexpr (std::is_integral_v<A>) return std::numeric_limits<A>::lowest();
  else return -std::numeric_limits<A>::infinity();
}
template <> inline bool is_nan<double>(double v) { return std::isnan(v); }

// Flat index of a cell inside its (n, c) plane: (t * H + h) * W + w.
inline int64_t flat3(const Geometry& g3, int64_t t, int64_t h, int64_t w) {
  return (t * g3.axes[1].in + h) * g3.axes[2].in + w;
}

// Calls f(element type tag) for the floating dtype of t.
template <class F>
void dispatch_float(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(float{}); return;
    case DType::f64: f(double{}); return;
    case DType::bf16: f(bfloat16{}); return;
    case DType::f16: f(float16{}); return;
    default: fail("x", std::string("unsupported dtype ") + dtype_name(t), ErrorKind::Type);
  }
}

// Calls f(element type tag) for any dtype max pooling takes: floating or integer.
template <class F>
void dispatch_max(DType t, F&& f) {
  switch (t) {
    case DType::u8: f(uint8_t{}); return;
    case DType::i8: f(int8_t{}); return;
    case DType::i16: f(int16_t{}); return;
    case DType::i32: f(int32_t{}); return;
    case DType::i64: f(int64_t{}); return;
    default: dispatch_float(t, f);
  }
}

// Visits the input cells of window (ot, oh, ow) in window order: f(t, h, w, local_tap).
template <class F>
void for_each_cell(const Geometry& g3, int64_t ot, int64_t oh, int64_t ow, F&& f) {
  const Axis &A = g3.axes[0], &B = g3.axes[1], &C = g3.axes[2];
  Range ra = A.valid_taps(ot), rb = B.valid_taps(oh), rc = C.valid_taps(ow);
  for (int64_t ja = ra.begin; ja < ra.end; ++ja)
    for (int64_t jb = rb.begin; jb < rb.end; ++jb)
      for (int64_t jc = rc.begin; jc < rc.end; ++jc)
        f(A.position(ot, ja), B.position(oh, jb), C.position(ow, jc), (ja * B.kernel + jb) * C.kernel + jc);
}

// Visits the outputs whose windows read input cell (t, h, w), in increasing output order.
template <class F>
void for_each_covering(const Geometry& g3, int64_t t, int64_t h, int64_t w, F&& f) {
  const Axis &A = g3.axes[0], &B = g3.axes[1], &C = g3.axes[2];
  Range ra = A.covering(t), rb = B.covering(h), rc = C.covering(w);
  for (int64_t oa = ra.begin; oa < ra.end; ++oa) {
    if (A.tap_at(oa, t) < 0) continue;
    for (int64_t ob = rb.begin; ob < rb.end; ++ob) {
      if (B.tap_at(ob, h) < 0) continue;
      for (int64_t oc = rc.begin; oc < rc.end; ++oc)
        if (C.tap_at(oc, w) >= 0) f(oa, ob, oc);
    }
  }
}

// Loops over every (n, c, output cell) or (n, c, input cell).
template <class F>
void for_each_output(const Geometry& g3, int64_t N, int64_t C, F&& f) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t a = 0; a < g3.axes[0].out; ++a)
        for (int64_t b = 0; b < g3.axes[1].out; ++b)
          for (int64_t d = 0; d < g3.axes[2].out; ++d) f(n, c, a, b, d);
}
template <class F>
void for_each_input(const Geometry& g3, int64_t N, int64_t C, F&& f) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t a = 0; a < g3.axes[0].in; ++a)
        for (int64_t b = 0; b < g3.axes[1].in; ++b)
          for (int64_t d = 0; d < g3.axes[2].in; ++d) f(n, c, a, b, d);
}

}  // namespace poolkit::ref::detail
