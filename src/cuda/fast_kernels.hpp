#pragma once
// The per-thread bodies of max and average pooling over regular, adaptive and global windows (fast_axes.hpp), in
// int32 index arithmetic. A thread makes L neighbouring channels of one cell in channels-last order (loaded and
// stored as one vector), or R neighbouring cells of the last axis in channels-first order (sharing the index
// arithmetic of the others). Same results, bit for bit, as the generic functors of max_kernels.hpp and
// avg_kernels.hpp: same taps in the same order, same comparisons and sums.
#include <type_traits>

#include "avg_kernels.hpp"
#include "fast_axes.hpp"

// The forwards' innermost tap loops unrolled on the device where a thread takes one or two channels, so that it has
// several loads in flight (on the H200: channels-first forwards 0-5 % faster, the seed's NHWC average 10 %; with
// 16-byte lanes it was 2-30 % slower on eight of nine rows). The loop is written out in both forms, its body a
// macro, because a lambda body changes the machine code of both from the kernels that were timed
// (bench/RESULTS-gpu.md).
#ifdef __CUDA_ARCH__
#define POOLKIT_UNROLL_TAPS _Pragma("unroll 4")
#else
#define POOLKIT_UNROLL_TAPS
#endif

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
POOLKIT_HD inline void store_lanes(const View5<T, int32_t>& t, const Idx5<int32_t>& q, int32_t a, int32_t b,
                                   int32_t d, const Lanes<T, L>& v) {
  *reinterpret_cast<Lanes<T, L>*>(&t.at(q.n, q.c, a, b, d)) = v;
}

// Calls one(cell, ...) for the R cells of a thread along the last axis, those before `end`.
template <int R, class F>
POOLKIT_HD inline void each_of_run(Idx5<int32_t> q, int32_t end, F&& one) {
  for (int r = 0; r < R; ++r, ++q.d) {
    if (R > 1 && q.d >= end) return;
    one(q);
  }
}

// One tap of the max forward (the loop around it is written twice: see POOLKIT_UNROLL_TAPS).
#define POOLKIT_MAX_TAP                                                       \
  {                                                                           \
    Lanes<T, L> v = load_lanes<L>(x, q, p0, p1, t2.origin + j2 * t2.step);    \
    for (int l = 0; l < L; ++l) {                                             \
      A val = A(v.v[l]);                                                      \
      if (local[l] < 0 || val > best[l] || is_nan(val)) {                     \
        if (val > best[l] || is_nan(val)) best[l] = val;                      \
        local[l] = row + j2;                                                  \
      }                                                                       \
    }                                                                         \
  }

template <class T, int L, int R>
struct FastMaxForward {
  FastGeometry g;
  View5<const T, int32_t> x;
  View5<T, int32_t> y;
  ArgmaxView argmax;
  FastWalk walk;  // over y

  POOLKIT_HD void operator()(int32_t i) const {
    Idx5<int32_t> q = walk.at(i, L, R);
    Taps<int32_t> t0 = g.ax[0].taps(q.a), t1 = g.ax[1].taps(q.b);
    each_of_run<R>(q, g.ax[2].out, [&](const Idx5<int32_t>& c) { one(c, t0, t1); });
  }

  POOLKIT_HD void one(const Idx5<int32_t>& q, const Taps<int32_t>& t0, const Taps<int32_t>& t1) const {
    using A = acc_t<T>;
    Taps<int32_t> t2 = g.ax[2].taps(q.d);
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
        if constexpr (L <= 2) {
          POOLKIT_UNROLL_TAPS
          for (int32_t j2 = t2.first; j2 < t2.last; ++j2) POOLKIT_MAX_TAP
        } else {
          for (int32_t j2 = t2.first; j2 < t2.last; ++j2) POOLKIT_MAX_TAP
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(best[l]);
    store_lanes(y, q, q.a, q.b, q.d, out);
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
#undef POOLKIT_MAX_TAP

// dx from the saved argmax (either form, checked by FastArgmaxCheck): the sum, in increasing output order, of dy
// over the covering windows whose argmax is this cell.
template <class T, int L, int R>
struct FastMaxBackward {
  FastGeometry g;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  ArgmaxView argmax;
  FastWalk walk;  // over dx

  POOLKIT_HD void operator()(int32_t i) const {
    Idx5<int32_t> q = walk.at(i, L, R);
    Cover<int32_t> c0 = g.ax[0].cover(q.a), c1 = g.ax[1].cover(q.b);
    each_of_run<R>(q, g.ax[2].in, [&](const Idx5<int32_t>& c) { one(c, c0, c1); });
  }

  POOLKIT_HD void one(const Idx5<int32_t>& q, const Cover<int32_t>& c0, const Cover<int32_t>& c1) const {
    using A = acc_t<T>;
    const bool flat_form = argmax.dtype == DType::i64;
    const int32_t self = g.plane_flat(q.a, q.b, q.d);
    Cover<int32_t> c2 = g.ax[2].cover(q.d);
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
          Lanes<T, L> gy = load_lanes<L>(dy, q, o0, o1, o2);
          for (int l = 0; l < L; ++l)
            if (load_argmax<int32_t>(argmax, argmax_offset<int32_t>(argmax, q.n, q.c + l, o0, o1, o2)) == code)
              sum[l] += A(gy.v[l]);
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l]);
    store_lanes(dx, q, q.a, q.b, q.d, out);
  }
};

// The gather's check of the saved argmax: a thread per output (L channels) raises *error when a value names no
// cell of its window (windows with no cell in the input are not checked, as the reference).
template <int L>
struct FastArgmaxCheck {
  FastGeometry g;
  ArgmaxView argmax;
  int* error;
  FastWalk walk;  // over the outputs

  POOLKIT_HD void operator()(int32_t i) const {
    Idx5<int32_t> q = walk.at(i, L, 1);
    Taps<int32_t> t[3] = {g.ax[0].taps(q.a), g.ax[1].taps(q.b), g.ax[2].taps(q.d)};
    if (t[0].first == t[0].last || t[1].first == t[1].last || t[2].first == t[2].last) return;
    for (int l = 0; l < L; ++l)
      if (!g.names_cell(t, argmax.dtype == DType::i64,
                        load_argmax<int32_t>(argmax, argmax_offset<int32_t>(argmax, q.n, q.c + l, q.a, q.b, q.d))))
        *error = 1;
  }
};

// Whether no input cell lies in two windows of g3, and whether every input cell lies in one.
inline bool windows_disjoint(const Geometry& g3) {
  for (int i = 0; i < 3; ++i) {
    const Axis& a = g3.axes[i];
    bool ok = a.kind == AxisKind::Regular ? a.kernel == 1 || (a.kernel - 1) * a.dilation < a.stride
                                          : a.kind != AxisKind::Fractional && a.in % a.out == 0;
    if (!ok) return false;
  }
  return true;
}
inline bool windows_cover(const Geometry& g3) {
  for (int i = 0; i < 3; ++i) {
    const Axis& a = g3.axes[i];
    if (a.kind == AxisKind::Regular &&
        !((a.kernel == a.stride && (a.dilation == 1 || a.kernel == 1)) && a.out * a.stride - a.pad_lo >= a.in))
      return false;
  }
  return windows_disjoint(g3);
}

// The backward of windows that share no cell (windows_disjoint): a thread per output (L channels) writes every cell
// of its window, dy at the saved argmax's cell and 0 elsewhere, so each cell of dx is written once at most; cells
// of no window are zeroed before. The thread checks that the value names a cell of the window (raising *error).
template <class T, int L>
struct FastMaxScatter {
  FastGeometry g;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  ArgmaxView argmax;
  int* error;
  FastWalk walk;  // over dy

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L, 1);
    const bool flat_form = argmax.dtype == DType::i64;
    Taps<int32_t> t[3] = {g.ax[0].taps(q.a), g.ax[1].taps(q.b), g.ax[2].taps(q.d)};
    if (t[0].first == t[0].last || t[1].first == t[1].last || t[2].first == t[2].last) return;
    Lanes<T, L> gy = load_lanes<L>(dy, q, q.a, q.b, q.d);
    int64_t v[L];
    for (int l = 0; l < L; ++l) {
      v[l] = load_argmax<int32_t>(argmax, argmax_offset<int32_t>(argmax, q.n, q.c + l, q.a, q.b, q.d));
      if (!g.names_cell(t, flat_form, v[l])) *error = 1;
    }
    for (int32_t j0 = t[0].first; j0 < t[0].last; ++j0) {
      int32_t p0 = t[0].origin + j0 * t[0].step;
      for (int32_t j1 = t[1].first; j1 < t[1].last; ++j1) {
        int32_t p1 = t[1].origin + j1 * t[1].step;
        for (int32_t j2 = t[2].first; j2 < t[2].last; ++j2) {
          int32_t p2 = t[2].origin + j2 * t[2].step;
          const int32_t code = flat_form ? g.plane_flat(p0, p1, p2) : g.local_tap(j0, j1, j2);
          Lanes<T, L> out;
          for (int l = 0; l < L; ++l) {
            A s = 0;  // the sum over the one covering window, as the gather's (0 + -0 is +0)
            if (v[l] == code) s += A(gy.v[l]);
            out.v[l] = T(s);
          }
          store_lanes(dx, q, p0, p1, p2, out);
        }
      }
    }
  }
};

// The average's divisor: the override, or the product of the axes' divisors (as avg_divisor).
POOLKIT_HD inline int64_t fast_divisor(const FastGeometry& g, const Taps<int32_t>* t, bool include_pad,
                                       int64_t override_div) {
  if (override_div > 0) return override_div;
  return int64_t(g.ax[0].divisor(t[0], include_pad)) * g.ax[1].divisor(t[1], include_pad) *
         g.ax[2].divisor(t[2], include_pad);
}

// One tap of the average's forward (the loop around it is written twice: see POOLKIT_UNROLL_TAPS).
#define POOLKIT_AVG_TAP                                                                                          \
  {                                                                                                              \
    Lanes<T, L> v = load_lanes<L>(x, q, t[0].origin + j0 * t[0].step, t[1].origin + j1 * t[1].step,             \
                                  t[2].origin + j2 * t[2].step);                                                 \
    for (int l = 0; l < L; ++l) sum[l] += A(v.v[l]);                                                             \
  }

template <class T, int L, int R>
struct FastAvgForward {
  FastGeometry g;
  AvgParams opt;
  View5<const T, int32_t> x;
  View5<T, int32_t> y;
  FastWalk walk;  // over y

  POOLKIT_HD void operator()(int32_t i) const {
    Idx5<int32_t> q = walk.at(i, L, R);
    Taps<int32_t> t0 = g.ax[0].taps(q.a), t1 = g.ax[1].taps(q.b);
    each_of_run<R>(q, g.ax[2].out, [&](const Idx5<int32_t>& c) { one(c, t0, t1); });
  }

  POOLKIT_HD void one(const Idx5<int32_t>& q, const Taps<int32_t>& t0, const Taps<int32_t>& t1) const {
    using A = acc_t<T>;
    Taps<int32_t> t[3] = {t0, t1, g.ax[2].taps(q.d)};
    A sum[L];
    for (int l = 0; l < L; ++l) sum[l] = 0;
    for (int32_t j0 = t[0].first; j0 < t[0].last; ++j0)
      for (int32_t j1 = t[1].first; j1 < t[1].last; ++j1)
        if constexpr (L <= 2) {
          POOLKIT_UNROLL_TAPS
          for (int32_t j2 = t[2].first; j2 < t[2].last; ++j2) POOLKIT_AVG_TAP
        } else {
          for (int32_t j2 = t[2].first; j2 < t[2].last; ++j2) POOLKIT_AVG_TAP
        }
    A div = A(fast_divisor(g, t, opt.include_pad, opt.override_div));
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l] / div);
    store_lanes(y, q, q.a, q.b, q.d, out);
  }
};
#undef POOLKIT_AVG_TAP

template <class T, int L, int R>
struct FastAvgBackward {
  FastGeometry g;
  AvgParams opt;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  FastWalk walk;  // over dx

  POOLKIT_HD void operator()(int32_t i) const {
    Idx5<int32_t> q = walk.at(i, L, R);
    Cover<int32_t> c0 = g.ax[0].cover(q.a), c1 = g.ax[1].cover(q.b);
    each_of_run<R>(q, g.ax[2].in, [&](const Idx5<int32_t>& c) { one(c, c0, c1); });
  }

  POOLKIT_HD void one(const Idx5<int32_t>& q, const Cover<int32_t>& c0, const Cover<int32_t>& c1) const {
    using A = acc_t<T>;
    Cover<int32_t> c2 = g.ax[2].cover(q.d);
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
          A div = A(fast_divisor(g, t, opt.include_pad, opt.override_div));
          Lanes<T, L> gy = load_lanes<L>(dy, q, o0, o1, o2);
          for (int l = 0; l < L; ++l) sum[l] += A(gy.v[l]) / div;
        }
      }
    }
    Lanes<T, L> out;
    for (int l = 0; l < L; ++l) out.v[l] = T(sum[l]);
    store_lanes(dx, q, q.a, q.b, q.d, out);
  }
};

// The average's backward over windows that share no cell (as FastMaxScatter): each cell of a window gets dy over
// the divisor.
template <class T, int L>
struct FastAvgScatter {
  FastGeometry g;
  AvgParams opt;
  View5<const T, int32_t> dy;
  View5<T, int32_t> dx;
  FastWalk walk;  // over dy

  POOLKIT_HD void operator()(int32_t i) const {
    using A = acc_t<T>;
    Idx5<int32_t> q = walk.at(i, L, 1);
    Taps<int32_t> t[3] = {g.ax[0].taps(q.a), g.ax[1].taps(q.b), g.ax[2].taps(q.d)};
    Lanes<T, L> gy = load_lanes<L>(dy, q, q.a, q.b, q.d), out;
    A div = A(fast_divisor(g, t, opt.include_pad, opt.override_div));
    for (int l = 0; l < L; ++l) {
      A s = 0;  // as the gather's sum over the one covering window
      s += A(gy.v[l]) / div;
      out.v[l] = T(s);
    }
    for (int32_t j0 = t[0].first; j0 < t[0].last; ++j0)
      for (int32_t j1 = t[1].first; j1 < t[1].last; ++j1)
        for (int32_t j2 = t[2].first; j2 < t[2].last; ++j2)
          store_lanes(dx, q, t[0].origin + j0 * t[0].step, t[1].origin + j1 * t[1].step,
                      t[2].origin + j2 * t[2].step, out);
  }
};

// Calls f(L, R) (std::integral_constant<int>s) for the shape of a thread's work: `lanes` channels (channel_lanes), or
// else, when `run` > 1, a run of 4 cells along the last axis.
template <class T, class F>
void with_thread_shape(int lanes, int run, F&& f) {
  using one = std::integral_constant<int, 1>;
  constexpr int wide = 16 / int(sizeof(T));
  if (lanes == wide) f(std::integral_constant<int, wide>{}, one{});
  else if (lanes == 2 && wide != 2) f(std::integral_constant<int, 2>{}, one{});
  else if (run > 1) f(one{}, std::integral_constant<int, 4>{});
  else f(one{}, one{});
}

// Whether t's cells fill one block of memory (so zeroing it is one memset).
inline bool dense(const TensorView& t) {
  if (t.is_contiguous()) return true;
  Strides cl = contiguous_strides(t.shape, Layout::ChannelsLast);
  for (int i = 0; i < t.rank(); ++i)
    if (t.shape[i] > 1 && t.strides[i] != cl[i]) return false;
  return true;
}

// Whether the backward writes each window's cells from one thread (windows_disjoint; cells of no window zeroed
// first, when dx is dense), else gathers each cell's windows. In channels-first order only small windows scatter:
// the stores of a warp's threads, each a window apart, reach too many cache lines at once.
inline bool scatters(const Geometry& g3, const TensorView& dx) {
  return windows_disjoint(g3) && (windows_cover(g3) || dense(dx)) &&
         (walks_channels_last(dx) || g3.window_cells() <= 8);
}

// ---- The launches, shared by the CUDA operators and the CPU tests ----
// run(functor, threads) runs a functor over thread indices [0, threads); zero(t) zeroes dense tensor t. `lanes`
// (channel_lanes, or 1) and `len` (4 for runs along the last axis, or 1) shape a thread's work; the backward
// scatters (see scatters) or gathers.
template <class T, class Run>
void fast_max_forward(const Geometry& g3, const TensorView& x, const TensorView& y, const TensorView& argmax,
                      int lanes, int len, Run&& run) {
  with_thread_shape<T>(lanes, len, [&](auto l, auto r) {
    constexpr int L = decltype(l)::value, R = decltype(r)::value;
    int64_t threads = 0;
    FastWalk walk = fast_walk(y, L, R, &threads);
    run(FastMaxForward<T, L, R>{fast_geometry(g3), view5<const T, int32_t>(x), view5<T, int32_t>(y),
                                argmax_view(argmax), walk}, threads);
  });
}

template <class T, class Run, class Zero>
void fast_max_backward(const Geometry& g3, const TensorView& dy, const TensorView& argmax, const TensorView& dx,
                       int* error, int lanes, int len, bool scatter, Run&& run, Zero&& zero) {
  if (scatter && !windows_cover(g3)) zero(dx);
  with_thread_shape<T>(lanes, scatter ? 1 : len, [&](auto l, auto r) {
    constexpr int L = decltype(l)::value, R = decltype(r)::value;
    int64_t threads = 0;
    FastWalk outputs = fast_walk(dy, L, 1, &threads);
    if (scatter) {
      run(FastMaxScatter<T, L>{fast_geometry(g3), view5<const T, int32_t>(dy), view5<T, int32_t>(dx),
                               argmax_view(argmax), error, outputs}, threads);
      return;
    }
    run(FastArgmaxCheck<L>{fast_geometry(g3), argmax_view(argmax), error, outputs}, threads);
    FastWalk walk = fast_walk(dx, L, R, &threads);
    run(FastMaxBackward<T, L, R>{fast_geometry(g3), view5<const T, int32_t>(dy), view5<T, int32_t>(dx),
                                 argmax_view(argmax), walk}, threads);
  });
}

template <class T, class Run>
void fast_avg_forward(const Geometry& g3, const AvgOptions& opt, const TensorView& x, const TensorView& y, int lanes,
                      int len, Run&& run) {
  with_thread_shape<T>(lanes, len, [&](auto l, auto r) {
    constexpr int L = decltype(l)::value, R = decltype(r)::value;
    int64_t threads = 0;
    FastWalk walk = fast_walk(y, L, R, &threads);
    run(FastAvgForward<T, L, R>{fast_geometry(g3), avg_params(opt), view5<const T, int32_t>(x),
                                view5<T, int32_t>(y), walk}, threads);
  });
}

template <class T, class Run, class Zero>
void fast_avg_backward(const Geometry& g3, const AvgOptions& opt, const TensorView& dy, const TensorView& dx,
                       int lanes, int len, bool scatter, Run&& run, Zero&& zero) {
  if (scatter && !windows_cover(g3)) zero(dx);
  const AvgParams p = avg_params(opt);
  with_thread_shape<T>(lanes, scatter ? 1 : len, [&](auto l, auto r) {
    constexpr int L = decltype(l)::value, R = decltype(r)::value;
    int64_t threads = 0;
    if (scatter) {
      FastWalk walk = fast_walk(dy, L, 1, &threads);
      run(FastAvgScatter<T, L>{fast_geometry(g3), p, view5<const T, int32_t>(dy), view5<T, int32_t>(dx), walk},
          threads);
    } else {
      FastWalk walk = fast_walk(dx, L, R, &threads);
      run(FastAvgBackward<T, L, R>{fast_geometry(g3), p, view5<const T, int32_t>(dy), view5<T, int32_t>(dx), walk},
          threads);
    }
  });
}

}  // namespace poolkit::cuda::detail
