// The cell a flat index v names lies at offset r = v - flat(origin of the window) from the window's first tap;
// r identifies the tap through a table over the window's span (built once per call), and a tap counts when it
// is inside the input for that output (windows clipped by the border, adaptive windows shorter than the
// largest). Flat positions of in-range cells are distinct, so a hit is the very cell.
#include "argmax_local.hpp"

#include <vector>

#include "common.hpp"

namespace poolkit::cpu {

namespace {

template <class U>
bool to_local(const Geometry& g3, const TensorView& flat, const TensorView& local, IndexForm form) {
  const Tables tab(g3);
  const AxisTable* ax[3] = {&tab.t, &tab.h, &tab.w};
  const int64_t H = tab.h.axis.in, W = tab.w.axis.in;
  const int64_t unit[3] = {H * W, W, 1};  // flat distance of one step along each axis
  const int64_t K[3] = {tab.t.axis.kernel, tab.h.axis.kernel, tab.w.axis.kernel};
  if (K[0] * K[1] * K[2] > (int64_t(1) << 20)) return false;
  int64_t span = 1;
  for (int i = 0; i < 3; ++i) span += (K[i] - 1) * ax[i]->axis.step() * unit[i];
  if (span > (int64_t(1) << 22)) return false;
  std::vector<int32_t> id(size_t(span), -1);
  std::vector<int32_t> tap[3];
  for (int64_t a = 0; a < K[0]; ++a)
    for (int64_t b = 0; b < K[1]; ++b)
      for (int64_t c = 0; c < K[2]; ++c) {
        const int64_t r = a * tab.t.axis.step() * unit[0] + b * tab.h.axis.step() * unit[1] + c * tab.w.axis.step();
        if (id[size_t(r)] >= 0) return false;  // two taps at one offset: the table cannot tell them apart
        id[size_t(r)] = int32_t(tab.local(a, b, c));
        tap[0].push_back(int32_t(a)), tap[1].push_back(int32_t(b)), tap[2].push_back(int32_t(c));
      }
  // per axis and output: the flat offset of the window's origin, and whether every tap is inside the input
  std::vector<int64_t> base[3];
  std::vector<uint8_t> whole[3];
  for (int i = 0; i < 3; ++i)
    for (int64_t o = 0; o < ax[i]->axis.out; ++o) {
      base[i].push_back(ax[i]->origin[size_t(o)] * unit[i]);
      whole[i].push_back(ax[i]->first[size_t(o)] == 0 && ax[i]->last[size_t(o)] == K[i]);
    }
  const View5 f(flat), l(local);
  const int64_t N = flat.shape[0], C = flat.shape[1], OT = tab.t.axis.out, OH = tab.h.axis.out, OW = tab.w.axis.out;
  // The code of value v of output (ot, oh, ow), or -1.
  auto code_of = [&](int64_t v, int64_t ot, int64_t oh, int64_t ow) {
    const int64_t r = v - base[0][size_t(ot)] - base[1][size_t(oh)] - base[2][size_t(ow)];
    int32_t code = uint64_t(r) < uint64_t(span) ? id[size_t(r)] : -1;
    if (code >= 0 && !(whole[0][size_t(ot)] && whole[1][size_t(oh)] && whole[2][size_t(ow)])) {
      const int64_t o[3] = {ot, oh, ow};
      for (int a = 0; a < 3 && code >= 0; ++a) {
        const int64_t j = tap[a][size_t(code)];
        if (j < ax[a]->first[size_t(o[a])] || j >= ax[a]->last[size_t(o[a])]) code = -1;
      }
    }
    return code;
  };
  // Outputs [lo, hi) of a row have whole windows: by vectors where the row's values are contiguous, the rest one
  // at a time. Channels-last rows are OW * C values in a row (an output's `lanes` are its C channels), channels-
  // first rows OW values vs apart (one lane an output); a task is a row, or a slice (n, c, ot) when they run
  // whole (c = 0 for channels-last: all channels).
  const int64_t lo = tab.w.full_begin, hi = tab.w.full_end;
  const bool last = C > 1 && f.s[1] == 1 && l.s[1] == 1 && f.s[4] == C && l.s[4] == C;
  const int64_t lanes = last ? C : 1, planes = last ? 1 : C, vs = f.s[4], os = l.s[4];
  const bool contiguous = last || (vs == 1 && os == 1);
  // When every window is whole along H and W and a slice's rows lie back to back: one run per slice. The
  // bases of the values of a row (whole windows along W), and of a slice.
  bool slabs = contiguous && lo == 0 && hi == OW && f.s[3] == OW * lanes && l.s[3] == OW * lanes;
  for (int64_t oh = 0; oh < OH; ++oh) slabs &= whole[1][size_t(oh)] != 0;
  std::vector<int64_t> base_w, base_hw;
  for (int64_t ow = 0; ow < OW; ++ow) base_w.insert(base_w.end(), size_t(lanes), base[2][size_t(ow)]);
  for (int64_t oh = 0; slabs && oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      base_hw.insert(base_hw.end(), size_t(lanes), base[1][size_t(oh)] + base[2][size_t(ow)]);
  auto run = [&](const int64_t* v, U* out, const int64_t* bases, int64_t count, int64_t row) {
    LocalCodeJob j;
    j.flat = v, j.base = bases, j.count = count, j.row = row, j.span = span;
    j.id = id.data(), j.form = form, j.out = out;
    return flat_to_local_codes(j);
  };
  auto one_row = [&](int64_t n, int64_t c, int64_t ot, int64_t oh) {
    const int64_t* v = f.at<int64_t>(f.offset(n, c, ot, oh, 0));
    U* out = l.at<U>(l.offset(n, c, ot, oh, 0));
    const bool vectors = contiguous && whole[0][size_t(ot)] && whole[1][size_t(oh)] && hi > lo;
    bool ok = !vectors || run(v + lo * lanes, out + lo * lanes, base_w.data() + lo * lanes, (hi - lo) * lanes,
                              base[0][size_t(ot)] + base[1][size_t(oh)]);
    for (int64_t ow = 0; ow < OW; ++ow) {
      if (vectors && ow == lo) ow = hi;
      if (ow >= OW) break;
      for (int64_t k = 0; k < lanes; ++k) {
        const int32_t code = code_of(v[ow * vs + k], ot, oh, ow);
        ok &= code >= 0;
        out[ow * os + k] = U(code);
      }
    }
    return ok;
  };
  if (slabs)
    return parallel_for(N * planes * OT, flat.numel(), [&](int64_t i) {
      const int64_t ot = i % OT, c = (i / OT) % planes, n = i / (OT * planes);
      if (whole[0][size_t(ot)])
        return run(f.at<int64_t>(f.offset(n, c, ot, 0, 0)), l.at<U>(l.offset(n, c, ot, 0, 0)), base_hw.data(),
                   OH * OW * lanes, base[0][size_t(ot)]);
      bool ok = true;
      for (int64_t oh = 0; oh < OH; ++oh) ok &= one_row(n, c, ot, oh);
      return ok;
    });
  return parallel_for(N * planes * OT * OH, flat.numel(), [&](int64_t i) {
    const int64_t oh = i % OH, ot = (i / OH) % OT, c = (i / (OH * OT)) % planes, n = i / (OH * OT * planes);
    return one_row(n, c, ot, oh);
  });
}

}  // namespace

bool flat_argmax_to_local(const Geometry& g3, const TensorView& flat, const TensorView& local) {
  switch (local.dtype) {
    case DType::u8: return to_local<uint8_t>(g3, flat, local, IndexForm::U8);
    case DType::i16: return to_local<int16_t>(g3, flat, local, IndexForm::I16);
    case DType::i32: return to_local<int32_t>(g3, flat, local, IndexForm::I32);
    default: return false;
  }
}

}  // namespace poolkit::cpu
