#pragma once
// Helpers for the C++ tests: random tensors, layout copies, strided views, bitwise comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "poolkit/poolkit.hpp"

namespace poolkit::test {

// Calls f(index) for every logical multi-index of shape, in row-major order.
inline void for_each_index(const Shape& s, const std::function<void(const int64_t*)>& f) {
  if (s.numel() == 0) return;
  int64_t idx[kMaxRank] = {};
  for (int64_t k = 0, n = s.numel(); k < n; ++k) {
    f(idx);
    for (int i = s.rank - 1; i >= 0 && ++idx[i] == s[i]; --i) idx[i] = 0;
  }
}

inline double get(const TensorView& t, const int64_t* idx) { return load_as_double(t, offset_of(t, idx)); }
inline void set(const TensorView& t, const int64_t* idx, double v) { store_from_double(t, offset_of(t, idx), v); }

// Distinct values (no ties) in random order, spaced by `gap`, centred on zero unless `positive`.
inline Tensor distinct_tensor(DType dt, const Shape& s, uint64_t seed, bool positive = false,
                              Layout layout = Layout::ChannelsFirst, double gap = 0.25) {
  Tensor t(dt, s, layout);
  std::vector<int64_t> order(size_t(s.numel()));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  size_t k = 0;
  double shift = positive ? 1.0 : -double(order.size()) / 2;
  for_each_index(s, [&](const int64_t* i) { set(t, i, (double(order[k++]) + shift) * gap); });
  return t;
}

inline Tensor uniform_tensor(DType dt, const Shape& s, uint64_t seed, double lo = -1, double hi = 1,
                             Layout layout = Layout::ChannelsFirst) {
  Tensor t(dt, s, layout);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for_each_index(s, [&](const int64_t* i) { set(t, i, u(rng)); });
  return t;
}

inline Tensor filled(DType dt, const Shape& s, double v, Layout layout = Layout::ChannelsFirst) {
  Tensor t(dt, s, layout);
  for_each_index(s, [&](const int64_t* i) { set(t, i, v); });
  return t;
}

inline Tensor copy(const TensorView& src, Layout layout = Layout::ChannelsFirst) {
  Tensor t(src.dtype, src.shape, layout);
  for_each_index(src.shape, [&](const int64_t* i) {
    std::memcpy(static_cast<char*>(t.view().data) + offset_of(t.view(), i) * dtype_size(src.dtype),
                static_cast<const char*>(src.data) + offset_of(src, i) * dtype_size(src.dtype), size_t(dtype_size(src.dtype)));
  });
  return t;
}

// A non-contiguous view of the same logical tensor: every axis strided by 2 inside a larger buffer.
struct Strided {
  Tensor storage;
  TensorView view;
};
inline Strided strided_copy(const TensorView& src) {
  Shape big = src.shape;
  for (int i = 0; i < big.rank; ++i) big[i] = 2 * big[i] + 1;
  Strided r{filled(src.dtype, big, std::nan("")), {}};
  Strides st = r.storage.view().strides;
  for (int i = 0; i < st.rank; ++i) st[i] *= 2;
  r.view = TensorView(r.storage.view().data, src.dtype, src.shape, st);
  for_each_index(src.shape, [&](const int64_t* i) { set(r.view, i, get(src, i)); });
  return r;
}

// Same logical values, bit for bit (NaN payloads included).
inline ::testing::AssertionResult bits_equal(const TensorView& a, const TensorView& b) {
  if (a.shape != b.shape) return ::testing::AssertionFailure() << "shapes " << a.shape.str() << " vs " << b.shape.str();
  if (a.dtype != b.dtype) return ::testing::AssertionFailure() << "dtypes differ";
  int sz = dtype_size(a.dtype);
  int64_t bad = 0;
  std::string first;
  for_each_index(a.shape, [&](const int64_t* i) {
    const char* pa = static_cast<const char*>(a.data) + offset_of(a, i) * sz;
    const char* pb = static_cast<const char*>(b.data) + offset_of(b, i) * sz;
    if (std::memcmp(pa, pb, size_t(sz)) != 0 && bad++ == 0) {
      first = "at [";
      for (int k = 0; k < a.rank(); ++k) first += (k ? "," : "") + std::to_string(i[k]);
      first += "]: " + std::to_string(get(a, i)) + " vs " + std::to_string(get(b, i));
    }
  });
  if (bad) return ::testing::AssertionFailure() << bad << " cells differ, first " << first;
  return ::testing::AssertionSuccess();
}

inline double dot(const TensorView& a, const TensorView& b) {
  double s = 0;
  for_each_index(a.shape, [&](const int64_t* i) { s += get(a, i) * get(b, i); });
  return s;
}

inline Shape out_shape(const Geometry& g, const Shape& x) {
  Shape s = x;
  for (int i = 0; i < g.rank; ++i) s[i + 2] = g.axes[i].out;
  return s;
}

}  // namespace poolkit::test
