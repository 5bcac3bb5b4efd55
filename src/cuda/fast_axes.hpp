#pragma once
// The window arithmetic of the fast kernels: regular, adaptive and global axes in int32 with their divisions by
// FastDiv, and the walk from a thread index to a cell. The same functions as Axis's (taps, covering outputs,
// divisor), without the fractional kind's code, 64-bit divisions or run-time divisions, which the generic kernels
// compile into every thread. Host/device, so the CPU tests check them against Axis.
#include <initializer_list>

#include "fast_div.hpp"
#include "indexing.hpp"

namespace poolkit::cuda::detail {

struct FastAxis {
  int32_t in = 1, out = 1;
  int32_t kernel = 1;  // the radix of a window-local tap (Axis::kernel)
  int32_t stride = 1, dilation = 1, pad_lo = 0, pad_hi = 0;
  bool adaptive = false;  // window o is [o * in / out, ceil((o + 1) * in / out)); global is adaptive with out 1
  FastDiv by_stride, by_out, by_in;

  // Taps [first, last) of window o inside the input, and the position of tap 0 (as taps_of).
  POOLKIT_HD Taps<int32_t> taps(int32_t o) const {
    if (adaptive) {
      int32_t org = by_out.div(o * in);
      return {org, 0, by_out.div((o + 1) * in + out - 1) - org, 1};
    }
    int32_t org = o * stride - pad_lo, first, last;
    if (dilation == 1) {
      first = org < 0 ? -org : 0;
      last = in - org;
    } else {
      first = org >= 0 ? 0 : (-org + dilation - 1) / dilation;
      last = in - org <= 0 ? 0 : (in - org + dilation - 1) / dilation;
    }
    if (last > kernel) last = kernel;
    if (last < 0) last = 0;
    if (first > last) first = last;
    return {org, first, last, dilation};
  }

  // The outputs whose windows may read input position i; with dilation > 1, check tap_of(o, i) >= 0 too.
  POOLKIT_HD Cover<int32_t> cover(int32_t i) const {
    int32_t b, e;
    if (adaptive) {
      b = by_in.div(i * out);
      e = by_in.div((i + 1) * out - 1) + 1;
    } else {
      int32_t hi = i + pad_lo, lo = hi - (kernel - 1) * dilation;
      b = lo <= 0 ? 0 : by_stride.div(lo + stride - 1);
      e = hi < 0 ? 0 : by_stride.div(hi) + 1;
    }
    if (e > out) e = out;
    if (b > e) b = e;
    return {b, e, adaptive || dilation == 1};
  }

  // The tap of window t at input position i (t from taps(o)), or -1 when the window does not read i.
  POOLKIT_HD int32_t tap_of(const Taps<int32_t>& t, int32_t i) const {
    int32_t rel = i - t.origin, j = rel;
    if (dilation != 1 && !adaptive) {
      if (rel < 0 || rel % dilation != 0) return -1;
      j = rel / dilation;
    }
    return j >= t.first && j < t.last ? j : -1;
  }

  // Axis::divisor of window o.
  POOLKIT_HD int32_t divisor(const Taps<int32_t>& t, bool include_pad) const {
    if (!include_pad || adaptive) return t.last - t.first;
    int32_t lim = in + pad_hi - t.origin;
    int32_t n = lim <= 0 ? 0 : dilation == 1 ? lim : (lim + dilation - 1) / dilation;
    return n < kernel ? n : kernel;
  }
};

// Whether the fast kernels take geometry g3: regular, adaptive or global axes whose arithmetic stays in int32
// (fractional axes and huge ones keep the generic kernels).
inline bool fast_axes_eligible(const Geometry& g3) {
  const int64_t lim = int64_t(1) << 30;
  for (int i = 0; i < 3; ++i) {
    const Axis& a = g3.axes[i];
    if (a.kind == AxisKind::Fractional) return false;
    if (a.in >= lim || a.out >= lim || a.kernel >= lim || a.pad_lo >= lim || a.pad_hi >= lim) return false;
    if (a.kind == AxisKind::Regular && (a.kernel * a.dilation >= lim || a.stride >= lim)) return false;
    if (a.kind != AxisKind::Regular && (a.in + 1) * (a.out + 1) >= lim) return false;
  }
  return true;
}

inline FastAxis fast_axis(const Axis& a) {
  FastAxis f;
  f.in = int32_t(a.in);
  f.out = int32_t(a.out);
  f.kernel = int32_t(a.kernel);
  f.adaptive = a.kind != AxisKind::Regular;
  if (!f.adaptive) {
    f.stride = int32_t(a.stride);
    f.dilation = int32_t(a.dilation);
    f.pad_lo = int32_t(a.pad_lo);
    f.pad_hi = int32_t(a.pad_hi);
    f.by_stride = FastDiv(a.stride);
  } else {
    f.by_out = FastDiv(a.out);
    f.by_in = FastDiv(a.in);
  }
  return f;
}

struct FastGeometry {
  FastAxis ax[3];
  FastDiv by_k1, by_k2, by_in1, by_in2;  // decoding stored argmax values: local taps and plane-flat cells

  POOLKIT_HD int32_t plane_flat(int32_t p0, int32_t p1, int32_t p2) const {
    return (p0 * ax[1].in + p1) * ax[2].in + p2;
  }
  POOLKIT_HD int32_t local_tap(int32_t j0, int32_t j1, int32_t j2) const {
    return (j0 * ax[1].kernel + j1) * ax[2].kernel + j2;
  }
  // Whether stored argmax v names a cell of the window whose taps are t (local: a window-local tap; else
  // plane-flat), as argmax_cell.
  POOLKIT_HD bool names_cell(const Taps<int32_t>* t, bool flat_form, int64_t v) const {
    if (v < 0) return false;
    int32_t j[3];
    if (flat_form) {
      if (v >= int64_t(ax[0].in) * ax[1].in * ax[2].in) return false;
      int32_t r = int32_t(v), q2 = by_in2.div(r), q1 = by_in1.div(q2);
      int32_t p[3] = {q1, q2 - q1 * ax[1].in, r - q2 * ax[2].in};
      for (int a = 0; a < 3; ++a)
        if ((j[a] = ax[a].tap_of(t[a], p[a])) < 0) return false;
      return true;
    }
    if (v >= int64_t(ax[0].kernel) * ax[1].kernel * ax[2].kernel) return false;
    int32_t r = int32_t(v), q2 = by_k2.div(r), q1 = by_k1.div(q2);
    j[0] = q1;
    j[1] = q2 - q1 * ax[1].kernel;
    j[2] = r - q2 * ax[2].kernel;
    for (int a = 0; a < 3; ++a)
      if (j[a] < t[a].first || j[a] >= t[a].last) return false;
    return true;
  }
};

inline FastGeometry fast_geometry(const Geometry& g3) {
  FastGeometry f;
  for (int i = 0; i < 3; ++i) f.ax[i] = fast_axis(g3.axes[i]);
  f.by_k1 = FastDiv(g3.axes[1].kernel);
  f.by_k2 = FastDiv(g3.axes[2].kernel);
  f.by_in1 = FastDiv(g3.axes[1].in);
  f.by_in2 = FastDiv(g3.axes[2].in);
  return f;
}

// Thread index -> the first cell of a thread's in the tensor a launch walks, in its memory order (as decompose). In
// channels-last order a thread takes `lanes` neighbouring channels, otherwise `run` neighbouring cells of the last
// axis (the last run of a row may be shorter): C and D here count those groups.
struct FastWalk {
  FastDiv C, A, B, D;
  bool channels_last = false;

  POOLKIT_HD Idx5<int32_t> at(int32_t flat, int lanes, int run) const {
    Idx5<int32_t> r;
    int32_t q;
    if (channels_last) {
      q = C.div(flat); r.c = (flat - q * C.d) * lanes; flat = q;
      q = D.div(flat); r.d = flat - q * D.d; flat = q;
      q = B.div(flat); r.b = flat - q * B.d; flat = q;
      q = A.div(flat); r.a = flat - q * A.d; r.n = q;
    } else {
      q = D.div(flat); r.d = (flat - q * D.d) * run; flat = q;
      q = B.div(flat); r.b = flat - q * B.d; flat = q;
      q = A.div(flat); r.a = flat - q * A.d; flat = q;
      q = C.div(flat); r.c = flat - q * C.d; r.n = q;
    }
    return r;
  }
};

// The walk over tensor t, and the number of threads it takes.
inline FastWalk fast_walk(const TensorView& t, int lanes, int run, int64_t* threads = nullptr) {
  Sizes3 s = spatial3(t);
  FastWalk w;
  w.channels_last = walks_channels_last(t);
  int64_t C = t.shape[1], D = s.v[2];
  if (w.channels_last) C /= lanes;
  else D = (D + run - 1) / run;
  w.C = FastDiv(C);
  w.A = FastDiv(s.v[0]);
  w.B = FastDiv(s.v[1]);
  w.D = FastDiv(D);
  if (threads) *threads = t.shape[0] * C * s.v[0] * s.v[1] * D;
  return w;
}

// Channels a thread takes in channels-last order: 16 bytes of them, else 2, else 1, as the channel count,
// the strides and the base pointers allow (every tensor of the launch).
template <class T>
int channel_lanes(std::initializer_list<const TensorView*> ts) {
  auto fits = [&](int lanes) {
    for (const TensorView* t : ts) {
      if (!t->data) continue;
      if (!walks_channels_last(*t) || t->shape[1] % lanes != 0 ||
          reinterpret_cast<uintptr_t>(t->data) % (uintptr_t(lanes) * sizeof(T)) != 0)
        return false;
      for (int i = 0; i < t->rank(); ++i)
        if (i != 1 && t->strides[i] % lanes != 0) return false;
    }
    return true;
  };
  for (int lanes : {16 / int(sizeof(T)), 2})
    if (fits(lanes)) return lanes;
  return 1;
}

}  // namespace poolkit::cuda::detail
