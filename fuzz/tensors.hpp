#pragma once
// Small owned tensors for the fuzz targets: any layout (channels-first, channels-last, or a permuted view with
// gaps between elements), filled from fuzz bytes, poisoned before a run, compared cell by cell afterwards.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "poolkit/tensor.hpp"

namespace fuzz {

using namespace poolkit;

enum class LayoutKind : uint8_t { ChannelsFirst, ChannelsLast, Strided };

struct Buffer {
  std::vector<unsigned char> bytes;
  TensorView view;  // defined views only; gaps in `bytes` are not cells
};

// Calls f(offset in elements) for every cell of v in logical order.
template <class F>
void for_each_offset(const TensorView& v, F&& f) {
  int64_t total = v.numel();
  int64_t idx[kMaxRank] = {};
  for (int64_t k = 0; k < total; ++k) {
    f(offset_of(v, idx));
    for (int i = v.rank() - 1; i >= 0 && ++idx[i] == v.shape[i]; --i) idx[i] = 0;
  }
}

inline Buffer make(DType t, const Shape& shape, LayoutKind layout, FuzzedDataProvider& f) {
  Buffer b;
  Strides st;
  if (layout == LayoutKind::Strided) {
    std::vector<int> order(shape.rank);
    std::iota(order.begin(), order.end(), 0);
    for (int i = shape.rank - 1; i > 0; --i) std::swap(order[i], order[f.ConsumeIntegralInRange<int>(0, i)]);
    st.rank = shape.rank;
    int64_t s = f.ConsumeIntegralInRange<int64_t>(1, 2);
    for (int k = shape.rank - 1; k >= 0; --k) {
      st[order[k]] = s;
      s *= std::max<int64_t>(shape[order[k]], 1) + f.ConsumeIntegralInRange<int64_t>(0, 1);
    }
  } else {
    st = contiguous_strides(shape, layout == LayoutKind::ChannelsLast ? Layout::ChannelsLast : Layout::ChannelsFirst);
  }
  int64_t extent = 1;
  bool empty = shape.numel() == 0;
  for (int i = 0; i < shape.rank && !empty; ++i) extent += (shape[i] - 1) * st[i];
  b.bytes.assign(size_t(extent) * dtype_size(t) + 8, 0);
  b.view = TensorView(b.bytes.data(), t, shape, st);
  return b;
}

// A copy of b's cells in the channels-first contiguous layout.
inline Buffer contiguous_copy(const Buffer& b) {
  Buffer c;
  int es = dtype_size(b.view.dtype);
  c.bytes.assign(size_t(b.view.numel()) * es + 8, 0);
  c.view = TensorView(c.bytes.data(), b.view.dtype, b.view.shape);
  int64_t k = 0;
  for_each_offset(b.view, [&](int64_t off) {
    std::memcpy(c.bytes.data() + k++ * es, static_cast<const char*>(b.view.data) + off * es, es);
  });
  return c;
}

// A value from one fuzz byte: multiples of 1/8 in [-15, 15] (exact in every dtype, so sums are exact in any
// order), ties, signed zeros, infinities and NaN.
inline double value_of(uint8_t byte, bool non_negative) {
  double v;
  if (byte == 250) v = std::numeric_limits<double>::quiet_NaN();
  else if (byte == 251) v = std::numeric_limits<double>::infinity();
  else if (byte == 252) v = -std::numeric_limits<double>::infinity();
  else if (byte == 253) v = -0.0;
  else v = (double(byte % 241) - 120.0) / 8.0;
  return non_negative && !std::isnan(v) ? std::fabs(v) : v;
}

inline void fill(const Buffer& b, FuzzedDataProvider& f, bool non_negative, bool finite = false) {
  for_each_offset(b.view, [&](int64_t off) {
    double v = value_of(f.ConsumeIntegral<uint8_t>(), non_negative);
    if (finite && !std::isfinite(v)) v = 1.0;
    store_from_double(b.view, off, v);
  });
}

// Fills every byte (cells and gaps) with a pattern: a NaN with a payload no operator computes for floating
// dtypes, a byte pattern for integers. Two different patterns let a caller tell an unwritten cell.
inline void poison(Buffer& b, int which) {
  switch (b.view.dtype) {
    case DType::f32: {
      uint32_t p = which ? 0x7fa5a5a5u : 0xffb4b4b4u;
      for (size_t i = 0; i + 4 <= b.bytes.size(); i += 4) std::memcpy(&b.bytes[i], &p, 4);
      break;
    }
    case DType::f64: {
      uint64_t p = which ? 0x7ffda5a5a5a5a5a5ull : 0xfffcb4b4b4b4b4b4ull;
      for (size_t i = 0; i + 8 <= b.bytes.size(); i += 8) std::memcpy(&b.bytes[i], &p, 8);
      break;
    }
    case DType::bf16: case DType::f16: {
      uint16_t p = b.view.dtype == DType::bf16 ? (which ? 0x7fa5 : 0xffb4) : (which ? 0x7e5a : 0xfe4b);
      for (size_t i = 0; i + 2 <= b.bytes.size(); i += 2) std::memcpy(&b.bytes[i], &p, 2);
      break;
    }
    default: std::memset(b.bytes.data(), which ? 0xa5 : 0x5a, b.bytes.size());
  }
}

inline bool same_bits(const TensorView& a, int64_t oa, const TensorView& b, int64_t ob) {
  int es = dtype_size(a.dtype);
  return std::memcmp(static_cast<const char*>(a.data) + oa * es, static_cast<const char*>(b.data) + ob * es, es) == 0;
}

// The offsets of a view's cells in logical order.
inline std::vector<int64_t> offsets(const TensorView& v) {
  std::vector<int64_t> o;
  for_each_offset(v, [&](int64_t off) { o.push_back(off); });
  return o;
}

}  // namespace fuzz
