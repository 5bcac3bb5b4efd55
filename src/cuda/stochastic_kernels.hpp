#pragma once
// The per-thread bodies of stochastic pooling (see max_kernels.hpp for the scheme). Draws come from
// poolkit/rng.hpp with the counter the reference uses (the flat output index), so CPU and GPU pick the same cells.
#include "avg_kernels.hpp"
#include "poolkit/rng.hpp"

namespace poolkit::cuda::detail {

// Training: the plane-flat cell drawn for window (o0, o1, o2) of plane (n, c), as the reference's drawn_cell.
template <class T, class I>
POOLKIT_HD inline I drawn_cell(const Geometry& g, uint64_t seed, const View5<const T, I>& x, I n, I c, I C, I o0,
                               I o1, I o2) {
  using A = acc_t<T>;
  A total = 0;
  I first = -1, last_positive = -1;
  for_window<I>(g, o0, o1, o2, [&](I a, I b, I d) {
    A v = A(x.at(n, c, a, b, d));
    if (first < 0) first = plane_flat<I>(g, a, b, d);
    if (v > 0) { total += v; last_positive = plane_flat<I>(g, a, b, d); }
  });
  if (!(total > 0)) return first;
  uint64_t counter = uint64_t(((int64_t(n) * C + c) * g.axes[0].out + o0) * g.axes[1].out * g.axes[2].out +
                              int64_t(o1) * g.axes[2].out + o2);
  A target = A(uniform01(seed, counter)) * total;
  A run = 0;
  I pick = last_positive;
  bool found = false;
  for_window<I>(g, o0, o1, o2, [&](I a, I b, I d) {
    A v = A(x.at(n, c, a, b, d));
    if (found || !(v > 0)) return;
    run += v;
    if (run > target) { pick = plane_flat<I>(g, a, b, d); found = true; }
  });
  return pick;
}

// Inference: sum(w * x) and sum(w) with w = max(x, 0).
template <class T, class I>
POOLKIT_HD inline void weighted_sums(const Geometry& g, const View5<const T, I>& x, I n, I c, I o0, I o1, I o2,
                                     acc_t<T>& num, acc_t<T>& den) {
  num = 0;
  den = 0;
  for_window<I>(g, o0, o1, o2, [&](I a, I b, I d) {
    acc_t<T> v = acc_t<T>(x.at(n, c, a, b, d));
    if (v > 0) { num += v * v; den += v; }
  });
}

template <class T, class I>
struct StochasticForward {
  Geometry g;
  bool training;
  uint64_t seed;
  View5<const T, I> x;
  View5<T, I> y;
  I C = 0, O[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], channels_last);
    if (training) {
      I f = drawn_cell<T, I>(g, seed, x, q.n, q.c, C, q.a, q.b, q.d);
      I in1 = I(g.axes[1].in), in2 = I(g.axes[2].in);
      y.at(q.n, q.c, q.a, q.b, q.d) = x.at(q.n, q.c, f / (in1 * in2), (f / in2) % in1, f % in2);
    } else {
      A num, den;
      weighted_sums<T, I>(g, x, q.n, q.c, q.a, q.b, q.d, num, den);
      y.at(q.n, q.c, q.a, q.b, q.d) = T(den > 0 ? num / den : A(0));
    }
  }
};

template <class T, class I>
struct StochasticBackward {
  Geometry g;
  bool training;
  uint64_t seed;
  View5<const T, I> dy, x;
  View5<T, I> dx;
  I C = 0, In[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    I self = plane_flat<I>(g, q.a, q.b, q.d);
    A xi = A(x.at(q.n, q.c, q.a, q.b, q.d)), sum = 0;
    for_covering<I>(g, q.a, q.b, q.d, [&](I o0, I o1, I o2) {
      A gy = A(dy.at(q.n, q.c, o0, o1, o2));
      if (training) {
        if (drawn_cell<T, I>(g, seed, x, q.n, q.c, C, o0, o1, o2) == self) sum += gy;
        return;
      }
      A num, den;
      weighted_sums<T, I>(g, x, q.n, q.c, o0, o1, o2, num, den);
      if (den > 0 && xi > 0) sum += gy * (A(2) * xi - num / den) / den;
    });
    dx.at(q.n, q.c, q.a, q.b, q.d) = T(sum);
  }
};

}  // namespace poolkit::cuda::detail
