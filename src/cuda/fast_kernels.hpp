#pragma once
// The per-thread bodies of max and average pooling over regular, adaptive and global windows (fast_axes.hpp), in
// int32 index arithmetic. A thread makes L neighbouring channels of one cell in channels-last order (loaded and
// stored as one vector), one cell otherwise. Same results, bit for bit, as the generic functors of max_kernels.hpp
// and avg_kernels.hpp: same taps in the same order, same comparisons and sums.
#include <type_traits>

#include "fast_axes.hpp"
#include "poolkit/options.hpp"

namespace poolkit::cuda::detail {

template <class T, int L>
struct alignas(sizeof(T) * L) Lanes {
  T v[L];
};

template <int L, class T>
POOLKIT_HD inline Lanes<std::remove_const_t<T>, L> load_lanes(const View5<T, int32_t>& t, const Idx5<int32_t>& q,
                                                              int32_t a, int32_t b, int32_t d) {
  return *reinterpret_cast<const Lanes<std::remove_const_t<T>, L>*>(&t.at(q.n, q.c, a, b, d));
}

template <class T, int L>
POOLKIT_HD inline void store_lanes(const View5<T, int32_t>& t, const Idx5<int32_t>& q, const Lanes<T, L>& v) {
  *reinterpret_cast<Lanes<T, L>*>(&t.at(q.n, q.c, q.a, q.b, q.d)) = v;
}

template <class T, int L>
struct FastMaxForward {
  FastGeometry g;
  View5<const T, int32_t> x;
  View5<T, int32_t> y;
  ArgmaxView argmax;
  FastWalk walk;  // over y

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L);
    Taps<int32_t> t0 = g.ax[0].taps(q.a), t1 = g.ax[1].taps(q.b), t2 = g.ax[2].taps(q.d);
    A best[L];
    int32_t local[L];  // window-local tap of the maximum so far, -1 before the first cell
    for (int l = 0; l < L; ++l) {
      best[l] = neg_inf<A>();
      local[l] = -1;
    }
    for (int32_t j0 = t0.first; j0 < t0.last; ++j0) {
      int32_t p0 = t0.origin + j0 * t0.step;
      for (int32_t j1 = t1.first; j1 < t1.last; ++j1) {
        int32_t p1 = t1.origin + j1 * t1.step, row = (j0 * g.ax[1].kernel + j1) * g.ax[2].kernel;
        for (int32_t j2 = t2.first; j2 < t2.last; ++j2) {
          Lanes<T, L> v = load_lanes<L>(x, q, p0, p1, t2.origin + j2 * t2.step);
          for (int l = 0; l < L; ++l) {
            A val = A(v.v[l]);
            if (local[l] < 0 || val > best[l] || is_nan(val)) {
              if (val > best[l] || is_nan(val)) best[l] = val;
              local[l] = row + j2;
            }
          }
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(best[l]);
    store_lanes(y, q, out);
    if (!argmax.p) return;
    for (int l = 0; l < L; ++l) {
      int64_t v = local[l];
      if (argmax.dtype == DType::i64 && v >= 0) {  // the plane-flat cell of the local tap
        int32_t q2 = g.by_k2.div(local[l]), q1 = g.by_k1.div(q2);
        v = g.plane_flat(t0.origin + q1 * t0.step, t1.origin + (q2 - q1 * g.ax[1].kernel) * t1.step,
                         t2.origin + (local[l] - q2 * g.ax[2].kernel) * t2.step);
      }
      store_argmax<int32_t>(argmax, argmax_offset<int32_t>(argmax, q.n, q.c + l, q.a, q.b, q.d), v);
    }
  }
};

// dx from the saved argmax (either form): the sum, in increasing output order, of dy over the covering windows
// whose argmax is this cell. The first cell of each window checks that its value names a cell of the window, and
// raises *error when not.
template <class T, int L>
struct FastMaxBackward {
  FastGeometry g;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  ArgmaxView argmax;
  int* error;
  FastWalk walk;  // over dx

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L);
    const bool flat_form = argmax.dtype == DType::i64;
    const int32_t self = g.plane_flat(q.a, q.b, q.d);
    Cover<int32_t> c0 = g.ax[0].cover(q.a), c1 = g.ax[1].cover(q.b), c2 = g.ax[2].cover(q.d);
    A sum[L];
    for (int l = 0; l < L; ++l) sum[l] = 0;
    Taps<int32_t> t[3];
    for (int32_t o0 = c0.begin; o0 < c0.end; ++o0) {
      t[0] = g.ax[0].taps(o0);
      int32_t j0 = g.ax[0].tap_of(t[0], q.a);
      if (j0 < 0) continue;
      for (int32_t o1 = c1.begin; o1 < c1.end; ++o1) {
        t[1] = g.ax[1].taps(o1);
        int32_t j1 = g.ax[1].tap_of(t[1], q.b);
        if (j1 < 0) continue;
        for (int32_t o2 = c2.begin; o2 < c2.end; ++o2) {
          t[2] = g.ax[2].taps(o2);
          int32_t j2 = g.ax[2].tap_of(t[2], q.d);
          if (j2 < 0) continue;
          const int32_t code = flat_form ? self : g.local_tap(j0, j1, j2);
          const bool first = j0 == t[0].first && j1 == t[1].first && j2 == t[2].first;
          Lanes<T, L> gy = load_lanes<L>(dy, q, o0, o1, o2);
          for (int l = 0; l < L; ++l) {
            int64_t v = load_argmax<int32_t>(argmax, argmax_offset<int32_t>(argmax, q.n, q.c + l, o0, o1, o2));
            if (first && !g.names_cell(t, flat_form, v)) *error = 1;
            if (v == code) sum[l] += A(gy.v[l]);
          }
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l]);
    store_lanes(dx, q, out);
  }
};

// The average's divisor: the override, or the product of the axes' divisors (as avg_divisor).
POOLKIT_HD inline int64_t fast_divisor(const FastGeometry& g, const Taps<int32_t>* t, bool include_pad,
                                       int64_t override_div) {
  if (override_div > 0) return override_div;
  return int64_t(g.ax[0].divisor(t[0], include_pad)) * g.ax[1].divisor(t[1], include_pad) *
         g.ax[2].divisor(t[2], include_pad);
}

template <class T, int L>
struct FastAvgForward {
  FastGeometry g;
  bool include_pad = true;
  int64_t override_div = 0;
  View5<const T, int32_t> x;
  View5<T, int32_t> y;
  FastWalk walk;  // over y

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L);
    Taps<int32_t> t[3] = {g.ax[0].taps(q.a), g.ax[1].taps(q.b), g.ax[2].taps(q.d)};
    A sum[L];
    for (int l = 0; l < L; ++l) sum[l] = 0;
    for (int32_t j0 = t[0].first; j0 < t[0].last; ++j0)
      for (int32_t j1 = t[1].first; j1 < t[1].last; ++j1)
        for (int32_t j2 = t[2].first; j2 < t[2].last; ++j2) {
          Lanes<T, L> v = load_lanes<L>(x, q, t[0].origin + j0 * t[0].step, t[1].origin + j1 * t[1].step,
                                        t[2].origin + j2 * t[2].step);
          for (int l = 0; l < L; ++l) sum[l] += A(v.v[l]);
        }
    A div = A(fast_divisor(g, t, include_pad, override_div));
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l] / div);
    store_lanes(y, q, out);
  }
};

template <class T, int L>
struct FastAvgBackward {
  FastGeometry g;
  bool include_pad = true;
  int64_t override_div = 0;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  FastWalk walk;  // over dx

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L);
    Cover<int32_t> c0 = g.ax[0].cover(q.a), c1 = g.ax[1].cover(q.b), c2 = g.ax[2].cover(q.d);
    A sum[L];
    for (int l = 0; l < L; ++l) sum[l] = 0;
    Taps<int32_t> t[3];
    for (int32_t o0 = c0.begin; o0 < c0.end; ++o0) {
      t[0] = g.ax[0].taps(o0);
      if (g.ax[0].tap_of(t[0], q.a) < 0) continue;
      for (int32_t o1 = c1.begin; o1 < c1.end; ++o1) {
        t[1] = g.ax[1].taps(o1);
        if (g.ax[1].tap_of(t[1], q.b) < 0) continue;
        for (int32_t o2 = c2.begin; o2 < c2.end; ++o2) {
          t[2] = g.ax[2].taps(o2);
          if (g.ax[2].tap_of(t[2], q.d) < 0) continue;
          A div = A(fast_divisor(g, t, include_pad, override_div));
          Lanes<T, L> gy = load_lanes<L>(dy, q, o0, o1, o2);
          for (int l = 0; l < L; ++l) sum[l] += A(gy.v[l]) / div;
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l]);
    store_lanes(dx, q, out);
  }
};

// Calls f(std::integral_constant<int, L>{}) for the lane count of channel_lanes (1, 2 or 16 bytes of T).
template <class T, class F>
void with_lanes(int lanes, F&& f) {
  constexpr int wide = 16 / int(sizeof(T));
  if (lanes == wide) f(std::integral_constant<int, wide>{});
  else if (lanes == 2 && wide != 2) f(std::integral_constant<int, 2>{});
  else f(std::integral_constant<int, 1>{});
}

}  // namespace poolkit::cuda::detail
