// Backward of max and average pooling as row accumulation, for channels-first planes whose windows overlap,
// leave gaps or vary in size. Per plane: the output gradient (divided by its divisor for average) and, for
// max, the saved argmax as a window-local tap id are first copied into compact planes (the argmax checked
// there). Then each dx row (t, h) sums the output rows (ot, oh) covering it, in increasing order, and within
// one output row adds tap jw's outputs from the largest jw down: for a fixed input cell a larger tap belongs to
// an earlier output, so every cell receives its terms in the reference's order. Along a Regular W axis the
// outputs of one tap land every `stride` cells: they are accumulated in `stride` phase rows, contiguous, and
// interleaved into dx at the end.
#include <algorithm>
#include <atomic>
#include <type_traits>
#include <vector>

#include "backward.hpp"
#include "prefetch.hpp"

namespace poolkit::cpu {
namespace {

uint64_t next_id() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

template <class A> using code_t = std::conditional_t<sizeof(A) == 8, int64_t, int32_t>;

struct RowsPlan {
  const Backward& b;
  const uint64_t id = next_id();  // tells the plans apart for the terms a thread keeps (Scratch)
  Covers ct, ch;
  std::vector<RowTap> wtaps;  // Regular W: by decreasing jw; empty: the scalar walk over each output's taps
  int64_t phases = 1, phase_len;
  std::vector<float> div32;  // average: each output cell's divisor, in (ot, oh, ow) order
  std::vector<double> div64;
  template <class A> const A* divisors() const {
    if constexpr (sizeof(A) == 8) return div64.data();
    else return div32.data();
  }
  bool one_window = true;           // one output whose window reads the whole plane, each cell once
  int64_t margin_lo = 0, margin_hi = 0;  // outputs of zeros before and after each row of the plane's copies
  bool aligned = false;                  // float32 sums that may take RowJob::aligned rows
  // max with window-local codes of at most 65,536 cells: each code's taps (jt, jh, jw), for the plane check
  std::vector<uint16_t> code_jt, code_jh, code_jw;

  explicit RowsPlan(const Backward& bw) : b(bw), ct(bw.g3.axes[0]), ch(bw.g3.axes[1]), phase_len(bw.g3.axes[2].in) {
    if (!b.is_max) {
      const Axis *A = &b.g3.axes[0], *B = &b.g3.axes[1], *W = &b.g3.axes[2];
      for (int64_t ot = 0; ot < A->out; ++ot)
        for (int64_t oh = 0; oh < B->out; ++oh)
          for (int64_t ow = 0; ow < W->out; ++ow) {
            const int64_t d = b.divisor(ot, oh, ow);
            (b.esize == 8 ? div64.push_back(double(d)) : div32.push_back(float(d)));
          }
    }
    const int64_t kt = b.g3.axes[0].kernel, kh = b.g3.axes[1].kernel, kw = b.g3.axes[2].kernel;
    if (b.is_max && b.form != IndexForm::I64 && kt * kh * kw <= 65536)
      for (int64_t v = 0; v < kt * kh * kw; ++v)
        code_jt.push_back(uint16_t(v / (kh * kw))), code_jh.push_back(uint16_t(v / kw % kh)), code_jw.push_back(uint16_t(v % kw));
    for (const AxisTable* t : {&b.tab.t, &b.tab.h, &b.tab.w})
      one_window &= t->axis.out == 1 && t->axis.step() == 1 && t->origin[0] == 0 && t->first[0] == 0 &&
                    t->last[0] == t->axis.in;
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
    // grouped by phase as the kernel wants; a cell only ever meets taps of its own phase, in the same order
    std::stable_sort(wtaps.begin(), wtaps.end(), [](const RowTap& x, const RowTap& y) { return x.phase < y.phase; });
    // the copies' zero margins, for the kernel's `padded` reads i = a - shift, a in [0, phase_len)
    for (const RowTap& k : wtaps)
      margin_lo = std::max(margin_lo, k.shift), margin_hi = std::max(margin_hi, phase_len - k.shift - a.out);
    aligned = !b.is_max && b.dtype != DType::f64 && phases == 1 && !one_window && !wtaps.empty();
    for (const RowTap& k : wtaps) aligned &= k.shift >= -kRowAlign && k.shift <= kRowAlign;
  }
};

template <class T>
void accumulate_row(const RowJob& j) {
  if constexpr (std::is_same_v<T, float>) accumulate_row_f32(j);
  else if constexpr (std::is_same_v<T, double>) accumulate_row_f64(j);
  else if constexpr (std::is_same_v<T, bfloat16>) accumulate_row_bf16(j);
  else accumulate_row_f16(j);
}

template <class T>
void pad_rows(const T* g, const acc_t<T>* d, acc_t<T>* q, int64_t rows, int64_t len, int64_t lo, int64_t stride) {
  if constexpr (std::is_same_v<T, float>) pad_rows_f32(g, d, q, rows, len, lo, stride);
  else if constexpr (std::is_same_v<T, double>) pad_rows_f64(g, d, q, rows, len, lo, stride);
  else if constexpr (std::is_same_v<T, bfloat16>) pad_rows_bf16(g, d, q, rows, len, lo, stride);
  else pad_rows_f16(g, d, q, rows, len, lo, stride);
}

// Window-local tap ids of output row (ot, oh) into code (none: only checked); false when an argmax is not a
// cell of its window. Windows whole along every axis need only a range check of the window-local forms.
template <class U, class I>
bool codes_of(const Backward& b, const U* am, int64_t ot, int64_t oh, I* code) {
  const AxisTable &At = b.tab.t, &Bt = b.tab.h, &Wt = b.tab.w;
  const int64_t as = b.am.s[4], OW = Wt.axis.out;
  int64_t lo = 0, hi = 0;  // the outputs whose windows are whole
  if (b.form != IndexForm::I64 && At.first[ot] == 0 && At.last[ot] == At.axis.kernel && Bt.first[oh] == 0 &&
      Bt.last[oh] == Bt.axis.kernel && Wt.full_end > Wt.full_begin)
    lo = Wt.full_begin, hi = Wt.full_end;
  const uint64_t cells = uint64_t(At.axis.kernel * Bt.axis.kernel * Wt.axis.kernel);
  bool bad = false;
  for (int64_t ow = lo; ow < hi; ++ow) {
    const int64_t v = int64_t(am[ow * as]);
    bad |= uint64_t(v) >= cells;
    if (code) code[ow] = I(v);
  }
  for (int64_t ow = 0; ow < OW; ++ow) {
    if (ow == lo && hi > lo) ow = hi;
    if (ow >= OW) break;
    const int64_t id = local_tap(b, int64_t(am[ow * as]), ot, oh, ow);
    bad |= id < 0;
    if (code) code[ow] = I(id);
  }
  return !bad;
}
template <class I>
bool codes(const Backward& b, int64_t n, int64_t c, int64_t ot, int64_t oh, I* code) {
  const int64_t off = b.am.offset(n, c, ot, oh, 0);
  switch (b.form) {
    case IndexForm::U8: return codes_of(b, b.am.at<uint8_t>(off), ot, oh, code);
    case IndexForm::I16: return codes_of(b, b.am.at<int16_t>(off), ot, oh, code);
    case IndexForm::I32: return codes_of(b, b.am.at<int32_t>(off), ot, oh, code);
    default: return codes_of(b, b.am.at<int64_t>(off), ot, oh, code);
  }
}

// Per-thread buffers, looked up once per task (thread-local lookups cost more than a small plane's work).
template <class A>
struct Scratch {
  std::vector<A> q, acc;
  std::vector<code_t<A>> code;
  std::vector<RowTerm> terms;
  std::vector<int> row_terms;  // per dx row of a plane's t, into terms
  // what terms were made for: the same plan, slice t and buffers give the same terms for the next plane
  uint64_t terms_plan = 0;
  int64_t terms_t = -1;
  const void *terms_q = nullptr, *terms_code = nullptr;
};

// Huge planes must not leave their copies allocated on every thread for good.
template <class A>
void trim(Scratch<A>& s) {
  if (s.q.capacity() * sizeof(A) + s.code.capacity() * sizeof(code_t<A>) > (size_t(64) << 20)) s = Scratch<A>{};
}

// Is every window-local argmax of plane (n, c) a tap of its own window? One range check of the whole plane
// (read as unsigned, a negative code is above any cell count), then the windows cut by the plane's edges
// through the plan's tap tables. Rows of the argmax contiguous.
template <class U>
bool plane_codes_valid(const RowsPlan& p, int64_t n, int64_t c) {
  const Backward& b = p.b;
  const AxisTable &At = b.tab.t, &Bt = b.tab.h, &Wt = b.tab.w;
  const int64_t OT = At.axis.out, OH = Bt.axis.out, OW = Wt.axis.out;
  using V = std::make_unsigned_t<U>;
  V top = 0;
  const bool packed = cells_in_a_row(b.am, OT, OH, OW);
  for (int64_t r = 0; r < (packed ? 1 : OT * OH); ++r) {
    const U* am = b.am.at<U>(b.am.offset(n, c, r / OH, r % OH, 0));
    for (int64_t i = 0; i < (packed ? OT * OH * OW : OW); ++i) top = std::max(top, V(am[i]));
  }
  if (uint64_t(top) >= uint64_t(p.code_jt.size())) return false;
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const bool whole = At.first[ot] == 0 && At.last[ot] == At.axis.kernel && Bt.first[oh] == 0 &&
                         Bt.last[oh] == Bt.axis.kernel;
      const U* am = b.am.at<U>(b.am.offset(n, c, ot, oh, 0));
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (whole && ow == Wt.full_begin) ow = std::max(ow, Wt.full_end);
        if (ow >= OW) break;
        const V v = V(am[ow]);
        const int64_t jt = p.code_jt[v], jh = p.code_jh[v], jw = p.code_jw[v];
        if (jt < At.first[ot] || jt >= At.last[ot] || jh < Bt.first[oh] || jh >= Bt.last[oh] || jw < Wt.first[ow] ||
            jw >= Wt.last[ow])
          return false;
      }
    }
  return true;
}

// The saved argmax rows of a plane, copied as they are (window-local forms, float32 sums: the kernel's codes).
template <class U>
void copy_codes(const Backward& b, int64_t n, int64_t c, int64_t ot, int64_t oh, U* out) {
  const U* am = b.am.at<U>(b.am.offset(n, c, ot, oh, 0));
  const int64_t as = b.am.s[4], OW = b.tab.w.axis.out;
  if (as == 1) std::copy(am, am + OW, out);
  else for (int64_t ow = 0; ow < OW; ++ow) out[ow] = am[ow * as];
}

template <class T>
bool plane(const RowsPlan& p, Scratch<acc_t<T>>& scratch, int64_t n, int64_t c, const char* next_dy) {
  using A = acc_t<T>;
  using I = code_t<A>;
  auto &q = scratch.q, &acc = scratch.acc;
  auto& code = scratch.code;
  auto& terms = scratch.terms;
  auto& row_terms = scratch.row_terms;
  const Backward& b = p.b;
  const AxisTable &At = b.tab.t, &Bt = b.tab.h, &Wt = b.tab.w;
  const int64_t OT = At.axis.out, OH = Bt.axis.out, OW = Wt.axis.out, WI = Wt.axis.in;
  // Copies: dy (divided for average) in the accumulation type, the argmax as tap ids, both checked and compact,
  // rows `stride` apart -- for float32 sums the window-local argmax as it is (a valid code is its tap id; the
  // check reads it in place), rows padded with zeros for the vector kernel.
  const bool vec = !p.wtaps.empty() && !p.one_window, aligned = p.aligned;
  const auto round_up = [](int64_t n, int64_t m) { return (n + m - 1) / m * m; };
  const int64_t lo = aligned ? kRowAlign : vec ? p.margin_lo : 0, rows = OT * OH;
  const int64_t stride = aligned ? lo + round_up(OW + p.margin_hi, kRowAlign)
                         : vec   ? lo + OW + p.margin_hi
                                 : OW;
  const bool raw = b.is_max && vec && sizeof(A) == 4 && b.form != IndexForm::I64;
  const int64_t code_size = raw ? form_bytes(b.form) : int64_t(sizeof(I));
  // (aligned: room to start on a 64-byte boundary, and to read the last row's vectors past its end)
  q.resize(size_t(rows * stride + (aligned ? round_up(WI, 4 * kRowAlign) + 3 * kRowAlign : 0)));
  A* const q_base = aligned ? reinterpret_cast<A*>(round_up(int64_t(reinterpret_cast<uintptr_t>(q.data())), 64)) : q.data();
  if (b.is_max) code.resize(size_t((rows * stride * code_size + int64_t(sizeof(I)) - 1) / int64_t(sizeof(I))));
  char* code_base = reinterpret_cast<char*>(code.data());
  auto q_row = [&](int64_t r) { return q_base + r * stride + lo; };
  auto code_row = [&](int64_t r) { return code_base + (r * stride + lo) * code_size; };
  // q: dy (divided for average) in rows `stride` apart between zero margins. Rows with unit steps along W go
  // through the pad_rows kernel (the whole plane in one call when its rows lie back to back), others one cell
  // at a time.
  const A* divisors = b.is_max ? nullptr : p.template divisors<A>();
  const bool packed = cells_in_a_row(b.dy, OT, OH, OW);
  auto to_q = [&](int64_t ot, int64_t oh) {
    const int64_t r = ot * OH + oh, gs = b.dy.s[4];
    const T* g = b.dy.at<T>(b.dy.offset(n, c, ot, oh, 0));
    const A* d = divisors ? divisors + r * OW : nullptr;
    A* qr = q_row(r);
    if (gs == 1) return pad_rows(g, d, qr - lo, 1, OW, lo, stride);
    std::fill_n(qr - lo, lo, A(0));
    std::fill_n(qr + OW, stride - lo - OW, A(0));
    for (int64_t i = 0; i < OW; ++i) qr[i] = d ? A(g[i * gs]) / d[i] : A(g[i * gs]);
  };
  if (packed) pad_rows(b.dy.at<T>(b.dy.offset(n, c, 0, 0, 0)), divisors, q_base, rows, OW, lo, stride);
  // the saved argmax checked for the whole plane at once where the plan has its tap tables
  bool checked = false;
  if (raw && !p.code_jt.empty() && b.am.s[4] == 1) {
    switch (b.form) {
      case IndexForm::U8: checked = plane_codes_valid<uint8_t>(p, n, c); break;
      case IndexForm::I16: checked = plane_codes_valid<int16_t>(p, n, c); break;
      default: checked = plane_codes_valid<int32_t>(p, n, c); break;
    }
    if (!checked) return false;
  }
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t r = ot * OH + oh;
      if (!packed) to_q(ot, oh);
      if (!b.is_max) continue;
      if (!(raw && checked) && !codes(b, n, c, ot, oh, raw ? nullptr : reinterpret_cast<I*>(code_row(r)))) return false;
      if (raw) {
        switch (b.form) {
          case IndexForm::U8: copy_codes(b, n, c, ot, oh, reinterpret_cast<uint8_t*>(code_row(r))); break;
          case IndexForm::I16: copy_codes(b, n, c, ot, oh, reinterpret_cast<int16_t*>(code_row(r))); break;
          default: copy_codes(b, n, c, ot, oh, reinterpret_cast<int32_t*>(code_row(r))); break;
        }
      }
    }
  if (p.one_window) {  // global pooling: the plane is a single window
    const A v = b.is_max ? A(0) : A(0) + q[0];  // 0 + g, as a sum: -0 becomes +0
    const int64_t H = Bt.axis.in, cells = At.axis.in * H * WI;
    if (cells_in_a_row(b.dx, At.axis.in, H, WI)) {
      T* dx = b.dx.at<T>(b.dx.offset(n, c, 0, 0, 0));
      std::fill(dx, dx + cells, T(v));
    } else {
      for (int64_t t = 0; t < At.axis.in; ++t)
        for (int64_t h = 0; h < H; ++h) {
          T* dx = b.dx.at<T>(b.dx.offset(n, c, t, h, 0));
          for (int64_t w = 0; w < WI; ++w) dx[w * b.dx.s[4]] = T(v);
        }
    }
    if (b.is_max) {
      const int64_t id = code[0], kh = Bt.axis.kernel, kw = Wt.axis.kernel;
      *b.dx.at<T>(b.dx.offset(n, c, id / (kh * kw), (id / kw) % kh, id % kw)) = T(A(0) + q[0]);
    }
    return true;
  }
  acc.resize(size_t(p.phases * p.phase_len));
  const int64_t xs = b.dx.s[4];
  RowJob j;
  j.acc = acc.data();
  j.terms = terms.data();
  j.taps = p.wtaps.data();
  j.ntaps = int(p.wtaps.size());
  j.phases = p.phases;
  j.phase_len = p.phase_len;
  j.width = WI;
  j.code_form = raw ? b.form : sizeof(A) == 8 ? IndexForm::I64 : IndexForm::I32;
  j.padded = vec;
  j.aligned = aligned;
  j.ahead = next_dy, j.ahead_bytes = rows * OW * b.esize;
  // (stride 1 sums more terms a cell: there the staging copy cost more than it saved)
  j.stream = b.stream_dx && p.phases > 1;
  const int64_t H = Bt.axis.in;
  for (int64_t t = 0; t < At.axis.in; ++t) {
    // the terms of every dx row (t, h): its covering output rows, in increasing order
    const bool made = scratch.terms_plan == p.id && scratch.terms_t == t && scratch.terms_q == q.data() &&
                      scratch.terms_code == code.data();
    scratch.terms_plan = p.id, scratch.terms_t = t, scratch.terms_q = q.data(), scratch.terms_code = code.data();
    if (!made) terms.clear(), row_terms.assign(1, 0);
    for (int64_t h = 0; h < H && !made; ++h) {
      for_covering_rows(p.ct, p.ch, t, h, [&](int64_t ot, int64_t oh, int64_t jt, int64_t jh) {
        const int64_t r = ot * OH + oh;
        terms.push_back({q_row(r), b.is_max ? code_row(r) : nullptr, b.tab.local(jt, jh, 0)});
      });
      row_terms.push_back(int(terms.size()));
    }
    j.terms = terms.data();
    if (vec && xs == 1) {  // all rows in one call
      j.rows = int(H), j.row_terms = row_terms.data();
      j.dx = b.dx.at<T>(b.dx.offset(n, c, t, 0, 0));
      j.dx_row_step = b.dx.s[3];
      accumulate_row<T>(j);
      continue;
    }
    for (int64_t h = 0; h < H; ++h) {
      const RowTerm *first = terms.data() + row_terms[size_t(h)], *end = terms.data() + row_terms[size_t(h + 1)];
      T* dx = b.dx.at<T>(b.dx.offset(n, c, t, h, 0));
      if (!vec) {
        std::fill(acc.begin(), acc.end(), A(0));
        for (const RowTerm* term = first; term < end; ++term) {
          const A* qr = static_cast<const A*>(term->q);
          const I* cr = static_cast<const I*>(term->code);
          for (int64_t ow = 0; ow < OW; ++ow)
            for (int64_t jw = Wt.first[ow]; jw < Wt.last[ow]; ++jw)
              if (!cr || cr[ow] == term->want_base + jw) acc[size_t(Wt.pos(ow, jw))] += qr[ow];
        }
      } else {  // a strided dx row: the phase rows in acc
        j.rows = 1, j.row_terms = nullptr;
        j.terms = first, j.nterms = int(end - first);
        j.dx = nullptr;
        accumulate_row<T>(j);
      }
      for (int64_t ph = 0; ph < p.phases; ++ph)
        for (int64_t w = ph, i = ph * p.phase_len; w < WI; w += p.phases, ++i) dx[w * xs] = T(acc[size_t(i)]);
    }
  }
  return true;
}

}  // namespace

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

namespace {

// Global average pooling over planes whose cells follow one another, plane after plane: dx is each plane's
// 0 + dy / divisor, written as one stream.
template <class A>
bool global_average(const RowsPlan& p) {
  const Backward& b = p.b;
  const int64_t planes = b.N * b.C, cells = b.tab.t.axis.in * b.tab.h.axis.in * b.tab.w.axis.in;
  const int64_t ystep = plane_step(b.dy, b.N, b.C);
  const A d = p.template divisors<A>()[0];
  const int64_t chunk = 4096;
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    const int64_t p0 = task * chunk, n = std::min(chunk, planes - p0);
    thread_local std::vector<A> v;
    v.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = A(0) + *b.dy.at<A>((p0 + i) * ystep) / d;
    A* out = b.dx.at<A>(p0 * cells);
    if constexpr (sizeof(A) == 8) fill_planes_f64(v.data(), n, cells, out, b.stream_dx);
    else fill_planes_f32(v.data(), n, cells, out, b.stream_dx);
    return true;
  });
}

// Asks for the next plane's dy and argmax while this one is summed: the copies of a plane then find them in the
// cache instead of waiting on memory, one short stream after another.
void prefetch_plane(const Backward& b, int64_t n, int64_t c) {
  const int64_t cells = b.tab.t.axis.out * b.tab.h.axis.out * b.tab.w.axis.out;
  const char* dy = b.dy.at<char>(b.dy.offset(n, c, 0, 0, 0));
  for (int64_t k = 0; k < cells * b.esize; k += 64) prefetch(dy + k);
  if (!b.is_max) return;
  const char* am = b.am.at<char>(b.am.offset(n, c, 0, 0, 0));
  for (int64_t k = 0; k < cells * form_bytes(b.form); k += 64) prefetch(am + k);
}

}  // namespace

bool rows_backward(const Backward& b) {
  if (b.is_max && b.tab.t.axis.kernel * b.tab.h.axis.kernel * b.tab.w.axis.kernel > INT32_MAX) return false;
  const RowsPlan p(b);
  const int64_t T = b.tab.t.axis.in, H = b.tab.h.axis.in, W = b.tab.w.axis.in;
  const bool floats = b.dtype == DType::f32 || b.dtype == DType::f64;
  if (p.one_window && !b.is_max && floats && cells_in_a_row(b.dx, T, H, W) &&
      plane_step(b.dx, b.N, b.C) == T * H * W && plane_step(b.dy, b.N, b.C) >= 0)
    return b.dtype == DType::f32 ? global_average<float>(p) : global_average<double>(p);
  // small planes go several to a task
  const int64_t planes = b.N * b.C, per_plane = b.work / std::max<int64_t>(1, planes);
  const int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, per_plane));
  const int64_t OT = b.tab.t.axis.out, OH = b.tab.h.axis.out, OW = b.tab.w.axis.out;
  const bool ahead = cells_in_a_row(b.dy, OT, OH, OW) && (!b.is_max || cells_in_a_row(b.am, OT, OH, OW));
  // the next plane's dy and argmax asked for: all at once before this plane, or for aligned rows over this plane's
  // rows (all at once, before the copy, its lines arrived while dx's stores waited: 1.2x slower)
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    thread_local Scratch<float> s32;
    thread_local Scratch<double> s64;
    bool ok = true;
    for (int64_t i = task * chunk; i < std::min(planes, (task + 1) * chunk) && ok; ++i) {
      const int64_t n = i / b.C, c = i % b.C;
      const bool next = ahead && i + 1 < planes;
      const char* next_dy = next && p.aligned ? b.dy.at<char>(b.dy.offset((i + 1) / b.C, (i + 1) % b.C, 0, 0, 0)) : nullptr;
      if (next && !p.aligned) prefetch_plane(b, (i + 1) / b.C, (i + 1) % b.C);
      switch (b.dtype) {
        case DType::f32: ok = plane<float>(p, s32, n, c, next_dy); break;
        case DType::f64: ok = plane<double>(p, s64, n, c, next_dy); break;
        case DType::bf16: ok = plane<bfloat16>(p, s32, n, c, next_dy); break;
        default: ok = plane<float16>(p, s32, n, c, next_dy); break;
      }
    }
    trim(s32), trim(s64);
    return ok;
  });
}

}  // namespace poolkit::cpu
