#pragma once
// One spatial axis of a pooling window geometry. Plain data with inline arithmetic, so the CPU reference,
// the fast kernels and CUDA kernels all compute windows the same way. Build axes with the functions of
// geometry.hpp, which validate them; nothing here checks its arguments.
#include <cstdint>

#include "poolkit/config.hpp"

namespace poolkit {

enum class AxisKind : uint8_t { Regular, Adaptive, Fractional, Global };

struct Range {
  int64_t begin = 0, end = 0;  // [begin, end)
};

struct Axis {
  AxisKind kind = AxisKind::Regular;
  bool sample_in_float = true;  // fractional: compute the interval sequence in float32 (else float64)
  int64_t in = 1, out = 1;
  int64_t kernel = 1;  // taps of a window (Regular, Fractional); the largest window (Adaptive, Global)
  int64_t stride = 1, dilation = 1, pad_lo = 0, pad_hi = 0;  // Regular only
  double sample = 0;  // Fractional: the u in [0, 1) of this plane and axis

  // Input position of tap 0 of window o (may be negative in the padding).
  POOLKIT_HD int64_t origin(int64_t o) const {
    switch (kind) {
      case AxisKind::Regular: return o * stride - pad_lo;
      case AxisKind::Adaptive: return (o * in) / out;
      case AxisKind::Fractional: return fractional_start(o);
      case AxisKind::Global: return 0;
    }
    return 0;
  }
  POOLKIT_HD int64_t step() const { return kind == AxisKind::Regular ? dilation : 1; }
  // Number of taps of window o, including those that fall in the padding.
  POOLKIT_HD int64_t taps(int64_t o) const {
    if (kind == AxisKind::Adaptive) return ((o + 1) * in + out - 1) / out - (o * in) / out;
    return kind == AxisKind::Global ? in : kernel;
  }
  // Taps of window o that land inside the input: [first, last).
  POOLKIT_HD Range valid_taps(int64_t o) const {
    int64_t org = origin(o), d = step(), k = taps(o);
    int64_t first = org >= 0 ? 0 : (-org + d - 1) / d;
    int64_t last = in - org <= 0 ? 0 : (in - org + d - 1) / d;
    if (last > k) last = k;
    if (first > last) first = last;
    return {first, last};
  }
  // Input position of tap j of window o.
  POOLKIT_HD int64_t position(int64_t o, int64_t j) const { return origin(o) + j * step(); }
  // Tap of window o at input position i, or -1 when the window does not read i.
  POOLKIT_HD int64_t tap_at(int64_t o, int64_t i) const {
    int64_t rel = i - origin(o), d = step();
    if (rel < 0 || rel % d != 0) return -1;
    int64_t j = rel / d;
    return j < taps(o) ? j : -1;
  }
  // The outputs whose windows may read input position i (a superset when dilated: check tap_at).
  POOLKIT_HD Range covering(int64_t i) const {
    switch (kind) {
      case AxisKind::Regular: {
        int64_t hi = i + pad_lo;                             // o*stride <= hi
        int64_t lo = hi - (kernel - 1) * dilation;           // o*stride >= lo
        int64_t b = lo <= 0 ? 0 : (lo + stride - 1) / stride;
        int64_t e = hi < 0 ? 0 : hi / stride + 1;
        if (e > out) e = out;
        if (b > e) b = e;
        return {b, e};
      }
      case AxisKind::Adaptive: {
        int64_t b = (i * out) / in;
        int64_t e = ((i + 1) * out - 1) / in + 1;
        return {b, e < out ? e : out};
      }
      case AxisKind::Fractional: {
        // starts are non-decreasing: outputs with start in (i - kernel, i]
        int64_t b = first_start_above(i - kernel), e = first_start_above(i);
        return {b, e};
      }
      case AxisKind::Global: return {0, 1};
    }
    return {0, 0};
  }
  // Divisor of an average over window o: all taps up to the end of the right padding, or only those inside.
  POOLKIT_HD int64_t divisor(int64_t o, bool include_pad) const {
    if (!include_pad || kind != AxisKind::Regular) {
      Range r = valid_taps(o);
      return r.end - r.begin;
    }
    int64_t lim = in + pad_hi - origin(o);  // taps with position < in + pad_hi
    int64_t n = lim <= 0 ? 0 : (lim + dilation - 1) / dilation;
    return n < kernel ? n : kernel;
  }

  // Fractional max pooling's pseudo-random interval sequence: the start of window o for sample u.
  POOLKIT_HD int64_t fractional_start(int64_t o) const {
    if (o >= out - 1) return in - kernel;
    if (sample_in_float) {
      float alpha = float(in - kernel) / float(out - 1), u = float(sample);
      return int64_t((float(o) + u) * alpha) - int64_t(u * alpha);
    }
    double alpha = double(in - kernel) / double(out - 1);
    return int64_t((double(o) + sample) * alpha) - int64_t(sample * alpha);
  }

 private:
  POOLKIT_HD int64_t first_start_above(int64_t v) const {  // smallest o with fractional_start(o) > v
    int64_t lo = 0, hi = out;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (fractional_start(mid) > v) hi = mid; else lo = mid + 1;
    }
    return lo;
  }
};

}  // namespace poolkit
