#pragma once
// The average reducer of the reference: the window sum in window order, in the accumulation type, divided by
// PyTorch's divisor (override, or the taps up to the end of the padding, or the cells read). int64 sums wrap
// around, and divide with truncation toward zero, as PyTorch's avg_pool does for int64.
#include "plane.hpp"
#include "poolkit/options.hpp"

namespace poolkit::ref::detail {

inline int64_t avg_divisor(const Geometry& g3, const AvgOptions& opt, int64_t a, int64_t b, int64_t d) {
  if (opt.divisor_override) return *opt.divisor_override;
  return g3.axes[0].divisor(a, opt.count_include_pad) * g3.axes[1].divisor(b, opt.count_include_pad) *
         g3.axes[2].divisor(d, opt.count_include_pad);
}

template <class T>
acc_t<T> window_sum(const Geometry& g3, const View5<const T>& x, int64_t n, int64_t c, int64_t a, int64_t b,
                    int64_t d) {
  acc_t<T> sum = 0;
  for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
    if constexpr (std::is_integral_v<acc_t<T>>)
      sum = acc_t<T>(uint64_t(sum) + uint64_t(x.at(n, c, t, h, w)));  // (wraps without undefined behaviour)
    else
      sum += acc_t<T>(x.at(n, c, t, h, w));
  });
  return sum;
}

template <class T>
acc_t<T> window_avg(const Geometry& g3, const AvgOptions& opt, const View5<const T>& x, int64_t n, int64_t c,
                    int64_t a, int64_t b, int64_t d) {
  return window_sum(g3, x, n, c, a, b, d) / acc_t<T>(avg_divisor(g3, opt, a, b, d));
}

}  // namespace poolkit::ref::detail
