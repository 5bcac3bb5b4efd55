#pragma once
// The max reducer of the reference: PyTorch's rule (the running max starts at -inf, or the lowest integer, and the
// index at the first cell read; a cell replaces it when it is greater or NaN), so the first maximum wins and the
// last NaN is kept.
// Shared by max, adaptive, global, fractional and mixed pooling.
#include <limits>
#include <vector>

#include "plane.hpp"

namespace poolkit::ref::detail {

template <class T>
struct WindowMax {
  acc_t<T> value;
  int64_t flat;   // index in the (n, c) input plane
  int64_t local;  // window-local tap
};

template <class T>
WindowMax<T> window_max(const Geometry& g3, const View5<const T>& x, int64_t n, int64_t c, int64_t a, int64_t b,
                        int64_t d) {
  WindowMax<T> m{lowest<acc_t<T>>(), -1, -1};
  for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t local) {
    acc_t<T> v = acc_t<T>(x.at(n, c, t, h, w));
    if (m.flat < 0 || v > m.value || is_nan(v)) {
      if (v > m.value || is_nan(v)) m.value = v;  // the first cell sets the index even when it is -inf
      m.flat = flat3(g3, t, h, w);
      m.local = local;
    }
  });
  return m;
}

inline int64_t load_index(const TensorView& t, int64_t off) {
  switch (t.dtype) {
    case DType::i64: return static_cast<const int64_t*>(t.data)[off];
    case DType::i32: return static_cast<const int32_t*>(t.data)[off];
    case DType::i16: return static_cast<const int16_t*>(t.data)[off];
    case DType::u8: return static_cast<const uint8_t*>(t.data)[off];
    case DType::i8: return static_cast<const int8_t*>(t.data)[off];
    default: fail("argmax", "must be an integer tensor", ErrorKind::Type);
  }
}

inline void store_index(const TensorView& t, int64_t off, int64_t v) {
  switch (t.dtype) {
    case DType::i64: static_cast<int64_t*>(t.data)[off] = v; return;
    case DType::i32: static_cast<int32_t*>(t.data)[off] = int32_t(v); return;
    case DType::i16: static_cast<int16_t*>(t.data)[off] = int16_t(v); return;
    case DType::u8: static_cast<uint8_t*>(t.data)[off] = uint8_t(v); return;
    default: fail("argmax", "must be an integer tensor", ErrorKind::Type);
  }
}

inline int64_t offset5(const TensorView& t, int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
  int shift = 5 - t.rank();
  int64_t idx[5] = {n, c, a, b, d};
  int64_t off = n * t.strides[0] + c * t.strides[1];
  for (int i = 2; i < t.rank(); ++i) off += idx[i + shift] * t.strides[i];
  return off;
}

// Max forward for geometries that may differ per (n, c) plane: plane_geometry(n, c) returns the 3-axis one.
template <class PlaneGeometry>
void max_forward(const PlaneGeometry& plane_geometry, const TensorView& x, const TensorView& y,
                 const TensorView& argmax) {
  dispatch_max(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    View5<const T> xv(x);
    View5<T> yv(y);
    for (int64_t n = 0; n < xv.n; ++n)
      for (int64_t c = 0; c < xv.c; ++c) {
        Geometry g3 = plane_geometry(n, c);
        for_each_output(g3, 1, 1, [&](int64_t, int64_t, int64_t a, int64_t b, int64_t d) {
          WindowMax<T> m = window_max(g3, xv, n, c, a, b, d);
          yv.at(n, c, a, b, d) = T(m.value);
          if (argmax.data)
            store_index(argmax, offset5(argmax, n, c, a, b, d), argmax.dtype == DType::i64 ? m.flat : m.local);
        });
      }
  });
}

// The flat argmax of every output of plane (n, c): from the saved argmax in either form, or recomputed.
template <class T>
std::vector<int64_t> plane_argmax(const Geometry& g3, const TensorView& argmax, const View5<const T>& x,
                                  int64_t n, int64_t c) {
  std::vector<int64_t> flat;
  int64_t cells = g3.axes[0].in * g3.axes[1].in * g3.axes[2].in;
  for_each_output(g3, 1, 1, [&](int64_t, int64_t, int64_t a, int64_t b, int64_t d) {
    if (!argmax.data) {
      flat.push_back(window_max(g3, x, n, c, a, b, d).flat);
      return;
    }
    int64_t v = load_index(argmax, offset5(argmax, n, c, a, b, d));
    int64_t o[3] = {a, b, d}, pos[3];
    if (argmax.dtype == DType::i64) {
      if (v < 0 || v >= cells)
        fail("argmax", "index " + std::to_string(v) + " is outside the input plane of " + std::to_string(cells) +
                           " cells", ErrorKind::Index);
      pos[2] = v % g3.axes[2].in;
      pos[1] = (v / g3.axes[2].in) % g3.axes[1].in;
      pos[0] = v / (g3.axes[2].in * g3.axes[1].in);
    } else {
      int64_t rest = v;
      for (int i = 2; i >= 0; --i) {
        int64_t j = rest % g3.axes[i].kernel;
        rest /= g3.axes[i].kernel;
        pos[i] = g3.axes[i].position(o[i], j);
      }
      if (v < 0 || rest != 0) pos[0] = -1;
    }
    for (int i = 0; i < 3; ++i) {
      Range r = g3.axes[i].valid_taps(o[i]);
      int64_t j = pos[i] < 0 || pos[i] >= g3.axes[i].in ? -1 : g3.axes[i].tap_at(o[i], pos[i]);
      if (j < r.begin || j >= r.end)
        fail("argmax", "value " + std::to_string(v) + " does not name a cell inside its window", ErrorKind::Index);
    }
    flat.push_back(flat3(g3, pos[0], pos[1], pos[2]));
  });
  return flat;
}

// dx[i] = sum of dy[o] over the outputs o covering i whose argmax is i, in increasing o.
template <class PlaneGeometry>
void max_backward(const PlaneGeometry& plane_geometry, const TensorView& dy, const TensorView& argmax,
                  const TensorView& x, const TensorView& dx) {
  dispatch_float(dy.dtype, [&](auto tag) {
    using T = decltype(tag);
    View5<const T> xv(x.data ? x : dx), dyv(dy);
    View5<T> dxv(dx);
    for (int64_t n = 0; n < dxv.n; ++n)
      for (int64_t c = 0; c < dxv.c; ++c) {
        Geometry g3 = plane_geometry(n, c);
        std::vector<int64_t> am = plane_argmax<T>(g3, argmax, xv, n, c);
        for_each_input(g3, 1, 1, [&](int64_t, int64_t, int64_t t, int64_t h, int64_t w) {
          int64_t self = flat3(g3, t, h, w);
          acc_t<T> sum = 0;
          for_each_covering(g3, t, h, w, [&](int64_t a, int64_t b, int64_t d) {
            if (am[(a * g3.axes[1].out + b) * g3.axes[2].out + d] == self) sum += acc_t<T>(dyv.at(n, c, a, b, d));
          });
          dxv.at(n, c, t, h, w) = T(sum);
        });
      }
  });
}

}  // namespace poolkit::ref::detail
