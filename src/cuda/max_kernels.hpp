#pragma once
// The per-thread bodies of the max family (max, adaptive, global, fractional): each functor computes the cells of
// one thread index. The CUDA launch calls them from a grid-stride loop; the CPU test calls them in a plain loop.
#include "indexing.hpp"

namespace poolkit::cuda::detail {

template <class A, class I>
struct WinMax {
  A value;
  I flat;   // in the (n, c) input plane
  I local;  // window-local tap
};

// PyTorch's rule, as the reference: start at -inf and the first cell read; replace when greater or NaN.
template <class T, class I>
POOLKIT_HD inline WinMax<acc_t<T>, I> window_max(const Geometry& g, const View5<const T, I>& x, I n, I c, I o0, I o1,
                                                 I o2) {
  using A = acc_t<T>;
  WinMax<A, I> m{neg_inf<A>(), I(-1), I(-1)};
  Taps<I> t0 = taps_of<I>(g.axes[0], o0), t1 = taps_of<I>(g.axes[1], o1), t2 = taps_of<I>(g.axes[2], o2);
  for (I j0 = t0.first; j0 < t0.last; ++j0) {
    I p0 = t0.origin + j0 * t0.step;
    for (I j1 = t1.first; j1 < t1.last; ++j1) {
      I p1 = t1.origin + j1 * t1.step;
      for (I j2 = t2.first; j2 < t2.last; ++j2) {
        I p2 = t2.origin + j2 * t2.step;
        A v = A(x.at(n, c, p0, p1, p2));
        if (m.flat < 0 || v > m.value || is_nan(v)) {
          if (v > m.value || is_nan(v)) m.value = v;
          m.flat = plane_flat<I>(g, p0, p1, p2);
          m.local = local_tap<I>(g, j0, j1, j2);
        }
      }
    }
  }
  return m;
}

// y (and argmax when given) for output thread i.
template <class T, class I>
struct MaxForward {
  Geometry g;                       // three axes
  const double* samples = nullptr;  // fractional: 3 per plane
  View5<const T, I> x;
  View5<T, I> y;
  ArgmaxView argmax;
  I C = 0, O[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    Idx5<I> q = decompose<I>(i, C, O[0], O[1], O[2], channels_last);
    Geometry gp = plane_geometry(g, samples, int64_t(q.n) * C + q.c);
    WinMax<acc_t<T>, I> m = window_max<T, I>(gp, x, q.n, q.c, q.a, q.b, q.d);
    y.at(q.n, q.c, q.a, q.b, q.d) = T(m.value);
    if (argmax.p)
      store_argmax<I>(argmax, argmax_offset<I>(argmax, q.n, q.c, q.a, q.b, q.d),
                      argmax.dtype == DType::i64 ? int64_t(m.flat) : int64_t(m.local));
  }
};

// The tiled fast path: thread i makes Vec16<T>::n outputs along the last axis (see tiled2_eligible).
template <class T, class I>
struct MaxForwardTiled2 {
  Geometry g;
  const T* x;
  T* y;
  ArgmaxView argmax;
  I groups;  // output groups per row: O[2] / n

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    constexpr int V = Vec16<T>::n;
    I gw = i % groups, r = i / groups;
    I o1 = r % I(g.axes[1].out);
    r /= I(g.axes[1].out);
    I o0 = r % I(g.axes[0].out);
    I plane = r / I(g.axes[0].out);
    I in1 = I(g.axes[1].in), in2 = I(g.axes[2].in);
    A best[V];
    I flat[V], local[V];
    for (int v = 0; v < V; ++v) { best[v] = neg_inf<A>(); flat[v] = -1; local[v] = -1; }
    Taps<I> t0 = taps_of<I>(g.axes[0], o0), t1 = taps_of<I>(g.axes[1], o1);
    for (I j0 = t0.first; j0 < t0.last; ++j0) {
      I p0 = t0.origin + j0 * t0.step;
      for (I j1 = t1.first; j1 < t1.last; ++j1) {
        I p1 = t1.origin + j1 * t1.step;
        I row = (p0 * in1 + p1) * in2 + gw * (2 * V);
        const T* src = x + plane * I(g.axes[0].in) * in1 * in2 + row;
        Vec16<T> lo = *reinterpret_cast<const Vec16<T>*>(src);
        Vec16<T> hi = *reinterpret_cast<const Vec16<T>*>(src + V);
        I jl = (j0 * I(g.axes[1].kernel) + j1) * 2;
        for (int v = 0; v < V; ++v)
          for (int j2 = 0; j2 < 2; ++j2) {
            int e = 2 * v + j2;
            A val = A(e < V ? lo.v[e] : hi.v[e - V]);
            if (flat[v] < 0 || val > best[v] || is_nan(val)) {
              if (val > best[v] || is_nan(val)) best[v] = val;
              flat[v] = row + e;
              local[v] = jl + j2;
            }
          }
      }
    }
    I out = (plane * I(g.axes[0].out) + o0) * I(g.axes[1].out) * I(g.axes[2].out) + o1 * I(g.axes[2].out) + gw * V;
    Vec16<T> res;
    for (int v = 0; v < V; ++v) res.v[v] = T(best[v]);
    *reinterpret_cast<Vec16<T>*>(y + out) = res;
    if (argmax.p)
      for (int v = 0; v < V; ++v)  // the argmax is contiguous with y's shape
        store_argmax<I>(argmax, out + v, argmax.dtype == DType::i64 ? int64_t(flat[v]) : int64_t(local[v]));
  }
};

// dx for input thread i: the sum, in increasing output order, of dy over the covering windows whose argmax
// (stored in either form, or recomputed from x) is this cell. A stored argmax naming no cell of its window
// raises *error.
template <class T, class I>
struct MaxBackward {
  Geometry g;
  const double* samples = nullptr;
  View5<const T, I> dy, x;
  View5<T, I> dx;
  ArgmaxView argmax;
  int* error;
  I C = 0, In[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    using A = acc_t<T>;
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    Geometry gp = plane_geometry(g, samples, int64_t(q.n) * C + q.c);
    I self = plane_flat<I>(gp, q.a, q.b, q.d);
    Cover<I> c0 = cover_of<I>(gp.axes[0], q.a), c1 = cover_of<I>(gp.axes[1], q.b), c2 = cover_of<I>(gp.axes[2], q.d);
    bool exact = c0.exact && c1.exact && c2.exact, flat_form = argmax.dtype == DType::i64;
    A sum = 0;
    for (I o0 = c0.begin; o0 < c0.end; ++o0) {
      if (!reads<I>(gp.axes[0], c0, o0, q.a)) continue;
      for (I o1 = c1.begin; o1 < c1.end; ++o1) {
        if (!reads<I>(gp.axes[1], c1, o1, q.b)) continue;
        for (I o2 = c2.begin; o2 < c2.end; ++o2) {
          if (!reads<I>(gp.axes[2], c2, o2, q.d)) continue;
          bool mine;
          if (argmax.p && exact) {
            // Undilated regular axes: compare the stored value with this cell's own code in window o, no
            // decoding; the window's first cell alone checks that the value names a cell of the window.
            int64_t v = load_argmax<I>(argmax, argmax_offset<I>(argmax, q.n, q.c, o0, o1, o2));
            Taps<I> t0 = taps_of<I>(gp.axes[0], o0), t1 = taps_of<I>(gp.axes[1], o1), t2 = taps_of<I>(gp.axes[2], o2);
            I j0 = q.a - t0.origin, j1 = q.b - t1.origin, j2 = q.d - t2.origin;
            if (j0 == t0.first && j1 == t1.first && j2 == t2.first && argmax_cell<I>(gp, flat_form, v, o0, o1, o2) < 0)
              *error = 1;
            mine = v == (flat_form ? int64_t(self) : int64_t(local_tap<I>(gp, j0, j1, j2)));
          } else if (argmax.p) {
            int64_t v = load_argmax<I>(argmax, argmax_offset<I>(argmax, q.n, q.c, o0, o1, o2));
            I cell = argmax_cell<I>(gp, flat_form, v, o0, o1, o2);
            if (cell < 0) *error = 1;
            mine = cell == self;
          } else {
            mine = window_max<T, I>(gp, x, q.n, q.c, o0, o1, o2).flat == self;
          }
          if (mine) sum += A(dy.at(q.n, q.c, o0, o1, o2));
        }
      }
    }
    dx.at(q.n, q.c, q.a, q.b, q.d) = T(sum);
  }
};

}  // namespace poolkit::cuda::detail
