#pragma once
// The per-thread bodies of average, Lp and mixed pooling (see max_kernels.hpp for the scheme). Sums run in
// window order in acc_t<T>, as the reference does, so results differ from it only by the device's own rounding
// of pow/sqrt and contractions.
#include <cmath>

#include "max_kernels.hpp"
#include "poolkit/options.hpp"

namespace poolkit::cuda::detail {

// The divisor of window (o0, o1, o2): the override, or per axis the taps up to the end of the padding or the
// cells read. `override_div` is 0 when not given.
template <class I>
POOLKIT_HD inline int64_t avg_divisor(const Geometry& g, bool include_pad, int64_t override_div, I o0, I o1, I o2) {
  if (override_div > 0) return override_div;
  return int64_t(divisor_of<I>(g.axes[0], o0, include_pad)) * divisor_of<I>(g.axes[1], o1, include_pad) *
         divisor_of<I>(g.axes[2], o2, include_pad);
}

// Calls f(p0, p1, p2) for the input cells of window (o0, o1, o2) in window order.
template <class I, class F>
POOLKIT_HD inline void for_window(const Geometry& g, I o0, I o1, I o2, F&& f) {
  Taps<I> t0 = taps_of<I>(g.axes[0], o0), t1 = taps_of<I>(g.axes[1], o1), t2 = taps_of<I>(g.axes[2], o2);
  for (I j0 = t0.first; j0 < t0.last; ++j0)
    for (I j1 = t1.first; j1 < t1.last; ++j1)
      for (I j2 = t2.first; j2 < t2.last; ++j2)
        f(t0.origin + j0 * t0.step, t1.origin + j1 * t1.step, t2.origin + j2 * t2.step);
}

// Calls f(o0, o1, o2) for the outputs whose windows read input cell (i0, i1, i2), in increasing output order.
template <class I, class F>
POOLKIT_HD inline void for_covering(const Geometry& g, I i0, I i1, I i2, F&& f) {
  Cover<I> c0 = cover_of<I>(g.axes[0], i0), c1 = cover_of<I>(g.axes[1], i1), c2 = cover_of<I>(g.axes[2], i2);
  for (I o0 = c0.begin; o0 < c0.end; ++o0) {
    if (!reads<I>(g.axes[0], c0, o0, i0)) continue;
    for (I o1 = c1.begin; o1 < c1.end; ++o1) {
      if (!reads<I>(g.axes[1], c1, o1, i1)) continue;
      for (I o2 = c2.begin; o2 < c2.end; ++o2)
        if (reads<I>(g.axes[2], c2, o2, i2)) f(o0, o1, o2);
    }
  }
}

template <class T, class I>
POOLKIT_HD inline acc_t<T> window_sum(const Geometry& g, const View5<const T, I>& x, I n, I c, I o0, I o1, I o2) {
  acc_t<T> sum = 0;
  for_window<I>(g, o0, o1, o2, [&](I p0, I p1, I p2) { sum += acc_t<T>(x.at(n, c, p0, p1, p2)); });
  return sum;
}

struct AvgParams {
  bool include_pad = true;
  int64_t override_div = 0;
};
inline AvgParams avg_params(const AvgOptions& o) { return {o.count_include_pad, o.divisor_override.value_or(0)}; }

template <class T, class I>
struct AvgForward {
  Geometry g;
  AvgParams opt;
  View5<const T, I> x;
  View5<T, I> y;
  I C = 0, O[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], channels_last);
    A s = window_sum<T, I>(g, x, q.n, q.c, q.a, q.b, q.d);
    y.at(q.n, q.c, q.a, q.b, q.d) = T(s / A(avg_divisor(g, opt.include_pad, opt.override_div, q.a, q.b, q.d)));
  }
};

// The tiled fast path of the average (see tiled2_eligible).
template <class T, class I>
struct AvgForwardTiled2 {
  Geometry g;
  AvgParams opt;
  const T* x;
  T* y;
  I groups;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    constexpr int V = Vec16<T>::n;
    I gw = i % groups, r = i / groups;
    I o1 = r % I(g.axes[1].out);
    r /= I(g.axes[1].out);
    I o0 = r % I(g.axes[0].out);
    I plane = r / I(g.axes[0].out);
    I in1 = I(g.axes[1].in), in2 = I(g.axes[2].in);
    A sum[V];
    for (int v = 0; v < V; ++v) sum[v] = 0;
    Taps<I> t0 = taps_of<I>(g.axes[0], o0), t1 = taps_of<I>(g.axes[1], o1);
    for (I j0 = t0.first; j0 < t0.last; ++j0)
      for (I j1 = t1.first; j1 < t1.last; ++j1) {
        I p0 = t0.origin + j0 * t0.step, p1 = t1.origin + j1 * t1.step;
        const T* src = x + plane * I(g.axes[0].in) * in1 * in2 + (p0 * in1 + p1) * in2 + gw * (2 * V);
        Vec16<T> lo = *reinterpret_cast<const Vec16<T>*>(src);
        Vec16<T> hi = *reinterpret_cast<const Vec16<T>*>(src + V);
        for (int v = 0; v < V; ++v)
          for (int j2 = 0; j2 < 2; ++j2) {
            int e = 2 * v + j2;
            sum[v] += A(e < V ? lo.v[e] : hi.v[e - V]);
          }
      }
    I out = (plane * I(g.axes[0].out) + o0) * I(g.axes[1].out) * I(g.axes[2].out) + o1 * I(g.axes[2].out) + gw * V;
    Vec16<T> res;
    for (int v = 0; v < V; ++v)
      res.v[v] = T(sum[v] / A(avg_divisor(g, opt.include_pad, opt.override_div, o0, o1, gw * V + v)));
    *reinterpret_cast<Vec16<T>*>(y + out) = res;
  }
};

template <class T, class I>
struct AvgBackward {
  Geometry g;
  AvgParams opt;
  View5<const T, I> dy;
  View5<T, I> dx;
  I C = 0, In[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    A sum = 0;
    for_covering<I>(g, q.a, q.b, q.d, [&](I o0, I o1, I o2) {
      sum += A(dy.at(q.n, q.c, o0, o1, o2)) / A(avg_divisor(g, opt.include_pad, opt.override_div, o0, o1, o2));
    });
    dx.at(q.n, q.c, q.a, q.b, q.d) = T(sum);
  }
};

// ---- Lp pooling ----
template <class A>
POOLKIT_HD inline A power(A v, double e) {
  if (e == 1) return v;
  if (e == 2) return v * v;
  if (e == 3) return v * v * v;
  using std::pow;
  using std::sqrt;
  if (e == 0.5) return sqrt(v);
  if (e == -0.5) return A(1) / sqrt(v);
  if (e == -1) return A(1) / v;
  if (e == -2) return A(1) / (v * v);
  return pow(v, A(e));
}
template <class A>
POOLKIT_HD inline A magnitude(A v) {
  return v < 0 ? -v : (v == 0 ? A(0) : v);
}

// The quantity raised to 1/p (see the reference's pooled_power).
template <class T, class I>
POOLKIT_HD inline acc_t<T> pooled_power(const Geometry& g, double p, bool onnx, const View5<const T, I>& x, I n, I c,
                                        I o0, I o1, I o2) {
  using A = acc_t<T>;
  A sum = 0;
  if (onnx) {
    for_window<I>(g, o0, o1, o2, [&](I a, I b, I d) { sum += power(magnitude(A(x.at(n, c, a, b, d))), p); });
    return sum;
  }
  for_window<I>(g, o0, o1, o2, [&](I a, I b, I d) { sum += A(T(power(A(x.at(n, c, a, b, d)), p))); });
  A avg = A(T(sum / A(avg_divisor(g, true, 0, o0, o1, o2))));
  if (avg == 0) avg = 0;
  return A(T(avg * A(g.axes[0].kernel * g.axes[1].kernel * g.axes[2].kernel)));
}

template <class T, class I>
struct LpForward {
  Geometry g;
  double p;
  bool onnx;
  View5<const T, I> x;
  View5<T, I> y;
  I C = 0, O[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], channels_last);
    y.at(q.n, q.c, q.a, q.b, q.d) = T(power(pooled_power<T, I>(g, p, onnx, x, q.n, q.c, q.a, q.b, q.d), 1.0 / p));
  }
};

template <class T, class I>
struct LpBackward {
  Geometry g;
  double p;
  bool onnx;
  View5<const T, I> dy, x;
  View5<T, I> dx;
  I C = 0, In[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    A sum = 0;
    for_covering<I>(g, q.a, q.b, q.d, [&](I o0, I o1, I o2) {
      A s = pooled_power<T, I>(g, p, onnx, x, q.n, q.c, o0, o1, o2), gy = A(dy.at(q.n, q.c, o0, o1, o2));
      if (!(s != 0)) return;
      A f = gy / A(p) * power(s, 1.0 / p - 1.0);
      if (!onnx)
        f = f * A(g.axes[0].kernel * g.axes[1].kernel * g.axes[2].kernel) / A(avg_divisor(g, true, 0, o0, o1, o2));
      sum += f;
    });
    A xi = A(x.at(q.n, q.c, q.a, q.b, q.d));
    A slope = onnx ? A(p) * power(magnitude(xi), p - 1.0) * (xi > 0 ? A(1) : xi < 0 ? A(-1) : A(0))
                   : A(p) * power(xi, p - 1.0);
    dx.at(q.n, q.c, q.a, q.b, q.d) = T(sum * slope);
  }
};

// ---- Mixed pooling: lambda * max + (1 - lambda) * avg ----
template <class T, class I>
struct MixedForward {
  Geometry g;
  AvgParams opt;
  double lambda;
  View5<const T, I> x;
  View5<T, I> y;
  I C = 0, O[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], channels_last);
    A m = window_max<T, I>(g, x, q.n, q.c, q.a, q.b, q.d).value;
    A v = window_sum<T, I>(g, x, q.n, q.c, q.a, q.b, q.d) /
          A(avg_divisor(g, opt.include_pad, opt.override_div, q.a, q.b, q.d));
    A lam = A(lambda);
    y.at(q.n, q.c, q.a, q.b, q.d) = T(lam * m + (A(1) - lam) * v);
  }
};

// One term of d(loss)/d(lambda) per output, in double, written in the reference's summation order (n, c, o...)
// so the host adds them exactly as the reference does.
template <class T, class I>
struct MixedLambdaTerms {
  Geometry g;
  AvgParams opt;
  View5<const T, I> dy, x;
  double* terms;
  I C = 0, O[3] = {0, 0, 0};

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], false);
    double m = double(window_max<T, I>(g, x, q.n, q.c, q.a, q.b, q.d).value);
    double v = double(window_sum<T, I>(g, x, q.n, q.c, q.a, q.b, q.d) /
                      A(avg_divisor(g, opt.include_pad, opt.override_div, q.a, q.b, q.d)));
    terms[i] = double(A(dy.at(q.n, q.c, q.a, q.b, q.d))) * (m - v);
  }
};

template <class T, class I>
struct MixedBackward {
  Geometry g;
  AvgParams opt;
  double lambda;
  View5<const T, I> dy, x;
  View5<T, I> dx;
  I C = 0, In[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    I self = plane_flat<I>(g, q.a, q.b, q.d);
    A lam = A(lambda), sum = 0;
    for_covering<I>(g, q.a, q.b, q.d, [&](I o0, I o1, I o2) {
      A gy = A(dy.at(q.n, q.c, o0, o1, o2));
      if (window_max<T, I>(g, x, q.n, q.c, o0, o1, o2).flat == self) sum += lam * gy;
      sum += (A(1) - lam) * gy / A(avg_divisor(g, opt.include_pad, opt.override_div, o0, o1, o2));
    });
    dx.at(q.n, q.c, q.a, q.b, q.d) = T(sum);
  }
};

}  // namespace poolkit::cuda::detail
