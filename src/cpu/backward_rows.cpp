// Backward of max and average pooling as row accumulation, for channels-first planes whose windows overlap,
// leave gaps or vary in size. Per plane: the output gradient (divided by its divisor for average) and, for
// max, the saved argmax as a window-local tap id are first copied into compact planes (the argmax checked
// there). Then each dx row (t, h) sums the output rows (ot, oh) covering it, in increasing order, and within
// one output row adds tap jw's outputs from the largest jw down: for a fixed input cell a larger tap belongs to
// an earlier output, so every cell receives its terms in the reference's order. Along a Regular W axis the
// outputs of one tap land every `stride` cells: they are accumulated in `stride` phase rows, contiguous, and
// interleaved into dx at the end.
#include <vector>

#include "backward.hpp"

namespace poolkit::cpu {
namespace {

template <class A> using code_t = std::conditional_t<sizeof(A) == 8, int64_t, int32_t>;

// One tap jw of a Regular W axis: its outputs [lo, hi) add into phase row `phase` at lo + shift.
struct WTap {
  int64_t jw, phase, shift, lo, hi;
};

struct RowsPlan {
  const Backward& b;
  Covers ct, ch;
  std::vector<WTap> wtaps;  // Regular W: by decreasing jw; empty: the scalar walk over each output's taps
  int64_t phases = 1, phase_len;
  std::vector<int64_t> divisor[3];  // average: per axis and output (the product is the window's divisor)
  explicit RowsPlan(const Backward& bw) : b(bw), ct(bw.g3.axes[0]), ch(bw.g3.axes[1]), phase_len(bw.g3.axes[2].in) {
    if (!b.is_max)
      for (int i = 0; i < 3; ++i) {
        const Axis& a = b.g3.axes[i];
        for (int64_t o = 0; o < a.out; ++o)
          divisor[i].push_back(b.opt.divisor_override ? (i == 0 ? *b.opt.divisor_override : 1)
                                                      : a.divisor(o, b.opt.count_include_pad));
      }
    const AxisTable& W = b.tab.w;
    const Axis& a = W.axis;
    if (a.kind != AxisKind::Regular) return;
    phases = a.stride;
    phase_len = (a.in + a.stride - 1) / a.stride;
    for (int64_t jw = a.kernel - 1; jw >= 0; --jw) {
      int64_t lo = -1, hi = -1;
      for (int64_t ow = 0; ow < a.out; ++ow) {
        if (jw < W.first[ow] || jw >= W.last[ow]) continue;
        if (hi >= 0 && hi != ow) {  // not one run of outputs: use the scalar walk
          wtaps.clear(), phases = 1, phase_len = a.in;
          return;
        }
        if (lo < 0) lo = ow;
        hi = ow + 1;
      }
      if (lo < 0) continue;
      const int64_t e = jw * a.dilation - a.pad_lo, phase = ((e % a.stride) + a.stride) % a.stride;
      wtaps.push_back({jw, phase, (e - phase) / a.stride, lo, hi});
    }
  }
};

template <class A>
void row_add(const RowAddJob& j) {
  if constexpr (sizeof(A) == 8) row_add_f64(j);
  else row_add_f32(j);
}

int64_t load(const View5& v, IndexForm form, int64_t off) {
  switch (form) {
    case IndexForm::U8: return *v.at<uint8_t>(off);
    case IndexForm::I16: return *v.at<int16_t>(off);
    case IndexForm::I32: return *v.at<int32_t>(off);
    default: return *v.at<int64_t>(off);
  }
}

// The window-local tap id the argmax v of output (ot, oh, ow) names, or -1 when it is not a cell of that window.
int64_t local_tap(const Backward& b, int64_t v, int64_t ot, int64_t oh, int64_t ow) {
  const AxisTable* ax[3] = {&b.tab.t, &b.tab.h, &b.tab.w};
  const int64_t o[3] = {ot, oh, ow};
  int64_t j[3];
  if (b.form == IndexForm::I64) {
    const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in;
    if (v < 0 || v >= b.tab.t.axis.in * H * W) return -1;
    const int64_t pos[3] = {v / (H * W), (v / W) % H, v % W};
    for (int i = 0; i < 3; ++i) j[i] = ax[i]->axis.tap_at(o[i], pos[i]);
  } else {
    if (v < 0) return -1;
    int64_t r = v;
    for (int i = 2; i >= 0; --i) j[i] = r % ax[i]->axis.kernel, r /= ax[i]->axis.kernel;
    if (r != 0) return -1;
  }
  for (int i = 0; i < 3; ++i)
    if (j[i] < ax[i]->first[o[i]] || j[i] >= ax[i]->last[o[i]]) return -1;
  return b.tab.local(j[0], j[1], j[2]);
}

template <class T>
bool plane(const RowsPlan& p, int64_t n, int64_t c) {
  using A = acc_t<T>;
  using I = code_t<A>;
  const Backward& b = p.b;
  const AxisTable &At = b.tab.t, &Bt = b.tab.h, &Wt = b.tab.w;
  const int64_t OT = At.axis.out, OH = Bt.axis.out, OW = Wt.axis.out, WI = Wt.axis.in;
  thread_local std::vector<A> q, acc;
  thread_local std::vector<I> code;
  q.resize(size_t(OT * OH * OW));
  if (b.is_max) code.resize(q.size());
  const int64_t cells = At.axis.kernel * Bt.axis.kernel * Wt.axis.kernel;
  for (int64_t ot = 0, k = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const bool whole_rows = At.first[ot] == 0 && At.last[ot] == At.axis.kernel && Bt.first[oh] == 0 &&
                              Bt.last[oh] == Bt.axis.kernel;
      for (int64_t ow = 0; ow < OW; ++ow, ++k) {
        const int64_t off = b.dy.offset(n, c, ot, oh, ow);
        A g = A(*b.dy.at<T>(off));
        if (!b.is_max) {
          q[size_t(k)] = g / A(p.divisor[0][size_t(ot)] * p.divisor[1][size_t(oh)] * p.divisor[2][size_t(ow)]);
          continue;
        }
        q[size_t(k)] = g;
        int64_t v = load(b.am, b.form, b.am.offset(n, c, ot, oh, ow));
        const bool whole = whole_rows && Wt.first[ow] == 0 && Wt.last[ow] == Wt.axis.kernel;
        int64_t id = whole && b.form != IndexForm::I64 ? (v >= 0 && v < cells ? v : -1) : local_tap(b, v, ot, oh, ow);
        if (id < 0) return false;
        code[size_t(k)] = I(id);
      }
    }
  acc.resize(size_t(p.phases * p.phase_len));
  for (int64_t t = 0; t < At.axis.in; ++t)
    for (int64_t h = 0; h < Bt.axis.in; ++h) {
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t x0 = p.ct.begin[t]; x0 < p.ct.begin[t + 1]; ++x0)
        for (int64_t x1 = p.ch.begin[h]; x1 < p.ch.begin[h + 1]; ++x1) {
          const int64_t row = (p.ct.o[x0] * OH + p.ch.o[x1]) * OW, base = b.tab.local(p.ct.j[x0], p.ch.j[x1], 0);
          const A* qr = q.data() + row;
          const I* cr = b.is_max ? code.data() + row : nullptr;
          if (p.wtaps.empty()) {
            for (int64_t ow = 0; ow < OW; ++ow)
              for (int64_t jw = Wt.first[ow]; jw < Wt.last[ow]; ++jw)
                if (!cr || cr[ow] == base + jw) acc[size_t(Wt.pos(ow, jw))] += qr[ow];
            continue;
          }
          for (const WTap& w : p.wtaps) {
            RowAddJob j;
            j.acc = acc.data() + w.phase * p.phase_len + w.lo + w.shift;
            j.q = qr + w.lo;
            j.code = cr ? cr + w.lo : nullptr;
            j.want = base + w.jw;
            j.count = w.hi - w.lo;
            row_add<A>(j);
          }
        }
      const int64_t xrow = b.dx.offset(n, c, t, h, 0), xs = b.dx.s[4], S = p.phases, L = p.phase_len;
      T* dx = b.dx.at<T>(xrow);
      if (S == 1 && xs == 1) {
        for (int64_t w = 0; w < WI; ++w) dx[w] = T(acc[size_t(w)]);
      } else if (S == 2 && xs == 1) {
        for (int64_t i = 0; 2 * i + 1 < WI; ++i) dx[2 * i] = T(acc[size_t(i)]), dx[2 * i + 1] = T(acc[size_t(L + i)]);
        if (WI % 2) dx[WI - 1] = T(acc[size_t(WI / 2)]);
      } else if (S == 1) {
        for (int64_t w = 0; w < WI; ++w) dx[w * xs] = T(acc[size_t(w)]);
      } else {
        for (int64_t ph = 0; ph < S; ++ph)
          for (int64_t w = ph, i = ph * L; w < WI; w += S, ++i) dx[w * xs] = T(acc[size_t(i)]);
      }
    }
  return true;
}

}  // namespace

bool rows_backward(const Backward& b) {
  if (b.is_max && b.tab.t.axis.kernel * b.tab.h.axis.kernel * b.tab.w.axis.kernel > INT32_MAX) return false;
  const RowsPlan p(b);
  return parallel_for(b.N * b.C, b.work, [&](int64_t i) {
    const int64_t n = i / b.C, c = i % b.C;
    switch (b.dtype) {
      case DType::f32: return plane<float>(p, n, c);
      case DType::f64: return plane<double>(p, n, c);
      case DType::bf16: return plane<bfloat16>(p, n, c);
      default: return plane<float16>(p, n, c);
    }
  });
}

}  // namespace poolkit::cpu
